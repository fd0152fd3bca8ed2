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
	// CallHash, when set, must equal the request's CallHash: an answer
	// bound to another call is rejected (the call is denied). Empty means
	// the answer is for the request it was returned from.
	CallHash string
	// Remember, on an approval, asks the executor to remember a grant for
	// this exact tool and input within the given scope, so that later asks
	// for the same command are approved without asking again ("always allow
	// this exact command"). GrantScopeNone (the default) remembers nothing.
	Remember GrantScope
}

// GrantScope is how long a remembered approval lasts.
type GrantScope string

// Grant scopes.
const (
	// GrantScopeNone: the approval covers only the call it answered.
	GrantScopeNone GrantScope = ""
	// GrantScopeRun: the approval covers later calls of the same tool with
	// the same validated input within the same run.
	GrantScopeRun GrantScope = "run"
)

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
