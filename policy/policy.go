package policy

import (
	"github.com/toolgate/toolgate/classify"
)

// Version is the policy file format this package reads.
const Version = 1

// Values of Policy.High.
const (
	HighDeny = "deny"
	HighAsk  = "ask"
)

// Values of Approver.Kind.
const (
	ApproverDeny  = "deny"
	ApproverInbox = "inbox"
)

// Policy is one policy file, decoded and checked. The zero value is not
// valid; use Default, Load or Parse.
type Policy struct {
	// Version is the file format, 1.
	Version int `yaml:"version"`
	// Profile is the classifier's permission profile: classify.ProfileStrict
	// (the default), classify.ProfileWorkspace or classify.ProfileReadOnly.
	Profile string `yaml:"profile"`
	// Workspace is the workspace root, absolute after Load/Parse (a
	// relative path in the file is taken from the file's directory); ""
	// means the caller's working directory (a hook: the event's cwd).
	Workspace string `yaml:"workspace"`
	// TrustWorkspace is classify.WithTrustedWorkspace; nil means true.
	TrustWorkspace *bool `yaml:"trust_workspace"`
	// High is what a high verdict becomes: HighDeny (default) or HighAsk.
	High string `yaml:"high"`
	// Approver answers asks where the way in has no native ask.
	Approver Approver `yaml:"approver"`
	// Export says where decision spans go.
	Export Export `yaml:"export"`
	// Tools are the file's per-tool rules, tried in order before the
	// built-in table.
	Tools []ToolRule `yaml:"tools"`
	// MCP is the gateway's section (policy/mcp.go).
	MCP MCP `yaml:"mcp"`

	dir    string // the file's directory ("" for Default)
	source string // the file's path ("" for Default)
	// interactive: the agent can type into programs it started
	// (WithInteractiveInput).
	interactive bool
}

// Approver is the `approver:` section.
type Approver struct {
	// Kind is ApproverDeny (default: an ask becomes a deny telling the
	// model a human must approve) or ApproverInbox (a durable request in
	// the approvals inbox).
	Kind string `yaml:"kind"`
	// Inbox is the inbox path for kind inbox, absolute after load; ""
	// means inbox.DefaultPath.
	Inbox string `yaml:"inbox"`
}

// Export is the `export:` section.
type Export struct {
	// Endpoint is the OTLP/gRPC collector, host:port; "" means
	// $OTEL_EXPORTER_OTLP_ENDPOINT, else 127.0.0.1:4317.
	Endpoint string `yaml:"endpoint"`
	// Spool is the durable spool directory, absolute after load; "" means
	// the XDG state directory (~/.local/state/toolgate/spool).
	Spool string `yaml:"spool"`
	// Agent is the gen_ai.agent.name recorded; "" means the hook's agent
	// name, or "mcp-gateway".
	Agent string `yaml:"agent"`
}

// Default returns the built-in policy: version 1, profile strict, the
// caller's workspace (trusted), high denied, asks denied with a reason,
// default export, no rules of its own (the built-in table applies).
func Default() *Policy {
	p := &Policy{Version: Version}
	p.fill()
	return p
}

// fill sets the defaults of the fields the file left empty.
func (p *Policy) fill() {
	if p.Profile == "" {
		p.Profile = classify.ProfileStrict
	}
	if p.High == "" {
		p.High = HighDeny
	}
	if p.Approver.Kind == "" {
		p.Approver.Kind = ApproverDeny
	}
}

// Trusted reports whether the workspace's own configuration is trusted
// (TrustWorkspace, default true).
func (p *Policy) Trusted() bool { return p.TrustWorkspace == nil || *p.TrustWorkspace }

// Source is the path of the file the policy was loaded from, or "" for
// Default and Parse.
func (p *Policy) Source() string { return p.source }

// Dir is the directory relative paths of the file were resolved against
// ("" for Default).
func (p *Policy) Dir() string { return p.dir }

// WithInteractiveInput returns a copy of p for an agent that can type into
// a program after starting it (Codex CLI's write_stdin, which no hook
// sees): its shell rules then rate programs that read commands from the
// terminal — pagers, editors, man, terminal multiplexers — as review
// (classify.WithInteractiveInput).
func (p *Policy) WithInteractiveInput() *Policy {
	q := *p
	q.interactive = true
	return &q
}
