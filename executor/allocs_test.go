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
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// Allocations a call may make beyond its span (what the SDK allocates for
// a span with the attributes the executor records), decoding its input
// into the map the gates see (executor.DecodeObject) and jsonschema's
// validation. Relative to the libraries' own counts, so that upgrading one
// does not break the test.
const (
	// executorOwnAllocs: the call's state (the tool's context, the
	// record's verdicts), plus one for stray allocations of other
	// goroutines during the run. The span's start options are pooled.
	executorOwnAllocs = 1 + 1 + chainAllocs
	// chainAllocs: the decision's chain hash (gate.chain.hash, the one
	// string a chained decision needs; its stored form is encoded in a
	// pooled buffer and hashed on the stack).
	chainAllocs = 1
	// verdictAllocs: encoding gate.verdicts when the span carries it (one
	// string for every entry, the slice of entries, the attribute value),
	// and reading the list back for the chain's digest
	// (attribute.Value.AsStringSlice copies it).
	verdictAllocs = 3 + 1
)

// TestExecuteAllocations guards the executor's per-call allocations, with
// no gate, an allow gate and a chain of three, against a recording span
// carrying the same attributes (those the executor recorded for the same
// call) plus decoding and the schema validation of the input.
func TestExecuteAllocations(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts: not in -short or with the race detector")
	}
	tp := benchProvider()
	tr := tp.Tracer("allocs")
	ctx := context.Background()
	// spanAllocs counts what the SDK allocates for a span carrying attrs,
	// the call's identity (the first three) set at its start as the
	// executor does. The options and attributes are built outside the
	// measured function: it counts the SDK's allocations, nothing else.
	spanAllocs := func(t *testing.T, attrs []attribute.KeyValue) float64 {
		t.Helper()
		require.Greater(t, len(attrs), 3)
		for i, k := range []attribute.Key{semconv.GenAIOperationNameKey, semconv.GenAIToolNameKey, semconv.GenAIToolCallIDKey} {
			require.Equal(t, k, attrs[i].Key, "the identity attributes come first, set at the span's start")
		}
		startOpts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs[:3]...)}
		end := attrs[3:]
		return testing.AllocsPerRun(200, func() {
			_, s := tr.Start(ctx, "execute_tool bash", startOpts...)
			s.SetAttributes(end...)
			s.End()
		})
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(bashSchema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("urn:allocs", doc))
	schema := c.MustCompile("urn:allocs")
	var decoded map[string]any
	require.NoError(t, json.Unmarshal(benchInput, &decoded))
	validateAllocs := testing.AllocsPerRun(200, func() { _ = schema.Validate(decoded) })
	decodeAllocs := testing.AllocsPerRun(200, func() { _, _ = executor.DecodeObject(benchInput) })
	// The executor's decoder allocates no more than json v2's Unmarshal
	// into the same map.
	jsonv2Allocs := testing.AllocsPerRun(200, func() {
		var m map[string]any
		_ = jsonv2.Unmarshal(benchInput, &m)
	})
	require.LessOrEqual(t, decodeAllocs, jsonv2Allocs, "decoding allocates more than json v2's Unmarshal")

	allow := func(name string) gate.Gate {
		return gate.Named(name, gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
			return gate.Decision{Action: gate.ActionAllow}, nil
		}))
	}
	tests := []struct {
		name     string
		gates    []gate.Gate
		verdicts bool // the span carries gate.verdicts
	}{
		{"no gate", nil, false},
		{"allow gate", []gate.Gate{allow("a")}, false},
		{"chain of three", []gate.Gate{allow("a"), allow("b"), allow("c")}, true},
		// Scopes are resolved once per registered tool: a scoped gate
		// costs a call no allocation.
		{"scoped gate", []gate.Gate{gate.Scoped(allow("a"), gate.Scope{Tools: []string{"bash"}})}, false},
		{"scoped chain of three", []gate.Gate{allow("a"), gate.Scoped(allow("b"), gate.Scope{Fields: []string{"command"}}),
			gate.Scoped(allow("c"), gate.Scope{Patterns: []string{"ba*"}})}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			newRun := func(tp trace.TracerProvider) *executor.Run {
				reg, err := executor.NewRegistry(benchTool())
				require.NoError(t, err)
				ex, err := executor.New(reg, executor.WithTracerProvider(tp),
					executor.WithMeterProvider(noopmetric.NewMeterProvider()), executor.WithGates(tc.gates...))
				require.NoError(t, err)
				a, err := ex.Agent("bench", executor.AgentAllow("bash"))
				require.NoError(t, err)
				return a.Run("run-1", executor.WithTask("task-1"))
			}
			call := executor.ToolCall{ID: "call_1", Name: "bash", Input: benchInput}
			// The attributes the executor records for this call.
			exp := tracetest.NewInMemoryExporter()
			newRun(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))).Execute(ctx, call)
			spans := exp.GetSpans()
			require.Len(t, spans, 1)
			attrs := spans[0].Attributes
			_, hasVerdicts := attrMap(attrs)[gate.AttrVerdicts]
			require.Equal(t, tc.verdicts, hasVerdicts, "gate.verdicts on the span")
			span := spanAllocs(t, attrs)
			own := float64(executorOwnAllocs)
			if hasVerdicts {
				own += verdictAllocs
			}

			run := newRun(tp)
			got := testing.AllocsPerRun(200, func() {
				if res := run.Execute(ctx, call); res.IsError {
					t.Fatal(res.Content)
				}
			})
			t.Logf("call %v allocs; span with its %d attributes %v, decoding %v (json v2's Unmarshal %v), validation %v",
				got, len(attrs), span, decodeAllocs, jsonv2Allocs, validateAllocs)
			require.LessOrEqual(t, got, span+decodeAllocs+validateAllocs+own)
		})
	}
}
