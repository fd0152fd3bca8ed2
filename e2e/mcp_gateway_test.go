package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/mcpgate"
	"github.com/toolgate/toolgate/otelbridge"
)

// mcpNPM is the npm cache scripts/install-mcp-servers.sh fills (make
// mcpservers): $TOOLGATE_MCP_NPM, else ~/.cache/toolgate/npm/mcp. Missing:
// the test skips, or fails under TOOLGATE_INTEGRATION=1.
func mcpNPM(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TOOLGATE_MCP_NPM")
	if dir == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(base, "toolgate", "npm", "mcp")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "mcp-server-filesystem")); err != nil {
		if os.Getenv("TOOLGATE_INTEGRATION") == "1" {
			t.Fatalf("MCP servers not installed in %s: run make mcpservers (scripts/install-mcp-servers.sh)", dir)
		}
		t.Skipf("MCP servers not installed in %s (make mcpservers)", dir)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node not on PATH: %v", err)
	}
	return dir
}

func textOf(r *mcp.CallToolResult) string {
	var s []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			s = append(s, t.Text)
		}
	}
	return strings.Join(s, "\n")
}

func connectGateway(t *testing.T, gw *mcpgate.Gateway, roots ...string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-client", Version: "1"}, nil)
	for _, r := range roots {
		c.AddRoots(&mcp.Root{URI: (&url.URL{Scheme: "file", Path: r}).String()}) //nolint:staticcheck // the attack under test
	}
	cs, err := c.Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type mcpDecision struct {
	ToolName   string `json:"tool_name"`
	ToolCallID string `json:"tool_call_id"`
	RunID      string `json:"run_id"`
	Action     string `json:"action"`
	Source     string `json:"source"`
	Reason     string `json:"reason"`
	Stage      string `json:"stage"`
}

// auditqDecisions waits until auditq lists want decisions of service and
// returns them.
func auditqDecisions(ctx context.Context, t *testing.T, s *stack, service string, want int) []mcpDecision {
	t.Helper()
	var ds []mcpDecision
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := exec.CommandContext(ctx, testenv.AuditqBinary(t), "decisions", "-o", "json", "-n", "1000",
			"--dsn", s.ch.ReaderDSN, "--service", service, "--since", "1h").Output()
		require.NoError(t, err)
		ds = nil
		require.NoError(t, json.Unmarshal(out, &ds), string(out))
		if len(ds) >= want || time.Now().After(deadline) {
			return ds
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// The gateway in front of the real @modelcontextprotocol/server-filesystem,
// driven by the Go SDK's client and by the MCP Inspector CLI: a read inside
// the allowed directory runs; a write outside it and a ".." traversal are
// denied by our path gate before the upstream sees them (the files do not
// exist); a client that declares a wider root cannot make the upstream
// write outside the configured root (without the gateway it can); and every
// call is one decision row in ClickHouse, read back with auditq.
func TestMCPGatewayFilesystem(t *testing.T) {
	npm := mcpNPM(t)
	fsServer := filepath.Join(npm, "node_modules", ".bin", "mcp-server-filesystem")
	s := startStack(t, withoutJaeger())
	ctx := context.Background()
	const service = "e2e-mcp-gateway"
	p := s.providerCfg(t, otelbridge.Config{ServiceName: service})

	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	allowed := filepath.Join(root, "allowed")
	outside := filepath.Join(root, "outside")
	require.NoError(t, os.MkdirAll(allowed, 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(allowed, "hello.txt"), []byte("hello from the allowed dir\n"), 0o644))

	up := mcpgate.Upstream{Name: "fs", Command: []string{fsServer, allowed}, Roots: []string{allowed}}
	gw, err := mcpgate.New(ctx, []mcpgate.Upstream{up}, mcpgate.WithTracerProvider(p), mcpgate.WithRunID("run-mcp-e2e"),
		mcpgate.WithClassifier(classify.WithWorkspace(allowed)))
	require.NoError(t, err)
	defer gw.Close()
	require.NoError(t, gw.Upstreams()[0].Err)
	names := map[string]bool{}
	for _, ti := range gw.Tools() {
		names[ti.Name] = true
	}
	require.True(t, names["fs_read_text_file"] && names["fs_write_file"] && names["fs_move_file"], "tools: %v", names)

	cs := connectGateway(t, gw, "/") // the client declares a root of "/": it never reaches the upstream
	call := func(tool string, args map[string]any) *mcp.CallToolResult {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err, tool)
		return r
	}
	calls := 0
	// A read inside the allowed directory runs.
	r := call("fs_read_text_file", map[string]any{"path": filepath.Join(allowed, "hello.txt")})
	calls++
	require.False(t, r.IsError, textOf(r))
	require.Contains(t, textOf(r), "hello from the allowed dir")

	// A write outside, a ".." traversal, a move out: denied by our gate.
	outsideFile := filepath.Join(outside, "pwned.txt")
	traversal := allowed + "/../outside/traversal.txt"
	moved := filepath.Join(outside, "moved.txt")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"fs_write_file", map[string]any{"path": outsideFile, "content": "x"}},
		{"fs_write_file", map[string]any{"path": traversal, "content": "x"}},
		{"fs_move_file", map[string]any{"source": filepath.Join(allowed, "hello.txt"), "destination": moved}},
		{"fs_write_file", map[string]any{"path": "/etc/cron.d/toolgate-e2e", "content": "x"}},
	} {
		r := call(c.tool, c.args)
		calls++
		require.True(t, r.IsError, "%s %v: %s", c.tool, c.args, textOf(r))
		require.Contains(t, textOf(r), "toolgate denied this tool call")
	}
	for _, f := range []string{outsideFile, filepath.Join(outside, "traversal.txt"), moved, "/etc/cron.d/toolgate-e2e"} {
		require.NoFileExists(t, f)
	}
	require.FileExists(t, filepath.Join(allowed, "hello.txt"))

	// The MCP Inspector CLI (a third-party client) over streamable HTTP.
	l, err := mcpgate.Listen("127.0.0.1:0")
	require.NoError(t, err)
	hctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- gw.ServeHTTP(hctx, l) }()
	defer func() { stop(); <-served }()
	inspector := func(wantExit int, args ...string) string {
		cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		base := []string{"--cli", "http://" + l.Addr().String() + "/mcp", "--transport", "http"}
		cmd := exec.CommandContext(cctx, filepath.Join(npm, "node_modules", ".bin", "mcp-inspector"), append(base, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err, "inspector %v:\n%s", args, out)
		}
		require.Equal(t, wantExit, code, "inspector %v:\n%s", args, out)
		return string(out)
	}
	out := inspector(0, "--method", "tools/list")
	require.Contains(t, out, "fs_read_text_file")
	out = inspector(0, "--method", "tools/call", "--tool-name", "fs_read_text_file", "--tool-arg", "path="+filepath.Join(allowed, "hello.txt"))
	calls++
	require.Contains(t, out, "hello from the allowed dir")
	inspectorFile := filepath.Join(outside, "inspector.txt")
	out = inspector(5, "--method", "tools/call", "--tool-name", "fs_write_file", "--tool-arg", "path="+inspectorFile, "content=x")
	calls++
	require.Contains(t, out, "toolgate denied this tool call") // exit 5: the Inspector's "tool returned isError"
	require.NoFileExists(t, inspectorFile)

	// Every call is one decision row, read back with auditq.
	require.NoError(t, p.ForceFlush(ctx))
	ds := auditqDecisions(ctx, t, s, service, calls)
	require.Len(t, ds, calls, "%+v", ds)
	allowedRows, denied := 0, 0
	for _, d := range ds {
		assert.Equal(t, "run-mcp-e2e", d.RunID)
		switch d.Action {
		case "allow":
			allowedRows++
			assert.Equal(t, "fs_read_text_file", d.ToolName)
		case "deny":
			denied++
			// The path gate's denial, or, for a path it would only ask
			// about, the gateway's roots check (mcpgate.roots).
			assert.Contains(t, []string{"classify.path", mcpgate.SourceRule}, d.Source, "%+v", d)
			assert.Equal(t, "gate", d.Stage)
		}
	}
	assert.Equal(t, 2, allowedRows)
	assert.Equal(t, calls-2, denied)
}

// Roots are an attack surface: with the filesystem server, roots a client
// declares replace the directory on its command line. Directly, a client
// declaring a wider root makes the server write outside the configured
// directory; through the gateway (whose path gate here would allow the
// write: the workspace is the parent of both) the upstream only ever sees
// the configured root, and the write fails.
func TestMCPGatewayRootsWidening(t *testing.T) {
	npm := mcpNPM(t)
	fsServer := filepath.Join(npm, "node_modules", ".bin", "mcp-server-filesystem")
	ctx := context.Background()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	allowed := filepath.Join(root, "allowed")
	outside := filepath.Join(root, "outside")
	require.NoError(t, os.MkdirAll(allowed, 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))

	write := func(cs *mcp.ClientSession, tool, path string) *mcp.CallToolResult {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"path": path, "content": "widened"}})
		require.NoError(t, err)
		return r
	}

	// Directly: the widening works (the attack is real).
	direct := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	direct.AddRoots(&mcp.Root{URI: "file://" + root}) //nolint:staticcheck // the attack under test
	dcs, err := direct.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(fsServer, allowed)}, nil)
	require.NoError(t, err)
	directFile := filepath.Join(outside, "direct.txt")
	var r *mcp.CallToolResult
	for range 50 { // the server reads the roots asynchronously after initialize
		r = write(dcs, "write_file", directFile)
		if !r.IsError {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, dcs.Close())
	require.False(t, r.IsError, "the direct widening should work: %s", textOf(r))
	require.FileExists(t, directFile)

	// Through the gateway: the upstream keeps the configured root.
	s := startStack(t, withoutJaeger())
	const service = "e2e-mcp-roots"
	p := s.providerCfg(t, otelbridge.Config{ServiceName: service})
	// write_file is allowed by a rule of its own, so that neither our path
	// gate nor our roots check (mcpgate.roots denies a path outside the
	// configured roots, see TestGatewayDeniesPathsOutsideTheUpstreamsRoots)
	// stands between the client and the upstream: only the upstream's roots do.
	up := mcpgate.Upstream{Name: "fs", Command: []string{fsServer, allowed}, Roots: []string{allowed},
		Tools: []mcpgate.Rule{{Match: "write_file", Kind: mcpgate.KindAllow, Reason: "e2e: only the upstream's roots decide"}}}
	gw, err := mcpgate.New(ctx, []mcpgate.Upstream{up}, mcpgate.WithTracerProvider(p),
		mcpgate.WithClassifier(classify.WithWorkspace(root), classify.WithProfile(classify.ProfileWorkspace)),
		mcpgate.WithGateOptions(false, classify.WithGateProfile(classify.ProfileWorkspace)))
	require.NoError(t, err)
	defer gw.Close()
	cs := connectGateway(t, gw, root)
	viaGateway := filepath.Join(outside, "via-gateway.txt")
	time.Sleep(500 * time.Millisecond) // as long as the direct case needed at most, and more
	r = write(cs, "fs_write_file", viaGateway)
	require.True(t, r.IsError, textOf(r))
	require.NotContains(t, textOf(r), "toolgate denied", "our gate allowed it (workspace %s); the upstream refused", root)
	require.NoFileExists(t, viaGateway)
	// Inside the configured root the same write runs.
	r = write(cs, "fs_write_file", filepath.Join(allowed, "ok.txt"))
	require.False(t, r.IsError, textOf(r))
	require.FileExists(t, filepath.Join(allowed, "ok.txt"))

	// Both calls are decisions: allowed by our gate; the widening attempt's
	// row carries the upstream's refusal (a tool error).
	require.NoError(t, p.ForceFlush(ctx))
	out, err := exec.CommandContext(ctx, testenv.AuditqBinary(t), "decisions", "-o", "json", "-n", "100",
		"--dsn", s.ch.ReaderDSN, "--service", service, "--since", "1h").Output()
	require.NoError(t, err)
	var ds []struct {
		Action    string `json:"action"`
		ErrorType string `json:"error_type"`
		Input     string `json:"input"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		require.NoError(t, json.Unmarshal(out, &ds), string(out))
		if len(ds) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
		out, err = exec.CommandContext(ctx, testenv.AuditqBinary(t), "decisions", "-o", "json", "-n", "100",
			"--dsn", s.ch.ReaderDSN, "--service", service, "--since", "1h").Output()
		require.NoError(t, err)
	}
	require.Len(t, ds, 2, string(out))
	errs := 0
	for _, d := range ds {
		assert.Equal(t, "allow", d.Action)
		if d.ErrorType == "tool_error" {
			errs++
		}
	}
	assert.Equal(t, 1, errs, "the upstream refused the widening write: %s", out)
}

// The gateway in front of the real @modelcontextprotocol/server-everything,
// twice (trusted and untrusted: the same tool names, namespaced apart) and
// a broken upstream that does not hide them: a trusted read-only tool runs
// and its content (text, structured, image) passes through whole; the
// same tool from the untrusted upstream is asked about, put to the client
// through elicitation (MRTR on 2026-07-28), and declined; a trusted
// open-world tool is asked about and approved; a long-running call past
// the call timeout is an error and the gateway goes on; every decision is
// a row in ClickHouse.
func TestMCPGatewayEverything(t *testing.T) {
	npm := mcpNPM(t)
	ev := filepath.Join(npm, "node_modules", ".bin", "mcp-server-everything")
	s := startStack(t, withoutJaeger())
	ctx := context.Background()
	const service = "e2e-mcp-everything"
	p := s.providerCfg(t, otelbridge.Config{ServiceName: service})
	ups := []mcpgate.Upstream{
		{Name: "ev", Command: []string{ev, "stdio"}, Trusted: true},
		{Name: "evu", Command: []string{ev, "stdio"}},
		{Name: "gone", Command: []string{filepath.Join(t.TempDir(), "no-such-server")}},
	}
	gw, err := mcpgate.New(ctx, ups, mcpgate.WithTracerProvider(p), mcpgate.WithCallTimeout(1500*time.Millisecond),
		mcpgate.WithClassifier(classify.WithWorkspace(t.TempDir())))
	require.NoError(t, err)
	defer gw.Close()
	st := gw.Upstreams()
	require.NoError(t, st[0].Err)
	require.NoError(t, st[1].Err)
	require.Error(t, st[2].Err, "the broken upstream is reported")
	require.Positive(t, st[0].Tools)
	require.Equal(t, st[0].Tools, st[1].Tools)

	var asked []string
	answer := map[string]bool{"evu_echo": false, "ev_gzip-file-as-resource": true}
	ct, sst := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(ctx, sst, nil)
	require.NoError(t, err)
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-elicit", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			for tool, yes := range answer {
				if strings.Contains(req.Params.Message, "call "+tool+" ") {
					asked = append(asked, tool)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": yes}}, nil
				}
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	cs, err := c.Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	call := func(tool string, args map[string]any) *mcp.CallToolResult {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err, tool)
		return r
	}
	rows := 0
	r := call("ev_echo", map[string]any{"message": "hello"})
	rows++
	require.False(t, r.IsError, textOf(r))
	require.Contains(t, textOf(r), "hello")
	r = call("ev_get-sum", map[string]any{"a": 2, "b": 3})
	rows++
	require.Contains(t, textOf(r), "5")
	r = call("ev_get-structured-content", map[string]any{"location": "New York"})
	rows++
	require.False(t, r.IsError, textOf(r))
	require.NotNil(t, r.StructuredContent, "structured content passes through")
	r = call("ev_get-tiny-image", map[string]any{})
	rows++
	var image bool
	for _, c := range r.Content {
		_, ok := c.(*mcp.ImageContent)
		image = image || ok
	}
	require.True(t, image, "image content passes through")

	// Untrusted: the same echo is asked about; the person declines.
	r = call("evu_echo", map[string]any{"message": "hello"})
	rows += 2 // the pending ask and the resumed, declined call
	require.True(t, r.IsError, textOf(r))
	require.Contains(t, textOf(r), "toolgate denied")
	// Trusted but open-world: asked; the person approves; it runs.
	r = call("ev_gzip-file-as-resource", map[string]any{"name": "x.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"})
	rows += 2
	require.False(t, r.IsError, textOf(r))
	require.Equal(t, []string{"evu_echo", "ev_gzip-file-as-resource"}, asked)

	// Slower than the call timeout: an error result, and the gateway goes on.
	start := time.Now()
	r = call("ev_trigger-long-running-operation", map[string]any{"duration": 5, "steps": 5})
	rows++
	require.True(t, r.IsError, textOf(r))
	require.Contains(t, textOf(r), "did not answer")
	require.Less(t, time.Since(start), 4*time.Second)
	r = call("ev_echo", map[string]any{"message": "still here"})
	rows++
	require.Contains(t, textOf(r), "still here")

	require.NoError(t, p.ForceFlush(ctx))
	ds := auditqDecisions(ctx, t, s, service, rows)
	require.Len(t, ds, rows, "%+v", ds)
	byTool := map[string][]string{}
	for _, d := range ds {
		byTool[d.ToolName] = append(byTool[d.ToolName], d.Action)
	}
	assert.Equal(t, []string{"allow", "allow"}, byTool["ev_echo"])
	assert.ElementsMatch(t, []string{"deny", "deny"}, byTool["evu_echo"])
	assert.ElementsMatch(t, []string{"deny", "allow"}, byTool["ev_gzip-file-as-resource"], "pending, then approved")
}

// `toolgate mcp` as an MCP client starts it: the binary over stdio, its
// policy file naming the filesystem server, its decision spans through the
// durable spool to the collector — a read allowed, a write outside the
// workspace denied (the file absent), a malformed line answered with a
// JSON-RPC error without ending the session, each call one row.
func TestMCPGatewayBinary(t *testing.T) {
	npm := mcpNPM(t)
	fsServer := filepath.Join(npm, "node_modules", ".bin", "mcp-server-filesystem")
	bin := testenv.GoBinary(t, "./cmd/toolgate")
	s := startStack(t, withoutJaeger())
	ctx := context.Background()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha"), 0o644))
	pol := filepath.Join(dir, "toolgate.yaml")
	require.NoError(t, os.WriteFile(pol, []byte(fmt.Sprintf(`version: 1
profile: workspace
workspace: ./ws
export:
  endpoint: %s
  spool: ./spool
  agent: e2e-mcp-binary
mcp:
  call_timeout: 20s
  upstreams:
    - name: fs
      command: [%q, %q]
      roots: [./ws]
`, s.collector.GRPCEndpoint, fsServer, ws)), 0o644))

	cmd := exec.Command(bin, "mcp", "--policy", pol)
	cmd.Env = append(os.Environ(), "TOOLGATE_OTLP_TOKEN="+s.collector.Token, "OTEL_SERVICE_NAME=")
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-binary", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "stderr: %s", stderr.String())
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs_read_text_file", Arguments: map[string]any{"path": filepath.Join(ws, "a.txt")}})
	require.NoError(t, err, stderr.String())
	require.False(t, r.IsError, textOf(r))
	require.Contains(t, textOf(r), "alpha")
	// (Not a temp directory: the workspace profile lets writes there run.)
	out := "/etc/cron.d/toolgate-e2e-binary"
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs_write_file", Arguments: map[string]any{"path": out, "content": "x"}})
	require.NoError(t, err)
	require.True(t, r.IsError, textOf(r))
	require.Contains(t, textOf(r), "toolgate denied")
	require.NoFileExists(t, out)
	require.NoError(t, cs.Close())
	_ = cmd.Wait()

	ds := auditqDecisions(ctx, t, s, "toolgate-mcp", 2)
	require.Len(t, ds, 2, "%+v\nstderr: %s", ds, stderr.String())
	actions := map[string]string{}
	for _, d := range ds {
		actions[d.ToolName] = d.Action
	}
	assert.Equal(t, map[string]string{"fs_read_text_file": "allow", "fs_write_file": "deny"}, actions)
}

// A malformed line on the binary's stdin is answered with a JSON-RPC
// error, and the session goes on to answer the next request.
func TestMCPGatewayBinaryMalformed(t *testing.T) {
	npm := mcpNPM(t)
	fsServer := filepath.Join(npm, "node_modules", ".bin", "mcp-server-filesystem")
	bin := testenv.GoBinary(t, "./cmd/toolgate")
	dir := t.TempDir()
	pol := filepath.Join(dir, "toolgate.yaml")
	require.NoError(t, os.WriteFile(pol, []byte(fmt.Sprintf("version: 1\nworkspace: .\nexport:\n  endpoint: 127.0.0.1:1\n  spool: ./spool\nmcp:\n  upstreams:\n    - name: fs\n      command: [%q, %q]\n", fsServer, dir)), 0o644))
	cctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, "mcp", "--policy", pol, "--quiet")
	stdin, err := cmd.StdinPipe() // kept open, as a client does, until the last answer
	require.NoError(t, err)
	var stdout testenv.SyncBuffer
	cmd.Stdout = &stdout
	require.NoError(t, cmd.Start())
	for _, l := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`,
		`[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
	} {
		_, err := io.WriteString(stdin, l+"\n")
		require.NoError(t, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stdout.String(), `"id":4`) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	_ = stdin.Close()
	_ = cmd.Wait()
	out := stdout.String()
	require.Contains(t, out, `"code":-32700`, out)
	require.Contains(t, out, `"code":-32600`, out)
	require.Contains(t, out, `"id":4`, out)
	require.Contains(t, out, "fs_read_text_file", out)
}

// The MCP conformance runner (@modelcontextprotocol/conformance 0.1.13)
// against the gateway over streamable HTTP, in front of server-everything.
// The protocol-level scenarios pass; the tool, prompt and resource
// scenarios expect the runner's own reference server (tools named
// test_simple_text, …; prompts and resources, which the gateway does not
// present), so they are not run here — docs/mcp-gateway.md lists the full
// result.
func TestMCPGatewayConformance(t *testing.T) {
	npm := mcpNPM(t)
	runner := filepath.Join(npm, "node_modules", ".bin", "conformance")
	if _, err := os.Stat(runner); err != nil {
		t.Fatalf("conformance runner missing (make mcpservers): %v", err)
	}
	ev := filepath.Join(npm, "node_modules", ".bin", "mcp-server-everything")
	ctx := context.Background()
	gw, err := mcpgate.New(ctx, []mcpgate.Upstream{{Name: "ev", Command: []string{ev, "stdio"}, Trusted: true}},
		mcpgate.WithClassifier(classify.WithWorkspace(t.TempDir())))
	require.NoError(t, err)
	defer gw.Close()
	l, err := mcpgate.Listen("127.0.0.1:0")
	require.NoError(t, err)
	hctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- gw.ServeHTTP(hctx, l) }()
	defer func() { stop(); <-served }()
	for _, scenario := range []string{"server-initialize", "ping", "logging-set-level", "tools-list",
		"server-sse-multiple-streams", "dns-rebinding-protection"} {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		cmd := exec.CommandContext(cctx, runner, "server", "--url", "http://"+l.Addr().String()+"/mcp", "--scenario", scenario,
			"-o", t.TempDir())
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		cancel()
		assert.NoError(t, err, "conformance %s:\n%s", scenario, out)
		assert.Contains(t, string(out), "0 failed", "conformance %s:\n%s", scenario, out)
	}
}

// A client that ends the gateway right after its call — the MCP Inspector
// CLI over stdio closes the gateway's pipes and stops it at once — still
// gets its decisions into ClickHouse without `toolgate flush`: a write to
// the closed stdout or stderr fails instead of ending the process
// (SIGPIPE), so the gateway's last upload runs. Also the bare form: the
// client closes stdout and stderr, then sends SIGTERM.
func TestMCPGatewayUploadsWhenTheClientVanishes(t *testing.T) {
	npm := mcpNPM(t)
	fsServer := filepath.Join(npm, "node_modules", ".bin", "mcp-server-filesystem")
	bin := testenv.GoBinary(t, "./cmd/toolgate")
	s := startStack(t, withoutJaeger())
	ctx := context.Background()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha"), 0o644))
	pol := filepath.Join(dir, "toolgate.yaml")
	require.NoError(t, os.WriteFile(pol, []byte(fmt.Sprintf(`version: 1
profile: workspace
workspace: ./ws
export:
  endpoint: %s
  spool: ./spool
mcp:
  upstreams:
    - name: fs
      command: [%q, %q]
      roots: [./ws]
`, s.collector.GRPCEndpoint, fsServer, ws)), 0o644))

	// The Inspector CLI starts the gateway with a minimal environment
	// (its -e flags add to it) and stops it as soon as it has the answer.
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, filepath.Join(npm, "node_modules", ".bin", "mcp-inspector"),
		"--cli", "-e", "TOOLGATE_OTLP_TOKEN="+s.collector.Token, bin, "mcp", "--policy", pol, "--quiet",
		"--method", "tools/call", "--tool-name", "fs_read_text_file", "--tool-arg", "path="+filepath.Join(ws, "a.txt"))
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "inspector:\n%s", out)
	require.Contains(t, string(out), "alpha")
	ds := auditqDecisions(ctx, t, s, "toolgate-mcp", 1)
	require.Len(t, ds, 1, "the Inspector's call, uploaded without toolgate flush")
	assert.Equal(t, "allow", ds[0].Action)

	// The bare form: a call, then the client closes the gateway's stdout
	// and stderr and sends SIGTERM.
	g := exec.CommandContext(cctx, bin, "mcp", "--policy", pol)
	g.Env = append(os.Environ(), "TOOLGATE_OTLP_TOKEN="+s.collector.Token, "OTEL_SERVICE_NAME=")
	stdin, err := g.StdinPipe()
	require.NoError(t, err)
	stdout, err := g.StdoutPipe()
	require.NoError(t, err)
	stderr, err := g.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, g.Start())
	for _, l := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_write_file","arguments":{"path":"/etc/cron.d/toolgate-e2e-vanish","content":"x"}}}`,
	} {
		_, err := io.WriteString(stdin, l+"\n")
		require.NoError(t, err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && !strings.Contains(sc.Text(), `"id":2`) {
	}
	require.Contains(t, sc.Text(), `"isError":true`)
	_ = stdout.Close()
	_ = stderr.Close()
	require.NoError(t, g.Process.Signal(syscall.SIGTERM))
	err = g.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		st, _ := ee.Sys().(syscall.WaitStatus)
		require.False(t, st.Signaled(), "the gateway was killed by %v", st.Signal())
	}
	ds = auditqDecisions(ctx, t, s, "toolgate-mcp", 2)
	require.Len(t, ds, 2, "both calls, uploaded without toolgate flush: %+v", ds)
	require.NoFileExists(t, "/etc/cron.d/toolgate-e2e-vanish")
}

// An upstream's own elicitation (server-everything's
// trigger-elicitation-request) reaches the person behind the one client
// call that is running, marked with the upstream's name, and the answer
// goes back to the upstream; a client that declared no elicitation, or one
// on 2026-07-28 (no server-initiated requests), gets the upstream's
// "declined" result instead. The call itself is gated as any other.
func TestMCPGatewayPassesUpstreamElicitation(t *testing.T) {
	npm := mcpNPM(t)
	ev := filepath.Join(npm, "node_modules", ".bin", "mcp-server-everything")
	ctx := context.Background()
	up := mcpgate.Upstream{Name: "ev", Command: []string{ev, "stdio"},
		Tools: []mcpgate.Rule{{Match: "trigger-elicitation-request", Kind: mcpgate.KindAllow, Reason: "e2e: asks the user itself"}}}
	gw, err := mcpgate.New(ctx, []mcpgate.Upstream{up}, mcpgate.WithClassifier(classify.WithWorkspace(t.TempDir())))
	require.NoError(t, err)
	defer gw.Close()
	require.NoError(t, gw.Upstreams()[0].Err)
	const tool = "ev_trigger-elicitation-request"
	var names []string
	for _, ti := range gw.Tools() {
		names = append(names, ti.Name)
	}
	require.Contains(t, names, tool, "the upstream offers its elicitation tool to a client that can be asked")

	connect := func(version string, handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := gw.Server().Connect(ctx, st, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ss.Close() })
		c := mcp.NewClient(&mcp.Implementation{Name: "e2e-passthrough", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: handler})
		cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	var asked []string
	cs := connect("2025-11-25", func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace", "check": true}}, nil
	})
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, r.IsError, textOf(r))
	require.Len(t, asked, 1)
	require.True(t, strings.HasPrefix(asked[0], "[ev] "), "marked with the upstream's name: %q", asked[0])
	require.Contains(t, textOf(r), "Ada Lovelace", "the person's answer reached the upstream")

	for _, c := range []struct {
		name    string
		version string
		handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	}{
		{"no elicitation", "2025-11-25", nil},
		{"2026-07-28", "2026-07-28", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("a 2026-07-28 client was sent a server-initiated request")
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := connect(c.version, c.handler).CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
			require.NoError(t, err)
			require.Contains(t, strings.ToLower(textOf(r)), "decline", textOf(r))
		})
	}
}
