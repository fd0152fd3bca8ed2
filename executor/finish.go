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
func (e *Executor) finish(ctx context.Context, span trace.Span, r *Run, call ToolCall, res *ToolResult, start time.Time, toolName, toolType string) {
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
		span.SetAttributes(e.spanAttributes(r, call, res, toolName, toolType, input, output)...)
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

// spanAttributes returns every attribute of the call's span, in one slice
// of exactly the needed length.
func (e *Executor) spanAttributes(r *Run, call ToolCall, res *ToolResult, toolName, toolType, input, output string) []attribute.KeyValue {
	g := &res.Gate
	n := 3 // tool type, agent, gated (operation, tool name and call ID are set at start)
	if r.id != "" {
		n += 2
	}
	if r.taskID != "" {
		n++
	}
	if g.Gated {
		n += 3
		if g.Reason != "" {
			n++
		}
		if g.ErrorKind != "" {
			n++
		}
		if g.Approval != "" {
			n += 2
		}
		if g.Risk != gate.RiskNone {
			n++
		}
		if g.Action == gate.ActionDeny {
			n++
		}
	}
	if g.OptOut {
		n++
	}
	if res.ErrorType != "" {
		n++
	}
	if e.cfg.recordContent {
		n += 2
	}
	attrs := make([]attribute.KeyValue, 0, n)
	attrs = append(attrs,
		semconv.GenAIToolType(toolType),
		semconv.GenAIAgentName(r.agent.name),
		gate.AttrGated.Bool(g.Gated))
	if r.id != "" {
		attrs = append(attrs, semconv.GenAIConversationID(r.id), gate.AttrRunID.String(r.id))
	}
	if r.taskID != "" {
		attrs = append(attrs, gate.AttrTaskID.String(r.taskID))
	}
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
