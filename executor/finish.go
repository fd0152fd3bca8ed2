package executor

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// record redacts s, cuts it to the record limit and makes it valid UTF-8
// (invalid bytes escaped as \xNN; see gate.SafeText).
func (e *Executor) record(s string) string {
	if s == "" {
		return s
	}
	s = e.safeRedact(s)
	s, _ = truncate(s, e.cfg.recordLimit)
	return gate.SafeText(s, e.cfg.recordLimit+e.cfg.recordLimit/2)
}

func (e *Executor) safeRedact(s string) (out string) {
	defer func() {
		if p := recover(); p != nil {
			out = "[redaction failed]"
		}
	}()
	return e.cfg.redact(s)
}

// finish records the call's outcome on its span, ends it and emits the
// ToolCallTrace. Nothing here can break the call.
func (e *Executor) finish(ctx context.Context, span trace.Span, r *Run, call ToolCall, res *ToolResult, start time.Time, toolType string, cs *callState) {
	defer func() {
		if p := recover(); p != nil {
			e.fail(ctx, "record", fmt.Errorf("executor: recording tool call %q: %v", gate.SafeText(call.ID, gate.MaxNameBytes), p))
		}
	}()
	if sc := span.SpanContext(); sc.IsValid() {
		res.TraceID, res.SpanID = sc.TraceID(), sc.SpanID()
	}
	var input, output string
	if e.cfg.recordContent {
		in := call.Input
		if cs.ran != nil {
			in = cs.ran // the input the gates judged last and the tool received
		}
		input, output = e.record(string(in)), e.record(res.Content)
	}
	g := &res.Gate
	if span.IsRecording() {
		buf := e.attrPool.Get().(*[]attribute.KeyValue)
		attrs := e.spanAttributes((*buf)[:0], r, call, res, toolType, input, output, cs.calls)
		// The record is final: its chain position (chain.go), unless strict
		// mode gave it one before the tool ran (then attrs carry it).
		attrs = r.sealSpan(span, g, true, cs.toolName, gate.SafeText(call.ID, gate.MaxNameBytes), attrs)
		// All of them, also in strict mode (which set the decision's before
		// the tool ran): a record that changed since (a panic) is recorded
		// as it ends.
		span.SetAttributes(attrs...) // the SDK copies them
		clear(attrs)
		*buf = attrs[:0]
		e.attrPool.Put(buf)
		if res.IsError {
			span.SetStatus(codes.Error, res.ErrorType)
		}
	}
	span.End()
	if e.cfg.onTrace == nil {
		return
	}
	ev := ToolCallTrace{
		Tool: call.Name, ToolCallID: call.ID, Agent: r.agent.name, RunID: r.id, TaskID: r.taskID,
		IsError: res.IsError, ErrorType: res.ErrorType, Decision: *g,
		Start: start, End: time.Now(), Input: input, Output: output,
	}
	if res.TraceID.IsValid() {
		ev.TraceID, ev.SpanID = res.TraceID.String(), res.SpanID.String()
	}
	e.emit(ctx, ev)
}

// emit calls the trace hook; its errors and panics go to the error
// handler.
func (e *Executor) emit(ctx context.Context, ev ToolCallTrace) {
	defer func() {
		if p := recover(); p != nil {
			e.fail(ctx, "trace_hook", fmt.Errorf("executor: trace hook panicked: %v", p))
		}
	}()
	if err := e.cfg.onTrace(ctx, ev); err != nil {
		e.fail(ctx, "trace_hook", fmt.Errorf("executor: trace hook: %w", err))
	}
}

// fail reports an error no caller can receive: counted in
// toolgate.executor.errors by kind, then passed to the error handler
// (WithErrorHandler, default otel.Handle).
func (e *Executor) fail(ctx context.Context, kind string, err error) {
	e.metrics.fail(ctx, kind)
	defer func() { _ = recover() }()
	if e.cfg.onError != nil {
		e.cfg.onError(err)
		return
	}
	otel.Handle(err)
}

// spanAttributes appends the attributes the call's span gets when it ends
// (gen_ai.operation.name, gen_ai.tool.name and gen_ai.tool.call.id are set
// at its start). calls > 1 is the number of aggregated refusals the span
// records (gate.Record.Calls of the span's record; res.Gate stays the
// record of this one call, as the trace hook sees every call).
func (e *Executor) spanAttributes(attrs []attribute.KeyValue, r *Run, call ToolCall, res *ToolResult, toolType, input, output string, calls int64) []attribute.KeyValue {
	attrs = e.decisionAttributes(attrs, r, res, toolType, calls)
	if res.ErrorType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(res.ErrorType))
	}
	if e.cfg.recordContent {
		attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(input), semconv.GenAIToolCallResultKey.String(output))
	}
	return attrs
}

// decisionAttributes appends the attributes of the call's decision:
// gen_ai.tool.type, the run's attributes and the gate.* record (see
// spanAttributes; strict mode sets them before the tool runs, see commit).
func (e *Executor) decisionAttributes(attrs []attribute.KeyValue, r *Run, res *ToolResult, toolType string, calls int64) []attribute.KeyValue {
	attrs = append(attrs, semconv.GenAIToolType(toolType))
	attrs = append(attrs, r.attrs...) // agent, conversation, run, task
	rec := &res.Gate
	if calls > 1 {
		grouped := *rec
		grouped.Calls = calls
		rec = &grouped
	}
	return rec.Attributes(attrs, e.cfg.recordLimit+e.cfg.recordLimit/2)
}
