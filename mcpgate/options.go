package mcpgate

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// Defaults.
const (
	DefaultAgentName       = "mcp-gateway"
	DefaultCallTimeout     = 60 * time.Second
	DefaultConnectTimeout  = 45 * time.Second
	DefaultApprovalTimeout = 5 * time.Minute
)

// Option configures a Gateway.
type Option func(*config)

type config struct {
	agent           string
	runID           string
	version         string
	classifier      []classify.Option
	gateOpts        []classify.GateOption
	readOnly        bool
	approver        gate.Approver
	tp              trace.TracerProvider
	callTimeout     time.Duration
	connectTimeout  time.Duration
	approvalTimeout time.Duration
	logger          *slog.Logger
	execOpts        []executor.Option
	transports      map[string]func() mcp.Transport
	serverOpts      func(*mcp.ServerOptions)
	protectBase     string
	protected       []string
}

// WithAgentName sets gen_ai.agent.name on every decision (default
// DefaultAgentName).
func WithAgentName(name string) Option { return func(c *config) { c.agent = name } }

// WithRunID sets the run ID (toolgate.run.id) of the gateway's one run:
// every call the gateway judges until Close is a call of this run (one
// verifiable chain). Default: "mcp-" and 16 random hex digits.
func WithRunID(id string) Option { return func(c *config) { c.runID = id } }

// WithVersion sets the serverInfo version the gateway reports.
func WithVersion(v string) Option { return func(c *config) { c.version = v } }

// WithClassifier sets the options of classify's classifiers behind every
// shell and file rule (workspace, profile, trusted workspace, rules).
func WithClassifier(opts ...classify.Option) Option {
	return func(c *config) { c.classifier = append(c.classifier, opts...) }
}

// WithGateOptions sets classify gate options for every shell and file rule
// (classify.WithGateProfile, classify.WithHighAction). readOnly says that
// the profile is read-only, so that fixed asks (fetch, ask rules and the
// annotation default) deny as well.
func WithGateOptions(readOnly bool, opts ...classify.GateOption) Option {
	return func(c *config) { c.gateOpts = append(c.gateOpts, opts...); c.readOnly = readOnly }
}

// WithApprover sets who answers an ask when the client cannot be asked
// (it declared no elicitation capability). Nil (the default): the ask is
// denied with a reason telling the model that a person must approve it.
// An approver that suspends the call (approve/inbox in Suspend mode,
// gate.ApprovalPending) makes the result an isError telling the model to
// call again with the same arguments once a person approved the request;
// that next identical call resumes the request and runs only on its
// stored answer, once.
func WithApprover(a gate.Approver) Option { return func(c *config) { c.approver = a } }

// WithTracerProvider sets the provider of the gateway's spans (the
// tools/call server span and the executor's execute_tool span; e.g. an
// otelbridge.Provider). Default: a no-op provider.
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithCallTimeout bounds each upstream tools/call (default
// DefaultCallTimeout); a call past it is an error result, the upstream's
// late answer is dropped.
func WithCallTimeout(d time.Duration) Option { return func(c *config) { c.callTimeout = d } }

// WithConnectTimeout bounds starting and initializing each upstream and
// listing its tools (default DefaultConnectTimeout).
func WithConnectTimeout(d time.Duration) Option { return func(c *config) { c.connectTimeout = d } }

// WithApprovalTimeout bounds how long a call waits for an approval
// (default DefaultApprovalTimeout).
func WithApprovalTimeout(d time.Duration) Option { return func(c *config) { c.approvalTimeout = d } }

// WithLogger sets where upstream failures are logged (default: discarded).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithExecutorOptions adds executor options (e.g. executor.WithWriteAhead,
// executor.WithOnTrace, executor.WithChainKey). The gateway sets
// WithGates, WithApprover, WithRefusalBudget(-1) and WithTracerProvider
// itself, before these.
func WithExecutorOptions(opts ...executor.Option) Option {
	return func(c *config) { c.execOpts = append(c.execOpts, opts...) }
}

// WithTransport makes the gateway reach the upstream named name through
// the transport newT returns (an in-process server, a test), instead of
// its Command or URL.
func WithTransport(name string, newT func() mcp.Transport) Option {
	return func(c *config) {
		if c.transports == nil {
			c.transports = map[string]func() mcp.Transport{}
		}
		c.transports[name] = newT
	}
}

// WithServerOptions lets f adjust the gateway's mcp.ServerOptions (e.g.
// SupportedProtocolVersions) before the server is made.
func WithServerOptions(f func(*mcp.ServerOptions)) Option {
	return func(c *config) { c.serverOpts = f }
}

// WithProtected denies every write, move or delete rule's call whose path
// is one of files, lies below one (a directory) or holds one (absolute;
// relative paths in calls are taken against workspace) — the policy file,
// the toolgate executable, its spool and approvals inbox, so that a model
// cannot change, replace or empty the gate through the gate (rule
// mcpgate.self, risk high).
func WithProtected(workspace string, files ...string) Option {
	return func(c *config) {
		c.protectBase = workspace
		for _, f := range files {
			if f != "" {
				c.protected = append(c.protected, filepath.Clean(f))
			}
		}
	}
}
