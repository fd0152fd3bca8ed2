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

// record redacts s and cuts it to the record limit.
func (e *Executor) record(s string) string {
	if s == "" {
		return s
	}
	s = e.safeRedact(s)
	s, _ = truncate(s, e.cfg.recordLimit)
	return s
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
func (e *Executor) finish(ctx context.Context, span trace.Span, r *Run, call ToolCall, res *ToolResult, start time.Time, toolType string) {
	defer func() {
		if p := recover(); p != nil {
			otel.Handle(fmt.Errorf("executor: recording tool call %s: %v", call.ID, p))
		}
	}()
	var input, output string
	if e.cfg.recordContent {
		input, output = e.record(string(call.Input)), e.record(res.Content)
	}
	g := &res.Gate
	if span.IsRecording() {
		buf := e.attrPool.Get().(*[]attribute.KeyValue)
		attrs := e.spanAttributes((*buf)[:0], r, call, res, toolType, input, output)
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
		IsError: res.IsError, ErrorType: res.ErrorType,
		Gated: g.Gated, GateAction: g.Action, GateReason: g.Reason, GateSource: g.Source, GateError: g.ErrorKind,
		Approval: g.Approval, Approver: g.Approver, Risk: g.Risk, OptOut: g.OptOut,
		Start: start, End: time.Now(), GateDuration: g.Duration, Input: input, Output: output,
	}
	if sc := span.SpanContext(); sc.IsValid() {
		ev.TraceID, ev.SpanID = sc.TraceID().String(), sc.SpanID().String()
	}
	e.emit(ctx, ev)
}

// emit calls OnTrace; its errors and panics go to otel.Handle.
func (e *Executor) emit(ctx context.Context, ev ToolCallTrace) {
	defer func() {
		if p := recover(); p != nil {
			otel.Handle(fmt.Errorf("executor: OnTrace panicked: %v", p))
		}
	}()
	if err := e.cfg.onTrace(ctx, ev); err != nil {
		otel.Handle(fmt.Errorf("executor: OnTrace: %w", err))
	}
}

// spanAttributes appends the attributes the call's span gets when it ends
// (gen_ai.operation.name, gen_ai.tool.name and gen_ai.tool.call.id are set
// at its start).
func (e *Executor) spanAttributes(attrs []attribute.KeyValue, r *Run, call ToolCall, res *ToolResult, toolType, input, output string) []attribute.KeyValue {
	g := &res.Gate
	attrs = append(attrs, semconv.GenAIToolType(toolType), gate.AttrGated.Bool(g.Gated))
	attrs = append(attrs, r.attrs...) // agent, conversation, run, task
	if g.Gated {
		attrs = append(attrs,
			gate.AttrAction.String(string(g.Action)),
			gate.AttrSource.String(g.Source),
			gate.AttrDuration.Int64(int64(g.Duration)))
		if g.Reason != "" {
			attrs = append(attrs, gate.AttrReason.String(g.Reason))
		}
		if g.ErrorKind != "" {
			attrs = append(attrs, gate.AttrError.String(g.ErrorKind))
		}
		if g.Approval != "" {
			attrs = append(attrs, gate.AttrApproval.String(g.Approval), gate.AttrApprover.String(g.Approver))
		}
		if g.Risk != gate.RiskNone {
			attrs = append(attrs, gate.AttrRiskLevel.String(string(g.Risk)))
		}
		if g.Action == gate.ActionDeny {
			attrs = append(attrs, gate.AttrSamplingPriority.Int(1))
		}
	}
	if g.OptOut {
		attrs = append(attrs, gate.AttrOptOut.Bool(true))
	}
	if res.ErrorType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(res.ErrorType))
	}
	if e.cfg.recordContent {
		attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(input), semconv.GenAIToolCallResultKey.String(output))
	}
	return attrs
}
