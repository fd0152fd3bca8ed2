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
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
)

// fromToolCallTrace is how an application forwards the executor's OnTrace
// events to a Bridge (for instance together with a framework's own
// events): the event carries its span, so the bridge never re-emits it.
func fromToolCallTrace(ev executor.ToolCallTrace) otelbridge.Event {
	return otelbridge.Event{
		Type: otelbridge.EventToolCall, RunID: ev.RunID, Agent: ev.Agent, TaskID: ev.TaskID,
		StartMs: float64(ev.Start.UnixMicro()) / 1000, EndMs: float64(ev.End.UnixMicro()) / 1000,
		Tool: ev.Tool, ToolCallID: ev.ToolCallID, IsError: ev.IsError, ErrorType: ev.ErrorType,
		Gated: ev.Gated, GateAction: string(ev.GateAction), GateReason: ev.GateReason, GateSource: ev.GateSource,
		TraceID: ev.TraceID, SpanID: ev.SpanID,
	}
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
			p, err := otelbridge.Setup(ctx, otelbridge.Config{Sampling: otelbridge.MustParseSampling(tt.sampling)},
				otelbridge.WithSpanExporter(mem))
			require.NoError(t, err)
			b := otelbridge.NewBridge(p)

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
				executor.OnTrace(func(ctx context.Context, ev executor.ToolCallTrace) error {
					return b.Handle(ctx, fromToolCallTrace(ev))
				}))
			require.NoError(t, err)
			coder, err := ex.Agent("coder", executor.AgentPresets(executor.PresetAll))
			require.NoError(t, err)

			// The framework's agent run: live tool calls, then its events.
			start := time.Now()
			actx := b.AgentContext(ctx, "run-1", "coder", "t1")
			run := coder.Run("run-1", executor.WithTask("t1"))
			ls := run.Execute(actx, executor.ToolCall{ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)})
			rm := run.Execute(actx, executor.ToolCall{ID: "c2", Name: "bash", Input: json.RawMessage(`{"command":"rm -rf /"}`)})
			require.False(t, ls.IsError)
			require.True(t, rm.IsError)
			end := time.Now().Add(time.Millisecond)
			for _, ev := range []otelbridge.Event{
				{Type: otelbridge.EventLLMCall, RunID: "run-1", Agent: "coder", TaskID: "t1", StartMs: ms(start), EndMs: ms(start) + 0.5, Model: "m"},
				// A framework that also reports the calls it ran through
				// the executor, with their IDs: duplicates, not emitted.
				{Type: otelbridge.EventToolCall, RunID: "run-1", Agent: "coder", TaskID: "t1", StartMs: ms(start), EndMs: ms(start) + 1, Tool: "bash", ToolCallID: "c1"},
				{Type: otelbridge.EventAgent, RunID: "run-1", Agent: "coder", TaskID: "t1", StartMs: ms(start) - 1, EndMs: ms(end)},
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
