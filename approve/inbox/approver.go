package inbox

import (
	"context"
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
	// Poll is how often Block reads the store (0: 200 ms).
	Poll time.Duration
}

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
func NewApprover(ib *Inbox, cfg ApproverConfig) *Approver { return &Approver{ib: ib, cfg: cfg} }

// Approve implements gate.Approver. The recorded approver
// (ApprovalResult.Approver) is the human's name from the answer; a pending
// answer names "inbox".
func (a *Approver) Approve(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
	panic("TODO")
}
