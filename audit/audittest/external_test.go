package audittest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scratchTest is the _test.go file of the scratch module: what a module
// outside this repository writes with audittest, using every field of Env.
const scratchTest = `package scratch

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

func TestScratch(t *testing.T) {
	ctx := context.Background()
	env := audittest.Start(t)

	// A real executor, traced into the server.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(audittest.NewExporter(env.Writer, env.Database)))
	defer tp.Shutdown(ctx)
	reg, err := executor.NewRegistry(executor.Tool{Name: "bash",
		Execute: func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil }})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.WithTracerProvider(tp), executor.WithGates(gate.DenyTools("no shell here", "bash")))
	if err != nil {
		t.Fatal(err)
	}
	agent, err := ex.Agent("scratch-agent", executor.AgentAllow("bash"))
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Minute)
	agent.Run("scratch-run").Execute(ctx, executor.ToolCall{ID: "c1", Name: "bash", Input: json.RawMessage(` + "`{}`" + `)})

	// And the fixture rows, written as the collector's exporter writes them.
	if err := audittest.InsertSpans(ctx, env.Writer, env.Database, audittest.Fixture()); err != nil {
		t.Fatal(err)
	}

	// Read back with audit.Store: the reader account through the Env's
	// Store, and a Store of our own from ReaderDSN.
	page, err := env.Store.Decisions(ctx, audit.Filter{Since: since, RunID: "scratch-run"}, audit.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Decisions) != 1 || page.Decisions[0].Action != "deny" || page.Decisions[0].Reason != "no shell here" {
		t.Fatalf("executor decisions = %+v", page.Decisions)
	}
	st, err := audit.Open(ctx, env.ReaderDSN, audit.WithDatabase(env.Database))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fx, err := st.Decisions(ctx, audit.Filter{Since: audittest.FixtureBase, Until: audittest.FixtureBase.Add(24 * time.Hour)}, audit.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.Decisions) != audittest.FixtureDecisions {
		t.Fatalf("fixture decisions = %d, want %d", len(fx.Decisions), audittest.FixtureDecisions)
	}
	resp, err := http.Get(env.URL + "/ping")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := env.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("audittest-scratch: ok addr=%s datadir=%t writer=%t decisions=%d fixture=%d",
		env.Addr, env.DataDir != "", env.WriterDSN != "", len(page.Decisions), len(fx.Decisions))
}
`

// TestUsableFromAnotherModule builds a scratch module outside this
// repository (go.mod with a replace directive to the repository root,
// GOFLAGS=-mod=mod, GOPROXY=off: the dependencies come from the local
// module cache) whose test starts the server with audittest, records a
// decision with a real executor and the fixture with InsertSpans, and
// reads them with audit.Store; then runs `go test` there, which must pass
// without skipping. (TestExportedAPIHasNoInternalTypes checks the API's
// types; this checks that it works from elsewhere: no go build of this
// repository's commands, no path relative to a checkout.) Integration
// test: TOOLGATE_INTEGRATION=1 (it compiles a test binary: seconds on a
// warm build cache, about a minute on a cold one).
func TestUsableFromAnotherModule(t *testing.T) {
	if os.Getenv("TOOLGATE_INTEGRATION") != "1" {
		t.Skip("integration test: set TOOLGATE_INTEGRATION=1 and TOOLGATE_LIBCHDB")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)

	dir := filepath.Join(t.TempDir(), "scratch")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	rel, err := filepath.Rel(root, dir)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(rel, ".."), "the scratch module must be outside the repository (%s)", dir)
	goMod := "module example.com/scratch\n\ngo 1.26.0\n\nrequire github.com/toolgate/toolgate v0.0.0-00010101000000-000000000000\n\n" +
		"replace github.com/toolgate/toolgate => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scratch_test.go"), []byte(scratchTest), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "test", "-count=1", "-v", "./...")
	cmd.Dir = dir
	lib := os.Getenv("TOOLGATE_LIBCHDB")
	if lib == "" {
		lib = filepath.Join(root, ".cache", "chdb", "libchdb.so") // make deps
	}
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "TOOLGATE_INTEGRATION=1", "TOOLGATE_LIBCHDB="+lib)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go test in the scratch module:\n%s", out)
	assert.Contains(t, string(out), "--- PASS: TestScratch")
	assert.Contains(t, string(out), "audittest-scratch: ok addr=127.0.0.1:")
	assert.Contains(t, string(out), "decisions=1 fixture=10")
	assert.NotContains(t, string(out), "SKIP")
}
