package replay

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
)

// config is what Options set.
type config struct {
	tp         trace.TracerProvider
	execOpts   []executor.Option
	policy     *approve.Policy
	policyName string
	classify   []classify.Option
	profile    string
	onCall     func(Call, executor.ToolResult)
	wrap       func(executor.Tool) executor.Tool
}

// Option configures a Replayer.
type Option func(*config)

// WithTracerProvider sets where the executor's spans go (each run's
// invoke_agent span and its execute_tool spans) (default: the global provider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithExecutorOptions adds executor options (meter provider, record
// content, redactor, …). The replay sets the tracer provider and the
// approver itself.
func WithExecutorOptions(opts ...executor.Option) Option {
	return func(c *config) { c.execOpts = append(c.execOpts, opts...) }
}

// WithPolicy sets the policy that answers review-level calls, named name
// in gate.approver ("policy:"+name). Default: approve.DefaultPolicy,
// named "default".
func WithPolicy(p *approve.Policy, name string) Option {
	return func(c *config) { c.policy, c.policyName = p, name }
}

// WithClassifierOptions adds options to every run's classifiers (rules,
// trust, limits). The workspace is inferred per run (InferWorkspace).
func WithClassifierOptions(opts ...classify.Option) Option {
	return func(c *config) { c.classify = append(c.classify, opts...) }
}

// WithProfile selects the gates' permission profile (classify.Profiles:
// read-only, workspace, strict; default strict).
func WithProfile(name string) Option {
	return func(c *config) { c.profile = name }
}

// OnCall registers a callback run after each call, in order (for progress
// output).
func OnCall(f func(Call, executor.ToolResult)) Option {
	return func(c *config) { c.onCall = f }
}

// WithToolWrapper replaces each replayed tool (Tools) with wrap(tool)
// before it is registered: to observe or slow down the calls that run (a
// fault test records each call whose tool started).
func WithToolWrapper(wrap func(executor.Tool) executor.Tool) Option {
	return func(c *config) { c.wrap = wrap }
}

// Replayer replays recorded runs through a gated executor.
type Replayer struct {
	cfg config
	ex  *executor.Executor
}

// New builds a Replayer: a registry of the dry-run Tools, an executor with
// the policy's approver and its refusal budget off (executor.WithRefusalBudget(-1):
// every recorded call is replayed and recorded with its own decision,
// however many in a row are denied) and the tracer provider.
func New(opts ...Option) (*Replayer, error) {
	cfg := config{policy: approve.DefaultPolicy(), policyName: "default"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	tools := Tools()
	if cfg.wrap != nil {
		for i, t := range tools {
			tools[i] = cfg.wrap(t)
		}
	}
	reg, err := executor.NewRegistry(tools...)
	if err != nil {
		return nil, fmt.Errorf("replay: registry: %w", err)
	}
	// The replay's own tracer provider, approver and refusal budget come
	// last, so that they win over the same options in WithExecutorOptions.
	// The budget is off: a replay of recorded calls records every call,
	// however many of a run in a row were denied (a recorded run may have
	// more than the default 64; the model is not live, so nothing floods).
	execOpts := append(append([]executor.Option(nil), cfg.execOpts...),
		executor.WithTracerProvider(cfg.tp),
		executor.WithApprover(cfg.policy.Approver(cfg.policyName)),
		executor.WithRefusalBudget(-1),
	)
	ex, err := executor.New(reg, execOpts...)
	if err != nil {
		return nil, fmt.Errorf("replay: executor: %w", err)
	}
	return &Replayer{cfg: cfg, ex: ex}, nil
}

// AgentName is the gen_ai.agent.name of a recorded run: its framework, the
// run ID's prefix before ":" (mini-swe-agent, swe-agent, openhands, aider).
func AgentName(r Run) string {
	if i := strings.IndexByte(r.ID, ':'); i > 0 {
		return r.ID[:i]
	}
	return "replay"
}

// Replay feeds each run's calls, in order, through the executor, each run
// one executor Run — one hash chain (gate.chain.*) — under its own
// invoke_agent span (a trace of its own) that records the chain's length
// and head when the run ends (`auditq verify`), and returns what
// happened. It stops early only when ctx ends; a call that fails is data
// (an error ToolResult), not an error.
func (r *Replayer) Replay(ctx context.Context, runs []Run) (*Summary, error) {
	s := newSummary()
	start := time.Now()
	defer func() {
		s.Wall = time.Since(start)
		s.finish()
	}()
	for _, run := range runs {
		if err := ctx.Err(); err != nil {
			return s, fmt.Errorf("replay: %w", err)
		}
		if err := r.replayRun(ctx, run, s); err != nil {
			return s, err
		}
	}
	return s, nil
}

func (r *Replayer) replayRun(ctx context.Context, run Run, s *Summary) error {
	ws := InferWorkspace(run)
	g, err := runGates(ws, r.cfg.classify, r.cfg.profile)
	if err != nil {
		return err
	}
	name := AgentName(run)
	agent, err := r.ex.Agent(name, executor.AgentPresets(executor.PresetAll), executor.AgentGates(g))
	if err != nil {
		return fmt.Errorf("replay: agent %s: %w", name, err)
	}
	// The executor's own run span is the run's invoke_agent span, a new
	// root per run (each recorded run is its own trace: the context's
	// span, if any, is not its parent), with the replay's attributes.
	// Its End records the run's chain length and head (gate.chain.length,
	// gate.chain.head), so `auditq verify` checks each replayed run's
	// chain to its end.
	ex := agent.Run(run.ID)
	defer ex.End()
	ctx = ex.Context(trace.ContextWithSpanContext(ctx, trace.SpanContext{}))
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(
		attribute.String("toolgate.replay.model", run.Agent),
		attribute.String("toolgate.replay.workspace", ws),
	)
	rs := s.startRun(run, ex.SpanContext().TraceID().String())
	for _, c := range run.Calls {
		call := executor.ToolCall{ID: fmt.Sprintf("%s#%d", run.ID, c.Seq), Name: c.Tool, Input: c.Input}
		res := ex.Execute(ctx, call)
		s.add(rs, c, res)
		if r.cfg.onCall != nil {
			r.cfg.onCall(c, res)
		}
	}
	span.SetAttributes(attribute.Int("toolgate.replay.calls", rs.Calls), attribute.Int("toolgate.replay.denied", rs.Denied))
	return nil
}
