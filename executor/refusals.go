package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// AggregateToolNames is how many distinct tool names an aborted run's
// aggregated refusals are grouped by: each of the first AggregateToolNames
// names seen past the budget has its own group, whose spans carry that
// gen_ai.tool.name and its count (gate.calls); calls to any further name
// share one group whose spans carry no gen_ai.tool.name. So the per-tool
// sums of gate.calls are the calls made to each tool, and a run's pending
// refusals take bounded memory (names bounded by gate.MaxNameBytes).
const AggregateToolNames = 16

// refusals is a run's count of consecutive calls that did not run and
// its aggregated refusals not yet recorded on a span, grouped by tool.
type refusals struct {
	consec atomic.Int64 // consecutive calls that did not run (reset by a call that ran)
	mu     sync.Mutex
	ended  bool                     // End flushed: later calls are not held back
	groups map[string]*refusalGroup // by gen_ai.tool.name (bounded, see AggregateToolNames)
	other  refusalGroup             // calls to names past AggregateToolNames: no tool name
}

// refusalGroup is the aggregated refusals of one tool name: the span name,
// tool type and (bounded) tool name its spans carry.
type refusalGroup struct {
	spanName, toolType, toolName string
	named                        bool  // toolName is the group's (even ""): false for the nameless group
	started                      bool  // the group's first call had its own span
	pending                      int64 // calls not yet on a span
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
// (none of them runs) in a run that is aborted, not yet ended, and whose
// last calls, more than its budget, did not run. spanName, toolType and
// toolName (bounded by gate.SafeText) are the call's span identity: calls
// are grouped by toolName (see AggregateToolNames). It returns 0 for an
// ordinary call; otherwise the number of calls of the call's own tool
// that the call's span records (n > 0), or skip true when the call gets
// no span (it is counted in a later span of its group). A group past
// AggregateToolNames has no tool name: it is recorded on a span of its
// own (no call's) each AggregateRefusals calls.
func (e *Executor) aggregate(ctx context.Context, r *Run, spanName, toolType, toolName string) (n int64, skip bool) {
	budget := e.cfg.refusalBudget
	rs := &r.state.refused
	if budget < 0 || r.Err() == nil || rs.consec.Load() <= int64(budget) || ctx.Err() != nil {
		return 0, false
	}
	rs.mu.Lock()
	if rs.ended {
		rs.mu.Unlock()
		return 0, false // after End nothing is held back: an ordinary refusal
	}
	rs.consec.Add(1)
	g := rs.groups[toolName]
	if g == nil && len(rs.groups) < AggregateToolNames {
		if rs.groups == nil {
			rs.groups = make(map[string]*refusalGroup, 4)
		}
		g = &refusalGroup{spanName: spanName, toolType: toolType, toolName: toolName, named: true}
		rs.groups[toolName] = g
	}
	if g == nil { // past AggregateToolNames names: the nameless group
		rs.other.pending++
		if rs.other.pending < AggregateRefusals {
			rs.mu.Unlock()
			return 0, true
		}
		n, rs.other.pending = rs.other.pending, 0
		rs.mu.Unlock()
		r.emitGroup(refusalGroup{spanName: "execute_tool", toolType: ToolTypeFunction}, n)
		return 0, true
	}
	defer rs.mu.Unlock()
	g.pending++
	if g.started && g.pending < AggregateRefusals {
		return 0, true
	}
	g.started = true
	n, g.pending = g.pending, 0
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

// flushRefusals records the aggregated refusals no span holds yet, one
// execute_tool span per group (its tool name and count; the nameless
// group last), under the run span (when started), and stops holding back:
// later calls each get their own span. End calls it.
func (r *Run) flushRefusals() {
	rs := &r.state.refused
	rs.mu.Lock()
	rs.ended = true
	var flush []refusalGroup
	for _, g := range rs.groups {
		if g.pending > 0 {
			flush = append(flush, *g)
			g.pending = 0
		}
	}
	slices.SortFunc(flush, func(a, b refusalGroup) int { return strings.Compare(a.toolName, b.toolName) })
	if rs.other.pending > 0 {
		flush = append(flush, refusalGroup{spanName: "execute_tool", toolType: ToolTypeFunction, pending: rs.other.pending})
		rs.other.pending = 0
	}
	rs.mu.Unlock()
	for _, g := range flush {
		r.emitGroup(g, g.pending)
	}
}

// emitGroup records n aggregated refusals of group g as one execute_tool
// span under the run span (when started): g's span name, tool type and
// tool name (none for the nameless group), gate.calls = n.
func (r *Run) emitGroup(g refusalGroup, n int64) {
	e := r.agent.ex
	ctx := context.Background()
	if s := r.state.span.started.Load(); s != nil {
		ctx = trace.ContextWithSpan(ctx, s.span)
	}
	rec := e.refused(gate.StageRun, ErrorTypeRunAborted, "the run was aborted: calls refused past its refusal budget, aggregated")
	rec.Calls = n
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs, semconv.GenAIOperationNameExecuteTool)
	if g.named {
		attrs = append(attrs, semconv.GenAIToolName(g.toolName))
	}
	attrs = append(attrs, semconv.GenAIToolType(g.toolType))
	attrs = append(attrs, r.attrs...)
	attrs = rec.Attributes(attrs, e.cfg.recordLimit+e.cfg.recordLimit/2)
	attrs = append(attrs, semconv.ErrorTypeKey.String(ErrorTypeRunAborted))
	_, span := e.tracer.Start(ctx, g.spanName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if link := r.sealSpan(span, &rec, g.named, g.toolName, "", attrs)[len(attrs):]; len(link) > 0 {
		// The span's identity is known once it started: its chain
		// position is set right after.
		span.SetAttributes(link...)
	}
	span.SetStatus(codes.Error, ErrorTypeRunAborted)
	span.End()
}
