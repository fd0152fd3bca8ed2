package mcpgate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// ErrConfig is wrapped by New's errors about the upstream configuration.
var ErrConfig = errors.New("mcpgate: invalid configuration")

// Gateway is an MCP server that presents the tools of its upstream MCP
// servers and runs every tools/call through the executor: the upstream
// tool's input schema is validated, the gate decides, and only an allowed
// call is forwarded. Safe for concurrent use. Make it with New; serve it
// with ServeStdio or Handler; end it with Close.
type Gateway struct {
	cfg       config
	server    *mcp.Server
	run       *executor.Run
	tracer    trace.Tracer
	ups       []*upstreamConn
	tools     map[string]*presentedTool // by presented name
	pending   *pendingStore
	suspended suspendedStore
	closeMu   sync.Mutex
	closed    bool
}

// presentedTool is one upstream tool as the gateway presents it.
type presentedTool struct {
	up        *upstreamConn
	name      string // the upstream's own name
	presented string
	tool      *mcp.Tool
	rule      string // what decides it: "upstream rule X", "built-in rule X", "annotations"
}

// upstreamConn is a connected (or failed) upstream.
type upstreamConn struct {
	cfg      Upstream
	session  *mcp.ClientSession
	err      error
	inflight inflight // client calls forwarded to it, running
}

// ToolInfo describes a presented tool (Gateway.Tools).
type ToolInfo struct {
	Name     string // the presented name
	Upstream string
	Tool     string // the upstream's own name
	Rule     string // what decides its calls
}

// UpstreamStatus is an upstream's state after New (Gateway.Upstreams).
type UpstreamStatus struct {
	Name  string
	Tools int   // tools presented
	Err   error // why it is not connected (nil when connected)
}

// New connects to every upstream (concurrently, each within the connect
// timeout), lists their tools, and builds the executor and the MCP server.
// An upstream that fails to start, initialize or list its tools is logged
// and left out (Upstreams reports it); the others still serve. A tool the
// executor cannot register (a schema it cannot compile) or whose rule
// cannot be built is logged and not presented (fail closed). Errors: an
// invalid or duplicate upstream configuration (ErrConfig), or an executor
// set-up failure.
func New(ctx context.Context, upstreams []Upstream, opts ...Option) (*Gateway, error) {
	cfg := config{agent: DefaultAgentName, callTimeout: DefaultCallTimeout, connectTimeout: DefaultConnectTimeout,
		approvalTimeout: DefaultApprovalTimeout, version: "devel"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.tp == nil {
		cfg.tp = noop.NewTracerProvider()
	}
	if cfg.runID == "" {
		cfg.runID = "mcp-" + randomHex(8)
	}
	seen := map[string]bool{}
	for _, u := range upstreams {
		if err := u.Validate(cfg.transports[u.Name] != nil); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		if seen[u.Name] {
			return nil, fmt.Errorf("%w: upstream name %q used twice", ErrConfig, u.Name)
		}
		seen[u.Name] = true
	}
	g := &Gateway{cfg: cfg, tracer: cfg.tp.Tracer("github.com/toolgate/toolgate/mcpgate"), tools: map[string]*presentedTool{},
		pending: newPendingStore(cfg.approvalTimeout)}

	// Connect.
	g.ups = make([]*upstreamConn, len(upstreams))
	lists := make([][]*mcp.Tool, len(upstreams))
	var wg sync.WaitGroup
	for i, u := range upstreams {
		g.ups[i] = &upstreamConn{cfg: u}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, cfg.connectTimeout)
			defer cancel()
			lists[i], g.ups[i].err = g.connect(cctx, g.ups[i])
			if g.ups[i].err != nil {
				cfg.logger.Error("mcpgate: upstream unavailable; its tools are not presented", "upstream", u.Name, "target", u.describe(), "err", g.ups[i].err)
			}
		})
	}
	wg.Wait()

	// Name the tools.
	var refs []ToolRef
	byRef := map[ToolRef]struct {
		up *upstreamConn
		t  *mcp.Tool
	}{}
	for i, up := range g.ups {
		for _, t := range lists[i] {
			if up.cfg.hidden(t.Name) {
				continue
			}
			r := ToolRef{Upstream: up.cfg.Name, Tool: t.Name}
			if _, dup := byRef[r]; dup {
				cfg.logger.Warn("mcpgate: upstream lists a tool twice; the first is presented", "upstream", up.cfg.Name, "tool", t.Name)
				continue
			}
			refs = append(refs, r)
			byRef[r] = struct {
				up *upstreamConn
				t  *mcp.Tool
			}{up, t}
		}
	}
	names := PresentedNames(refs)

	// Register, gate.
	reg, err := executor.NewRegistry()
	if err != nil {
		return nil, fmt.Errorf("mcpgate: registry: %w", err)
	}
	pc := policyConfig{classifier: cfg.classifier, gateOpts: cfg.gateOpts, readOnly: cfg.readOnly,
		protectBase: cfg.protectBase, protected: cfg.protected}
	gates := map[string]gate.Gate{}
	for _, r := range refs {
		presented, ok := names[r]
		if !ok {
			cfg.logger.Warn("mcpgate: no unique name for tool; not presented", "upstream", r.Upstream, "tool", r.Tool)
			continue
		}
		e := byRef[r]
		pt := &presentedTool{up: e.up, name: r.Tool, presented: presented, tool: e.t}
		ann := untrustedAnnotations()
		if e.up.cfg.Trusted && e.t.Annotations != nil {
			ann = gate.Annotations{ReadOnlyHint: e.t.Annotations.ReadOnlyHint, DestructiveHint: e.t.Annotations.DestructiveHint,
				IdempotentHint: e.t.Annotations.IdempotentHint, OpenWorldHint: e.t.Annotations.OpenWorldHint}
		}
		server := ""
		if e.up.session != nil && e.up.session.InitializeResult() != nil && e.up.session.InitializeResult().ServerInfo != nil {
			server = e.up.session.InitializeResult().ServerInfo.Name
		}
		gt, origin, err := pc.buildGate(toolPolicy{upstream: &e.up.cfg, server: server, tool: r.Tool, presented: presented, annotations: ann})
		if err != nil {
			cfg.logger.Error("mcpgate: tool's rule cannot be built; not presented", "tool", presented, "err", err)
			continue
		}
		schema, err := json.Marshal(e.t.InputSchema)
		if err != nil || len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		et := executor.Tool{Name: presented, Description: e.t.Description, InputSchema: schema, Annotations: ann,
			Type: executor.ToolTypeExtension, Execute: g.forward(pt)}
		if err := reg.Register(et); err != nil {
			cfg.logger.Error("mcpgate: tool cannot be registered; not presented", "tool", presented, "err", err)
			continue
		}
		pt.rule = origin
		gates[presented] = gt
		g.tools[presented] = pt
	}

	eopts := []executor.Option{
		executor.WithGates(gate.Named(SourceRouter, router{gates: gates})),
		executor.WithApprover(approverRouter{pending: g.pending, fallback: cfg.approver}),
		executor.WithApprovalTimeout(cfg.approvalTimeout),
		executor.WithRefusalBudget(-1),
		executor.WithTracerProvider(cfg.tp),
	}
	ex, err := executor.New(reg, append(eopts, cfg.execOpts...)...)
	if err != nil {
		g.closeUpstreams()
		return nil, fmt.Errorf("mcpgate: executor: %w", err)
	}
	agent, err := ex.Agent(cfg.agent, executor.AgentAllow(reg.Names()...))
	if err != nil {
		g.closeUpstreams()
		return nil, fmt.Errorf("mcpgate: agent: %w", err)
	}
	g.run = agent.Run(cfg.runID)
	// Start the run's invoke_agent span now, as a trace of its own: each
	// call's execute_tool span is then the child of its tools/call server
	// span (in the client's trace when it sends a traceparent) and links to
	// the run span, for the first call as for every later one.
	_ = g.run.Context(context.WithoutCancel(ctx))

	sopts := &mcp.ServerOptions{Logger: cfg.logger, HasTools: true}
	if cfg.serverOpts != nil {
		cfg.serverOpts(sopts)
	}
	g.server = mcp.NewServer(&mcp.Implementation{Name: "toolgate-mcp", Title: "toolgate MCP gateway", Version: cfg.version}, sopts)
	g.server.AddReceivingMiddleware(g.recordUnknown)
	for _, name := range slices.Sorted(maps.Keys(g.tools)) {
		pt := g.tools[name]
		g.server.AddTool(&mcp.Tool{Name: name, Title: pt.tool.Title, Description: pt.tool.Description,
			InputSchema: jsonOrObject(pt.tool.InputSchema), OutputSchema: pt.tool.OutputSchema,
			Annotations: pt.tool.Annotations, Icons: pt.tool.Icons}, g.handle(pt))
	}
	return g, nil
}

// connect starts (or dials) the upstream, initializes the session and
// lists its tools.
func (g *Gateway) connect(ctx context.Context, up *upstreamConn) ([]*mcp.Tool, error) {
	var t mcp.Transport
	switch {
	case g.cfg.transports[up.cfg.Name] != nil:
		t = g.cfg.transports[up.cfg.Name]()
	case up.cfg.URL != "":
		t = &mcp.StreamableClientTransport{Endpoint: up.cfg.URL, DisableStandaloneSSE: true}
	default:
		// Not CommandContext(ctx): ctx bounds the connection only; the
		// process lives until Close.
		cmd := exec.Command(up.cfg.Command[0], up.cfg.Command[1:]...)
		cmd.Env = os.Environ()
		for _, k := range slices.Sorted(maps.Keys(up.cfg.Env)) {
			cmd.Env = append(cmd.Env, k+"="+up.cfg.Env[k])
		}
		cmd.Stderr = &logWriter{l: g.cfg.logger, upstream: up.cfg.Name}
		t = &mcp.CommandTransport{Command: cmd}
	}
	copts := &mcp.ClientOptions{Logger: g.cfg.logger, ElicitationHandler: g.passElicitation(up)}
	if len(up.cfg.Roots) == 0 {
		// No roots capability: the upstream keeps its own directories.
		copts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "toolgate-mcp", Version: g.cfg.version}, copts)
	if len(up.cfg.Roots) > 0 {
		roots := make([]*mcp.Root, 0, len(up.cfg.Roots))
		for i, u := range up.cfg.rootURIs() {
			roots = append(roots, &mcp.Root{URI: u, Name: fmt.Sprintf("%s root %d", up.cfg.Name, i)})
		}
		c.AddRoots(roots...) //nolint:staticcheck // roots are deprecated in 2026-07-28 but are what the filesystem server reads
	}
	s, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	up.session = s
	var tools []*mcp.Tool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			_ = s.Close()
			up.session = nil
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// Server is the gateway's MCP server (to Run on a transport of your own).
func (g *Gateway) Server() *mcp.Server { return g.server }

// ServeStdio serves one client over stdin/stdout until it disconnects or
// ctx ends; a malformed line is answered with a JSON-RPC error and does not
// end the session (FilteredStdio).
func (g *Gateway) ServeStdio(ctx context.Context) error {
	return g.server.Run(ctx, FilteredStdio(os.Stdin, os.Stdout, g.cfg.logger))
}

// Tools lists the presented tools, sorted by name.
func (g *Gateway) Tools() []ToolInfo {
	out := make([]ToolInfo, 0, len(g.tools))
	for _, n := range slices.Sorted(maps.Keys(g.tools)) {
		pt := g.tools[n]
		out = append(out, ToolInfo{Name: n, Upstream: pt.up.cfg.Name, Tool: pt.name, Rule: pt.rule})
	}
	return out
}

// Upstreams reports each upstream's state, in configuration order.
func (g *Gateway) Upstreams() []UpstreamStatus {
	out := make([]UpstreamStatus, 0, len(g.ups))
	for _, up := range g.ups {
		n := 0
		for _, pt := range g.tools {
			if pt.up == up {
				n++
			}
		}
		out = append(out, UpstreamStatus{Name: up.cfg.Name, Tools: n, Err: up.err})
	}
	return out
}

// RunID is the run every call of this gateway belongs to.
func (g *Gateway) RunID() string { return g.run.ID() }

// Close ends the run (recording its chain's length and head) and closes
// every upstream session (stopping the processes it started). Idempotent.
func (g *Gateway) Close() error {
	g.closeMu.Lock()
	defer g.closeMu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	g.run.End()
	return g.closeUpstreams()
}

func (g *Gateway) closeUpstreams() error {
	var errs []error
	for _, up := range g.ups {
		if up.session != nil {
			if err := up.session.Close(); err != nil {
				errs = append(errs, fmt.Errorf("upstream %s: %w", up.cfg.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// untrustedAnnotations are MCP's defaults: not read-only, destructive,
// open-world.
func untrustedAnnotations() gate.Annotations {
	t := true
	return gate.Annotations{DestructiveHint: &t, OpenWorldHint: &t}
}

func jsonOrObject(s any) any {
	if s == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// logWriter sends an upstream's stderr to the logger, line by line.
type logWriter struct {
	l        *slog.Logger
	upstream string
	mu       sync.Mutex
	buf      []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := slices.Index(w.buf, '\n')
		if i < 0 {
			break
		}
		w.l.Info("upstream stderr", "upstream", w.upstream, "line", string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 {
		w.l.Info("upstream stderr", "upstream", w.upstream, "line", string(w.buf))
		w.buf = w.buf[:0]
	}
	return len(p), nil
}
