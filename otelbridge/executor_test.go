package otelbridge_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/bridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// fromToolCallTrace is how an application forwards the executor's trace
// hook events to a Bridge: the event carries its span, so the bridge never
// re-emits it.
func fromToolCallTrace(ev executor.ToolCallTrace) bridge.Event {
	return bridge.EventFromTrace(ev)
}

func ms(t time.Time) float64 { return float64(t.UnixMicro()) / 1000 }

// TestExecutorAndBridgeOneTree runs real gated calls through the executor
// inside a bridged agent run and checks, for each sampling mode, the spans
// that reach the exporter: one span per tool call (no duplicates), the
// executor's execute_tool spans under the bridged invoke_agent span.
func TestExecutorAndBridgeOneTree(t *testing.T) {
	tests := []struct {
		sampling string
		want     []string // span names; the two bash calls are live (executor) spans
	}{
		{"all", []string{"chat m", "execute_tool bash", "execute_tool bash", "invoke_agent coder"}},
		{"decisions", []string{"execute_tool bash", "execute_tool bash", "invoke_agent coder"}},
		{"deny-only", []string{"execute_tool bash", "invoke_agent coder"}},
	}
	for _, tt := range tests {
		t.Run(tt.sampling, func(t *testing.T) {
			ctx := context.Background()
			mem := tracetest.NewInMemoryExporter()
			p, err := otelbridge.Setup(ctx, otelbridge.Config{Sampling: sampling.Config{Setting: sampling.MustParse(tt.sampling)}, Exporter: mem})
			require.NoError(t, err)
			b := bridge.New(p, bridge.Config{})

			reg, err := executor.NewRegistry(executor.Tool{
				Name:        "bash",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
				Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
					return executor.Result{Content: "ok"}, nil
				},
			})
			require.NoError(t, err)
			noRm := gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
				if strings.Contains(c.String("command"), "rm ") {
					return gate.Deny("rm is not allowed"), nil
				}
				return gate.Allow(), nil
			})
			ex, err := executor.New(reg, executor.WithTracerProvider(p), executor.WithGates(noRm),
				executor.WithOnTrace(func(ctx context.Context, ev executor.ToolCallTrace) error {
					return b.Handle(ctx, fromToolCallTrace(ev))
				}))
			require.NoError(t, err)
			coder, err := ex.Agent("coder", executor.AgentPresets(executor.PresetAll))
			require.NoError(t, err)

			// The framework's agent run: live tool calls, then its events.
			start := time.Now()
			actx := b.AgentContext(ctx, "run-1", "coder", "t1")
			// The framework reports the agent span: the executor starts none.
			run := coder.Run("run-1", executor.WithTask("t1"), executor.WithRunSpan(false))
			ls := run.Execute(actx, executor.ToolCall{ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)})
			rm := run.Execute(actx, executor.ToolCall{ID: "c2", Name: "bash", Input: json.RawMessage(`{"command":"rm -rf /"}`)})
			require.False(t, ls.IsError)
			require.True(t, rm.IsError)
			end := time.Now().Add(time.Millisecond)
			for _, ev := range []bridge.Event{
				{Type: bridge.EventLLMCall, RunID: "run-1", Agent: "coder", TaskID: "t1", StartMs: ms(start), EndMs: ms(start) + 0.5, Model: "m"},
				// A framework that also reports the calls it ran through
				// the executor, with their IDs: duplicates, not emitted.
				{Type: bridge.EventToolCall, RunID: "run-1", Agent: "coder", TaskID: "t1", StartMs: ms(start), EndMs: ms(start) + 1, Tool: "bash", ToolCallID: "c1"},
				{Type: bridge.EventAgent, RunID: "run-1", Agent: "coder", TaskID: "t1", StartMs: ms(start) - 1, EndMs: ms(end)},
			} {
				require.NoError(t, b.Handle(ctx, ev))
			}
			require.NoError(t, p.ForceFlush(ctx))
			t.Cleanup(func() { _ = p.Shutdown(ctx) }) // the in-memory exporter forgets its spans at shutdown

			spans := mem.GetSpans()
			var got []string
			for _, s := range spans {
				got = append(got, s.Name)
			}
			sort.Strings(got)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, int64(3), b.Stats().Duplicates, "two executor events and one framework event for executed calls")

			var agentID string
			for _, s := range spans {
				if s.Name == "invoke_agent coder" {
					agentID = s.SpanContext.SpanID().String()
				}
			}
			for _, s := range spans {
				if s.Name == "execute_tool bash" {
					assert.Equal(t, agentID, s.Parent.SpanID().String(), "the live call is a child of the bridged agent span")
					assert.Equal(t, "executor", s.InstrumentationScope.Name[strings.LastIndex(s.InstrumentationScope.Name, "/")+1:])
				}
			}
		})
	}
}

// TestBridgedSpanEncodesTheSameDecision holds the executor's span and the
// bridged span of the same decision to the same attributes: one encoder
// (gate.Record.Attributes) for both.
func TestBridgedSpanEncodesTheSameDecision(t *testing.T) {
	ctx := context.Background()
	live := tracetest.NewInMemoryExporter()
	p, err := otelbridge.Setup(ctx, otelbridge.Config{Sampling: sampling.Config{Setting: sampling.MustParse("all")}, Exporter: live})
	require.NoError(t, err)
	var traces []executor.ToolCallTrace
	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
		Execute:     func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil },
	})
	require.NoError(t, err)
	normalise := gate.Named("normalise", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if c.String("command") == "ls" {
			return gate.AllowRewritten(json.RawMessage(`{"command":"ls -a"}`), "list all"), nil
		}
		return gate.Allow().WithRisk(gate.RiskSafe), nil
	}))
	policy := gate.Named("policy", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		switch c.String("command") {
		case "rm -rf /":
			return gate.Decision{Action: gate.ActionDeny, Reason: "destroys everything \xc3", Risk: gate.RiskHigh, Rule: "fs.rm.root"}, nil
		case "make deploy":
			return gate.Ask("deploys").WithRisk(gate.RiskReview), nil
		}
		return gate.Allow(), nil
	}))
	approver := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		return req.Approve("bot", "fine"), nil
	})
	ex, err := executor.New(reg, executor.WithTracerProvider(p), executor.WithGates(normalise), executor.WithApprover(approver),
		executor.WithOnTrace(func(_ context.Context, ev executor.ToolCallTrace) error {
			traces = append(traces, ev)
			return nil
		}))
	require.NoError(t, err)
	ag, err := ex.Agent("coder", executor.AgentAllow("bash"), executor.AgentGates(policy))
	require.NoError(t, err)
	run := ag.Run("run-1", executor.WithTask("task-1"))
	for i, cmd := range []string{"ls", "rm -rf /", "make deploy", "pwd"} {
		run.Execute(ctx, executor.ToolCall{ID: "c" + string(rune('0'+i)), Name: "bash", Input: json.RawMessage(`{"command":"` + cmd + `"}`)})
	}
	require.NoError(t, p.ForceFlush(ctx))
	require.Len(t, traces, 4)

	bridged := tracetest.NewInMemoryExporter()
	p2, err := otelbridge.Setup(ctx, otelbridge.Config{Sampling: sampling.Config{Setting: sampling.MustParse("all")}, Exporter: bridged})
	require.NoError(t, err)
	b := bridge.New(p2, bridge.Config{})
	for _, tr := range traces {
		ev := bridge.EventFromTrace(tr)
		ev.TraceID, ev.SpanID = "", "" // bridge it as a span of its own
		require.NoError(t, b.Handle(ctx, ev))
	}
	require.NoError(t, p2.ForceFlush(ctx))

	// The decision's attributes and the call's identity; what only one side
	// can know (gen_ai.tool.type, recorded content, toolgate.bridged, and
	// the executor's chain: its link hashes the executor's own span, and a
	// bridged copy is another span, unchained) is left out.
	compared := func(k attribute.Key) bool {
		if strings.HasPrefix(string(k), "gate.chain.") {
			return false
		}
		if strings.HasPrefix(string(k), "gate.") {
			return true
		}
		switch k {
		case gate.AttrSamplingPriority, gate.AttrRunID, gate.AttrTaskID, semconv.ErrorTypeKey, semconv.GenAIToolNameKey,
			semconv.GenAIToolCallIDKey, semconv.GenAIAgentNameKey, semconv.GenAIConversationIDKey, semconv.GenAIOperationNameKey:
			return true
		}
		return false
	}
	byCall := func(spans tracetest.SpanStubs) map[string]map[attribute.Key]string {
		out := map[string]map[attribute.Key]string{}
		for _, s := range spans {
			m := map[attribute.Key]string{}
			var id string
			for _, kv := range s.Attributes {
				if kv.Key == semconv.GenAIToolCallIDKey {
					id = kv.Value.AsString()
				}
				if compared(kv.Key) {
					m[kv.Key] = kv.Value.Emit()
				}
			}
			if id != "" {
				out[id] = m
			}
		}
		return out
	}
	liveAttrs, bridgedAttrs := byCall(live.GetSpans()), byCall(bridged.GetSpans())
	require.Len(t, liveAttrs, 4)
	assert.Equal(t, liveAttrs, bridgedAttrs)
	// The decisions really are different shapes.
	assert.Equal(t, "true", liveAttrs["c0"][gate.AttrRewritten])
	assert.Equal(t, `destroys everything \xc3`, liveAttrs["c1"][gate.AttrReason])
	assert.Equal(t, "approved", liveAttrs["c2"][gate.AttrApproval])
	assert.NotEmpty(t, liveAttrs["c2"][gate.AttrVerdicts])
}
