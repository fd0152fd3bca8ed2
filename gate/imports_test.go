package gate_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImports holds the decision package to its dependency rules: it
// imports nothing of ours (not executor, not classify, not approve), and
// neither os nor a terminal library (approvers that need them live in
// package approve).
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		file, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range file.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			switch {
			case path == "os", path == "os/exec", strings.HasPrefix(path, "golang.org/x/term"),
				strings.HasPrefix(path, "github.com/toolgate/toolgate/"):
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
