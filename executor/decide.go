package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// DefaultMaxRewrites is how many rewrites one call may go through before it
// is denied (see WithMaxRewrites).
const DefaultMaxRewrites = 3

// decide judges the call gc with g (named gname) and resolves an ask.
// Every gate whose scope holds the tool (executor-level then agent-level,
// one gate.Chain: see Agent.gateFor) judges the current input; a rewrite
// ends the round, is decoded and validated by decodeInput (the decoder of
// the model's input) and becomes the current input, and every gate judges
// it again; more than maxRewrites rewrites deny the call. So the tool
// receives an input only if every gate judged exactly that input in the
// last round and none denied it. It returns the decision record and, when
// the call is allowed with a rewrite, the input to run (nil to run the
// model's). vs is a small buffer for the verdicts.
func (e *Executor) decide(ctx context.Context, r *Run, ent *entry, g gate.Gate, gname string, gc *gate.ToolCallContext, vs []gate.Verdict) (gate.Record, json.RawMessage) {
	a := r.agent
	t0 := time.Since(monoBase) // one clock read (time.Now reads two)
	rec := gate.Record{Gated: true, OptOut: a.optOut}
	var (
		d      gate.Decision
		runRaw json.RawMessage
	)
	for round := 1; ; round++ {
		rec.Rounds = round
		d, vs = gate.Judge(ctx, g, *gc, gname, vs)
		if d.Action == gate.ActionDeny || d.RewrittenInput == nil {
			break
		}
		if round > e.cfg.maxRewrites {
			d = gate.FailClosed(gate.ErrorKindInvalid, d.Source, fmt.Errorf("%w: the gates kept rewriting the input (%d rewrites, limit %d)",
				gate.ErrInvalidDecision, round, e.cfg.maxRewrites)).WithRisk(d.Risk)
			break
		}
		in, raw, err := decodeInput(ent.input, d.RewrittenInput)
		if err != nil {
			d = gate.FailClosed(gate.ErrorKindInvalid, d.Source,
				fmt.Errorf("%w: rewritten input for tool %q is invalid: %s", gate.ErrInvalidDecision, gc.ToolName, inputMessage(err))).WithRisk(d.Risk)
			break
		}
		if gc.OriginalInput == nil {
			gc.OriginalInput = gc.RawInput
			rec.OriginalInputHash = gate.InputHash(gc.RawInput)
		}
		gc.Input, gc.RawInput, runRaw = in, raw, raw
		rec.Rewritten, rec.RewrittenBy = true, d.Source
	}
	resumeID := gate.ResumeID(ctx)
	if resumeID != "" && d.Action == gate.ActionAllow {
		// A resumed call runs only on its stored answer: even a call the
		// gates now allow outright goes to the approver, which checks that
		// it is the call the request was made for and uses the answer up.
		d.Action = gate.ActionAsk
		d.Reason += "; resuming approval request " + strconv.Quote(gate.SafeText(resumeID, gate.MaxNameBytes))
	}
	if d.Action == gate.ActionAsk {
		var a askOutcome
		d, a = e.resolveAsk(ctx, r, *gc, d, resumeID)
		rec.Approval, rec.Approver, rec.ApprovalID, rec.ApprovalWait = a.outcome, a.approver, a.requestID, a.wait
	}
	if d.Action == gate.ActionAllow && ctx.Err() != nil {
		// Cancellation is checked again after the gate: a cancelled call
		// never executes.
		d = gate.FailClosed(gate.ErrorKindCancelled, d.Source, ctx.Err()).WithRisk(d.Risk)
	}
	rec.Action = d.Action
	rec.Reason = e.record(d.Reason)
	rec.Source = d.Source
	rec.Rule = d.Rule
	rec.ErrorKind = d.ErrorKind
	rec.Risk = d.Risk
	rec.Verdicts = vs
	rec.Duration = time.Since(monoBase) - t0
	if d.Action != gate.ActionAllow {
		runRaw = nil
	}
	e.metrics.record(ctx, ent, rec.Action, rec.Duration)
	return rec, runRaw
}

// monoBase anchors the executor's readings of the monotonic clock.
var monoBase = time.Now()

// Approver names the executor records for asks it resolves itself.
const (
	// ApproverGrant: a remembered grant of this run approved the ask.
	ApproverGrant = "grant:run"
	// ApproverNone: no approver is configured, so the ask is denied.
	ApproverNone = "none"
)

// askOutcome is what the record keeps of a resolved ask.
type askOutcome struct {
	outcome   gate.ApprovalOutcome
	approver  string
	requestID string        // the durable request (gate.approval.id), if any
	wait      time.Duration // ask to answer (gate.approval.wait_ms)
}

// resolveAsk turns an ask into allow or deny. resumeID is the durable
// approval request the call resumes (gate.WithResume), or "". It returns
// the final decision and what to record of the ask: an answer of a
// durable request names it, and its wait is AnsweredAt−AskedAt when the
// approver knows both, else the time this call waited; a pending request
// (ApprovalPending) denies the call with outcome pending.
func (e *Executor) resolveAsk(ctx context.Context, r *Run, gc gate.ToolCallContext, d gate.Decision, resumeID string) (gate.Decision, askOutcome) {
	allow := func(reason string) gate.Decision {
		return gate.Decision{Action: gate.ActionAllow, Reason: reason, Source: d.Source, Rule: d.Rule, Risk: d.Risk}
	}
	deny := func(reason, kind string) gate.Decision {
		return gate.Decision{Action: gate.ActionDeny, Reason: reason, Source: d.Source, Rule: d.Rule, Risk: d.Risk, ErrorKind: kind}
	}
	key := gate.GrantKey(gc.AgentName, gc.ToolName, gc.RawInput)
	if resumeID == "" { // a resume is answered from its stored request, not a grant
		if ok, err := e.cfg.grants.Granted(ctx, r.grantID, key); err != nil {
			e.fail(ctx, "grant_store", fmt.Errorf("executor: reading run grants of run %q: %w", r.id, err))
		} else if ok {
			return allow(d.Reason + "; approved by a grant of this run"), askOutcome{outcome: gate.ApprovalApproved, approver: ApproverGrant}
		}
	}
	if e.cfg.approver == nil {
		return deny(d.Reason+"; no approver is configured", ""), askOutcome{outcome: gate.ApprovalDeclined, approver: ApproverNone}
	}
	req := gate.NewApprovalRequest(gc, d, gc.OriginalInput)
	req.ResumeID = resumeID
	asked := time.Now()
	res, err, late := e.approve(ctx, req)
	// A resume names its request even when the answer is refused (the ID
	// is the application's, from its saved state, not the model's).
	a := askOutcome{approver: gate.SafeText(res.Approver, gate.MaxNameBytes), wait: time.Since(asked),
		requestID: gate.SafeText(resumeID, gate.MaxNameBytes)}
	if a.approver == "" {
		a.approver = "approver"
	}
	approver := a.approver
	ended := func(dec gate.Decision, o gate.ApprovalOutcome) (gate.Decision, askOutcome) {
		a.outcome = o
		return dec, a
	}
	switch {
	case ctx.Err() != nil:
		return ended(deny(d.Reason+"; the call was cancelled while waiting for approval", gate.ErrorKindCancelled), gate.ApprovalTimeout)
	case late:
		return ended(deny(d.Reason+"; no approval within "+e.approvalWindow(), ""), gate.ApprovalTimeout)
	case errors.Is(err, errApproverPanic):
		return ended(deny(d.Reason+"; approver failed: "+err.Error(), gate.ErrorKindPanic), gate.ApprovalInvalid)
	case err != nil:
		return ended(deny(d.Reason+"; approver failed: "+err.Error(), gate.ErrorKindError), gate.ApprovalInvalid)
	case res.CallHash != req.CallHash:
		return ended(deny(d.Reason+"; the answer is not bound to this call (its call hash is missing or names another call)", gate.ErrorKindInvalid), gate.ApprovalInvalid)
	}
	// The answer is bound to this call: what it says of a durable request
	// is recorded.
	if res.RequestID != "" {
		a.requestID = gate.SafeText(res.RequestID, gate.MaxNameBytes)
	}
	if !res.AskedAt.IsZero() && !res.AnsweredAt.IsZero() && !res.AnsweredAt.Before(res.AskedAt) {
		a.wait = res.AnsweredAt.Sub(res.AskedAt)
	}
	e.linkAsk(ctx, res)
	switch res.Outcome {
	case gate.ApprovalPending:
		if a.requestID == "" {
			return ended(deny(d.Reason+"; the approver suspended the call without naming a stored request", gate.ErrorKindInvalid), gate.ApprovalInvalid)
		}
		a.wait = 0 // not answered yet
		return ended(deny(d.Reason+"; waiting for human approval (request "+a.requestID+")", ""), gate.ApprovalPending)
	case gate.ApprovalApproved:
		switch res.Remember {
		case gate.GrantScopeNone, gate.GrantScopeRun:
		default:
			return ended(deny(d.Reason+"; the answer asks for an unknown grant scope ("+strconv.Quote(string(res.Remember))+")", gate.ErrorKindInvalid), gate.ApprovalInvalid)
		}
		if res.Remember == gate.GrantScopeRun {
			if err := e.cfg.grants.Grant(ctx, r.grantID, key); err != nil {
				e.fail(ctx, "grant_store", fmt.Errorf("executor: remembering a grant of run %q: %w", r.id, err))
			}
		}
		return ended(allow(d.Reason+"; approved by "+approver+suffix(res.Reason)), gate.ApprovalApproved)
	case gate.ApprovalDeclined:
		return ended(deny(d.Reason+"; declined by "+approver+suffix(res.Reason), ""), gate.ApprovalDeclined)
	case gate.ApprovalTimeout:
		return ended(deny(d.Reason+"; no approval in time"+suffix(res.Reason), ""), gate.ApprovalTimeout)
	default:
		return ended(deny(d.Reason+"; the answer has no valid outcome ("+strconv.Quote(string(res.Outcome))+")", gate.ErrorKindInvalid), gate.ApprovalInvalid)
	}
}

// linkAsk links the call's span to the span of the call that first asked,
// when res resumes a stored request that names it.
func (e *Executor) linkAsk(ctx context.Context, res gate.ApprovalResult) {
	if res.AskTraceID == "" || res.AskSpanID == "" {
		return
	}
	tid, err1 := trace.TraceIDFromHex(res.AskTraceID)
	sid, err2 := trace.SpanIDFromHex(res.AskSpanID)
	if err1 != nil || err2 != nil {
		return
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	trace.SpanFromContext(ctx).AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attrLinkAsk}})
}

// attrLinkAsk marks the link from a resumed call to the call that asked.
var attrLinkAsk = attribute.String("gate.link", "approval_ask")

func (e *Executor) approvalWindow() string {
	if e.cfg.approvalTimeout > 0 {
		return e.cfg.approvalTimeout.String()
	}
	return "the call's deadline"
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

type approvalAnswer struct {
	res gate.ApprovalResult
	err error
}

// approve asks the approver on its own goroutine and waits for its answer
// at most until the approval timeout (WithApprovalTimeout) or the end of
// ctx, whichever comes first: late is true when no answer came in time. A
// late answer is discarded, whatever the approver does with its context;
// an approver that never returns keeps only its own goroutine. An answer
// seen after the deadline passed counts as late (fail closed).
func (e *Executor) approve(ctx context.Context, req gate.ApprovalRequest) (res gate.ApprovalResult, err error, late bool) {
	var (
		actx   context.Context
		cancel context.CancelFunc
	)
	if e.cfg.approvalTimeout > 0 {
		actx, cancel = context.WithTimeout(ctx, e.cfg.approvalTimeout)
	} else {
		actx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	ch := make(chan approvalAnswer, 1)
	go func() {
		res, err := safeApprove(actx, e.cfg.approver, req)
		ch <- approvalAnswer{res, err}
	}()
	select {
	case a := <-ch:
		if actx.Err() != nil {
			return a.res, nil, true
		}
		return a.res, a.err, false
	case <-actx.Done():
		return gate.ApprovalResult{}, nil, true
	}
}

// errApproverPanic wraps an approver's panic.
var errApproverPanic = errors.New("approver panicked")

func safeApprove(ctx context.Context, a gate.Approver, req gate.ApprovalRequest) (res gate.ApprovalResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = gate.ApprovalResult{}, fmt.Errorf("%w: %v", errApproverPanic, p)
		}
	}()
	return a.Approve(ctx, req)
}
