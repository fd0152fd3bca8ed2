package inbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/gate"
)

// Mode is how an Approver waits for the human.
type Mode int

// Modes.
const (
	// Block: the call waits for the answer, polling the store; the
	// executor's approval timeout (or the call's context) bounds the wait,
	// and a request whose call stopped waiting is abandoned (expired).
	Block Mode = iota
	// Suspend: the request is stored and the call returns at once with
	// gate.ApprovalPending (the executor's result wraps
	// executor.ErrApprovalPending and carries the request ID); the
	// application resumes it under gate.WithResume(ctx, id).
	Suspend
)

// ApproverConfig configures an Approver.
type ApproverConfig struct {
	Mode Mode
	// Poll is how often Block reads the store (0: DefaultPoll, 200 ms).
	Poll time.Duration
}

// DefaultPoll is ApproverConfig.Poll's default.
const DefaultPoll = 200 * time.Millisecond

// abandonTimeout bounds Abandon after a Block wait's context ended.
const abandonTimeout = 5 * time.Second

// approverName names the inbox in a pending answer and in a timeout.
const approverName = "inbox"

// Approver is a gate.Approver over an Inbox. A request with ResumeID is
// answered from the stored request (Take): approved → the call runs once;
// declined → declined; still pending → pending again (Suspend) or wait
// (Block); expired → timeout; a different call → error (the executor
// denies it as invalid).
type Approver struct {
	ib  *Inbox
	cfg ApproverConfig
}

// NewApprover returns an Approver over ib.
func NewApprover(ib *Inbox, cfg ApproverConfig) *Approver {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	return &Approver{ib: ib, cfg: cfg}
}

var _ gate.Approver = (*Approver)(nil)

// Approve implements gate.Approver. The recorded approver
// (ApprovalResult.Approver) is the human's name from the answer; a pending
// answer and a timeout name "inbox".
//
// A first ask (req.ResumeID == "") is stored with Inbox.Ask; Suspend then
// answers req.Pending("inbox", id, askedAt), Block waits for the answer.
// A resume (req.ResumeID != "") is answered from Inbox.Take of the stored
// request against req.Call:
//   - approved: req.Approve (req.ApproveForRun when the answer is ForRun),
//     with RequestID, AskedAt, AnsweredAt, AskTraceID and AskSpanID set;
//   - declined: req.Decline with the same fields;
//   - still pending: Suspend answers req.Pending again with the same ID,
//     Block waits;
//   - expired: req.TimedOut("inbox", "approval request ID expired") with
//     RequestID and AskedAt;
//   - another call (ErrCallChanged), already used (ErrUsed), no such
//     request (ErrNotFound), or a store failure: an error wrapping it (the
//     executor denies the call as an invalid approval).
//
// Block polls Inbox.Get every Poll; once the request is answered it
// consumes the answer with Take (so a Block approval is used once, too)
// and answers as for a resume. When ctx ends first, the request is
// abandoned (marked expired) and ctx.Err() is returned.
func (a *Approver) Approve(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
	if req.ResumeID != "" {
		return a.resume(ctx, req, req.ResumeID)
	}
	// A blocking ask expires when its call stops waiting (the approval
	// timeout or the call's deadline), even if the process is gone before
	// it can abandon the request: nobody can approve a call no one waits for.
	var until time.Time
	if d, ok := ctx.Deadline(); ok && a.cfg.Mode == Block {
		until = d
	}
	r, err := a.ib.ask(ctx, req, until)
	if err != nil {
		return gate.ApprovalResult{}, err
	}
	if a.cfg.Mode == Suspend {
		return req.Pending(approverName, r.ID, r.AskedAt), nil
	}
	return a.wait(ctx, req, r.ID)
}

// resume answers req from the stored request id.
func (a *Approver) resume(ctx context.Context, req gate.ApprovalRequest, id string) (gate.ApprovalResult, error) {
	r, err := a.ib.Take(ctx, id, req.Call)
	switch {
	case errors.Is(err, ErrExpired):
		res := req.TimedOut(approverName, "approval request "+safeName(id)+" expired")
		res.RequestID = id
		res.AskedAt = r.AskedAt
		return res, nil
	case err != nil:
		return gate.ApprovalResult{}, fmt.Errorf("inbox: resume approval request %q: %w", safeName(id), err)
	}
	switch r.Status {
	case StatusPending:
		if a.cfg.Mode == Suspend {
			return req.Pending(approverName, r.ID, r.AskedAt), nil
		}
		return a.wait(ctx, req, id)
	case StatusUsed, StatusDeclined:
		if r.Answer == nil {
			return gate.ApprovalResult{}, fmt.Errorf("inbox: approval request %s is %s without an answer", id, r.Status)
		}
		var res gate.ApprovalResult
		switch {
		case r.Status == StatusUsed && r.Answer.Approve && r.Answer.ForRun:
			res = req.ApproveForRun(r.Answer.Approver, r.Answer.Reason)
		case r.Status == StatusUsed && r.Answer.Approve:
			res = req.Approve(r.Answer.Approver, r.Answer.Reason)
		default:
			res = req.Decline(r.Answer.Approver, r.Answer.Reason)
		}
		res.RequestID = r.ID
		res.AskedAt = r.AskedAt
		res.AnsweredAt = r.Answer.At
		if req.ResumeID != "" {
			res.AskTraceID, res.AskSpanID = r.TraceID, r.SpanID
		}
		return res, nil
	}
	return gate.ApprovalResult{}, fmt.Errorf("inbox: approval request %s is in status %q", id, safeName(string(r.Status)))
}

// wait polls request id until it is no longer pending, then answers req
// from it (resume); when ctx ends first it abandons the request.
func (a *Approver) wait(ctx context.Context, req gate.ApprovalRequest, id string) (gate.ApprovalResult, error) {
	t := time.NewTicker(a.cfg.Poll)
	defer t.Stop()
	for {
		r, err := a.ib.Get(ctx, id)
		if err != nil && ctx.Err() == nil {
			return gate.ApprovalResult{}, fmt.Errorf("inbox: wait for approval request %s: %w", id, err)
		}
		if err == nil && r.Status != StatusPending {
			res, err := a.resume(ctx, req, id)
			if ctx.Err() != nil {
				// The call stopped waiting while the answer was being
				// taken: an approval it did not take is expired, not left
				// for anyone to resume (one it took stays used: at most once).
				a.giveUp(ctx, id)
				return gate.ApprovalResult{}, ctx.Err()
			}
			return res, err
		}
		select {
		case <-ctx.Done():
			a.giveUp(ctx, id)
			return gate.ApprovalResult{}, ctx.Err()
		case <-t.C:
		}
	}
}

// giveUp expires request id, pending or approved but not taken, once the
// blocking call that asked stopped waiting (ctx ended).
func (a *Approver) giveUp(ctx context.Context, id string) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	_ = a.ib.abandon(actx, id, "the call stopped waiting: "+ctx.Err().Error(), true)
}
