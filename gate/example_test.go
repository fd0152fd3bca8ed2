package gate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/gate"
)

// A chain runs its gates in order; the first deny wins and names its
// source; an allow is credited to the gate that judged the highest risk,
// else to the first gate.
func ExampleChain() {
	noNetwork := gate.Named("no-network", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if c.ToolName == "fetch" {
			return gate.Deny("network access is off"), nil
		}
		return gate.Allow(), nil
	}))
	g := gate.Chain(gate.AskConsequential(), noNetwork)
	for _, call := range []gate.ToolCallContext{
		{ToolName: "read"},
		{ToolName: "fetch"},
		{ToolName: "pay", Consequential: true},
	} {
		d, _ := g.Decide(context.Background(), call)
		fmt.Printf("%s: %s by %s (%s)\n", call.ToolName, d.Action, d.Source, d.Reason)
	}
	// Output:
	// read: allow by consequential ()
	// fetch: deny by no-network (network access is off)
	// pay: ask by consequential (tool pay is consequential)
}

// A gate that does not decide in time denies the call (fail closed).
func ExampleWithTimeout() {
	slow := gate.Func(func(ctx context.Context, _ gate.ToolCallContext) (gate.Decision, error) {
		<-ctx.Done()
		return gate.Decision{}, ctx.Err()
	})
	d := gate.Evaluate(context.Background(), gate.WithTimeout(slow, 10*time.Millisecond), gate.ToolCallContext{ToolName: "bash"}, "slow-policy")
	fmt.Println(d.Action, d.ErrorKind, d.Source)
	// Output: deny timeout slow-policy
}
