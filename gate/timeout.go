package gate

import (
	"context"
	"fmt"
	"time"
)

// WithTimeout bounds g: when g has not decided within d, the call is denied
// (fail closed) with ErrorKindTimeout. g runs in its own goroutine with a
// context that ends at the deadline, so a gate that honours ctx stops there;
// a gate that ignores ctx keeps its goroutine until it returns, but its late
// answer is discarded. A panic in g is reported as ErrPanic. d <= 0 returns
// g unchanged. The wrapper keeps g's name (see Namer).
func WithTimeout(g Gate, d time.Duration) Gate {
	if d <= 0 {
		return g
	}
	return timeoutGate{g: g, d: d}
}

type timeoutGate struct {
	g Gate
	d time.Duration
}

func (t timeoutGate) Name() string { return NameOf(t.g, "") }

type gateAnswer struct {
	d   Decision
	err error
}

func (t timeoutGate) Decide(ctx context.Context, call ToolCallContext) (Decision, error) {
	if isNil(t.g) {
		return Decision{}, errNilGate
	}
	tctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	ch := make(chan gateAnswer, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- gateAnswer{err: fmt.Errorf("%w: %v", ErrPanic, r)}
			}
		}()
		d, err := t.g.Decide(tctx, call)
		ch <- gateAnswer{d: d, err: err}
	}()
	select {
	case a := <-ch:
		if a.err != nil && ctx.Err() == nil && tctx.Err() != nil {
			// The gate gave up because of our deadline.
			return Decision{}, fmt.Errorf("%w after %s: %w", ErrTimeout, t.d, a.err)
		}
		return a.d, a.err
	case <-tctx.Done():
		if err := ctx.Err(); err != nil {
			return Decision{}, err
		}
		return Decision{}, fmt.Errorf("%w after %s", ErrTimeout, t.d)
	}
}
