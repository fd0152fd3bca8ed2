package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/executor"
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

// workspaceGate is a custom gate for a write_file tool whose input is
// {"path": "..."}: the shape every custom gate has — read the validated
// input, answer with a Decision.
func workspaceGate() gate.Gate {
	return gate.Named("workspace", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if c.ToolName != "write_file" {
			return gate.Allow(), nil // not ours to judge
		}
		p := c.String("path")
		switch {
		case p == "":
			return gate.Decision{}, errors.New("no path field") // an error denies (fail closed)
		case strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "/work/"):
			d := gate.Deny("writes outside the workspace /work").WithRisk(gate.RiskHigh)
			d.Rule = "ws.outside" // optional: which rule of this gate decided
			return d, nil
		case strings.HasSuffix(p, ".env"):
			return gate.Ask("writes a secrets file").WithRisk(gate.RiskReview), nil
		case !strings.HasPrefix(p, "/"):
			in, _ := json.Marshal(map[string]string{"path": "/work/" + p})
			return gate.AllowRewritten(in, "relative path made absolute").WithRisk(gate.RiskSafe), nil
		}
		return gate.Allow().WithRisk(gate.RiskSafe), nil
	}))
}

// A custom gate is a gate.Func given a name with gate.Named. It allows,
// denies with a reason, asks a human, or allows a rewritten input, and may
// report a risk level (safe, review, high) and a rule. gate.Evaluate is
// what the executor runs for each gate: the name becomes the decision's
// Source when the gate leaves it empty.
func ExampleFunc() {
	g := workspaceGate()
	for _, path := range []string{"/work/main.go", "/etc/passwd", "/work/.env", "notes.txt"} {
		in, _ := json.Marshal(map[string]string{"path": path})
		call := gate.ToolCallContext{ToolName: "write_file", Input: map[string]any{"path": path}, RawInput: in}
		d := gate.Evaluate(context.Background(), g, call, "fallback-name")
		fmt.Printf("%-14s %-5s risk=%-6s source=%s rule=%q reason=%q rewrite=%s\n",
			path, d.Action, d.Risk, d.Source, d.Rule, d.Reason, d.RewrittenInput)
	}
	// Output:
	// /work/main.go  allow risk=safe   source=workspace rule="" reason="" rewrite=
	// /etc/passwd    deny  risk=high   source=workspace rule="ws.outside" reason="writes outside the workspace /work" rewrite=
	// /work/.env     ask   risk=review source=workspace rule="" reason="writes a secrets file" rewrite=
	// notes.txt      allow risk=safe   source=workspace rule="" reason="relative path made absolute" rewrite={"path":"/work/notes.txt"}
}

// A gate that errors, panics or answers an invalid decision (a deny or ask
// without a reason, an unknown action or risk level) denies the call: the
// decision's ErrorKind (the span's gate.error) says why and its Reason
// carries the cause. A gate never has to handle its own failures.
func ExampleEvaluate() {
	gates := map[string]gate.Gate{
		"errors": gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
			return gate.Decision{}, errors.New("policy server unreachable")
		}),
		"panics": gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
			var m map[string]int
			m["x"]++ // assignment to entry in nil map
			return gate.Allow(), nil
		}),
		"no reason": gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
			return gate.Deny(""), nil
		}),
		"bad risk": gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
			return gate.Allow().WithRisk("critical"), nil
		}),
	}
	for _, name := range []string{"errors", "panics", "no reason", "bad risk"} {
		d := gate.Evaluate(context.Background(), gates[name], gate.ToolCallContext{ToolName: "bash"}, name)
		fmt.Printf("%-9s %s error=%s: %s\n", name, d.Action, d.ErrorKind, d.Reason)
	}
	// Output:
	// errors    deny error=error: gate failed closed (error): policy server unreachable
	// panics    deny error=panic: gate failed closed (panic): gate: panicked: assignment to entry in nil map
	// no reason deny error=invalid: gate failed closed (invalid): gate: invalid decision: deny without a reason
	// bad risk  deny error=invalid: gate failed closed (invalid): gate: invalid decision: unknown risk level "critical"
}

// Behind the executor, a custom gate's decision is what the model reads
// (ToolResult.Content, with IsError) and what the call's execute_tool span
// records (the gate.* attributes; gate.Record.Attributes is the encoder).
// An ask goes to the approver (here one that declines everything); a
// rewrite is validated against the tool's schema and judged again by every
// gate before the tool runs it.
func Example_executor() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "write_file",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
			return executor.Text("wrote " + string(in)), nil
		},
	})
	if err != nil {
		panic(err)
	}
	decline := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		return req.Decline("reviewer", "no secrets today"), nil
	})
	ex, err := executor.New(reg, executor.WithGates(workspaceGate()), executor.WithApprover(decline),
		executor.WithTracerProvider(tp))
	if err != nil {
		panic(err)
	}
	agent, err := ex.Agent("coder", executor.AgentAllow("write_file"))
	if err != nil {
		panic(err)
	}
	run := agent.Run("run-1")
	for i, path := range []string{"/etc/passwd", "/work/.env", "notes.txt"} {
		in, _ := json.Marshal(map[string]string{"path": path})
		res := run.Execute(context.Background(), executor.ToolCall{ID: fmt.Sprint("call_", i), Name: "write_file", Input: in})
		fmt.Printf("model sees (isError=%v): %s\n", res.IsError, res.Content)
	}
	keys := []attribute.Key{gate.AttrAction, gate.AttrSource, gate.AttrRiskLevel, gate.AttrReason,
		gate.AttrApproval, gate.AttrApprover, gate.AttrRewritten, gate.AttrRewrittenBy, gate.AttrVerdicts}
	for _, s := range rec.Ended() {
		if s.Name() != "execute_tool write_file" {
			continue // e.g. the run's invoke_agent span
		}
		fmt.Print("span:")
		for _, kv := range s.Attributes() {
			if slices.Contains(keys, kv.Key) {
				fmt.Printf(" %s=%s", kv.Key, kv.Value.Emit())
			}
		}
		fmt.Println()
	}
	// Output:
	// model sees (isError=true): Tool "write_file" was denied by the tool gate (policy "workspace"): writes outside the workspace /work. Do not retry the same call: it will be denied again. Continue without it, or tell the user what you needed it for.
	// model sees (isError=true): Tool "write_file" was denied by the tool gate (policy "workspace"): writes a secrets file; declined by reviewer: no secrets today (approval declined). Do not retry the same call: it will be denied again. Continue without it, or tell the user what you needed it for.
	// model sees (isError=false): wrote {"path":"/work/notes.txt"}
	// span: gate.action=deny gate.source=workspace gate.reason=writes outside the workspace /work gate.risk.level=high gate.verdicts=["workspace|deny|high|ws.outside"]
	// span: gate.action=deny gate.source=workspace gate.reason=writes a secrets file; declined by reviewer: no secrets today gate.approval=declined gate.approver=reviewer gate.risk.level=review gate.verdicts=["workspace|ask|review|"]
	// span: gate.action=allow gate.source=workspace gate.risk.level=safe gate.rewritten=true gate.rewritten_by=workspace gate.verdicts=["workspace|rewrite|safe|","workspace|allow|safe|"]
}
