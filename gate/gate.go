package gate

import "context"

// Gate decides whether one tool call may run now.
//
// Decide must be safe for concurrent use. An error, a panic, a timeout or an
// invalid Decision all deny the call (the executor fails closed and records
// why under AttrError).
type Gate interface {
	Decide(ctx context.Context, call ToolCallContext) (Decision, error)
}

// Func adapts a function to Gate.
type Func func(ctx context.Context, call ToolCallContext) (Decision, error)

// Decide calls f.
func (f Func) Decide(ctx context.Context, call ToolCallContext) (Decision, error) {
	return f(ctx, call)
}
