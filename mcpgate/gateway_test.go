package mcpgate_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/mcpgate"
)

// fakeUpstream is an in-process MCP server whose tools record what reached
// them.
type fakeUpstream struct {
	server *mcp.Server
	calls  atomic.Int64
	got    chan string // tool names that ran
	mu     sync.Mutex
	ss     []*mcp.ServerSession
	metas  []mcp.Meta // each call's params._meta, in order
}

func newFakeUpstream(t testing.TB, tools ...*mcp.Tool) *fakeUpstream {
	f := &fakeUpstream{server: mcp.NewServer(&mcp.Implementation{Name: mcpgate.FilesystemServerName, Version: "1"}, nil), got: make(chan string, 100)} // it serves the reference filesystem server's tools
	for _, tl := range tools {
		f.server.AddTool(tl, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.calls.Add(1)
			f.mu.Lock()
			f.metas = append(f.metas, req.Params.Meta)
			f.mu.Unlock()
			select {
			case f.got <- req.Params.Name:
			default:
			}
			if req.Params.Name == "slow" {
				select {
				case <-time.After(10 * time.Second):
				case <-ctx.Done():
				}
			}
			if req.Params.Name == "fail" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "upstream says no"}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + req.Params.Name + " " + string(req.Params.Arguments)}}}, nil
		})
	}
	return f
}

func (f *fakeUpstream) transport(t testing.TB) func() mcp.Transport {
	return func() mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := f.server.Connect(context.Background(), st, nil)
		require.NoError(t, err)
		f.mu.Lock()
		f.ss = append(f.ss, ss)
		f.mu.Unlock()
		t.Cleanup(func() { _ = ss.Close() })
		return ct
	}
}

func schema(fields ...string) json.RawMessage {
	props := map[string]any{}
	for _, f := range fields {
		props[f] = map[string]any{"type": "string"}
	}
	if fields == nil {
		fields = []string{}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": fields})
	return b
}

func fileTools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "read_text_file", InputSchema: schema("path")},
		{Name: "write_file", InputSchema: schema("path", "content")},
		{Name: "move_file", InputSchema: schema("source", "destination")},
		{Name: "run", InputSchema: schema("command")},
		{Name: "echo", InputSchema: schema("message")},
		{Name: "secret_tool", InputSchema: schema()},
		{Name: "slow", InputSchema: schema()},
		{Name: "fail", InputSchema: schema()},
		{Name: "bad.name with spaces", InputSchema: schema()},
	}
}

type env struct {
	gw     *mcpgate.Gateway
	up     *fakeUpstream
	spans  *tracetest.InMemoryExporter
	ws     string
	client *mcp.ClientSession
}

func newEnv(t *testing.T, clientOpts *mcp.ClientOptions, sessOpts *mcp.ClientSessionOptions, opts ...mcpgate.Option) *env {
	t.Helper()
	ws := t.TempDir()
	up := newFakeUpstream(t, fileTools()...)
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	u := mcpgate.Upstream{Name: "fs", Hide: []string{"secret_*"},
		Tools: []mcpgate.Rule{{Match: "run", Kind: mcpgate.KindShell}, {Match: "fail", Kind: mcpgate.KindAllow}, {Match: "slow", Kind: mcpgate.KindAllow}}}
	base := []mcpgate.Option{mcpgate.WithTransport("fs", up.transport(t)), mcpgate.WithTracerProvider(tp),
		mcpgate.WithClassifier(classify.WithWorkspace(ws)), mcpgate.WithCallTimeout(300 * time.Millisecond)}
	gw, err := mcpgate.New(context.Background(), []mcpgate.Upstream{u}, append(base, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = gw.Close() })
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, clientOpts)
	cs, err := c.Connect(context.Background(), ct, sessOpts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return &env{gw: gw, up: up, spans: spans, ws: ws, client: cs}
}

func (e *env) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := e.client.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, name)
	return res
}

func text(r *mcp.CallToolResult) string {
	var s []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			s = append(s, t.Text)
		}
	}
	return strings.Join(s, "\n")
}

func TestGatewayListsNamespacedAndHides(t *testing.T) {
	e := newEnv(t, nil, nil)
	res, err := e.client.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		require.Regexp(t, mcpgate.ToolNamePattern, tl.Name)
	}
	require.Contains(t, names, "fs_read_text_file")
	require.Contains(t, names, "fs_echo")
	require.NotContains(t, names, "fs_secret_tool")
	for _, n := range names {
		require.NotContains(t, n, "secret")
	}
	// A hidden tool is not callable either: a protocol error, and the
	// upstream never sees it.
	_, err = e.client.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs_secret_tool", Arguments: map[string]any{}})
	require.Error(t, err)
	require.Zero(t, e.up.calls.Load())
	// ... and it is a recorded decision: refused at the registry.
	var stage string
	for _, s := range e.spans.GetSpans() {
		if s.Name == "execute_tool" { // an unknown name is no span-name target
			stage = attrs(s)[gate.AttrStage].AsString()
		}
	}
	require.Equal(t, string(gate.StageRegistry), stage)
}

func TestGatewayDecisions(t *testing.T) {
	e := newEnv(t, nil, nil)
	inside := filepath.Join(e.ws, "notes.txt")
	require.NoError(t, os.WriteFile(inside, []byte("hi"), 0o600))

	// A read inside the workspace runs.
	r := e.call(t, "fs_read_text_file", map[string]any{"path": inside})
	require.False(t, r.IsError, text(r))
	require.Contains(t, text(r), "ran read_text_file")
	require.Equal(t, int64(1), e.up.calls.Load())

	denied := []struct {
		tool string
		args map[string]any
	}{
		{"fs_write_file", map[string]any{"path": "/etc/passwd", "content": "x"}},
		{"fs_write_file", map[string]any{"path": filepath.Join(e.ws, "..", "..", "etc", "cron.d", "x"), "content": "x"}},
		{"fs_move_file", map[string]any{"source": inside, "destination": "/etc/profile.d/x.sh"}},
		{"fs_run", map[string]any{"command": "rm -rf /"}},
		{"fs_echo", map[string]any{"message": "hi"}}, // no rule, untrusted: ask, no elicitation, no approver: deny
	}
	for _, d := range denied {
		r := e.call(t, d.tool, d.args)
		require.True(t, r.IsError, "%s %v: %s", d.tool, d.args, text(r))
		require.Contains(t, text(r), "toolgate denied this tool call")
		require.Contains(t, text(r), "Do not retry")
	}
	require.Equal(t, int64(1), e.up.calls.Load(), "no denied call reached the upstream")

	// Input that does not match the upstream's schema: a tool error, not run.
	r = e.call(t, "fs_read_text_file", map[string]any{"path": 42})
	require.True(t, r.IsError)
	require.Equal(t, int64(1), e.up.calls.Load())
}

func TestGatewayUpstreamFaults(t *testing.T) {
	e := newEnv(t, nil, nil)
	r := e.call(t, "fs_fail", map[string]any{})
	require.True(t, r.IsError)
	require.Contains(t, text(r), "upstream says no")

	start := time.Now()
	r = e.call(t, "fs_slow", map[string]any{})
	require.True(t, r.IsError)
	require.Contains(t, text(r), "did not answer")
	require.Less(t, time.Since(start), 5*time.Second)
	// The gateway still serves.
	r = e.call(t, "fs_fail", map[string]any{})
	require.Contains(t, text(r), "upstream says no")
}

func TestGatewayBrokenUpstreamDoesNotHideOthers(t *testing.T) {
	up := newFakeUpstream(t, &mcp.Tool{Name: "echo", InputSchema: schema("message")})
	ups := []mcpgate.Upstream{
		{Name: "broken", Command: []string{"/nonexistent/mcp-server"}},
		{Name: "crashes", Command: []string{"sh", "-c", "echo not json; exit 3"}},
		{Name: "ok", Tools: []mcpgate.Rule{{Match: "echo", Kind: mcpgate.KindAllow}}},
	}
	gw, err := mcpgate.New(context.Background(), ups, mcpgate.WithTransport("ok", up.transport(t)), mcpgate.WithConnectTimeout(5*time.Second))
	require.NoError(t, err)
	defer gw.Close()
	st := gw.Upstreams()
	require.Error(t, st[0].Err)
	require.Error(t, st[1].Err)
	require.NoError(t, st[2].Err)
	require.Equal(t, 1, st[2].Tools)
	require.Equal(t, []string{"ok_echo"}, []string{gw.Tools()[0].Name})
}

func TestGatewayConfigErrors(t *testing.T) {
	for _, u := range []mcpgate.Upstream{
		{Name: "has space", Command: []string{"x"}},
		{Name: "a", Command: []string{"x"}, URL: "http://127.0.0.1:1/mcp"},
		{Name: "a"},
		{Name: "a", URL: "ftp://x"},
		{Name: "a", Command: []string{"x"}, Roots: []string{"relative"}},
		{Name: "a", Command: []string{"x"}, Tools: []mcpgate.Rule{{Match: "x", Kind: "bogus"}}},
		{Name: "a", Command: []string{"x"}, Hide: []string{"["}},
	} {
		_, err := mcpgate.New(context.Background(), []mcpgate.Upstream{u})
		require.ErrorIs(t, err, mcpgate.ErrConfig, "%+v", u)
	}
}

// An upstream that goes away mid-session makes its calls error results;
// the other upstream's tools keep working.
func TestGatewayUpstreamCrash(t *testing.T) {
	a := newFakeUpstream(t, &mcp.Tool{Name: "echo", InputSchema: schema("message")})
	b := newFakeUpstream(t, &mcp.Tool{Name: "echo", InputSchema: schema("message")})
	allow := []mcpgate.Rule{{Match: "echo", Kind: mcpgate.KindAllow}}
	gw, err := mcpgate.New(context.Background(), []mcpgate.Upstream{{Name: "a", Tools: allow}, {Name: "b", Tools: allow}},
		mcpgate.WithTransport("a", a.transport(t)), mcpgate.WithTransport("b", b.transport(t)))
	require.NoError(t, err)
	defer gw.Close()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	e := &env{client: cs}
	require.Contains(t, text(e.call(t, "a_echo", map[string]any{"message": "1"})), "ran echo")
	a.mu.Lock()
	for _, s := range a.ss {
		require.NoError(t, s.Close())
	}
	a.mu.Unlock()
	r := e.call(t, "a_echo", map[string]any{"message": "2"})
	require.True(t, r.IsError)
	require.Contains(t, text(r), "upstream a")
	require.Contains(t, text(e.call(t, "b_echo", map[string]any{"message": "3"})), "ran echo")
}

// The policy file cannot be written, moved over or deleted through the
// gateway, even inside the workspace where writes are allowed; other
// writes keep the path gate's decision.
func TestGatewayProtectsPolicyFile(t *testing.T) {
	ws := t.TempDir()
	pol := filepath.Join(ws, "toolgate.yaml")
	up := newFakeUpstream(t, fileTools()...)
	spans := tracetest.NewInMemoryExporter()
	gw, err := mcpgate.New(context.Background(), []mcpgate.Upstream{{Name: "fs"}},
		mcpgate.WithTransport("fs", up.transport(t)),
		mcpgate.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))),
		mcpgate.WithClassifier(classify.WithWorkspace(ws), classify.WithProfile(classify.ProfileWorkspace)),
		mcpgate.WithGateOptions(false, classify.WithGateProfile(classify.ProfileWorkspace)),
		mcpgate.WithProtected(ws, pol, filepath.Join(ws, "spool")))
	require.NoError(t, err)
	defer gw.Close()
	cs := connectClient(t, gw)
	e := &env{client: cs}
	for _, args := range []struct {
		tool string
		in   map[string]any
	}{
		{"fs_write_file", map[string]any{"path": pol, "content": "profile: workspace"}},
		{"fs_write_file", map[string]any{"path": filepath.Join(ws, "spool", "slot-00", "seg-000001.log"), "content": "x"}},
		{"fs_write_file", map[string]any{"path": "spool/x", "content": "x"}},
		{"fs_move_file", map[string]any{"source": filepath.Join(ws, "spool"), "destination": filepath.Join(ws, "gone")}},
		{"fs_write_file", map[string]any{"path": "toolgate.yaml", "content": "x"}},
		{"fs_write_file", map[string]any{"path": filepath.Join(ws, "sub", "..", "toolgate.yaml"), "content": "x"}},
		{"fs_move_file", map[string]any{"source": filepath.Join(ws, "a"), "destination": pol}},
		{"fs_move_file", map[string]any{"source": pol, "destination": filepath.Join(ws, "b")}},
	} {
		r := e.call(t, args.tool, args.in)
		require.True(t, r.IsError, "%v: %s", args, text(r))
		require.Contains(t, text(r), "cannot be changed through the gate")
	}
	require.Zero(t, up.calls.Load())
	r := e.call(t, "fs_write_file", map[string]any{"path": filepath.Join(ws, "notes.txt"), "content": "x"})
	require.False(t, r.IsError, text(r))
	var src string
	for _, s := range spans.GetSpans() {
		if s.Name == "execute_tool fs_write_file" {
			src = attrs(s)[gate.AttrSource].AsString()
		}
	}
	require.Equal(t, "classify.path", src, "an allowed write keeps the path gate as its source")
}

// A file tool's path outside the roots the gateway gives its upstream is
// denied before the upstream sees it, even where the classifier allows the
// path (a temp directory beside a workspace in /tmp: before, such a write
// reached the upstream, which alone refused it).
func TestGatewayDeniesPathsOutsideTheUpstreamsRoots(t *testing.T) {
	ws := t.TempDir()
	other := t.TempDir() // a temp directory too: the classifier lets writes there run
	up := newFakeUpstream(t, fileTools()...)
	gw, err := mcpgate.New(context.Background(), []mcpgate.Upstream{{Name: "fs", Roots: []string{ws}}},
		mcpgate.WithTransport("fs", up.transport(t)),
		mcpgate.WithClassifier(classify.WithWorkspace(ws), classify.WithProfile(classify.ProfileWorkspace)),
		mcpgate.WithGateOptions(false, classify.WithGateProfile(classify.ProfileWorkspace)))
	require.NoError(t, err)
	defer gw.Close()
	e := &env{client: connectClient(t, gw)}
	for _, c := range []struct {
		tool string
		in   map[string]any
	}{
		{"fs_write_file", map[string]any{"path": filepath.Join(other, "x.txt"), "content": "y"}},
		{"fs_write_file", map[string]any{"path": "../" + filepath.Base(other) + "/x.txt", "content": "y"}},
		{"fs_write_file", map[string]any{"path": ws + "/../" + filepath.Base(other) + "/x.txt", "content": "y"}},
		{"fs_read_text_file", map[string]any{"path": filepath.Join(other, "secret")}},
		{"fs_move_file", map[string]any{"source": filepath.Join(ws, "a"), "destination": filepath.Join(other, "a")}},
		{"fs_write_file", map[string]any{"path": ws + "-evil/x", "content": "a root's prefix is not the root"}},
	} {
		r := e.call(t, c.tool, c.in)
		require.True(t, r.IsError, "%v: %s", c, text(r))
		require.Contains(t, text(r), "outside the roots of upstream fs", "%v", c)
	}
	require.Zero(t, up.calls.Load(), "the upstream saw none of them")
	for _, c := range []struct {
		tool string
		in   map[string]any
	}{
		{"fs_write_file", map[string]any{"path": filepath.Join(ws, "ok.txt"), "content": "y"}},
		{"fs_write_file", map[string]any{"path": "sub/ok.txt", "content": "y"}},
		{"fs_read_text_file", map[string]any{"path": ws}},
	} {
		r := e.call(t, c.tool, c.in)
		require.False(t, r.IsError, "%v: %s", c, text(r))
	}
}

// A remote (URL) upstream's tool names are its own claims: a tool it calls
// list_allowed_directories or read_text_file is not judged by the built-in
// filesystem table (before: list_allowed_directories was allowed with any
// arguments, read_text_file allowed on a workspace path), but by its
// untrusted annotations — a person is asked (declined here: no elicitation,
// no approver) — unless the upstream's own rules say otherwise.
func TestGatewayBuiltinRulesSkipRemoteUpstreams(t *testing.T) {
	ws := t.TempDir()
	tools := []*mcp.Tool{{Name: "list_allowed_directories", InputSchema: schema("to")}, {Name: "read_text_file", InputSchema: schema("path")},
		{Name: "write_file", InputSchema: schema("path", "content")}}
	remote, local := newFakeUpstream(t, tools...), newFakeUpstream(t, tools...)
	gw, err := mcpgate.New(context.Background(), []mcpgate.Upstream{
		{Name: "remote", URL: "https://mcp.example.com/mcp", Tools: []mcpgate.Rule{{Match: "write_file", Kind: mcpgate.KindWrite}}},
		{Name: "local"}},
		mcpgate.WithTransport("remote", remote.transport(t)), mcpgate.WithTransport("local", local.transport(t)),
		mcpgate.WithClassifier(classify.WithWorkspace(ws), classify.WithProfile(classify.ProfileWorkspace)),
		mcpgate.WithGateOptions(false, classify.WithGateProfile(classify.ProfileWorkspace)))
	require.NoError(t, err)
	defer gw.Close()
	rules := map[string]string{}
	for _, ti := range gw.Tools() {
		rules[ti.Name] = ti.Rule
	}
	require.Equal(t, "annotations", rules["remote_list_allowed_directories"])
	require.Equal(t, "annotations", rules["remote_read_text_file"])
	require.Equal(t, "upstream rule write_file", rules["remote_write_file"], "the upstream's own rules still apply")
	require.Equal(t, "built-in rule list_allowed_directories", rules["local_list_allowed_directories"])
	e := &env{client: connectClient(t, gw)}
	for _, c := range []struct {
		tool string
		in   map[string]any
	}{
		{"remote_list_allowed_directories", map[string]any{"to": "attacker@example.com"}},
		{"remote_read_text_file", map[string]any{"path": filepath.Join(ws, "a.txt")}},
	} {
		r := e.call(t, c.tool, c.in)
		require.True(t, r.IsError, "%s: %s", c.tool, text(r))
	}
	require.Zero(t, remote.calls.Load())
	require.False(t, e.call(t, "remote_write_file", map[string]any{"path": filepath.Join(ws, "a.txt"), "content": "x"}).IsError)
	require.False(t, e.call(t, "local_read_text_file", map[string]any{"path": filepath.Join(ws, "a.txt")}).IsError)
}

// The built-in table is the reference filesystem server's: a command
// upstream that is another server (its initialize names another
// serverInfo) gets no built-in rule for tools of the same names — its
// list_allowed_directories may mail a file, its read_file fetch a URL.
func TestGatewayBuiltinRulesOnlyForTheFilesystemServer(t *testing.T) {
	ws := t.TempDir()
	other := &fakeUpstream{server: mcp.NewServer(&mcp.Implementation{Name: "acme-tools", Version: "1"}, nil), got: make(chan string, 100)}
	for _, tl := range []*mcp.Tool{{Name: "list_allowed_directories", InputSchema: schema("to")}, {Name: "read_file", InputSchema: schema("path")}} {
		other.server.AddTool(tl, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			other.calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
		})
	}
	gw, err := mcpgate.New(context.Background(), []mcpgate.Upstream{{Name: "acme", Command: []string{"unused"}}},
		mcpgate.WithTransport("acme", other.transport(t)), mcpgate.WithClassifier(classify.WithWorkspace(ws)))
	require.NoError(t, err)
	defer gw.Close()
	for _, ti := range gw.Tools() {
		require.Equal(t, "annotations", ti.Rule, ti.Name)
	}
	e := &env{client: connectClient(t, gw)}
	require.True(t, e.call(t, "acme_list_allowed_directories", map[string]any{"to": "attacker@example.com"}).IsError)
	require.True(t, e.call(t, "acme_read_file", map[string]any{"path": filepath.Join(ws, "a.txt")}).IsError)
	require.Zero(t, other.calls.Load())
}
