package gate

import (
	"context"
	"errors"
	"sync"
)

// ErrApprovalUnknown is returned by ChannelApprover.Resolve for an answer
// that matches no pending request: unknown, already answered (an approval
// is used once) or expired.
var ErrApprovalUnknown = errors.New("gate: no pending approval for this call hash (unknown, already answered or expired)")

// ErrApprovalPending is returned by ChannelApprover.Approve when a request
// with the same call hash is already waiting for an answer.
var ErrApprovalPending = errors.New("gate: an approval for this exact call is already pending")

// ChannelApprover hands asks to a UI: each request appears on Requests(),
// and the UI answers with Resolve, naming the request by its CallHash.
// An answer is bound to that exact call and used once. When the asking
// call's context ends first, the outcome is ApprovalTimeout and a late
// answer gets ErrApprovalUnknown.
type ChannelApprover struct {
	name string
	reqs chan ApprovalRequest

	mu      sync.Mutex
	pending map[string]chan ApprovalResult
}

// NewChannelApprover returns a ChannelApprover named name (recorded as
// gate.approver) whose request channel holds up to buffer requests.
func NewChannelApprover(name string, buffer int) *ChannelApprover {
	if buffer < 0 {
		buffer = 0
	}
	return &ChannelApprover{name: name, reqs: make(chan ApprovalRequest, buffer), pending: map[string]chan ApprovalResult{}}
}

// Requests is the stream of asks waiting for an answer.
func (c *ChannelApprover) Requests() <-chan ApprovalRequest { return c.reqs }

// Resolve answers the pending request with the given call hash. Outcome is
// filled from Approved when empty, Approver with the approver's name.
func (c *ChannelApprover) Resolve(callHash string, res ApprovalResult) error {
	c.mu.Lock()
	ch, ok := c.pending[callHash]
	delete(c.pending, callHash)
	c.mu.Unlock()
	if !ok {
		return ErrApprovalUnknown
	}
	ch <- res // buffered, never blocks
	return nil
}

// Approve publishes req and waits for Resolve or the end of ctx.
func (c *ChannelApprover) Approve(ctx context.Context, req ApprovalRequest) (ApprovalResult, error) {
	ch := make(chan ApprovalResult, 1)
	c.mu.Lock()
	if _, dup := c.pending[req.CallHash]; dup {
		c.mu.Unlock()
		return ApprovalResult{}, ErrApprovalPending
	}
	c.pending[req.CallHash] = ch
	c.mu.Unlock()

	timeout := func() (ApprovalResult, error) {
		c.mu.Lock()
		delete(c.pending, req.CallHash)
		c.mu.Unlock()
		// An answer may have raced the deadline; it still counts.
		select {
		case res := <-ch:
			return c.finish(req, res), nil
		default:
		}
		return ApprovalResult{Outcome: ApprovalTimeout, Approver: c.name, CallHash: req.CallHash, Reason: "no answer: " + ctx.Err().Error()}, nil
	}
	select {
	case c.reqs <- req:
	case <-ctx.Done():
		return timeout()
	}
	select {
	case res := <-ch:
		return c.finish(req, res), nil
	case <-ctx.Done():
		return timeout()
	}
}

func (c *ChannelApprover) finish(req ApprovalRequest, res ApprovalResult) ApprovalResult {
	if res.Outcome == "" {
		if res.Approved {
			res.Outcome = ApprovalApproved
		} else {
			res.Outcome = ApprovalDeclined
		}
	}
	if res.Approver == "" {
		res.Approver = c.name
	}
	res.CallHash = req.CallHash
	return res
}
