package inbox

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/gate"
)

// DefaultTTL is how long a request waits for an answer by default.
const DefaultTTL = 24 * time.Hour

// Config configures an Inbox.
type Config struct {
	// TTL is how long a request waits for an answer (0: DefaultTTL).
	TTL time.Duration
	// Now is the clock (nil: time.Now); tests set it.
	Now func() time.Time
}

// Inbox is the approval logic over a Store and Approvers: it creates
// requests from asks, takes answers, and hands an answer to the call that
// resumes it, once. It is safe for concurrent use.
type Inbox struct {
	store     Store
	approvers Approvers
	cfg       Config
}

// New returns an Inbox over s and a (the bbolt DB from Open is both).
func New(s Store, a Approvers, cfg Config) *Inbox {
	return &Inbox{store: s, approvers: a, cfg: cfg}
}

// Ask stores a pending request for req (the call as it will run) and
// returns it. The trace and span IDs are taken from ctx's span.
func (ib *Inbox) Ask(ctx context.Context, req gate.ApprovalRequest) (Request, error) {
	panic("TODO")
}

// Get returns request id with expiry applied.
func (ib *Inbox) Get(ctx context.Context, id string) (Request, error) { panic("TODO") }

// List returns the requests f selects (expiry applied first), newest first.
func (ib *Inbox) List(ctx context.Context, f Filter) ([]Request, error) { panic("TODO") }

// Answer stores a's answer to request id and returns the request. It
// refuses an unknown approver (ErrUnknownApprover), a request that is not
// pending (ErrAnswered, ErrExpired, ErrUsed), and an answer whose CallHash
// is set and differs from the stored one (ErrCallChanged).
func (ib *Inbox) Answer(ctx context.Context, id string, a Answer) (Request, error) { panic("TODO") }

// Take is the resume step: it checks that call (the call as the resumed
// run will run it) is the call request id was made for — gate.CallHash
// equal, else ErrCallChanged and the request is left as it was — and
// returns the request. An approved request becomes StatusUsed (so a second
// Take gets ErrUsed); a declined one is returned as declined (and marked
// used); a pending one is returned unchanged (still pending); an expired
// one gets ErrExpired.
func (ib *Inbox) Take(ctx context.Context, id string, call gate.ToolCallContext) (Request, error) {
	panic("TODO")
}

// Abandon marks a pending request expired with note (the call that waited
// for it stopped waiting); a request that is no longer pending is left as
// it is.
func (ib *Inbox) Abandon(ctx context.Context, id, note string) error { panic("TODO") }
