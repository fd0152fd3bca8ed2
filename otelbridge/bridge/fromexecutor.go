package bridge

import "github.com/toolgate/toolgate/executor"

// EventFromTrace converts the executor's per-call event (the value its
// trace hook, executor.WithOnTrace, receives) into a tool_call Event, for
// an application that forwards the executor's events together with a
// framework's own. The event keeps the call's TraceID and SpanID, so the
// bridge never emits a second span for a call the executor already traced;
// clear them to bridge the call as a span of its own (the decision is
// encoded by the same gate.Record.Attributes either way).
func EventFromTrace(ev executor.ToolCallTrace) Event {
	ms := func(nsec int64) float64 { return float64(nsec) / 1e6 }
	d := ev.Decision
	return Event{
		Type: EventToolCall, RunID: ev.RunID, Agent: ev.Agent, TaskID: ev.TaskID,
		StartMs: ms(ev.Start.UnixNano()), EndMs: ms(ev.End.UnixNano()),
		Tool: ev.Tool, ToolCallID: ev.ToolCallID, IsError: ev.IsError, ErrorType: ev.ErrorType,
		Gated: d.Gated, GateAction: string(d.Action), GateReason: d.Reason, GateSource: d.Source, GateRule: d.Rule,
		GateError: d.ErrorKind, Approval: string(d.Approval), Approver: d.Approver, RiskLevel: string(d.Risk),
		ApprovalID: d.ApprovalID, ApprovalWaitMs: d.ApprovalWaitMs(),
		OptOut: d.OptOut, GateDurationNs: int64(d.Duration), Verdicts: d.Verdicts,
		Rewritten: d.Rewritten, RewrittenBy: d.RewrittenBy, OriginalInputSha256: d.OriginalInputHash, Rounds: d.Rounds,
		GateStage: string(d.Stage), Calls: d.Calls, TraceID: ev.TraceID, SpanID: ev.SpanID,
	}
}
