package gate_test

import (
	"context"
	"fmt"
	"strings"
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

// A scope says which registered tools a gate judges; the executor resolves
// it against each registered tool's name, annotations and schema fields
// and runs the gate only on calls to tools in scope.
func ExampleScoped() {
	noInternal := gate.Named("no-internal-urls", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if strings.Contains(c.String("url"), "169.254.169.254") {
			return gate.Deny("cloud metadata endpoint").WithRisk(gate.RiskHigh), nil
		}
		return gate.Allow(), nil
	}))
	g := gate.Scoped(noInternal, gate.Scope{Patterns: []string{"http_*"}, Needs: []string{"url"}})
	s, _ := gate.ScopeOf(g)
	for _, tool := range []gate.ToolInfo{
		{Name: "http_get", Fields: []gate.SchemaField{{Name: "url", Types: []string{"string"}}}},
		{Name: "http_post"},
		{Name: "read_file", Fields: []gate.SchemaField{{Name: "path", Types: []string{"string"}}}},
	} {
		fmt.Printf("%s: in scope %v, missing %q\n", tool.Name, s.Matches(tool), s.Missing(tool))
	}
	fmt.Println(s)
	// Output:
	// http_get: in scope true, missing ""
	// http_post: in scope true, missing "field \"url\""
	// read_file: in scope false, missing "field \"url\""
	// tools matching "http_*"
}
