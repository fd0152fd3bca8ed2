package otelbridge

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/otelbridge/bridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// onePartPackages are the packages of the otelbridge tree that follow the
// one-surface rule (see the package doc): configured only by config
// structs.
var onePartPackages = []string{".", "sampling", "bridge", "spool"}

// funcOptionUses lists, for the non-test Go files of dir, every exported
// func type (type Option func(*config)) and every exported function or
// method that takes a variadic parameter of a func type (opts ...Option):
// the functional-option pattern.
func funcOptionUses(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
	}
	require.NotEmpty(t, files, dir)
	funcTypes := map[string]bool{} // every func type the package declares, exported or not
	var found []string
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if _, ok := ts.Type.(*ast.FuncType); ok {
					funcTypes[ts.Name.Name] = true
					if ts.Name.IsExported() {
						found = append(found, "exported func type "+ts.Name.Name)
					}
				}
			}
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() || fd.Type.Params == nil || len(fd.Type.Params.List) == 0 {
				continue
			}
			last := fd.Type.Params.List[len(fd.Type.Params.List)-1]
			ell, ok := last.Type.(*ast.Ellipsis)
			if !ok {
				continue
			}
			switch elt := ell.Elt.(type) {
			case *ast.FuncType:
				found = append(found, fd.Name.Name+": variadic func parameter")
			case *ast.Ident:
				if funcTypes[elt.Name] {
					found = append(found, fd.Name.Name+": variadic "+elt.Name)
				}
			case *ast.SelectorExpr:
				// A variadic option of another package's (say
				// otlptracegrpc.Option) is that package's surface, not a
				// second way to configure ours: only our own are counted.
			}
		}
	}
	return found
}

// TestOneConfigurationSurface pins the rule that otelbridge and its parts
// are configured one way: by config structs, never by option functions.
func TestOneConfigurationSurface(t *testing.T) {
	for _, dir := range onePartPackages {
		t.Run(dir, func(t *testing.T) {
			assert.Empty(t, funcOptionUses(t, dir), "configure with a field of the part's Config struct, not an option function")
		})
	}
}

// TestFuncOptionDetector: the detector above finds the pattern it forbids
// (so that the rule cannot pass by finding nothing).
func TestFuncOptionDetector(t *testing.T) {
	dir := t.TempDir()
	src := `package p
type Option func(*config)
type option func(*config)
type config struct{}
func New(opts ...Option) {}
func NewQuiet(opts ...option) {}
func NewInline(opts ...func(*config)) {}
func Fine(names ...string) {}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o600))
	assert.ElementsMatch(t, []string{"exported func type Option", "New: variadic Option", "NewQuiet: variadic option",
		"NewInline: variadic func parameter"}, funcOptionUses(t, dir))
}

// TestPartConfigsNest: each part's constructor takes the part's one config
// struct, and the pipeline's Config nests the same struct, so one struct
// tree configures everything and a part alone is configured alike.
func TestPartConfigsNest(t *testing.T) {
	cfg := reflect.TypeOf(Config{})
	for _, tt := range []struct {
		field string       // in Config; "" when the part is made after Setup
		ctor  any          // the part's constructor
		arg   int          // index of its config parameter
		want  reflect.Type // the part's config struct
	}{
		{"Sampling", sampling.NewProcessor, 1, reflect.TypeOf(sampling.Config{})},
		{"Batch", NewBatchProcessor, 1, reflect.TypeOf(BatchConfig{})},
		{"", bridge.New, 1, reflect.TypeOf(bridge.Config{})},
		{"Spool", spool.Open, 1, reflect.TypeOf(spool.Config{})},
	} {
		ct := reflect.TypeOf(tt.ctor)
		assert.Equal(t, tt.want, ct.In(tt.arg), "%v takes %v", ct, tt.want)
		assert.False(t, ct.IsVariadic(), "%v", ct)
		if tt.field != "" {
			f, ok := cfg.FieldByName(tt.field)
			require.True(t, ok, tt.field)
			assert.Equal(t, tt.want, f.Type, "Config.%s", tt.field)
		}
	}
	st := reflect.TypeOf(Setup)
	assert.Equal(t, 2, st.NumIn(), "Setup(ctx, Config)")
	assert.False(t, st.IsVariadic())
}

// TestBridgeFindsProviderIndex: a bridge made on a Provider with a zero
// bridge.Config uses the provider's tool-call index (so the executor's
// spans are not bridged twice); an index in the Config wins.
func TestBridgeFindsProviderIndex(t *testing.T) {
	p, err := Setup(t.Context(), Config{Exporter: discard{}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Shutdown(t.Context()) })
	assert.Same(t, p.ToolCalls(), bridge.New(p, bridge.Config{}).ToolCalls())
	own := bridge.NewToolCallIndex(1)
	assert.Same(t, own, bridge.New(p, bridge.Config{ToolCalls: own}).ToolCalls())
	var tp trace.TracerProvider = sdktrace.NewTracerProvider()
	assert.NotNil(t, bridge.New(tp, bridge.Config{}).ToolCalls(), "a provider without an index gets a new one")
}
