package approve

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/toolgate/toolgate/gate"
)

// ErrApprovalUnknown is returned by Channel.Resolve for an answer that
// matches no pending request: unknown, already answered (an answer is used
// once) or expired (the asking call's context ended first).
var ErrApprovalUnknown = errors.New("approve: no pending approval for this call hash (unknown, already answered or expired)")

// ErrApprovalPending is returned by Channel.Approve when a request with
// the same call hash is already waiting for an answer.
var ErrApprovalPending = errors.New("approve: an approval for this exact call is already pending")

// ErrInvalidAnswer is returned by Channel.Resolve for an answer it cannot
// give: an outcome other than gate.ApprovalApproved, gate.ApprovalDeclined
// or gate.ApprovalTimeout, an unknown grant scope, or a grant scope on an
// answer that does not approve. The request stays pending.
var ErrInvalidAnswer = errors.New("approve: invalid answer")

// Channel hands asks to a UI: each request appears on Requests(), and the
// UI answers with Resolve, naming the request by its CallHash. The answer
// is built from the pending request itself (gate.ApprovalRequest.Approve,
// ApproveForRun, Decline, TimedOut), so the UI cannot produce an answer
// for another call; it is used once. When the asking call's context ends
// first, the outcome is gate.ApprovalTimeout and a late answer gets
// ErrApprovalUnknown.
//
// A Channel has no timeout of its own: the asking call's context (for
// example the executor's approval timeout) bounds the wait. It is safe for
// concurrent use.
type Channel struct {
	name string
	reqs chan gate.ApprovalRequest

	mu      sync.Mutex
	pending map[string]pendingAsk
}

// pendingAsk is a request waiting for Resolve and where its answer goes.
type pendingAsk struct {
	req    gate.ApprovalRequest
	answer chan gate.ApprovalResult // capacity 1
}

// NewChannel returns a Channel named name (recorded as gate.approver)
// whose request channel holds up to buffer requests (buffer < 0 means 0:
// Approve waits until the UI receives the request).
func NewChannel(name string, buffer int) *Channel {
	if buffer < 0 {
		buffer = 0
	}
	return &Channel{name: name, reqs: make(chan gate.ApprovalRequest, buffer), pending: map[string]pendingAsk{}}
}

// Requests is the stream of asks waiting for an answer. The UI must treat
// each request as read-only (its Call.Input and RawInput are the
// executor's). A request whose call gave up before the UI received it may
// still appear; answering it gets ErrApprovalUnknown.
func (c *Channel) Requests() <-chan gate.ApprovalRequest { return c.reqs }

// Resolve answers the pending request whose CallHash is callHash with
// outcome (gate.ApprovalApproved, gate.ApprovalDeclined or
// gate.ApprovalTimeout) and reason. remember is gate.GrantScopeNone, or
// gate.GrantScopeRun on an approval to remember it for the same tool and
// input for the rest of the run. It returns ErrApprovalUnknown when no
// request with that hash is pending and an error wrapping
// ErrInvalidAnswer for an answer it cannot give.
func (c *Channel) Resolve(callHash string, outcome gate.ApprovalOutcome, reason string, remember gate.GrantScope) error {
	switch {
	case outcome != gate.ApprovalApproved && outcome != gate.ApprovalDeclined && outcome != gate.ApprovalTimeout:
		return fmt.Errorf("%w: outcome %q", ErrInvalidAnswer, outcome)
	case remember != gate.GrantScopeNone && remember != gate.GrantScopeRun:
		return fmt.Errorf("%w: grant scope %q", ErrInvalidAnswer, remember)
	case remember != gate.GrantScopeNone && outcome != gate.ApprovalApproved:
		return fmt.Errorf("%w: grant scope %q on outcome %q", ErrInvalidAnswer, remember, outcome)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[callHash]
	if !ok {
		return ErrApprovalUnknown
	}
	delete(c.pending, callHash)
	var res gate.ApprovalResult
	switch {
	case outcome == gate.ApprovalApproved && remember == gate.GrantScopeRun:
		res = p.req.ApproveForRun(c.name, reason)
	case outcome == gate.ApprovalApproved:
		res = p.req.Approve(c.name, reason)
	case outcome == gate.ApprovalDeclined:
		res = p.req.Decline(c.name, reason)
	default:
		res = p.req.TimedOut(c.name, reason)
	}
	// Sent under the lock (capacity 1, one answer per request: never
	// blocks), so that expire, which takes the lock first, sees it.
	p.answer <- res
	return nil
}

// Approve publishes req on Requests and waits for Resolve or the end of
// ctx (then the outcome is gate.ApprovalTimeout, unless an answer raced
// it). It returns ErrApprovalPending when a request with the same CallHash
// is already waiting.
func (c *Channel) Approve(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
	p := pendingAsk{req: req, answer: make(chan gate.ApprovalResult, 1)}
	c.mu.Lock()
	if _, dup := c.pending[req.CallHash]; dup {
		c.mu.Unlock()
		return gate.ApprovalResult{}, ErrApprovalPending
	}
	c.pending[req.CallHash] = p
	c.mu.Unlock()

	select {
	case c.reqs <- req:
	case res := <-p.answer: // answered before the UI received it
		return res, nil
	case <-ctx.Done():
		return c.expire(ctx, p), nil
	}
	select {
	case res := <-p.answer:
		return res, nil
	case <-ctx.Done():
		return c.expire(ctx, p), nil
	}
}

// expire withdraws p once ctx has ended; an answer that raced the end
// still counts.
func (c *Channel) expire(ctx context.Context, p pendingAsk) gate.ApprovalResult {
	c.mu.Lock()
	if q, ok := c.pending[p.req.CallHash]; ok && q.answer == p.answer {
		delete(c.pending, p.req.CallHash)
	}
	c.mu.Unlock()
	select {
	case res := <-p.answer:
		return res
	default:
	}
	return p.req.TimedOut(c.name, "no answer: "+ctx.Err().Error())
}
