package otelbridge

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// TestConfigObjectFields: each object field of Config (what option
// functions carried before) takes effect: SpanProcessors see every span
// before sampling, Sampler replaces the head sampler, ResourceAttributes
// reach the resource below ServiceName, MeterProvider receives the
// pipeline's counters.
func TestConfigObjectFields(t *testing.T) {
	t.Run("SpanProcessors before sampling", func(t *testing.T) {
		mem, seen := tracetest.NewInMemoryExporter(), tracetest.NewInMemoryExporter()
		p, err := Setup(t.Context(), Config{Exporter: mem, Sampling: sampling.Config{Setting: sampling.MustParse("deny-only")},
			SpanProcessors: []sdktrace.SpanProcessor{sdktrace.NewSimpleSpanProcessor(seen)}})
		require.NoError(t, err)
		leaf(t.Context(), p.Tracer("t"), "execute_tool ls", toolAttrs("ls", allowed...)...)
		leaf(t.Context(), p.Tracer("t"), "execute_tool rm", toolAttrs("rm", denied...)...)
		require.NoError(t, p.ForceFlush(t.Context())) // Shutdown would reset the in-memory exporters
		t.Cleanup(func() { _ = p.Shutdown(t.Context()) })
		assert.Equal(t, []string{"execute_tool ls", "execute_tool rm"}, names(seen.GetSpans()), "the extra processor sees both")
		assert.Equal(t, []string{"execute_tool rm"}, names(mem.GetSpans()), "the exporter gets what sampling kept")
	})
	t.Run("Sampler", func(t *testing.T) {
		mem := tracetest.NewInMemoryExporter()
		p, err := Setup(t.Context(), Config{Exporter: mem, Sampler: sdktrace.NeverSample()})
		require.NoError(t, err)
		leaf(t.Context(), p.Tracer("t"), "execute_tool rm", toolAttrs("rm", denied...)...)
		require.NoError(t, p.ForceFlush(t.Context()))
		t.Cleanup(func() { _ = p.Shutdown(t.Context()) })
		assert.Empty(t, mem.GetSpans(), "a head sampler that drops everything records nothing")
	})
	t.Run("ResourceAttributes below ServiceName", func(t *testing.T) {
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=env,team=env")
		mem := tracetest.NewInMemoryExporter()
		p, err := Setup(t.Context(), Config{Exporter: mem, ServiceName: "svc",
			ResourceAttributes: []attribute.KeyValue{attribute.String("team", "cfg"), semconv.ServiceName("ignored")}})
		require.NoError(t, err)
		leaf(t.Context(), p.Tracer("t"), "execute_tool rm", toolAttrs("rm", denied...)...)
		require.NoError(t, p.ForceFlush(t.Context()))
		t.Cleanup(func() { _ = p.Shutdown(t.Context()) })
		require.Len(t, mem.GetSpans(), 1)
		got := map[attribute.Key]string{}
		for _, kv := range mem.GetSpans()[0].Resource.Attributes() {
			got[kv.Key] = kv.Value.Emit()
		}
		assert.Equal(t, "cfg", got["team"], "the field overrides the environment")
		assert.Equal(t, "env", got["deployment.environment.name"], "the environment's others stay")
		assert.Equal(t, "svc", got[semconv.ServiceNameKey], "ServiceName overrides the field")
	})
	t.Run("MeterProvider", func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		p, err := Setup(t.Context(), Config{Exporter: discard{}, MeterProvider: mp})
		require.NoError(t, err)
		leaf(t.Context(), p.Tracer("t"), "execute_tool rm", toolAttrs("rm", denied...)...)
		require.NoError(t, p.Shutdown(t.Context()))
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(t.Context(), &rm))
		var kept int64
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == MetricSpansKept {
					for _, d := range m.Data.(metricdata.Sum[int64]).DataPoints {
						kept += d.Value
					}
				}
			}
		}
		assert.Equal(t, int64(1), kept)
	})
}
