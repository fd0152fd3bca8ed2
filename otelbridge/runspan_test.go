package otelbridge

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// runWithEveryKindOfCall runs, on one run of ex's agent "coder", an
// allowed call, a denied one, and the three calls refused before the gate
// (unknown tool delete_everything, unreachable deploy, invalid input),
// then ends the run.
func runWithEveryKindOfCall(t *testing.T, ex *executor.Executor) {
	t.Helper()
	ag, err := ex.Agent("coder", executor.AgentAllow("bash"))
	require.NoError(t, err)
	run := ag.Run("run-1")
	ctx := context.Background()
	for _, c := range []executor.ToolCall{
		{ID: "allowed", Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)},
		{ID: "denied", Name: "bash", Input: json.RawMessage(`{"command":"rm -rf /"}`)},
		{ID: "registry", Name: "delete_everything", Input: json.RawMessage(`{"path":"/"}`)},
		{ID: "reachability", Name: "deploy", Input: json.RawMessage(`{}`)},
		{ID: "input", Name: "bash", Input: json.RawMessage(`{"command":42}`)},
	} {
		run.Execute(ctx, c)
	}
	run.End()
}

func bashAndDeploy(t *testing.T) *executor.Registry {
	t.Helper()
	ok := func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil }
	reg, err := executor.NewRegistry(
		executor.Tool{Name: "bash", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`), Execute: ok},
		executor.Tool{Name: "deploy", Execute: ok})
	require.NoError(t, err)
	return reg
}

// TestRunSpanUnderSampling: the run's invoke_agent span is the parent of
// all its calls, one trace; the default sampling exports every decision —
// the calls refused before the gate included — and the run span; deny-only
// exports the denial, the three refusals (denied decisions) and the run
// span above them (an ancestor of kept spans), and drops the allowed call.
func TestRunSpanUnderSampling(t *testing.T) {
	noRm := gate.Named("no-rm", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if strings.HasPrefix(c.String("command"), "rm ") {
			return gate.Deny("rm is not allowed"), nil
		}
		return gate.Allow(), nil
	}))
	for _, tc := range []struct {
		sampling string
		want     []string // gen_ai.tool.call.id of the kept execute_tool spans
	}{
		{"decisions", []string{"allowed", "denied", "input", "reachability", "registry"}},
		{"deny-only", []string{"denied", "input", "reachability", "registry"}},
	} {
		t.Run(tc.sampling, func(t *testing.T) {
			ctx := context.Background()
			mem := tracetest.NewInMemoryExporter()
			p, err := Setup(ctx, Config{Sampling: sampling.Config{Setting: sampling.MustParse(tc.sampling)}, Exporter: mem})
			require.NoError(t, err)
			ex, err := executor.New(bashAndDeploy(t), executor.WithTracerProvider(p), executor.WithGates(noRm))
			require.NoError(t, err)
			runWithEveryKindOfCall(t, ex)
			require.NoError(t, p.ForceFlush(ctx))
			t.Cleanup(func() { _ = p.Shutdown(ctx) })

			var agents []tracetest.SpanStub
			var calls []string
			stages := map[string]string{}
			spans := mem.GetSpans()
			for _, s := range spans {
				attrs := map[string]string{}
				for _, kv := range s.Attributes {
					attrs[string(kv.Key)] = kv.Value.Emit()
				}
				switch attrs[string(semconv.GenAIOperationNameKey)] {
				case "invoke_agent":
					agents = append(agents, s)
				case "execute_tool":
					id := attrs[string(semconv.GenAIToolCallIDKey)]
					calls = append(calls, id)
					stages[id] = attrs[string(gate.AttrStage)]
				}
			}
			sort.Strings(calls)
			assert.Equal(t, tc.want, calls)
			require.Len(t, agents, 1, "the run span, kept in both modes")
			run := agents[0]
			assert.Equal(t, "invoke_agent coder", run.Name)
			for _, s := range spans {
				assert.Equal(t, run.SpanContext.TraceID(), s.SpanContext.TraceID(), "one trace per run")
				if s.Name != run.Name {
					assert.Equal(t, run.SpanContext.SpanID(), s.Parent.SpanID(), "%s is a child of the run span", s.Name)
				}
			}
			assert.Equal(t, "registry", stages["registry"])
			assert.Equal(t, "reachability", stages["reachability"])
			assert.Equal(t, "input", stages["input"])
			assert.Equal(t, "gate", stages["denied"])
			st := p.Stats().Sampling
			assert.EqualValues(t, 6, st.Ended)
			assert.Zero(t, st.AncestorsPending, "no mark left behind")
		})
	}
}

// TestHostileToolNamesExportThroughOTLP: whatever tool name the model
// sends — 1 MB, invalid UTF-8, control characters — the call is exactly
// one span named just "execute_tool", its gen_ai.tool.name is valid UTF-8
// within gate.MaxNameBytes, it is a decision of stage registry, and the
// whole batch, the run span with it, arrives over real OTLP/gRPC.
func TestHostileToolNamesExportThroughOTLP(t *testing.T) {
	p, r, exportErrors := hostileProvider(t)
	ex, err := executor.New(bashAndDeploy(t), executor.WithTracerProvider(p))
	require.NoError(t, err)
	ag, err := ex.Agent("coder", executor.AgentPresets(executor.PresetAll))
	require.NoError(t, err)
	run := ag.Run("run-hostile")
	names := map[string]string{
		"huge":    strings.Repeat("delete_everything", 1<<20/17+1),
		"invalid": "delete\xc3\x28\xff\xfe_everything",
		"control": "delete\x00\x1b[2J\r\n\u202eeverything",
		"mixed":   strings.Repeat("\xff\x00é", 200000),
	}
	for id, name := range names {
		res := run.Execute(context.Background(), executor.ToolCall{ID: id, Name: name, Input: json.RawMessage("\xff{")})
		require.Equal(t, executor.ErrorTypeToolNotFound, res.ErrorType)
	}
	// Invalid input with hostile bytes, to a registered tool.
	run.Execute(context.Background(), executor.ToolCall{ID: "bad-input", Name: "bash", Input: json.RawMessage("{\"command\":\"\x00\x1b[2J" + strings.Repeat("\xff\xc3", 100000) + "\"}")})
	run.End()
	got, requests := flushTo(t, p, r)
	assert.Empty(t, exportErrors())
	assert.Zero(t, p.Stats().Lost())
	assert.Equal(t, 1, requests, "one batch")
	require.Len(t, got, len(names)+2, "every call's span and the run span")
	runSpan := got[""] // the run span has no tool-call ID
	require.NotNil(t, runSpan)
	assert.Equal(t, "invoke_agent coder", runSpan["span.name"])
	for id := range names {
		attrs := got[id]
		require.NotNil(t, attrs, id)
		assert.Equal(t, "execute_tool", attrs["span.name"], id)
		tool := attrs[string(semconv.GenAIToolNameKey)]
		assert.True(t, utf8.ValidString(tool), id)
		assert.LessOrEqual(t, len(tool), gate.MaxNameBytes, id)
		assert.NotEmpty(t, tool, id)
		assert.Equal(t, "registry", attrs[string(gate.AttrStage)], id)
		assert.Equal(t, "deny", attrs[string(gate.AttrAction)], id)
		assert.Equal(t, "executor", attrs[string(gate.AttrSource)], id)
		assert.Equal(t, "false", attrs[string(gate.AttrGated)], id)
	}
	bad := got["bad-input"]
	assert.Equal(t, "input", bad[string(gate.AttrStage)])
	assert.True(t, utf8.ValidString(bad[string(gate.AttrReason)]))
	assert.LessOrEqual(t, len(bad[string(gate.AttrReason)]), gate.MaxTextBytes+gate.MaxTextBytes/2)
}

// TestRunSpanParentEndedFirst: the red team's case E. A run's first call
// comes under a request span of the application, which ends before the
// run span (the run goes on over later requests). Under the default
// sampling the run span is kept, so its parent must be too: the run span
// never points at a parent that is never exported.
func TestRunSpanParentEndedFirst(t *testing.T) {
	for _, mode := range []string{"decisions", "all"} {
		t.Run(mode, func(t *testing.T) {
			mem := tracetest.NewInMemoryExporter()
			p, err := Setup(context.Background(), Config{Sampling: sampling.Config{Setting: sampling.MustParse(mode)}, Exporter: mem})
			require.NoError(t, err)
			ex, err := executor.New(bashAndDeploy(t), executor.WithTracerProvider(p))
			require.NoError(t, err)
			ag, err := ex.Agent("coder", executor.AgentAllow("bash"))
			require.NoError(t, err)
			tr := p.Tracer("app")
			ctx := context.Background()
			run := ag.Run("run-1")
			r1, req1 := tr.Start(ctx, "request1")
			run.Execute(r1, executor.ToolCall{ID: "e1", Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)})
			req1.End()
			r2, req2 := tr.Start(ctx, "request2")
			run.Execute(r2, executor.ToolCall{ID: "e2", Name: "deploy", Input: json.RawMessage(`{}`)})
			req2.End()
			run.End()
			require.NoError(t, p.ForceFlush(ctx))
			names := map[string]bool{}
			ids := map[string]bool{}
			for _, s := range mem.GetSpans() {
				names[s.Name] = true
				ids[s.SpanContext.SpanID().String()] = true
			}
			assert.True(t, names["request1"], "the run span's parent is exported: %v", names)
			for _, s := range mem.GetSpans() {
				if s.Parent.IsValid() {
					assert.True(t, ids[s.Parent.SpanID().String()], "%s points at a parent that is not exported", s.Name)
				}
			}
			require.NoError(t, p.Shutdown(ctx))
		})
	}
}
