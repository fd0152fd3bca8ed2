package inbox

import (
	"context"
	"errors"
)

// Errors of the inbox. Match with errors.Is.
var (
	ErrNotFound        = errors.New("inbox: no approval request with this ID")
	ErrAnswered        = errors.New("inbox: the approval request is already answered")
	ErrExpired         = errors.New("inbox: the approval request has expired")
	ErrUsed            = errors.New("inbox: the approval was already used by a resumed call")
	ErrCallChanged     = errors.New("inbox: the call is not the one the approval request was made for")
	ErrUnknownApprover = errors.New("inbox: unknown approver")
	ErrExists          = errors.New("inbox: an approval request with this ID exists")
)

// Store keeps requests. Implementations must be safe for concurrent use,
// also by several processes when the inbox is shared between them.
type Store interface {
	// Create stores a new request; ErrExists if its ID is taken.
	Create(ctx context.Context, r Request) error
	// Get returns the request; ErrNotFound if there is none.
	Get(ctx context.Context, id string) (Request, error)
	// Update reads the request, calls f on it and stores the result, as
	// one atomic step (no other Update or Create interleaves); an error
	// from f stores nothing and is returned. ErrNotFound if there is none.
	Update(ctx context.Context, id string, f func(*Request) error) (Request, error)
	// List returns the requests f selects, newest first. Status filtering
	// is the caller's (Inbox.List applies expiry first).
	List(ctx context.Context, f Filter) ([]Request, error)
}

// Approvers knows who may answer. An answer from a name it does not know
// is refused (ErrUnknownApprover).
type Approvers interface {
	// Add registers name and returns a new bearer token for it (for the
	// HTTP API); only a hash of the token is kept. Adding a known name
	// replaces its token.
	Add(ctx context.Context, name string) (token string, err error)
	// Known reports whether name may answer.
	Known(ctx context.Context, name string) (bool, error)
	// ByToken returns the approver a bearer token belongs to; ok is false
	// for an unknown token.
	ByToken(ctx context.Context, token string) (name string, ok bool, err error)
}
