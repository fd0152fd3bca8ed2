package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// workload runs `runs` agent runs of `per` real commands each, exporting
// through p; every batch is exported twice (a retried export), so the
// collector and ClickHouse see duplicates.
func workload(t *testing.T, p *otelbridge.Provider, service string, runs, per int) *outcome {
	t.Helper()
	ex := newExecutor(t, p, 0)
	cmds := commands(t)
	o := newOutcome()
	for r := 0; r < runs; r++ {
		runAgent(context.Background(), t, p, ex, o, fmt.Sprintf("agent-%d", r%2), fmt.Sprintf("%s-run%d", service, r),
			cmds[r*per:(r+1)*per])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, p.ForceFlush(ctx))
	require.Positive(t, o.count(gate.ActionDeny), "the workload must contain denials")
	require.Positive(t, o.count(gate.ActionAllow), "the workload must contain allowed calls")
	return o
}

// TestPipelineSamplingModes runs the executor through each SDK sampling mode
// into the real collector, ClickHouse and Jaeger, and checks what each
// stores and shows: gate_decisions has exactly one row per kept decision
// (each span was exported twice), otel_traces keeps decisions and agent
// spans only, and Jaeger returns the spans the mode forwards, with their gate
// attributes, and nothing else.
func TestPipelineSamplingModes(t *testing.T) {
	s := startStack(t)
	ctx := context.Background()
	tests := []struct {
		mode string
		// keep: the actions whose calls reach the audit and Jaeger.
		keep []gate.Action
		// chat: the ungated span (the LLM call) reaches Jaeger.
		chat bool
		// allTraces: every run's trace reaches Jaeger (else only runs with a denial).
		allTraces bool
	}{
		{"all", []gate.Action{gate.ActionAllow, gate.ActionDeny}, true, true},
		{"decisions", []gate.Action{gate.ActionAllow, gate.ActionDeny}, false, true},
		{"deny-only", []gate.Action{gate.ActionDeny}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			service := "e2e-" + tt.mode
			exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(s.collector.GRPCEndpoint), otlptracegrpc.WithInsecure(),
				otlptracegrpc.WithHeaders(s.collector.Headers()))
			require.NoError(t, err)
			p := s.providerCfg(t, otelbridge.Config{ServiceName: service,
				Sampling: sampling.Config{Setting: sampling.MustParse(tt.mode)}, Exporter: dupExporter{exp}})
			o := workload(t, p, service, 6, 20)
			want := o.ids(tt.keep...)

			// ClickHouse: exactly one decision per kept call.
			got := s.waitDecisions(ctx, t, service, len(want), 60*time.Second)
			require.Equal(t, len(want), got, "gate_decisions rows")
			time.Sleep(2 * time.Second) // anything extra would arrive now
			rows := s.decisions(ctx, t, service)
			require.Len(t, rows, len(want))
			seen := map[string]bool{}
			for _, r := range rows {
				assert.Falsef(t, seen[r.ToolCallID], "decision %s twice", r.ToolCallID)
				seen[r.ToolCallID] = true
				assert.Truef(t, want[r.ToolCallID], "unexpected decision %s (%s)", r.ToolCallID, r.Action)
				assert.Equal(t, string(o.calls[r.ToolCallID]), r.Action, r.ToolCallID)
				assert.Equal(t, o.traceOf[r.ToolCallID], r.TraceID, r.ToolCallID)
				// gate.verdicts (a string slice) through OTLP, the collector
				// and the exporter, split back into its entries by the view.
				assert.Equal(t, o.verdicts[r.ToolCallID], r.Verdicts, r.ToolCallID)
				assert.Contains(t, []string{"agent-0", "agent-1"}, r.Agent)
				switch {
				case strings.HasSuffix(r.ToolCallID, "-unreachable"):
					// Refused before any gate: a decision of its own stage.
					assert.Equal(t, "reachability", r.Stage, r.ToolCallID)
					assert.Empty(t, r.Verdicts, r.ToolCallID)
					assert.Contains(t, r.Reason, "not reachable", r.ToolCallID)
				case r.Action == string(gate.ActionDeny):
					assert.Len(t, r.Verdicts, 2, r.ToolCallID)
					assert.Contains(t, r.Reason, "command uses", r.ToolCallID)
				default:
					assert.Len(t, r.Verdicts, 2, r.ToolCallID)
					assert.Equal(t, "gate", r.Stage, r.ToolCallID)
				}
			}
			// The duplicates did reach otel_traces: dedup happened in gate_decisions.
			dups := s.countRows(ctx, t, "SELECT toUInt64(count() - uniqExact(SpanId)) FROM otel.otel_traces WHERE ServiceName = {s:String} AND startsWith(SpanName, 'execute_tool')", service)
			assert.Equal(t, uint64(len(want)), dups, "each decision span was stored twice in otel_traces")

			// otel_traces: decisions and agent spans only (the collector's filter/audit).
			names := s.spanNames(ctx, t, service)
			tracesWithKept := map[string]bool{}
			for id := range want {
				tracesWithKept[o.traceOf[id]] = true
			}
			agentSpans := len(o.agentSpans)
			if !tt.allTraces {
				agentSpans = len(tracesWithKept)
			}
			var agentRows, callRows uint64
			for name, n := range names {
				switch name {
				case "execute_tool bash", "execute_tool web_fetch":
					callRows += n
				case "invoke_agent agent-0", "invoke_agent agent-1":
					agentRows += n
				default:
					t.Errorf("otel_traces has %d %q spans; the audit pipeline must drop them", n, name)
				}
			}
			assert.Equal(t, uint64(len(want)), callRows, "distinct execute_tool spans in otel_traces")
			assert.Equal(t, uint64(agentSpans), agentRows, "invoke_agent spans in otel_traces")

			// Jaeger: the spans the mode forwards, with gate attributes.
			wantTraces := len(o.agentSpans)
			if !tt.allTraces {
				wantTraces = len(tracesWithKept)
			}
			var traces []testenv.JaegerTrace
			require.Eventually(t, func() bool {
				traces, err = s.jaeger.Traces(ctx, service, nil, time.Hour, 1000)
				return err == nil && len(traces) >= wantTraces
			}, 30*time.Second, 250*time.Millisecond, "jaeger traces")
			time.Sleep(1500 * time.Millisecond)
			traces, err = s.jaeger.Traces(ctx, service, nil, time.Hour, 1000)
			require.NoError(t, err)
			require.Len(t, traces, wantTraces)
			calls := map[string]bool{}
			for _, tr := range traces {
				ops := map[string]map[string]bool{}
				for _, sp := range tr.Spans {
					if ops[sp.OperationName] == nil {
						ops[sp.OperationName] = map[string]bool{}
					}
					ops[sp.OperationName][sp.SpanID] = true
					if sp.OperationName != "execute_tool bash" && sp.OperationName != "execute_tool web_fetch" {
						continue
					}
					id, _ := sp.Tag(string(semconv.GenAIToolCallIDKey))
					action, _ := sp.Tag(string(gate.AttrAction))
					gated, _ := sp.Tag(string(gate.AttrGated))
					callID := fmt.Sprint(id)
					calls[callID] = true
					assert.Equal(t, string(o.calls[callID]), action, callID)
					assert.Equal(t, sp.OperationName == "execute_tool bash", gated, callID)
					assert.NotEmpty(t, sp.ParentSpanID(), "execute_tool has its invoke_agent parent")
				}
				assert.Equal(t, 1, len(ops["invoke_agent agent-0"])+len(ops["invoke_agent agent-1"]), "one agent span per trace")
				assert.Equal(t, tt.chat, len(ops["chat model-e2e"]) == 1, "chat span in Jaeger")
				assert.Len(t, ops["execute_tool web_fetch"], 1, "the call refused before the gate (a denial) in Jaeger")
			}
			assert.Equal(t, want, calls, "execute_tool spans in Jaeger")
			assert.Zero(t, p.Stats().Lost(), "SDK lost spans")
		})
	}
}
