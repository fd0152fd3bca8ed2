package gate

import (
	"context"
	"errors"
	"fmt"
)

// Errors wrapped by the reasons of fail-closed denials.
var (
	// ErrTimeout: a gate exceeded the timeout set with WithTimeout.
	ErrTimeout = errors.New("gate: timed out")
	// ErrPanic: a gate panicked; the panic value is in the message.
	ErrPanic = errors.New("gate: panicked")
)

// Namer is implemented by gates that know their own policy name; Chain and
// the executor use it as the decision's Source when the gate leaves Source
// empty.
type Namer interface {
	Name() string
}

// Evaluate asks g to decide about call and never fails: an error, a panic, a
// timeout (an error wrapping ErrTimeout), the end of ctx or an invalid
// Decision all become a deny whose ErrorKind says why (ErrorKindError,
// ErrorKindPanic, ErrorKindTimeout, ErrorKindCancelled, ErrorKindInvalid)
// and whose Reason carries the cause. source names g in the decision when
// g's decision has no Source of its own (and always on a fail-closed deny).
// The returned decision is always valid.
func Evaluate(ctx context.Context, g Gate, call ToolCallContext, source string) (d Decision) {
	defer func() {
		if r := recover(); r != nil {
			d = failClosed(ErrorKindPanic, source, fmt.Errorf("%w: %v", ErrPanic, r))
		}
	}()
	if isNil(g) {
		return failClosed(ErrorKindInvalid, source, errNilGate)
	}
	d, err := g.Decide(ctx, call)
	if err != nil {
		return failClosed(errorKind(ctx, err), source, err)
	}
	if err := d.Validate(); err != nil {
		return failClosed(ErrorKindInvalid, source, err)
	}
	if d.Source == "" {
		d.Source = source
	}
	return d
}

// errorKind classifies a gate's error.
func errorKind(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, ErrTimeout):
		return ErrorKindTimeout
	case errors.Is(err, ErrPanic):
		return ErrorKindPanic
	case errors.Is(err, ErrInvalidDecision):
		return ErrorKindInvalid
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return ErrorKindCancelled
	}
	return ErrorKindError
}

// FailClosed returns the deny decision for a gate failure of the given kind
// (one of the ErrorKind* values), attributed to source, with err as the
// cause in the reason.
func FailClosed(kind, source string, err error) Decision {
	return failClosed(kind, source, err)
}

func failClosed(kind, source string, err error) Decision {
	reason := "gate failed closed (" + kind + ")"
	if err != nil {
		reason += ": " + err.Error()
	}
	return Decision{Action: ActionDeny, Reason: reason, Source: source, ErrorKind: kind}
}

// NameOf returns g's policy name: Name() when g is a Namer with a non-empty
// name, else fallback.
func NameOf(g Gate, fallback string) string {
	if n, ok := g.(Namer); ok {
		if s := n.Name(); s != "" {
			return s
		}
	}
	return fallback
}

// Named gives g a policy name: decisions g returns without a Source get
// name as their Source, and Chain reports name for g.
func Named(name string, g Gate) Gate {
	return namedGate{name: name, g: g}
}

type namedGate struct {
	name string
	g    Gate
}

func (n namedGate) Name() string { return n.name }

func (n namedGate) Decide(ctx context.Context, call ToolCallContext) (Decision, error) {
	if isNil(n.g) {
		return Decision{}, errNilGate
	}
	d, err := n.g.Decide(ctx, call)
	if err == nil && d.Source == "" {
		d.Source = n.name
	}
	return d, err
}

// errNilGate is the cause of the denial of a nil gate.
var errNilGate = fmt.Errorf("%w: nil gate", ErrInvalidDecision)

// IsNil reports whether g is a nil gate: a nil interface, a nil Func, or
// Named, WithTimeout or Scoped wrapping one. Such a gate is invalid: the executor
// refuses it at configuration, and Evaluate denies (ErrorKindInvalid).
func IsNil(g Gate) bool { return isNil(g) }

func isNil(g Gate) bool {
	switch v := g.(type) {
	case nil:
		return true
	case Func:
		return v == nil
	case namedGate:
		return isNil(v.g)
	case timeoutGate:
		return isNil(v.g)
	case scopedGate:
		return isNil(v.g)
	}
	return false
}
