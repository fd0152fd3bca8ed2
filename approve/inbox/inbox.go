package inbox

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// DefaultTTL is how long a request waits for an answer by default.
const DefaultTTL = 24 * time.Hour

// MaxInputBytes bounds the input (and the original input) of a request:
// Ask refuses a call whose input, compacted, is larger (a human cannot
// review it, and the file should not grow without bound). 64 KiB: four
// times what the terminal approver shows whole.
const MaxInputBytes = 64 << 10

// DefaultMaxPendingPerRun is how many pending requests one run (agent and
// run ID) may have at once by default (Config.MaxPendingPerRun).
const DefaultMaxPendingPerRun = 8

// ErrTooManyPending is returned by Ask when the call's run already has
// Config.MaxPendingPerRun pending requests: a model that keeps asking
// cannot bury a person's inbox (the executor denies the call as an
// invalid approval, and the refusal is recorded).
var ErrTooManyPending = errors.New("inbox: too many pending approval requests for this run")

// Config configures an Inbox.
type Config struct {
	// TTL is how long a request waits for an answer (0: DefaultTTL).
	TTL time.Duration
	// Now is the clock (nil: time.Now); tests set it.
	Now func() time.Time
	// MaxPendingPerRun caps the pending requests of one run (agent and run
	// ID); Ask refuses more with ErrTooManyPending (0:
	// DefaultMaxPendingPerRun; < 0: no cap).
	MaxPendingPerRun int
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
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.MaxPendingPerRun == 0 {
		cfg.MaxPendingPerRun = DefaultMaxPendingPerRun
	}
	return &Inbox{store: s, approvers: a, cfg: cfg}
}

// now is the inbox's clock, in UTC.
func (ib *Inbox) now() time.Time {
	if ib.cfg.Now != nil {
		return ib.cfg.Now().UTC()
	}
	return time.Now().UTC()
}

// expire applies lazy expiry: a pending request past ExpiresAt becomes
// StatusExpired. It reports whether it changed r.
func expire(r *Request, now time.Time) bool {
	if r.Status == StatusPending && !now.Before(r.ExpiresAt) {
		r.Status = StatusExpired
		if r.Note == "" {
			r.Note = "no answer before " + r.ExpiresAt.Format(time.RFC3339)
		}
		return true
	}
	return false
}

// statusErr is the error for answering a request that is not pending.
func statusErr(s Status) error {
	switch s {
	case StatusApproved, StatusDeclined:
		return ErrAnswered
	case StatusExpired:
		return ErrExpired
	case StatusUsed:
		return ErrUsed
	}
	return fmt.Errorf("inbox: request in unknown status %q", gate.SafeText(string(s), gate.MaxNameBytes))
}

// jsonInput returns raw compacted, or an error when it is not JSON or too
// large.
func jsonInput(raw []byte, what string) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("inbox: the call's %s is not JSON: %w", what, err)
	}
	if b.Len() > MaxInputBytes {
		return nil, fmt.Errorf("inbox: the call's %s is %d bytes, more than %d", what, b.Len(), MaxInputBytes)
	}
	return json.RawMessage(b.Bytes()), nil
}

func safeName(s string) string { return gate.SafeText(s, gate.MaxNameBytes) }
func safeText(s string) string { return gate.SafeText(s, gate.MaxTextBytes) }

// Ask stores a pending request for req (the call as it will run) and
// returns it. The trace and span IDs are taken from ctx's span; the risk,
// reason, rule and source from req.Decision; Input is req.Call.RawInput
// compacted (Input's JSON when RawInput is empty), Original is
// req.OriginalInput. Names are bounded to gate.MaxNameBytes and texts to
// gate.MaxTextBytes (gate.SafeText); an input that is not JSON or is
// larger than MaxInputBytes is refused. The request expires TTL after
// now.
func (ib *Inbox) Ask(ctx context.Context, req gate.ApprovalRequest) (Request, error) {
	return ib.ask(ctx, req, time.Time{})
}

// ask is Ask with the request expiring at until when that is before its
// TTL ends (zero: the TTL).
func (ib *Inbox) ask(ctx context.Context, req gate.ApprovalRequest, until time.Time) (Request, error) {
	c := req.Call
	raw := []byte(c.RawInput)
	if len(raw) == 0 {
		b, err := json.Marshal(c.Input)
		if err != nil {
			return Request{}, fmt.Errorf("inbox: encode the call's input: %w", err)
		}
		raw = b
	}
	input, err := jsonInput(raw, "input")
	if err != nil {
		return Request{}, err
	}
	var original json.RawMessage
	if len(req.OriginalInput) > 0 {
		if original, err = jsonInput(req.OriginalInput, "original input"); err != nil {
			return Request{}, err
		}
	}
	now := ib.now()
	r := Request{
		Status:     StatusPending,
		Tool:       safeName(c.ToolName),
		ToolCallID: safeName(c.ToolCallID),
		Input:      input,
		Original:   original,
		CallHash:   gate.CallHash(c),
		Agent:      safeName(c.AgentName),
		RunID:      safeName(c.RunID),
		TaskID:     safeName(c.TaskID),
		WorkingDir: safeText(c.WorkingDir),
		Reason:     safeText(req.Decision.Reason),
		Risk:       safeName(string(req.Decision.Risk)),
		Rule:       safeName(req.Decision.Rule),
		Source:     safeName(req.Decision.Source),
		AskedAt:    now,
		ExpiresAt:  now.Add(ib.cfg.TTL),
	}
	if !until.IsZero() && until.Before(r.ExpiresAt) {
		r.ExpiresAt = until
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.TraceID = sc.TraceID().String()
		r.SpanID = sc.SpanID().String()
	}
	if max := ib.cfg.MaxPendingPerRun; max > 0 {
		// Not atomic with Create: concurrent asks of one run may pass the
		// cap together (by at most their number); a flood from one run is
		// still bounded.
		pending, err := ib.List(ctx, Filter{Agent: r.Agent, RunID: r.RunID, Status: []Status{StatusPending}})
		if err != nil {
			return Request{}, err
		}
		if len(pending) >= max {
			return Request{}, fmt.Errorf("%w (%d pending for agent %q, run %q; answer or let them expire)", ErrTooManyPending, len(pending), r.Agent, r.RunID)
		}
	}
	for range 3 { // a collision of 128 random bits is not expected; retry anyway
		r.ID = NewID()
		err = ib.store.Create(ctx, r)
		if !errors.Is(err, ErrExists) {
			break
		}
	}
	if err != nil {
		return Request{}, err
	}
	return r, nil
}

// Get returns request id with expiry applied (not persisted). ErrNotFound
// when there is none, or id is not a request ID (ValidID).
func (ib *Inbox) Get(ctx context.Context, id string) (Request, error) {
	if !ValidID(id) {
		return Request{}, ErrNotFound
	}
	r, err := ib.store.Get(ctx, id)
	if err != nil {
		return Request{}, err
	}
	expire(&r, ib.now())
	return r, nil
}

// List returns the requests f selects (expiry applied first), newest first.
// f.Now defaults to the inbox's clock.
func (ib *Inbox) List(ctx context.Context, f Filter) ([]Request, error) {
	now := ib.now()
	if f.Now.IsZero() {
		f.Now = now
	}
	sf := f
	sf.Status = nil
	if len(f.Status) > 0 {
		sf.Limit = 0 // status is filtered here, after expiry
	}
	rs, err := ib.store.List(ctx, sf)
	if err != nil {
		return nil, err
	}
	out := rs[:0]
	for _, r := range rs {
		expire(&r, now)
		if len(f.Status) > 0 && !hasStatus(f.Status, r.Status) {
			continue
		}
		out = append(out, r)
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

func hasStatus(ss []Status, s Status) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Answer stores a's answer to request id and returns the request. It
// refuses an empty or unknown approver (ErrUnknownApprover), a request that
// is not pending (ErrAnswered when approved or declined, ErrExpired,
// ErrUsed), and an answer whose CallHash is set and differs from the
// stored one (ErrCallChanged); ErrNotFound when there is no such request.
// A request found past its expiry is stored as expired. It sets a.At to
// now; ForRun is dropped from a decline; the reason is bounded to
// gate.MaxTextBytes.
func (ib *Inbox) Answer(ctx context.Context, id string, a Answer) (Request, error) {
	if a.Approver == "" {
		return Request{}, fmt.Errorf("%w: empty approver name", ErrUnknownApprover)
	}
	if len(a.Approver) > gate.MaxNameBytes {
		return Request{}, fmt.Errorf("%w: approver name too long", ErrUnknownApprover)
	}
	ok, err := ib.approvers.Known(ctx, a.Approver)
	if err != nil {
		return Request{}, fmt.Errorf("inbox: check approver: %w", err)
	}
	if !ok {
		return Request{}, fmt.Errorf("%w: %q", ErrUnknownApprover, safeName(a.Approver))
	}
	if !ValidID(id) {
		return Request{}, ErrNotFound
	}
	a.Approver = safeName(a.Approver)
	a.Reason = safeText(a.Reason)
	if !a.Approve {
		a.ForRun = false
	}
	var refused error
	r, err := ib.store.Update(ctx, id, func(r *Request) error {
		now := ib.now()
		if expire(r, now) {
			refused = ErrExpired // store the expiry, refuse the answer
			return nil
		}
		if r.Status != StatusPending {
			return statusErr(r.Status)
		}
		if a.CallHash != "" && subtle.ConstantTimeCompare([]byte(a.CallHash), []byte(r.CallHash)) != 1 {
			return ErrCallChanged
		}
		a.At = now
		ans := a
		r.Answer = &ans
		if a.Approve {
			r.Status = StatusApproved
		} else {
			r.Status = StatusDeclined
		}
		return nil
	})
	if err != nil {
		return Request{}, err
	}
	if refused != nil {
		return r, refused
	}
	return r, nil
}

// Take is the resume step: it checks that call (the call as the resumed
// run will run it) is the call request id was made for — gate.CallHash
// equal, else ErrCallChanged and the request is left as it was — and
// returns the request, as one atomic Store.Update (of two concurrent Takes
// of one approved request, also from two processes sharing a DB, exactly
// one gets it). An approved request becomes StatusUsed (UsedAt set) and is
// returned so: its Answer approves the call; a second Take gets ErrUsed.
// A declined one is returned as declined (UsedAt set on the first Take). A
// pending one is returned unchanged (still pending). An expired one gets
// ErrExpired, with the request (its expiry stored, if it was found past
// ExpiresAt). ErrNotFound when there is no such request.
func (ib *Inbox) Take(ctx context.Context, id string, call gate.ToolCallContext) (Request, error) {
	if !ValidID(id) {
		return Request{}, ErrNotFound
	}
	want := gate.CallHash(call)
	var expired bool
	r, err := ib.store.Update(ctx, id, func(r *Request) error {
		if subtle.ConstantTimeCompare([]byte(r.CallHash), []byte(want)) != 1 {
			return ErrCallChanged
		}
		now := ib.now()
		expire(r, now)
		switch r.Status {
		case StatusPending:
			return nil
		case StatusApproved:
			if r.Answer == nil || !r.Answer.Approve {
				return fmt.Errorf("inbox: approved request %s has no approving answer", id)
			}
			r.Status = StatusUsed
			r.UsedAt = now
			return nil
		case StatusDeclined:
			if r.UsedAt.IsZero() {
				r.UsedAt = now
			}
			return nil
		case StatusExpired:
			expired = true
			return nil
		}
		return statusErr(r.Status)
	})
	if err != nil {
		return Request{}, err
	}
	if expired {
		return r, ErrExpired
	}
	return r, nil
}

// Abandon marks a pending request expired with note (the call that waited
// for it stopped waiting; note is bounded to gate.MaxTextBytes); a request
// that is no longer pending is left as it is. ErrNotFound when there is no
// such request.
func (ib *Inbox) Abandon(ctx context.Context, id, note string) error {
	return ib.abandon(ctx, id, note, false)
}

// abandon is Abandon; with answered, an approved request that no call
// took yet is expired too (a blocking call that stopped waiting after the
// answer landed but before it took it: nobody will run it).
func (ib *Inbox) abandon(ctx context.Context, id, note string, answered bool) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	_, err := ib.store.Update(ctx, id, func(r *Request) error {
		if expire(r, ib.now()) {
			return nil
		}
		if r.Status == StatusPending || (answered && r.Status == StatusApproved) {
			r.Status = StatusExpired
			r.Note = safeText(note)
		}
		return nil
	})
	return err
}
