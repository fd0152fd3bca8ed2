package otelbridge

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/otelbridge/sampling"
)

func receivedNames(r *receiver) []string {
	var out []string
	for _, s := range r.spans() {
		out = append(out, s.span.GetName())
	}
	sort.Strings(out)
	return out
}

func TestSetupOTLPRoundTrip(t *testing.T) {
	r := startReceiver(t)
	ctx := context.Background()
	p, err := Setup(ctx, Config{
		Endpoint:       r.addr,
		Insecure:       true,
		Headers:        map[string]string{"x-tenant": "t1"},
		ServiceName:    "toolgate-test",
		ServiceVersion: "1.2.3",
		Batch:          BatchConfig{BatchTimeout: time.Hour}, // nothing leaves before Shutdown
		Sampling:       sampling.Config{Setting: sampling.MustParse("deny-only")},
	})
	require.NoError(t, err)
	emitRuns(p.Tracer("test"))
	assert.Empty(t, r.spans(), "batched: nothing is sent before the flush")

	require.NoError(t, p.Shutdown(ctx), "Shutdown flushes")
	assert.Equal(t, []string{"execute_tool curl", "execute_tool rm", "invoke_agent helper", "invoke_agent planner"}, receivedNames(r))

	got := r.spans()
	res := got[0].resource
	assert.Equal(t, "toolgate-test", res["service.name"])
	assert.Equal(t, "1.2.3", res["service.version"])
	host, _ := os.Hostname()
	assert.Equal(t, host, res["host.name"])
	for _, s := range got {
		if s.span.GetName() == "execute_tool rm" {
			attrs := kvMap(s.span.GetAttributes())
			assert.Equal(t, "deny", attrs["gate.action"])
			assert.Equal(t, "true", attrs["gate.gated"])
			assert.Equal(t, "1", attrs["sampling.priority"])
		}
	}
	require.NotEmpty(t, r.metadata())
	assert.Equal(t, []string{"t1"}, r.metadata()[0].Get("x-tenant"))

	st := p.Stats()
	assert.Equal(t, int64(14), st.Sampling.Ended)
	assert.Equal(t, int64(4), st.Sampling.Kept)
	assert.Equal(t, int64(4), st.Batch.Exported)
	assert.Zero(t, st.Lost())
	assert.Zero(t, st.Batch.Pending)
}

func TestSetupFromEnvironment(t *testing.T) {
	tests := []struct {
		name        string
		cfg         Config
		wantService string
	}{
		{"environment only", Config{}, "from-env"},
		{"config overrides environment", Config{ServiceName: "from-config"}, "from-config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startReceiver(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+r.addr) // http: plaintext
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20abc")
			t.Setenv("OTEL_SERVICE_NAME", "from-env")
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
			t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
			t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "100")
			ctx := context.Background()
			p, err := Setup(ctx, tt.cfg)
			require.NoError(t, err)
			assert.Equal(t, int64(100), p.Stats().Batch.QueueCapacity)
			emitRuns(p.Tracer("test"))
			require.NoError(t, p.Shutdown(ctx))

			got := r.spans()
			require.Len(t, got, 10, "the default sampling (decisions)")
			assert.Equal(t, tt.wantService, got[0].resource["service.name"])
			assert.Equal(t, "test", got[0].resource["deployment.environment.name"])
			assert.Equal(t, []string{"Bearer abc"}, r.metadata()[0].Get("authorization"))
		})
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close())
	return addr
}

func TestSetupEndpointDownCountsLosses(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	ctx := context.Background()
	p, err := Setup(ctx, Config{
		Endpoint: closedPort(t),
		Insecure: true,
		Batch:    BatchConfig{QueueSize: 8, BatchSize: 4, BatchTimeout: 10 * time.Millisecond},
		Timeout:  300 * time.Millisecond,
		Retry: &otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 10 * time.Millisecond,
			MaxInterval: 50 * time.Millisecond, MaxElapsedTime: 200 * time.Millisecond},
		Sampling: sampling.Config{Setting: sampling.MustParse("all")}, MeterProvider: mp})
	require.NoError(t, err)
	tr := p.Tracer("test")
	const n = 200
	for range n {
		leaf(ctx, tr, "execute_tool x", toolAttrs("x", allowed...)...)
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	assert.Error(t, p.Shutdown(sctx), "the last export failed")

	st := p.Stats()
	assert.Equal(t, int64(n), st.Sampling.Kept)
	assert.Positive(t, st.Batch.QueueDropped, "a small queue in front of a dead endpoint overflows")
	assert.Positive(t, st.Batch.ExportFailed)
	assert.Zero(t, st.Batch.Exported)
	assert.Equal(t, st.Batch.Accepted, st.Batch.ExportFailed, "after shutdown every accepted span has an outcome")
	assert.Equal(t, int64(n), st.Lost(), "every span is accounted for as lost")

	// The same numbers as OTel metrics (semconv otelconv names).
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				key := m.Name
				if v, ok := dp.Attributes.Value("error.type"); ok {
					key += "{" + v.AsString() + "}"
				}
				got[key] += dp.Value // queue_full is split by toolgate.span.priority
			}
		}
	}
	assert.Equal(t, st.Batch.QueueDropped, got["otel.sdk.processor.span.processed{queue_full}"])
	assert.Equal(t, st.Batch.ExportFailed, got["otel.sdk.exporter.span.exported{_OTHER}"])
	assert.Equal(t, int64(0), got["otel.sdk.exporter.span.exported"])
	assert.Equal(t, int64(n), got[MetricSpansKept])
}

func TestSetupMetricsExport(t *testing.T) {
	r := startReceiver(t)
	ctx := context.Background()
	p, err := Setup(ctx, Config{Endpoint: r.addr, Insecure: true, Metrics: true, MetricsInterval: time.Hour})
	require.NoError(t, err)
	require.NotNil(t, p.MeterProvider())
	emitRuns(p.Tracer("test"))
	require.NoError(t, p.Shutdown(ctx), "Shutdown flushes spans and the final metrics")
	assert.Len(t, r.spans(), 10)
	got := r.metricNames()
	for _, name := range []string{"otel.sdk.processor.span.processed", "otel.sdk.exporter.span.exported",
		"otel.sdk.processor.span.queue.capacity", MetricSpansKept, MetricSpansFiltered} {
		assert.True(t, got[name], "metric %s exported", name)
	}
}

func TestSetupSamplingFromEnvironment(t *testing.T) {
	tests := []struct {
		env, cfg string
		want     string
		wantErr  bool
	}{
		{"", "", "decisions", false},
		{"deny-only", "", "deny-only", false},
		{"ratio:0.5", "", "ratio:0.5", false},
		{"deny-only", "all", "all", false}, // Config wins
		{"sometimes", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.env+"/"+tt.cfg, func(t *testing.T) {
			t.Setenv(sampling.Env, tt.env)
			var s sampling.Config
			if tt.cfg != "" {
				s.Setting = sampling.MustParse(tt.cfg)
			}
			p, err := Setup(context.Background(), Config{Sampling: s, Exporter: discard{}})
			if tt.wantErr {
				require.ErrorIs(t, err, sampling.ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Sampling().String())
			require.NoError(t, p.Shutdown(context.Background()))
		})
	}
}

func TestSetupRecordsUnderUnsampledRemoteParent(t *testing.T) {
	// An upstream service decided not to sample (traceparent flags 00):
	// the gate decision below is recorded and exported all the same.
	mem := tracetest.NewInMemoryExporter()
	ctx := context.Background()
	p, err := Setup(ctx, Config{Exporter: mem})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Shutdown(ctx) })
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{9}, SpanID: trace.SpanID{9}, Remote: true}) // not sampled
	leaf(trace.ContextWithRemoteSpanContext(ctx, remote), p.Tracer("test"), "execute_tool rm", toolAttrs("rm", denied...)...)
	require.NoError(t, p.ForceFlush(ctx))
	require.Len(t, mem.GetSpans(), 1)
	assert.Equal(t, trace.TraceID{9}, mem.GetSpans()[0].SpanContext.TraceID(), "still in the caller's trace")
}

func TestSetupRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"insecure and TLS", Config{Insecure: true, TLS: tlsConfig()}},
		{"compression", Config{Compression: "zstd"}},
		{"negative queue", Config{Batch: BatchConfig{QueueSize: -1}}},
		{"negative batch timeout", Config{Batch: BatchConfig{BatchTimeout: -time.Second}}},
		{"sampling", Config{Sampling: sampling.Config{Setting: sampling.Setting{Mode: "most"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Setup(context.Background(), tt.cfg)
			require.Error(t, err)
			assert.Nil(t, p)
		})
	}
}

func tlsConfig() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }
