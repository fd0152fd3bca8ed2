package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// Execute runs one call and returns exactly one result; it never panics.
// In order: the run's context and aborted state are checked, the tool is
// looked up, reachability is checked (an unreachable tool never reaches
// the gate), the input is validated against the tool's schema, the gate
// decides (an ask goes to the approver; a rewrite is validated again),
// cancellation is checked again, the tool runs, its output is validated
// and truncated. The call is one execute_tool span; see the package doc for
// its attributes.
func (r *Run) Execute(ctx context.Context, call ToolCall) ToolResult {
	return r.agent.ex.execute(ctx, r, call)
}

// maxNameAttr caps an unregistered tool name (model output) where it is
// recorded or echoed.
const maxNameAttr = 256

func shortName(s string) string {
	if len(s) <= maxNameAttr {
		return s
	}
	return s[:runeStart(s, maxNameAttr)]
}

func (e *Executor) execute(ctx context.Context, r *Run, call ToolCall) (res ToolResult) {
	var start time.Time // only the trace hook needs it; the span has its own
	if e.cfg.onTrace != nil {
		start = time.Now()
	}
	ent, known := e.reg.lookup(call.Name)
	spanName, toolType, toolName := "execute_tool", ToolTypeFunction, call.Name
	if known {
		spanName, toolType = ent.spanName, ent.toolType
	} else {
		toolName = shortName(toolName)
	}
	toolName = gate.SafeText(toolName, gate.MaxNameBytes)
	// Past its refusal budget, an aborted run's calls to one tool share
	// spans (refusals.go).
	agg, skip := e.aggregate(ctx, r, spanName, toolType, toolName)
	if skip {
		return e.skipped(ctx, r, call)
	}
	// The call's identity is on the span from its start (samplers and span
	// processors see it in OnStart); everything else — agent and run
	// included, which otelbridge/bridge's ToolCallIndex keys on at OnEnd — is set
	// once, when the call ends (see finish).
	ss := spanStarts.Get().(*spanStart)
	ss.attrs = [...]attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(toolName),
		semconv.GenAIToolCallID(gate.SafeText(call.ID, gate.MaxNameBytes)),
	}
	ctx, link := r.parentOf(ctx)
	var span trace.Span
	if link == nil {
		ctx, span = e.tracer.Start(ctx, spanName, ss.opts[:]...)
	} else {
		ctx, span = e.tracer.Start(ctx, spanName, ss.opts[0], ss.opts[1], trace.WithLinks(*link))
	}
	ss.attrs = [3]attribute.KeyValue{} // pin no call's strings in the pool
	spanStarts.Put(ss)
	cs := &callState{calls: agg, toolName: toolName}
	defer e.finish(ctx, span, r, call, &res, start, toolType, cs)
	defer func() {
		if p := recover(); p != nil {
			res = errorResult(call, ErrorTypeInternal, fmt.Errorf("%w: %v", ErrInternal, p),
				fmt.Sprintf("Tool %q failed with an internal error.", call.Name))
		}
	}()
	return e.run(ctx, r, call, ent, known, cs)
}

// spanStart is a span's start options: its kind and the call's identity
// attributes, which opts[1] (built once) refers to. Pooled: the OTel API
// copies start attributes into the span's configuration
// (trace.NewSpanStartConfig) before Tracer.Start returns, so a call needs
// neither its own option values nor the boxed attribute option.
type spanStart struct {
	attrs [3]attribute.KeyValue
	opts  [2]trace.SpanStartOption
}

var spanStarts = sync.Pool{New: func() any {
	s := new(spanStart)
	s.opts = [...]trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(s.attrs[:]...)}
	return s
}}

// callState is the one allocation the executor makes for a call: the
// context the tool runs with (which the tool may keep), the record's
// verdicts and the input that ran.
type callState struct {
	cc       callContext
	verdicts [4]gate.Verdict // backing store of the record's verdicts
	ran      []byte          // the input that ran, when a gate rewrote it
	calls    int64           // > 0: the aggregated refusals the span records
	toolName string          // gen_ai.tool.name as the span's start recorded it
}

// maxMessage caps the executor's own model-facing messages (a schema error
// on a huge input can be long).
const maxMessage = 4096

func errorResult(call ToolCall, errType string, err error, msg string) ToolResult {
	msg, _ = truncate(msg, maxMessage)
	return ToolResult{ToolCallID: call.ID, ToolName: call.Name, Content: msg, IsError: true, ErrorType: errType, Err: err}
}

func (e *Executor) run(ctx context.Context, r *Run, call ToolCall, ent *entry, known bool, cs *callState) ToolResult {
	cc := &cs.cc
	a := r.agent
	if err := ctx.Err(); err != nil {
		res := errorResult(call, ErrorTypeCancelled, fmt.Errorf("%w: %w", ErrCancelled, err),
			fmt.Sprintf("Tool %q was not run: the call was cancelled.", call.Name))
		res.Gate = e.refused(gate.StageCancelled, ErrorTypeCancelled, "the call's context was done before the call: "+err.Error())
		return res
	}
	if r.Err() != nil {
		res := e.abortedResult(r, call)
		if cs.calls == 0 { // aggregated calls were counted by aggregate
			res.Gate, _ = e.refusedCall(r, res.Gate)
		}
		return res
	}
	if !known {
		name := shortName(call.Name)
		res := errorResult(call, ErrorTypeToolNotFound, fmt.Errorf("%w: %q", ErrUnknownTool, name),
			fmt.Sprintf("Tool %q is not registered. Use only the tools you were given.", name))
		res.Gate, _ = e.refusedCall(r, e.refused(gate.StageRegistry, ErrorTypeToolNotFound, "the tool is not registered: the model called a tool this executor does not have"))
		return res
	}
	if !a.Reachable(call.Name) {
		res := errorResult(call, ErrorTypeNotReachable, fmt.Errorf("%w: %q for agent %q", ErrNotReachable, call.Name, a.name),
			fmt.Sprintf("Tool %q is not available to this agent. Use only the tools you were given.", call.Name))
		res.Gate, _ = e.refusedCall(r, e.refused(gate.StageReachability, ErrorTypeNotReachable, "the tool is not reachable for agent "+strconv.Quote(a.name)))
		return res
	}
	input, raw, err := decodeInput(ent.input, call.Input)
	if err != nil {
		msg := inputMessage(err)
		res := errorResult(call, ErrorTypeInvalidInput, fmt.Errorf("%w: %w", ErrInvalidInput, err),
			fmt.Sprintf("Invalid input for tool %q: %s", call.Name, msg))
		res.Gate, _ = e.refusedCall(r, e.refused(gate.StageInput, ErrorTypeInvalidInput, "the input does not match the tool's schema: "+msg))
		return res
	}
	*cc = callContext{Context: ctx, call: gate.ToolCallContext{
		ToolName:      call.Name,
		Input:         input,
		RawInput:      raw, // what the tool receives ({} for empty or null)
		ToolCallID:    call.ID,
		AgentName:     a.name,
		RunID:         r.id,
		TaskID:        r.taskID,
		WorkingDir:    call.WorkingDir,
		Annotations:   ent.tool.Annotations,
		Consequential: ent.tool.Consequential,
	}}
	gc := &cc.call
	info := gate.Record{Stage: gate.StageGate}
	if g, gname := a.gateFor(ent); g != nil {
		var runRaw json.RawMessage
		info, runRaw = e.decide(ctx, r, ent, g, gname, gc, cs.verdicts[:0])
		info.Stage = gate.StageGate
		if info.Action == gate.ActionDeny && info.Approval == gate.ApprovalPending {
			// Suspended, not refused: the run is not aborted; the call
			// counts towards the refusal budget (each one stores a request).
			err := fmt.Errorf("%w: tool %q: approval request %s", ErrApprovalPending, call.Name, info.ApprovalID)
			res := errorResult(call, ErrorTypeApprovalPending, err, pendingMessage(call.Name, info))
			res.Gate, _ = e.refusedCall(r, info)
			return res
		}
		if info.Action == gate.ActionDeny {
			err := fmt.Errorf("%w: tool %q by %s: %s", ErrDenied, call.Name, info.Source, info.Reason)
			if e.cfg.abortOnDeny {
				r.abort(fmt.Errorf("%w: call %s (%s) was denied: %w", ErrRunAborted, call.ID, call.Name, err))
			}
			res := errorResult(call, gate.ErrorTypeGateDenied, err, denialMessage(call.Name, info))
			res.Gate, _ = e.refusedCall(r, info) // a denial counts towards the refusal budget
			return res
		}
		if runRaw != nil {
			raw = runRaw
		}
		if info.Rewritten {
			cs.ran = gc.RawInput
		}
	} else {
		info.OptOut = a.optOut
	}
	// Last checks before the tool runs: a cancelled call never executes.
	if err := ctx.Err(); err != nil {
		res := errorResult(call, ErrorTypeCancelled, fmt.Errorf("%w: %w", ErrCancelled, err),
			fmt.Sprintf("Tool %q was not run: the call was cancelled.", call.Name))
		res.Gate = e.refusedLate(info, gate.StageCancelled, ErrorTypeCancelled, "the call's context ended before the tool ran: "+err.Error())
		return res
	}
	if err := r.Err(); err != nil {
		res := e.abortedResult(r, call)
		res.Gate, _ = e.refusedCall(r, e.refusedLate(info, gate.StageRun, ErrorTypeRunAborted, "the run was aborted before the tool ran: "+err.Error()))
		return res
	}
	if e.cfg.writeAhead != nil {
		if f := e.commit(ctx, trace.SpanFromContext(ctx), r, call, &info, ent.toolType, cs); f != nil {
			return e.auditUnavailable(ctx, call, info, f)
		}
	}
	r.ranCall() // the tool runs: the count of calls that did not run starts again
	res := e.invoke(cc, call, ent, raw)
	res.Gate = info
	return res
}

// refused is the decision record of a call the executor refused before
// any gate: the stage it stopped at, deny by gate.SourceExecutor, the
// executor's error type as its error kind, and reason (which may quote
// the model's input: redacted and bounded like a gate's reason).
func (e *Executor) refused(stage gate.Stage, errType, reason string) gate.Record {
	return gate.Record{Stage: stage, Action: gate.ActionDeny, Source: gate.SourceExecutor, ErrorKind: errType, Reason: e.record(reason)}
}

// refusedLate is the record of a call refused after its gate stage, before
// the tool ran: an ungated call is refused at stage (cancelled or run); a
// gated call keeps its gate's record (stage gate, its verdicts) with
// action deny by the executor, errType as its error kind and why appended
// to the gate's reason.
func (e *Executor) refusedLate(info gate.Record, stage gate.Stage, errType, why string) gate.Record {
	if !info.Gated {
		rec := e.refused(stage, errType, why)
		rec.OptOut = info.OptOut
		return rec
	}
	info.Action, info.Source, info.ErrorKind = gate.ActionDeny, gate.SourceExecutor, errType
	info.Reason = e.record(info.Reason + "; refused by the executor: " + why)
	return info
}

// invoke runs the tool and handles its output.
func (e *Executor) invoke(ctx context.Context, call ToolCall, ent *entry, raw json.RawMessage) ToolResult {
	out, err, panicked := safeExecute(ctx, ent.tool.Execute, raw)
	var res ToolResult
	switch {
	case panicked:
		res = errorResult(call, ErrorTypeToolPanic, fmt.Errorf("%w: %w", ErrToolPanicked, err),
			fmt.Sprintf("Tool %q failed: it crashed (%v).", call.Name, err))
	case err != nil:
		res = errorResult(call, ErrorTypeToolError, fmt.Errorf("%w: %w", ErrToolFailed, err),
			fmt.Sprintf("Tool %q failed: %v", call.Name, err))
	case out.IsError:
		res = ToolResult{ToolCallID: call.ID, ToolName: call.Name, Content: out.Content, Structured: out.Structured,
			IsError: true, ErrorType: ErrorTypeToolError}
	default:
		res = ToolResult{ToolCallID: call.ID, ToolName: call.Name, Content: out.Content, Structured: out.Structured}
		if ent.output != nil {
			if err := validateOutput(ent.output, out); err != nil {
				res = errorResult(call, ErrorTypeInvalidOutput, fmt.Errorf("%w: %w", ErrInvalidOutput, err),
					fmt.Sprintf("Invalid output from tool %q: %s", call.Name, inputMessage(err)))
			}
		}
	}
	limit := ent.tool.MaxOutputBytes
	if limit == 0 {
		limit = e.cfg.maxOutput
	}
	res.Content, res.TruncatedBytes = truncate(res.Content, limit)
	return res
}

func safeExecute(ctx context.Context, f func(context.Context, json.RawMessage) (Result, error), raw json.RawMessage) (out Result, err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			out, err, panicked = Result{}, fmt.Errorf("panic: %v", p), true
		}
	}()
	out, err = f(ctx, raw)
	return out, err, false
}

func validateOutput(s *jsonschema.Schema, out Result) error {
	doc := out.Structured
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = json.RawMessage(out.Content)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("output is not JSON: %w", err)
	}
	return s.Validate(v)
}

func inputMessage(err error) string {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return schemaMessage(ve)
	}
	return err.Error()
}

// denialMessage is the model-facing text of a denied call.
func denialMessage(tool string, g gate.Record) string {
	msg := fmt.Sprintf("Tool %q was denied by the tool gate (policy %q): %s", tool, g.Source, g.Reason)
	if g.Approval != "" && g.Approval != gate.ApprovalApproved {
		msg += " (approval " + string(g.Approval) + ")"
	}
	return msg + ". Do not retry the same call: it will be denied again. Continue without it, or tell the user what you needed it for."
}

// pendingMessage is the model-facing text of a call suspended for a human's
// approval (gate.ApprovalPending).
func pendingMessage(tool string, g gate.Record) string {
	return fmt.Sprintf("Tool %q has not run: it is waiting for a person's approval (request %s; %s). "+
		"Do not retry the call; it runs once a person approves it and the application resumes it.", tool, g.ApprovalID, g.Reason)
}
