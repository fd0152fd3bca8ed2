package gate

import "context"

// ApprovalRequest is what an Approver is asked: one exact call and the
// gate's reason for asking.
type ApprovalRequest struct {
	Call     ToolCallContext
	Decision Decision
	// CallHash binds an approval to this exact call: the hex SHA-256 of the
	// tool name, the canonical validated input and the tool-call ID.
	CallHash string
}

// ApprovalResult is an Approver's answer.
type ApprovalResult struct {
	// Approved allows the call; false declines it.
	Approved bool
	// Outcome is ApprovalApproved, ApprovalDeclined or ApprovalTimeout.
	Outcome string
	// Approver names who answered (for example "terminal" or "policy:file").
	Approver string
	// Reason is the approver's own reason, if any.
	Reason string
}

// Approver resolves an ask. It must honour ctx: when ctx ends before an
// answer, the call is denied with outcome timeout. An error denies the call.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (ApprovalResult, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (ApprovalResult, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (ApprovalResult, error) {
	return f(ctx, req)
}
