package executor

import (
	"context"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// WithRunSpan turns the run's invoke_agent span on (the default) or off.
//
// On: the run is one trace. Its first call (Execute, ExecuteBatch or
// Context) starts the span "invoke_agent {gen_ai.agent.name}" (OTel
// semantic conventions v1.41.0, GenAI agent spans; SpanKind internal, an
// in-process agent) under the span that call's ctx carries, if any, with
// gen_ai.operation.name = invoke_agent, gen_ai.agent.name,
// gen_ai.conversation.id and toolgate.run.id (the run ID, when set) and
// toolgate.task.id (when WithTask was given). Every execute_tool span of
// the run is its child; End ends it.
//
// The span belongs to the Run value and its Task views: two Run values
// with the same run ID (a server that rebuilds its run per request) are
// two spans, two traces, each under its first call's context.
//
// Off: the executor starts no agent span and each call's span is a child
// of whatever span its ctx carries (a trace of its own when none). Use it
// when you already start your own invoke_agent span around the run. Then
// set Run.ChainEnd's attributes on your span after End, or no span records
// the chain's length and head and `auditq verify` cannot find a lost tail
// of the run's chain (it reports the chain open); to add attributes of
// your own, you may also set them on the run span instead
// (trace.SpanFromContext(run.Context(ctx)), as replay does).
func WithRunSpan(on bool) RunOption {
	return func(r *Run) { r.state.span.off = !on }
}

// runSpan is a run's invoke_agent span, shared by the run's Task views.
type runSpan struct {
	off     bool
	mu      sync.Mutex // serialises start and End
	started atomic.Pointer[startedSpan]
	ended   atomic.Bool
}

// startedSpan is the run span and the span context it was started under.
type startedSpan struct {
	span   trace.Span
	parent trace.SpanContext // invalid when the run span is a root
}

// parentOf returns the context a call's execute_tool span starts under,
// and, when that is not the run span, a link to the run span (or nil):
//
//   - ctx carries no span, or the span the run span was started under: the
//     run span is the parent (the common case: the same ctx for every call,
//     or a context.Background() per call).
//   - ctx carries another span of the run's trace (a span of yours under
//     Run.Context, such as a chat span, or the run span itself): that span
//     is the parent; the call stays in the run's trace.
//   - ctx carries a span of another trace (say, a request span of a server
//     that resumes a long run): your span is the parent, and the call's
//     span links to the run span (a span link, OTel trace API), so the
//     call is found from either trace.
func (r *Run) parentOf(ctx context.Context) (context.Context, *trace.Link) {
	rs := &r.state.span
	if rs.off {
		return ctx, nil
	}
	s := rs.started.Load()
	if s == nil {
		s = r.startSpan(ctx)
	}
	cur := trace.SpanContextFromContext(ctx)
	run := s.span.SpanContext()
	switch {
	case !cur.IsValid() || cur.TraceID() == s.parent.TraceID() && cur.SpanID() == s.parent.SpanID():
		return trace.ContextWithSpan(ctx, s.span), nil
	case cur.TraceID() == run.TraceID():
		return ctx, nil
	default:
		return ctx, &trace.Link{SpanContext: run}
	}
}

// startSpan starts the run span under ctx's span, once. When the run was
// ended before any call started it, the span is started and ended at once
// (a run's calls always have its invoke_agent span, see End).
func (r *Run) startSpan(ctx context.Context) *startedSpan {
	rs := &r.state.span
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if s := rs.started.Load(); s != nil {
		return s
	}
	parent := trace.SpanContextFromContext(ctx)
	name := gate.SafeText(r.agent.name, gate.MaxNameBytes)
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, semconv.GenAIOperationNameInvokeAgent)
	attrs = append(attrs, r.attrs...) // agent, conversation, run, task
	_, span := r.agent.ex.tracer.Start(ctx, semconv.GenAIOperationNameInvokeAgent.Value.AsString()+" "+name,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	s := &startedSpan{span: span, parent: parent}
	rs.started.Store(s)
	if rs.ended.Load() {
		r.endSpan(s)
	}
	return s
}

// Context returns ctx carrying the run's invoke_agent span, starting it
// under ctx's span if no call has yet (see WithRunSpan), so that spans you
// start around the run's calls (a chat span per model turn) are in the
// run's trace; calls executed with the returned context are children of
// the span it carries. With WithRunSpan(false) it returns ctx unchanged.
func (r *Run) Context(ctx context.Context) context.Context {
	rs := &r.state.span
	if rs.off {
		return ctx
	}
	s := rs.started.Load()
	if s == nil {
		s = r.startSpan(ctx)
	}
	return trace.ContextWithSpan(ctx, s.span)
}

// SpanContext is the run span's span context (its TraceID is the run's
// trace: `auditq trace <id>`); invalid when the span is off or has not
// started yet.
func (r *Run) SpanContext() trace.SpanContext {
	if s := r.state.span.started.Load(); s != nil {
		return s.span.SpanContext()
	}
	return trace.SpanContext{}
}

// End ends the run's invoke_agent span; call it when the run is over
// (defer run.End()). A run aborted by WithAbortOnDeny or its refusal
// budget ends with status Error and error.type run_aborted. End is
// idempotent and safe for concurrent use; on a Task view it ends the run's
// one span. It first records the run's aggregated refusals not yet on a
// span (WithRefusalBudget), one span per tool name, each time it is
// called; from then on nothing is held back: each later call of the run
// gets its own span.
//
// End must be deferred right after Run (`run := agent.Run(id); defer
// run.End()`): without End, up to AggregateRefusals-1 aggregated calls per
// tool name of a run past its refusal budget are never recorded, and the
// run span is never exported.
//
// Calls after End still run and are recorded, each on its own span, past
// the refusal budget too (End does not refuse them: a run is ended by its
// host, not by its model): their spans remain
// children of the ended run span (the same trace; the run span's duration
// does not cover them). When End came before any call, the first call
// after it (or Context) starts the run span under its context and ends it
// at once, so the run is still one trace with its invoke_agent span. A
// span that is never ended is never exported: its calls are still
// exported and stored, but Jaeger shows them under a missing parent.
func (r *Run) End() {
	r.flushRefusals()
	rs := &r.state.span
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.ended.Swap(true) {
		return
	}
	if s := rs.started.Load(); s != nil {
		r.endSpan(s)
	}
}

// endSpan ends the run span with the run's outcome.
func (r *Run) endSpan(s *startedSpan) {
	if attrs := r.chainEnd(); attrs != nil {
		s.span.SetAttributes(attrs...)
	}
	if err := r.Err(); err != nil {
		s.span.SetAttributes(semconv.ErrorTypeKey.String(ErrorTypeRunAborted))
		s.span.SetStatus(codes.Error, ErrorTypeRunAborted)
	}
	s.span.End()
}
