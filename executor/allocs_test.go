package executor_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// executorOwnAllocs bounds the allocations a call makes beyond its span
// (what the SDK allocates for a span with the attributes the contract
// requires), decoding its input (the JSON v2 decoder) and jsonschema's
// validation: the call's state (span options and the tool's context) and
// the boxed start-attribute option (3), plus one for stray allocations of
// other goroutines during the run. Relative to the libraries' own counts,
// so that upgrading one does not break the test.
const executorOwnAllocs = 3 + 1

// TestExecuteAllocations guards the executor's per-call allocations, with
// no gate, an allow gate and a chain of three, against a recording span
// carrying the same attributes plus the schema validation of the input.
func TestExecuteAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts: not in -short")
	}
	tp := benchProvider()
	tr := tp.Tracer("allocs")
	ctx := context.Background()
	// The options and attributes are built outside the measured function:
	// it counts what the SDK allocates for such a span, nothing else.
	startOpts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName("bash"), semconv.GenAIToolCallID("call_1"))}
	endAttrs := []attribute.KeyValue{semconv.GenAIToolType("function"), semconv.GenAIAgentName("bench"), gate.AttrGated.Bool(true),
		semconv.GenAIConversationID("run-1"), gate.AttrRunID.String("run-1"), gate.AttrTaskID.String("task-1"),
		gate.AttrAction.String("allow"), gate.AttrSource.String("a"), gate.AttrDuration.Int64(120)}
	spanAllocs := testing.AllocsPerRun(200, func() {
		_, s := tr.Start(ctx, "execute_tool bash", startOpts...)
		s.SetAttributes(endAttrs...)
		s.End()
	})
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(bashSchema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("urn:allocs", doc))
	schema := c.MustCompile("urn:allocs")
	var decoded map[string]any
	require.NoError(t, json.Unmarshal(benchInput, &decoded))
	validateAllocs := testing.AllocsPerRun(200, func() { _ = schema.Validate(decoded) })
	decodeAllocs := testing.AllocsPerRun(200, func() {
		var m map[string]any
		_ = jsonv2.Unmarshal(benchInput, &m)
	})

	allow := func(name string) gate.Gate {
		return gate.Named(name, gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
			return gate.Decision{Action: gate.ActionAllow}, nil
		}))
	}
	tests := []struct {
		name  string
		gates []gate.Gate
	}{
		{"no gate", nil},
		{"allow gate", []gate.Gate{allow("a")}},
		{"chain of three", []gate.Gate{allow("a"), allow("b"), allow("c")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := executor.NewRegistry(benchTool())
			require.NoError(t, err)
			ex, err := executor.New(reg, executor.WithTracerProvider(tp),
				executor.WithMeterProvider(noopmetric.NewMeterProvider()), executor.WithGates(tc.gates...))
			require.NoError(t, err)
			a, err := ex.Agent("bench", executor.AgentAllow("bash"))
			require.NoError(t, err)
			run := a.Run("run-1", executor.WithTask("task-1"))
			call := executor.ToolCall{ID: "call_1", Name: "bash", Input: benchInput}
			got := testing.AllocsPerRun(200, func() {
				if res := run.Execute(ctx, call); res.IsError {
					t.Fatal(res.Content)
				}
			})
			t.Logf("call %v allocs; span with its attributes %v, decoding %v, validation %v", got, spanAllocs, decodeAllocs, validateAllocs)
			require.LessOrEqual(t, got, spanAllocs+decodeAllocs+validateAllocs+executorOwnAllocs)
		})
	}
}
