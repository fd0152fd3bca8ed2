package testenv_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
)

// sendTraces exports three traces through OTLP/gRPC to endpoint: an allowed
// call, a denied call (each under an invoke_agent span) and an ungated span.
// It returns their trace IDs by name.
func sendTraces(t *testing.T, c *testenv.Collector, service string) map[string]string {
	t.Helper()
	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(c.GRPCEndpoint), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithHeaders(c.Headers()))
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service))),
	)
	tr := tp.Tracer("testenv")
	ids := map[string]string{}
	for _, action := range []gate.Action{gate.ActionAllow, gate.ActionDeny} {
		actx, agent := tr.Start(ctx, "invoke_agent demo", trace.WithAttributes(
			semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName("demo")))
		_, call := tr.Start(actx, "execute_tool bash", trace.WithAttributes(
			semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName("bash"),
			gate.AttrGated.Bool(true), gate.AttrAction.String(string(action))))
		if action == gate.ActionDeny {
			call.SetStatus(codes.Error, "denied")
		}
		call.End()
		agent.End()
		ids[string(action)] = agent.SpanContext().TraceID().String()
	}
	_, plain := tr.Start(ctx, "chat model", trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat")))
	plain.End()
	ids["plain"] = plain.SpanContext().TraceID().String()
	require.NoError(t, tp.Shutdown(ctx))
	return ids
}

// waitTraces polls Jaeger until it has want traces for service (or more).
func waitTraces(t *testing.T, j *testenv.Jaeger, service string, want int) []testenv.JaegerTrace {
	t.Helper()
	var got []testenv.JaegerTrace
	require.Eventually(t, func() bool {
		var err error
		got, err = j.Traces(context.Background(), service, nil, time.Hour, 100)
		return err == nil && len(got) >= want
	}, 30*time.Second, 200*time.Millisecond, "jaeger has %d of %d traces", len(got), want)
	return got
}

// The collector's traces pipeline keeps whole traces with a denial and a
// ratio of the rest (tail_sampling), and Jaeger returns them with their gate
// attributes.
func TestCollectorTailSamplingToJaeger(t *testing.T) {
	tests := []struct {
		name    string
		percent float64
		want    []string // kinds of trace Jaeger must show
	}{
		{"keep everything", 100, []string{"allow", "deny", "plain"}},
		{"denials only", 0, []string{"deny"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := testenv.StartJaeger(t)
			c := testenv.StartCollector(t, testenv.WithJaegerOTLP(j.OTLPGRPC),
				testenv.WithSamplePercent(tt.percent), testenv.WithDecisionWait(500*time.Millisecond))
			service := "testenv-" + strings.ReplaceAll(tt.name, " ", "-")
			ids := sendTraces(t, c, service)

			got := waitTraces(t, j, service, len(tt.want))
			// Give tail_sampling time to (wrongly) release more traces.
			time.Sleep(1500 * time.Millisecond)
			got = waitTraces(t, j, service, len(tt.want))
			var gotIDs []string
			for _, tr := range got {
				gotIDs = append(gotIDs, tr.TraceID)
			}
			var wantIDs []string
			for _, k := range tt.want {
				wantIDs = append(wantIDs, ids[k])
			}
			assert.ElementsMatch(t, wantIDs, gotIDs)

			tr, err := j.Trace(context.Background(), ids["deny"])
			require.NoError(t, err)
			require.Len(t, tr.Spans, 2)
			for _, s := range tr.Spans {
				if s.OperationName != "execute_tool bash" {
					continue
				}
				v, ok := s.Tag(string(gate.AttrAction))
				assert.True(t, ok)
				assert.Equal(t, "deny", v)
				v, _ = s.Tag(string(gate.AttrGated))
				assert.Equal(t, true, v)
				assert.NotEmpty(t, s.ParentSpanID())
			}

			accepted, err := c.Metric(context.Background(), "otelcol_receiver_accepted_spans")
			require.NoError(t, err)
			assert.Equal(t, 5.0, accepted)
			cpu, err := c.CPUTime()
			require.NoError(t, err)
			assert.Positive(t, cpu)
		})
	}
}

// A collector stopped and started again keeps its ports and accepts spans.
func TestCollectorRestart(t *testing.T) {
	c := testenv.StartCollector(t)
	pid := c.PID()
	require.NoError(t, c.Stop())
	assert.Zero(t, c.PID())
	require.NoError(t, c.Start(context.Background()))
	assert.NotEqual(t, pid, c.PID())
	sendTraces(t, c, "testenv-restart")
	require.Eventually(t, func() bool {
		n, err := c.Metric(context.Background(), "otelcol_receiver_accepted_spans")
		return err == nil && n == 5
	}, 10*time.Second, 100*time.Millisecond)
	log, err := os.ReadFile(c.LogPath)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(log), "==== "), "one log section per start")
}
