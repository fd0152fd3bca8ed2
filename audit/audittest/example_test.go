package audittest_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// testDeniedCallIsAudited is a test as a module using toolgate writes it
// (TestTypicalUse runs it): a real executor records its decisions through
// the Exporter into the embedded ClickHouse server, and the test reads
// them back with the audit store.
func testDeniedCallIsAudited(t *testing.T) {
	ctx := context.Background()
	env := audittest.Start(t) // skips without libchdb.so; fails under TOOLGATE_INTEGRATION=1

	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(audittest.NewExporter(env.Writer, env.Database)))
	defer tp.Shutdown(ctx)
	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`),
		Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
			return executor.Text("ok"), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.WithTracerProvider(tp), executor.WithGates(gate.DenyTools("read-only agent", "bash")))
	if err != nil {
		t.Fatal(err)
	}
	agent, err := ex.Agent("coder", executor.AgentAllow("bash"))
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Minute)
	res := agent.Run("run-1").Execute(ctx, executor.ToolCall{ID: "call-1", Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)})
	if !res.IsError {
		t.Fatalf("the call was not denied: %+v", res)
	}

	page, err := env.Store.Decisions(ctx, audit.Filter{Since: since, RunID: "run-1", Action: "deny"}, audit.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Decisions) != 1 || page.Decisions[0].ToolCallID != "call-1" || page.Decisions[0].Reason != "read-only agent" {
		t.Fatalf("decisions = %+v, want the denial of call-1", page.Decisions)
	}
}

// A test starts the embedded server with Start, traces a real executor
// through NewExporter, and reads the decisions with the Env's audit.Store
// (the whole file shows the test function).
func Example() {}
