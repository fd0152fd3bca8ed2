package gate

import (
	"context"
	"encoding/json"
	"time"
)

// ApprovalRequest is what an Approver is asked: one exact call and the
// gate's reason for asking.
type ApprovalRequest struct {
	// Call is the call as it will run: Call.Input and Call.RawInput are the
	// input the tool will receive (after every rewrite, validated against
	// the tool's schema and judged by every gate).
	Call ToolCallContext
	// Decision is the ask being resolved (its Reason is shown to the human).
	Decision Decision
	// OriginalInput is the input as the model sent it, set only when a gate
	// rewrote it (then it differs from Call.RawInput); nil otherwise.
	OriginalInput json.RawMessage
	// Nonce is random and new for every request (NewApprovalRequest).
	Nonce string
	// CallHash binds an answer to this exact request: RequestHash(Call,
	// Nonce), so an answer to an earlier or expired request for the same
	// call never matches. The answer must carry it (build answers with
	// Approve, Decline or TimedOut); an answer without it, or with another,
	// denies the call.
	CallHash string
	// ResumeID is the ID of the durable approval request this call resumes
	// (see WithResume), or "" for a first ask. An approver that keeps
	// requests across processes (approve/inbox) answers a resume from the
	// stored request, and only if the stored call is this call.
	ResumeID string
}

// ApprovalOutcome is how an ask ended.
type ApprovalOutcome string

// Approval outcomes, the values of AttrApproval. An approver answers with
// the first three; ApprovalInvalid is recorded by the executor for an
// answer it could not accept (bound to another call, unknown outcome, an
// error or a panic of the approver).
const (
	ApprovalApproved ApprovalOutcome = "approved"
	ApprovalDeclined ApprovalOutcome = "declined"
	ApprovalTimeout  ApprovalOutcome = "timeout"
	ApprovalInvalid  ApprovalOutcome = "invalid"
	// ApprovalPending: the approver stored the request durably and the call
	// is suspended until a human answers (build it with
	// ApprovalRequest.Pending; ApprovalResult.RequestID names the request).
	// The executor does not run the call: it returns a result whose error
	// wraps executor.ErrApprovalPending and records a deny with
	// gate.approval=pending. The application resumes the call later with
	// WithResume(ctx, RequestID).
	ApprovalPending ApprovalOutcome = "pending"
)

// ApprovalResult is an Approver's answer to one request. Build it from the
// request (req.Approve, req.Decline, req.TimedOut) so that it carries the
// request's CallHash; the executor refuses any other.
type ApprovalResult struct {
	// Outcome is ApprovalApproved, ApprovalDeclined or ApprovalTimeout; it
	// is the only verdict (there is no separate flag to contradict it).
	Outcome ApprovalOutcome
	// Approver names who answered (for example "terminal" or "policy:file").
	Approver string
	// Reason is the approver's own reason, if any.
	Reason string
	// CallHash must equal the request's CallHash.
	CallHash string
	// Remember, on an approval, asks the executor to remember a grant for
	// this exact tool and input within the given scope, so that later asks
	// for the same command are approved without asking again ("always allow
	// this exact command"). GrantScopeNone (the default) remembers nothing.
	Remember GrantScope
	// RequestID names the durable approval request this answer is for
	// (gate.approval.id), when the approver keeps requests; "" otherwise.
	RequestID string
	// AskedAt and AnsweredAt are when the request was stored and answered
	// (UTC), when the approver knows them; the executor records
	// AnsweredAt−AskedAt as the approval's wait (gate.approval.wait_ms).
	// Zero values: the executor records the time it waited itself.
	AskedAt, AnsweredAt time.Time
	// AskTraceID and AskSpanID (lowercase hex W3C IDs) identify the span of
	// the call that first asked, when the answer resumes a stored request;
	// the executor links the resumed call's span to it.
	AskTraceID, AskSpanID string
}

// Approved reports whether the answer approves the call.
func (r ApprovalResult) Approved() bool { return r.Outcome == ApprovalApproved }

// Approve answers req with an approval for this call only.
func (req ApprovalRequest) Approve(approver, reason string) ApprovalResult {
	return ApprovalResult{Outcome: ApprovalApproved, Approver: approver, Reason: reason, CallHash: req.CallHash}
}

// ApproveForRun answers req with an approval that is also remembered for
// the same tool and input for the rest of the run (GrantScopeRun).
func (req ApprovalRequest) ApproveForRun(approver, reason string) ApprovalResult {
	res := req.Approve(approver, reason)
	res.Remember = GrantScopeRun
	return res
}

// Pending answers req with "stored as request id; the call is suspended
// until a human answers" (ApprovalPending).
func (req ApprovalRequest) Pending(approver, requestID string, askedAt time.Time) ApprovalResult {
	return ApprovalResult{Outcome: ApprovalPending, Approver: approver, CallHash: req.CallHash, RequestID: requestID, AskedAt: askedAt}
}

// Decline answers req with a refusal.
func (req ApprovalRequest) Decline(approver, reason string) ApprovalResult {
	return ApprovalResult{Outcome: ApprovalDeclined, Approver: approver, Reason: reason, CallHash: req.CallHash}
}

// TimedOut answers req with "no answer in time".
func (req ApprovalRequest) TimedOut(approver, reason string) ApprovalResult {
	return ApprovalResult{Outcome: ApprovalTimeout, Approver: approver, Reason: reason, CallHash: req.CallHash}
}

// GrantScope is how long a remembered approval lasts.
type GrantScope string

// Grant scopes.
const (
	// GrantScopeNone: the approval covers only the call it answered.
	GrantScopeNone GrantScope = ""
	// GrantScopeRun: the approval covers later calls of the same tool with
	// the same validated input within the same run (keyed by run ID in a
	// GrantStore).
	GrantScopeRun GrantScope = "run"
)

// Approver resolves an ask. It should honour ctx; the executor does not
// rely on it: when ctx ends before an answer, the call is denied with
// outcome timeout and a later answer is discarded. An error, a panic or an
// answer that does not carry the request's CallHash denies the call.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (ApprovalResult, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (ApprovalResult, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (ApprovalResult, error) {
	return f(ctx, req)
}

// resumeKey is the context key of WithResume.
type resumeKey struct{}

// WithResume returns a context under which the executor resumes the call
// suspended as durable approval request id (ApprovalPending): the ask
// that the gates raise again for the call carries ResumeID = id, and the
// approver answers it from the stored request. A resume never widens what
// was approved: the gates judge the call again, and the stored answer
// applies only when the call is the one the request was made for (same
// tool, input bytes, call ID, agent and run: CallHash); otherwise the call
// is denied.
func WithResume(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, resumeKey{}, id)
}

// ResumeID returns the request ID set by WithResume, or "".
func ResumeID(ctx context.Context) string {
	id, _ := ctx.Value(resumeKey{}).(string)
	return id
}
