package executor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// DefaultRefusalBudget is how many consecutive calls of a run may end
// without running (refused before the gate, denied by it, an ask
// declined) before the run is aborted (see WithRefusalBudget).
const DefaultRefusalBudget = 64

// AggregateRefusals is how many calls of an aborted run, past its refusal
// budget, share one span (see WithRefusalBudget).
const AggregateRefusals = 64

// refusals is a run's count of consecutive calls that did not run and
// its aggregated refusals not yet recorded on a span.
type refusals struct {
	consec  atomic.Int64 // consecutive calls that did not run (reset by a call that ran)
	mu      sync.Mutex
	started bool  // an aggregated span was emitted
	pending int64 // aggregated calls not yet on a span
}

// refusedCall counts one call that did not run — refused before the gate,
// denied by it (an ask declined included) or refused after it because the
// run was aborted; not a cancelled call (the host's doing). When it takes
// the run past its budget, it aborts the run and returns the one decision
// saying why (ok true): for a call refused before the gate a decision at
// gate.stage=run; for a gate's denial its own record (stage gate, its
// verdicts) with gate.error=refusal_budget and the abort appended to its
// reason. rec is the call's own record.
func (e *Executor) refusedCall(r *Run, rec gate.Record) (gate.Record, bool) {
	n := r.state.refused.consec.Add(1)
	budget := e.cfg.refusalBudget
	if budget < 0 || n <= int64(budget) {
		return rec, false
	}
	err := fmt.Errorf("%w: %d in a row (budget %d)", ErrRefusalBudget, n, budget)
	if !r.state.aborted.CompareAndSwap(nil, &err) {
		return rec, false // aborted already: an ordinary refusal
	}
	why := "the run made " + strconv.FormatInt(n, 10) + " consecutive calls that did not run (budget " +
		strconv.Itoa(budget) + "): the run is aborted"
	if rec.Stage == gate.StageGate {
		rec.ErrorKind = ErrorTypeRefusalBudget
		rec.Reason = e.record(rec.Reason + "; " + why)
		return rec, true
	}
	return gate.Record{Stage: gate.StageRun, Action: gate.ActionDeny, Source: gate.SourceExecutor,
		ErrorKind: ErrorTypeRefusalBudget, Reason: e.record(why + "; this call: " + rec.Reason)}, true
}

// ranCall resets the run's count of consecutive calls that did not run:
// the call's tool is about to run.
func (r *Run) ranCall() { r.state.refused.consec.Store(0) }

// aggregate decides, before a call's span starts, whether the call is one
// of the aggregated refusals of an aborted run past its budget: any call
// (none of them runs) in a run that is aborted and whose last calls, more
// than its budget, did not run. It returns 0 for an ordinary call;
// otherwise the number of calls the call's span records (n > 0), or skip
// true when the call gets no span (it is counted in the next one).
func (e *Executor) aggregate(ctx context.Context, r *Run) (n int64, skip bool) {
	budget := e.cfg.refusalBudget
	rs := &r.state.refused
	if budget < 0 || r.Err() == nil || rs.consec.Load() <= int64(budget) || ctx.Err() != nil {
		return 0, false
	}
	rs.consec.Add(1)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.pending++
	if rs.started && rs.pending < AggregateRefusals {
		return 0, true
	}
	rs.started = true
	n, rs.pending = rs.pending, 0
	return n, false
}

// skipped is the result of an aggregated call that gets no span; the
// trace hook still sees it.
func (e *Executor) skipped(ctx context.Context, r *Run, call ToolCall) ToolResult {
	var start time.Time
	if e.cfg.onTrace != nil {
		start = time.Now()
	}
	res := e.abortedResult(r, call)
	if e.cfg.onTrace != nil {
		e.emit(ctx, ToolCallTrace{Tool: call.Name, ToolCallID: call.ID, Agent: r.agent.name, RunID: r.id, TaskID: r.taskID,
			IsError: true, ErrorType: res.ErrorType, Decision: res.Gate, Start: start, End: time.Now()})
	}
	return res
}

// abortedResult is the refusal of a call to an aborted run.
func (e *Executor) abortedResult(r *Run, call ToolCall) ToolResult {
	err := r.Err()
	msg := fmt.Sprintf("Tool %q was not run: this run was stopped after a denied tool call.", call.Name)
	why := "the run was aborted: "
	if errors.Is(err, ErrRefusalBudget) {
		msg = fmt.Sprintf("Tool %q was not run: this run was stopped after too many refused tool calls.", call.Name)
	}
	res := errorResult(call, ErrorTypeRunAborted, err, msg)
	res.Gate = e.refused(gate.StageRun, ErrorTypeRunAborted, why+err.Error())
	return res
}

// flushRefusals records the aggregated refusals no span holds yet as one
// execute_tool span under the run span (when started). End calls it.
func (r *Run) flushRefusals() {
	rs := &r.state.refused
	rs.mu.Lock()
	n := rs.pending
	rs.pending = 0
	rs.mu.Unlock()
	if n == 0 {
		return
	}
	e := r.agent.ex
	ctx := context.Background()
	if s := r.state.span.started.Load(); s != nil {
		ctx = trace.ContextWithSpan(ctx, s.span)
	}
	rec := e.refused(gate.StageRun, ErrorTypeRunAborted, "the run was aborted: calls refused past its refusal budget, aggregated")
	rec.Calls = n
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolType(ToolTypeFunction)}
	attrs = append(attrs, r.attrs...)
	attrs = rec.Attributes(attrs, e.cfg.recordLimit+e.cfg.recordLimit/2)
	attrs = append(attrs, semconv.ErrorTypeKey.String(ErrorTypeRunAborted))
	_, span := e.tracer.Start(ctx, "execute_tool", trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	span.SetStatus(codes.Error, ErrorTypeRunAborted)
	span.End()
}
