package audittest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExportedAPIHasNoInternalTypes: no exported function, method, type,
// field, constant or variable of audittest names a type from an internal
// package, so that a module outside this repository can use all of it
// (it cannot import internal packages to build such values).
func TestExportedAPIHasNoInternalTypes(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	var checked int
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		imports := map[string]string{} // local name → import path
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			local := path.Base(p)
			if im.Name != nil {
				local = im.Name.Name
			}
			imports[local] = p
		}
		check := func(what string, n ast.Node) {
			if n == nil {
				return
			}
			checked++
			ast.Inspect(n, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok {
						p := imports[id.Name]
						assert.False(t, isInternal(p), "%s (%s) names %s.%s from %s", what, fset.Position(sel.Pos()), id.Name, sel.Sel.Name, p)
					}
				}
				// Unexported struct fields are not API.
				if fl, ok := n.(*ast.Field); ok && len(fl.Names) > 0 && !fl.Names[0].IsExported() {
					return false
				}
				return true
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
					continue
				}
				check("func "+d.Name.Name, d.Type)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							check("type "+s.Name.Name, s.Type)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								check(n.Name, s.Type)
								for _, v := range s.Values {
									check(n.Name, v)
								}
							}
						}
					}
				}
			}
		}
	}
	assert.Greater(t, checked, 20, "the API was walked")
}

func isInternal(p string) bool {
	return strings.HasSuffix(p, "/internal") || strings.Contains(p, "/internal/") || strings.HasPrefix(p, "internal/")
}

func exportedRecv(r *ast.FieldList) bool {
	typ := r.List[0].Type
	if st, ok := typ.(*ast.StarExpr); ok {
		typ = st.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}
