package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/gate"
)

// decide runs the agent's gate for the call gc and resolves an ask. It
// returns the gate metadata and, when a rewrite was allowed, the input to
// run (nil to run the model's input). gc.Input is updated to the rewrite.
func (e *Executor) decide(ctx context.Context, r *Run, ent *entry, gc *gate.ToolCallContext) (GateInfo, json.RawMessage) {
	a := r.agent
	t0 := time.Now()
	d := gate.Evaluate(ctx, a.gate, *gc, a.gname)
	var runRaw json.RawMessage
	if d.Action != gate.ActionDeny && d.RewrittenInput != nil {
		in, raw, err := decodeInput(ent.input, d.RewrittenInput)
		if err != nil {
			d = gate.FailClosed(gate.ErrorKindInvalid, d.Source,
				fmt.Errorf("%w: rewritten input for tool %q is invalid: %s", gate.ErrInvalidDecision, gc.ToolName, inputMessage(err))).WithRisk(d.Risk)
		} else {
			gc.Input, runRaw = in, raw
		}
	}
	var approval, approver string
	if d.Action == gate.ActionAsk {
		d, approval, approver = e.resolveAsk(ctx, r, *gc, d)
	}
	if d.Action == gate.ActionAllow && ctx.Err() != nil {
		// Cancellation is checked again after the gate: a cancelled call
		// never executes.
		d = gate.FailClosed(gate.ErrorKindCancelled, d.Source, ctx.Err()).WithRisk(d.Risk)
	}
	info := GateInfo{
		Gated:     true,
		Action:    d.Action,
		Reason:    e.record(d.Reason),
		Source:    d.Source,
		ErrorKind: d.ErrorKind,
		Approval:  approval,
		Approver:  approver,
		Risk:      d.Risk,
		Rewritten: runRaw != nil && d.Action == gate.ActionAllow,
		OptOut:    a.optOut,
		Duration:  time.Since(t0),
	}
	if d.Action != gate.ActionAllow {
		runRaw = nil
	}
	e.metrics.record(ctx, ent, info.Action, info.Duration)
	return info, runRaw
}

// Approver names the executor records for asks it resolves itself.
const (
	// ApproverGrant: a remembered grant of this run approved the ask.
	ApproverGrant = "grant:run"
	// ApproverNone: no approver is configured, so the ask is denied.
	ApproverNone = "none"
)

// resolveAsk turns an ask into allow or deny. It returns the final decision
// and the approval outcome and approver to record.
func (e *Executor) resolveAsk(ctx context.Context, r *Run, gc gate.ToolCallContext, d gate.Decision) (gate.Decision, string, string) {
	allow := func(reason string) gate.Decision {
		return gate.Decision{Action: gate.ActionAllow, Reason: reason, Source: d.Source, Risk: d.Risk, RewrittenInput: d.RewrittenInput}
	}
	deny := func(reason, kind string) gate.Decision {
		return gate.Decision{Action: gate.ActionDeny, Reason: reason, Source: d.Source, Risk: d.Risk, ErrorKind: kind}
	}
	key := gate.GrantKey(gc.ToolName, gc.Input)
	if r.granted(key) {
		return allow(d.Reason + "; approved by a grant of this run"), gate.ApprovalApproved, ApproverGrant
	}
	if e.cfg.approver == nil {
		return deny(d.Reason+"; no approver is configured", ""), gate.ApprovalDeclined, ApproverNone
	}
	req := gate.ApprovalRequest{Call: gc, Decision: d, CallHash: gate.CallHash(gc.ToolName, gc.Input, gc.ToolCallID)}
	actx := ctx
	if e.cfg.approvalTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, e.cfg.approvalTimeout)
		defer cancel()
	}
	res, err := safeApprove(actx, e.cfg.approver, req)
	approver := res.Approver
	if approver == "" {
		approver = "approver"
	}
	switch {
	case ctx.Err() != nil:
		return deny(d.Reason+"; the call was cancelled while waiting for approval", gate.ErrorKindCancelled), gate.ApprovalTimeout, approver
	case err != nil && actx.Err() != nil:
		return deny(d.Reason+"; no approval in time", ""), gate.ApprovalTimeout, approver
	case err != nil:
		return deny(d.Reason+"; approver failed: "+err.Error(), gate.ErrorKindError), gate.ApprovalDeclined, approver
	case res.CallHash != "" && res.CallHash != req.CallHash:
		return deny(d.Reason+"; the approval was for another call", gate.ErrorKindInvalid), gate.ApprovalDeclined, approver
	case res.Approved && res.Outcome != "" && res.Outcome != gate.ApprovalApproved:
		return deny(d.Reason+"; contradictory approval ("+res.Outcome+")", gate.ErrorKindInvalid), gate.ApprovalDeclined, approver
	case res.Approved:
		if res.Remember == gate.GrantScopeRun {
			r.grant(key)
		}
		return allow(d.Reason + "; approved by " + approver + suffix(res.Reason)), gate.ApprovalApproved, approver
	case res.Outcome == gate.ApprovalTimeout || actx.Err() != nil:
		return deny(d.Reason+"; no approval in time"+suffix(res.Reason), ""), gate.ApprovalTimeout, approver
	default:
		return deny(d.Reason+"; declined by "+approver+suffix(res.Reason), ""), gate.ApprovalDeclined, approver
	}
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
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
