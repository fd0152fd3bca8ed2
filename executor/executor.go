package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// ScopeName is the instrumentation scope of the executor's tracer and
// meter.
const ScopeName = "github.com/toolgate/toolgate/executor"

// ErrInvalidAgent: an agent's configuration is unusable (empty name,
// unknown preset, a nil gate).
var ErrInvalidAgent = errors.New("executor: invalid agent")

// ErrInvalidGate: a gate given to WithGates or AgentGates is nil (see
// gate.IsNil).
var ErrInvalidGate = errors.New("executor: invalid gate")

// Executor runs tool calls from a Registry through reachability, schema
// validation, the gate, the tool and output handling, recording each call
// as an execute_tool span. It is safe for concurrent use.
type Executor struct {
	cfg     config
	reg     *Registry
	tracer  trace.Tracer
	metrics metrics
	denied  map[string]bool
	// attrPool recycles the buffers span attributes are built in (the SDK
	// copies them), holding *[]attribute.KeyValue.
	attrPool *sync.Pool
}

// New returns an executor over reg. It fails when reg is nil, a gate is
// nil (ErrInvalidGate), a scoped gate does not fit the registered tools
// (ErrGateScope: see gate.Scope; it applies to no registered tool, names
// one registered only in another spelling, or a tool in its scope does
// not declare the input field it reads, of the type it reads) or the
// meter rejects
// the executor's instruments.
func New(reg *Registry, opts ...Option) (*Executor, error) {
	if reg == nil {
		return nil, errors.New("executor: nil registry")
	}
	cfg := config{recordLimit: gate.MaxTextBytes, concurrency: 4, redact: Redact, maxRewrites: DefaultMaxRewrites, refusalBudget: DefaultRefusalBudget}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.gates = expandChains(cfg.gates)
	for i, g := range cfg.gates {
		if gate.IsNil(g) {
			return nil, fmt.Errorf("%w: executor-level gate %d is nil", ErrInvalidGate, i)
		}
	}
	if err := checkScopes(reg, cfg.gates, "executor-level"); err != nil {
		return nil, err
	}
	if cfg.grants == nil {
		cfg.grants = gate.NewMemoryGrants(0)
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	e := &Executor{cfg: cfg, reg: reg, tracer: cfg.tp.Tracer(ScopeName), denied: map[string]bool{},
		attrPool: &sync.Pool{New: func() any {
			b := make([]attribute.KeyValue, 0, 24)
			return &b
		}}}
	for _, t := range cfg.denied {
		e.denied[t] = true
	}
	m, err := newMetrics(cfg.mp.Meter(ScopeName))
	if err != nil {
		return nil, err
	}
	e.metrics = m
	return e, nil
}

// Registry returns the executor's registry.
func (e *Executor) Registry() *Registry { return e.reg }

// Agent is one agent's view of the executor: which tools it can reach and
// which gates its calls go through (the executor-level gates, then its
// own). Create runs with Run.
type Agent struct {
	ex     *Executor
	name   string
	all    bool
	allow  map[string]bool
	deny   map[string]bool
	gate   gate.Gate // nil: ungated
	gname  string    // the gate's name, the source of its failures
	optOut bool
	// scoped: some gate judges only some tools; then members are the
	// gates in order with their scopes, and byEntry caches, per
	// registered *entry, the *resolvedGate that judges its calls.
	scoped  bool
	members []scopedGate
	byEntry sync.Map
	// must denies the calls no gate applies to (WithRequireGated; nil
	// otherwise).
	must *requireGated
}

// Agent returns the agent named name. Reachable tools are those of its
// presets and allowlist, minus its denylist and the executor's
// (WithDeniedTools); an agent with neither presets nor allowlist reaches
// no tool. It fails (ErrInvalidAgent) on an empty name or an unknown
// preset, and (ErrGateScope) when a scoped gate, executor- or
// agent-level, does not fit the tools registered by now (see New) or,
// with WithRequireGated, when the agent reaches a registered tool no gate
// applies to.
func (e *Executor) Agent(name string, opts ...AgentOption) (*Agent, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: empty name", ErrInvalidAgent)
	}
	var ac agentConfig
	for _, o := range opts {
		o(&ac)
	}
	a := &Agent{ex: e, name: name, allow: map[string]bool{}, deny: map[string]bool{}, optOut: e.cfg.optOut[name]}
	for _, p := range ac.presets {
		if p == PresetAll {
			a.all = true
			continue
		}
		tools, ok := e.cfg.presets[p]
		if !ok {
			return nil, fmt.Errorf("%w: agent %q: unknown preset %q", ErrInvalidAgent, name, p)
		}
		for _, t := range tools {
			a.allow[t] = true
		}
	}
	for _, t := range ac.allow {
		a.allow[t] = true
	}
	for _, t := range ac.deny {
		a.deny[t] = true
	}
	ac.gates = expandChains(ac.gates)
	for i, g := range ac.gates {
		if gate.IsNil(g) {
			return nil, fmt.Errorf("%w: agent %q: %w: agent-level gate %d is nil", ErrInvalidAgent, name, ErrInvalidGate, i)
		}
	}
	var gates []gate.Gate
	if !a.optOut {
		gates = append(gates, e.cfg.gates...)
		if err := checkScopes(e.reg, e.cfg.gates, "executor-level"); err != nil {
			return nil, fmt.Errorf("agent %q: %w", name, err)
		}
	}
	if err := checkScopes(e.reg, ac.gates, fmt.Sprintf("agent %q's", name)); err != nil {
		return nil, fmt.Errorf("%w: agent %q: %w", ErrInvalidAgent, name, err)
	}
	gates = append(gates, ac.gates...)
	if len(gates) > 0 {
		wrapped := make([]gate.Gate, len(gates))
		for i, g := range gates {
			var scope *gate.Scope
			if s, ok := gate.ScopeOf(g); ok {
				scope, a.scoped = &s, true
			}
			name := gate.NameOf(g, "gate["+strconv.Itoa(i)+"]")
			if e.cfg.gateTimeout > 0 {
				g = gate.WithTimeout(g, e.cfg.gateTimeout)
			}
			if gate.NameOf(g, "") != name {
				// A gate that already names itself needs no wrapper (one
				// call and one copy of the call context less per call).
				g = gate.Named(name, g)
			}
			wrapped[i] = g
			a.members = append(a.members, scopedGate{g: g, scope: scope})
		}
		if len(wrapped) == 1 {
			a.gate = wrapped[0]
		} else {
			a.gate = gate.Chain(wrapped...)
		}
		a.gname = gate.NameOf(a.gate, "gate")
	}
	if e.cfg.requireGated {
		a.must = &requireGated{}
		if ung := a.ungated(); len(ung) > 0 {
			return nil, fmt.Errorf("%w: agent %q reaches tools no gate applies to, and the executor requires every call to be gated (WithRequireGated): %q: "+
				"scope a gate to them (gate.Scoped, classify.ForTools), add a gate for every tool, or make them unreachable (AgentDeny, WithDeniedTools)",
				ErrGateScope, name, ung)
		}
	}
	return a, nil
}

// Name is the agent's name (gen_ai.agent.name).
func (a *Agent) Name() string { return a.name }

// Reachable reports whether the agent may call the tool named tool (it
// need not be registered yet).
func (a *Agent) Reachable(tool string) bool {
	if a.deny[tool] || a.ex.denied[tool] {
		return false
	}
	return a.all || a.allow[tool]
}

// Tools returns the registered tools the agent can reach, sorted by name:
// the list to offer the model.
func (a *Agent) Tools() []Tool {
	var out []Tool
	for _, n := range a.ex.reg.Names() {
		if a.Reachable(n) {
			if t, ok := a.ex.reg.Lookup(n); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

// Run is one run of an agent (gen_ai.conversation.id and toolgate.run.id
// on spans). It holds the run's remembered grants and, with
// WithAbortOnDeny, its aborted state. Views made with Task share both. A
// Run is safe for concurrent use.
type Run struct {
	agent   *Agent
	id      string
	grantID string // the run's key in the GrantStore
	taskID  string
	state   *runState
	attrs   []attribute.KeyValue // read-only, see spanAttrs
}

type runState struct {
	aborted atomic.Pointer[error] // checked twice per call: no lock
	span    runSpan               // the run's invoke_agent span (runspan.go)
	refused refusals              // the run's refusal budget (refusals.go)
	chain   chainState            // the run's verifiable chain (chain.go)
}

// Run starts a run with the given ID. Grants are kept in the executor's
// GrantStore under the run ID, so two Run values with the same ID (a
// server that rebuilds its run per request) share them; a run without an
// ID gets grants of its own (a random key). A GrantStore that persists
// grants (approve/inbox) keeps a run's grants for as long as it keeps
// them: give each run an ID of its own, never a fixed name reused by
// later runs ("nightly"), or a later run inherits the grants. The aborted state belongs to the returned
// value (and its Task views), and so does the run's invoke_agent span: the
// run's first call starts it and every call's execute_tool span is its
// child, so a run is one trace; end it with End (see WithRunSpan to turn
// it off).
func (a *Agent) Run(runID string, opts ...RunOption) *Run {
	r := &Run{agent: a, id: runID, grantID: "run:" + runID, state: &runState{}}
	if runID == "" {
		// Random, not a counter: a GrantStore that outlives the process
		// (approve/inbox) must never hand one process's anonymous grants
		// to another process's anonymous run.
		var b [16]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
		r.grantID = "anonymous:" + hex.EncodeToString(b[:])
	}
	for _, o := range opts {
		o(r)
	}
	r.attrs = r.spanAttrs()
	return r
}

// spanAttrs are the attributes every call of the run has (built once per
// Run, not per call): gen_ai.agent.name, and gen_ai.conversation.id,
// toolgate.run.id and toolgate.task.id when set.
func (r *Run) spanAttrs() []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, semconv.GenAIAgentName(gate.SafeText(r.agent.name, gate.MaxNameBytes)))
	if r.id != "" {
		id := gate.SafeText(r.id, gate.MaxNameBytes)
		attrs = append(attrs, semconv.GenAIConversationID(id), gate.AttrRunID.String(id))
	}
	if r.taskID != "" {
		attrs = append(attrs, gate.AttrTaskID.String(gate.SafeText(r.taskID, gate.MaxNameBytes)))
	}
	return attrs
}

// Task returns a view of the run for another task: same run ID, grants and
// aborted state, different toolgate.task.id.
func (r *Run) Task(taskID string) *Run {
	t := &Run{agent: r.agent, id: r.id, grantID: r.grantID, taskID: taskID, state: r.state}
	t.attrs = t.spanAttrs()
	return t
}

// ID is the run ID.
func (r *Run) ID() string { return r.id }

// TaskID is the task ID ("" when none).
func (r *Run) TaskID() string { return r.taskID }

// Agent is the run's agent.
func (r *Run) Agent() *Agent { return r.agent }

// Err is nil unless the run was aborted (WithAbortOnDeny); then it wraps
// ErrRunAborted and names the denied call.
func (r *Run) Err() error {
	if p := r.state.aborted.Load(); p != nil {
		return *p
	}
	return nil
}

// Grant remembers an approval for this exact command of the run's agent
// (tool name and input bytes, see gate.GrantKey) for the rest of the run:
// later asks for it are approved without asking (gate.approver
// "grant:run"). A grant never overrides a deny. It returns the
// GrantStore's error.
func (r *Run) Grant(ctx context.Context, toolName string, input json.RawMessage) error {
	return r.agent.ex.cfg.grants.Grant(ctx, r.grantID, gate.GrantKey(r.agent.name, toolName, input))
}

func (r *Run) abort(err error) {
	r.state.aborted.CompareAndSwap(nil, &err)
}
