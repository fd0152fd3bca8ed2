package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// An agent's tool calls go through reachability, validation and a chain of
// gates; a denial is an error result the model can read.
func Example() {
	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
		Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
			var a struct{ Command string }
			if err := json.Unmarshal(in, &a); err != nil {
				return executor.Result{}, err
			}
			return executor.Text("ran " + a.Command), nil
		},
	})
	if err != nil {
		panic(err)
	}
	noDelete := gate.Named("no-delete", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if c.String("command") == "rm -rf /" {
			return gate.Deny("deletes everything"), nil
		}
		return gate.Allow(), nil
	}))
	ex, err := executor.New(reg, executor.WithGates(noDelete))
	if err != nil {
		panic(err)
	}
	agent, err := ex.Agent("coder", executor.AgentAllow("bash"))
	if err != nil {
		panic(err)
	}
	run := agent.Run("run-1")
	for _, cmd := range []string{"ls", "rm -rf /"} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		res := run.Execute(context.Background(), executor.ToolCall{ID: "call-" + cmd, Name: "bash", Input: in})
		fmt.Printf("%v %s/%s: %s\n", res.IsError, res.Gate.Action, res.Gate.Source, res.Content)
	}
	// Output:
	// false allow/no-delete: ran ls
	// true deny/no-delete: Tool "bash" was denied by the tool gate (policy "no-delete"): deletes everything. Do not retry the same call: it will be denied again. Continue without it, or tell the user what you needed it for.
}

// ExecuteBatch returns one result per call, in order; a denial never drops
// its siblings.
func ExampleRun_ExecuteBatch() {
	echo := func(_ context.Context, in json.RawMessage) (executor.Result, error) {
		return executor.Text(string(in)), nil
	}
	reg, _ := executor.NewRegistry(
		executor.Tool{Name: "read", Execute: echo},
		executor.Tool{Name: "write", Execute: echo},
	)
	ex, _ := executor.New(reg, executor.WithGates(gate.DenyTools("read-only agent", "write")), executor.WithConcurrency(2))
	agent, _ := ex.Agent("reader", executor.AgentPresets(executor.PresetAll), executor.AgentDeny("admin"))
	results := agent.Run("r").ExecuteBatch(context.Background(), []executor.ToolCall{
		{ID: "1", Name: "read", Input: json.RawMessage(`{"path":"a"}`)},
		{ID: "2", Name: "write", Input: json.RawMessage(`{"path":"a"}`)},
		{ID: "3", Name: "admin"},
		{ID: "4", Name: "read", Input: json.RawMessage(`{"path":"b"}`)},
	})
	for _, r := range results {
		fmt.Printf("%s %v %q\n", r.ToolCallID, r.IsError, r.ErrorType)
	}
	// Output:
	// 1 false ""
	// 2 true "gate_denied"
	// 3 true "tool_not_found"
	// 4 false ""
}

// A gate judges only the registered tools in its scope. A bash gate next
// to a file reader judges the shell; scoped to a tool whose schema lacks
// the field it reads, it is a configuration error, not a denial the model
// sees.
func ExampleErrGateScope() {
	noop := func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil }
	reg, err := executor.NewRegistry(
		executor.Tool{Name: "bash", InputSchema: json.RawMessage(`{"type":"object","properties":{"script":{"type":"string"}}}`), Execute: noop},
		executor.Tool{Name: "read_file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`), Execute: noop},
	)
	if err != nil {
		panic(err)
	}
	shell := gate.Scoped(gate.Named("shell-policy", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		return gate.Deny("no shells"), nil
	})), gate.Scope{Tools: []string{"bash"}, FieldType: "string", Needs: []string{"command"}})
	_, err = executor.New(reg, executor.WithGates(shell))
	fmt.Println(errors.Is(err, executor.ErrGateScope))
	fmt.Println(err)
	// Output:
	// true
	// executor: gate scope: gate "shell-policy" (executor-level gate 0) applies to tool "bash", whose input schema has no string field "command" (the gate reads one and denies every call without it): declare the field in the tool's InputSchema properties, make the gate read the tool's own field (classify.WithInputFields), or scope the gate to the tools that have it (gate.Scoped, classify.ForTools; for a name in classify.PathGate's tool map, classify.WithToolOps)
}
