package executor

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// Option configures an Executor. Options are the executor owner's: agents
// cannot change them.
type Option func(*config)

type config struct {
	tp              trace.TracerProvider
	mp              metric.MeterProvider
	gates           []gate.Gate
	gateTimeout     time.Duration
	approver        gate.Approver
	approvalTimeout time.Duration
	presets         map[string][]string
	denied          []string
	optOut          map[string]bool
	requireGated    bool
	abortOnDeny     bool
	maxOutput       int
	recordContent   bool
	recordLimit     int
	redact          func(string) string
	onTrace         func(context.Context, ToolCallTrace) error
	concurrency     int
	grants          gate.GrantStore
	maxRewrites     int
	onError         func(error)
	refusalBudget   int
	chainKey        []byte // WithChainKey; nil: unkeyed chains
	writeAhead      WriteAheadLog
}

// WithTracerProvider sets where execute_tool spans go (default
// otel.GetTracerProvider() at New).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets where the gate metrics go (default
// otel.GetMeterProvider() at New).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithGates appends executor-level gates. They run, in order, for every
// call of every agent to a tool in their scope (gate.Scope; unscoped gates
// judge every tool) before the agent's own gates; only WithOptOut removes
// them for an agent. New refuses a scoped gate that fits no registered
// tool (ErrGateScope).
func WithGates(gates ...gate.Gate) Option {
	return func(c *config) { c.gates = append(c.gates, gates...) }
}

// WithGateTimeout bounds each gate (executor- and agent-level): a gate
// that takes longer denies the call with gate.error=timeout. A gate wrapped
// with its own gate.WithTimeout is bound by the shorter of the two. 0
// (default) means no executor-imposed bound. Bounding a gate runs it on its
// own goroutine (see gate.WithTimeout).
func WithGateTimeout(d time.Duration) Option {
	return func(c *config) { c.gateTimeout = d }
}

// WithApprover sets who resolves asks. Without one, an ask is denied
// (gate.approval=declined, gate.approver=none).
func WithApprover(a gate.Approver) Option {
	return func(c *config) { c.approver = a }
}

// WithApprovalTimeout bounds each approval: no answer in time denies the
// call with gate.approval=timeout, and Execute returns then whatever the
// approver does (a late answer is discarded). 0 (default) bounds the wait
// by the call's context only.
func WithApprovalTimeout(d time.Duration) Option {
	return func(c *config) { c.approvalTimeout = d }
}

// WithPreset defines a named tool preset agents can use with AgentPresets.
// PresetAll ("all", every registered tool) is built in.
func WithPreset(name string, tools ...string) Option {
	return func(c *config) {
		if c.presets == nil {
			c.presets = map[string][]string{}
		}
		c.presets[name] = append([]string(nil), tools...)
	}
}

// WithDeniedTools makes tools unreachable for every agent.
func WithDeniedTools(tools ...string) Option {
	return func(c *config) { c.denied = append(c.denied, tools...) }
}

// WithOptOut opts the named agents out of the executor-level gates (their
// own agent-level gates still run). Every call of such an agent records
// gate.opt_out=true, so the exemption is visible in the audit trail.
func WithOptOut(agents ...string) Option {
	return func(c *config) {
		if c.optOut == nil {
			c.optOut = map[string]bool{}
		}
		for _, a := range agents {
			c.optOut[a] = true
		}
	}
}

// WithRequireGated makes every call gated (gate.gated=true): Agent fails
// with ErrGateScope, naming the tools, when a registered tool the agent
// can reach has no gate in scope (executor- or agent-level; an agent of
// WithOptOut needs its own), and a call to a tool registered later that
// no gate applies to is denied at the gate stage with source
// RequireGatedSource (fail closed) instead of running ungated. Off by
// default: a call no gate applies to runs ungated.
func WithRequireGated() Option {
	return func(c *config) { c.requireGated = true }
}

// WithChainKey keys the runs' verifiable chains (docs/durability.md):
// each link hash is HMAC-SHA256 under key (gate.KeyedLinkHash) instead of
// SHA-256, and chain IDs start with gate.KeyedChainPrefix, so that a
// writer of the audit store, who lacks the key, cannot recompute the
// hashes after editing, deleting or inserting a decision; `auditq verify
// --chain-key-file` checks them. Keep the key out of the store and the
// agent's model context; an empty key leaves the chain unkeyed (the
// default). The executor keeps its own copy of key.
func WithChainKey(key []byte) Option {
	return func(c *config) { c.chainKey = append([]byte(nil), key...) }
}

// WithAbortOnDeny makes a denied call abort its run: later calls of the run
// get an error result (ErrRunAborted) without running, and Run.Err reports
// it. Off by default: a denial is data the model can act on.
func WithAbortOnDeny(on bool) Option {
	return func(c *config) { c.abortOnDeny = on }
}

// WithRefusalBudget bounds what a model can make the audit trail spend on
// calls that do not run: a run may make n consecutive such calls — refused
// before any gate (unknown or unreachable tool, invalid input), denied by a
// gate (an ask declined, timed out or invalid included), or refused
// because the run is aborted; only a call whose tool runs starts the count
// again (a cancelled call neither counts nor resets it). The call past the
// budget aborts the run (Run.Err wraps ErrRefusalBudget) with one decision
// saying why (gate.error=refusal_budget; gate.stage=run, or the gate's own
// record when a gate denied it). From then on every call of the run is
// refused at gate.stage=run and aggregated per tool name: each tool's first
// such call gets its own span, then one span per AggregateRefusals calls to
// that tool, carrying their number in gate.calls (gate.Record.Calls), the
// tool's name and the call ID of the call that completed the group; past
// AggregateToolNames distinct names, the other calls share one group whose
// spans carry no gen_ai.tool.name. Run.End records what is left (one span
// per group); calls after End are not held back (one span each).
// Default DefaultRefusalBudget; n == 0 keeps the default; n < 0 turns the
// budget off (every call keeps its own span, however many the model makes;
// a replay of recorded calls does this, see package replay).
func WithRefusalBudget(n int) Option {
	return func(c *config) {
		if n != 0 {
			c.refusalBudget = n
		}
	}
}

// WithMaxOutputBytes sets the cap for tools with MaxOutputBytes 0
// (default 0: no cap).
func WithMaxOutputBytes(n int) Option {
	return func(c *config) { c.maxOutput = n }
}

// WithRecordContent records each call's input (gen_ai.tool.call.arguments)
// and output (gen_ai.tool.call.result) on its span and in ToolCallTrace,
// redacted and limited to the record limit. Off by default. The recorded
// input is covered by the decision's chain hash (gate.StoredDecision
// Input); the output, an outcome, is not.
func WithRecordContent(on bool) Option {
	return func(c *config) { c.recordContent = on }
}

// WithRecordLimit caps each recorded string (input, output and gate reason)
// at n bytes, keeping head and tail (default 4096; n <= 0 keeps the
// default; at most MaxRecordLimit).
func WithRecordLimit(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.recordLimit = min(n, MaxRecordLimit)
		}
	}
}

// MaxRecordLimit (256 KiB) bounds WithRecordLimit. A call's span then stays
// far below the 1 MiB a spooled span may take (otelbridge/spool
// MaxRecordBytes) and the 4 MiB a collector's gRPC receiver takes, so the
// export path never has to cut what the executor recorded: the recorded
// input is covered by the decision's chain hash, and a value cut on the
// way would read as an edited row to `auditq verify`.
const MaxRecordLimit = 256 << 10

// WithRedactor replaces the redaction applied to everything recorded
// (inputs, outputs, gate reasons) and to reasons in denial messages. The
// default, Redact, masks common credential shapes. f must be safe for
// concurrent use; a panicking f records "[redaction failed]".
func WithRedactor(f func(string) string) Option {
	return func(c *config) {
		if f != nil {
			c.redact = f
		}
	}
}

// WithOnTrace sets a hook that receives one ToolCallTrace per call, after
// the call's span ended. Its errors and panics go to the error handler
// (WithErrorHandler) and never affect execution. The hook runs synchronously on the calling
// goroutine, so keep it quick; the calls of an ExecuteBatch call it
// concurrently, so it must be safe for concurrent use.
func WithOnTrace(f func(context.Context, ToolCallTrace) error) Option {
	return func(c *config) { c.onTrace = f }
}

// WithConcurrency sets how many calls of an ExecuteBatch run at once
// (default 4; n <= 0 keeps the default).
func WithConcurrency(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.concurrency = n
		}
	}
}

// WithGrantStore sets where run-scoped grants ("always allow this exact
// command in this run") are kept, keyed by run ID (default: a
// gate.MemoryGrants of this executor). Use a shared store when runs are
// rebuilt per request.
func WithGrantStore(s gate.GrantStore) Option {
	return func(c *config) {
		if s != nil {
			c.grants = s
		}
	}
}

// WithMaxRewrites sets how many times the gates may rewrite one call's
// input (default DefaultMaxRewrites); every rewrite is judged again by
// every gate, and one more rewrite than this denies the call with
// gate.error=invalid. n < 0 keeps the default; 0 allows no rewrite.
func WithMaxRewrites(n int) Option {
	return func(c *config) {
		if n >= 0 {
			c.maxRewrites = n
		}
	}
}

// WithErrorHandler receives the errors the executor cannot return to a
// caller: the trace hook's errors and panics, a panic while recording a
// span, a GrantStore's errors. Each is also counted in the
// toolgate.executor.errors metric. Default: otel.Handle. f must be safe
// for concurrent use; its panics are recovered.
func WithErrorHandler(f func(error)) Option {
	return func(c *config) { c.onError = f }
}

// AgentOption configures an Agent.
type AgentOption func(*agentConfig)

type agentConfig struct {
	presets []string
	allow   []string
	deny    []string
	gates   []gate.Gate
}

// PresetAll is the built-in preset of every registered tool, including
// tools registered after the agent was created.
const PresetAll = "all"

// AgentPresets makes the tools of the named presets reachable (see
// WithPreset and PresetAll).
func AgentPresets(names ...string) AgentOption {
	return func(c *agentConfig) { c.presets = append(c.presets, names...) }
}

// AgentAllow makes the named tools reachable.
func AgentAllow(tools ...string) AgentOption {
	return func(c *agentConfig) { c.allow = append(c.allow, tools...) }
}

// AgentDeny makes the named tools unreachable, whatever presets and
// allowlist say.
func AgentDeny(tools ...string) AgentOption {
	return func(c *agentConfig) { c.deny = append(c.deny, tools...) }
}

// AgentGates appends agent-level gates; they run after the executor-level
// gates, each on the tools in its scope (see WithGates).
func AgentGates(gates ...gate.Gate) AgentOption {
	return func(c *agentConfig) { c.gates = append(c.gates, gates...) }
}

// RunOption configures a Run.
type RunOption func(*Run)

// WithTask sets the run's task ID (toolgate.task.id).
func WithTask(taskID string) RunOption {
	return func(r *Run) { r.taskID = taskID }
}
