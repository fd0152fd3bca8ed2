package otelbridge

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestDocumentedOTelDurationUnits sets each duration variable the docs name
// the way docs/configuration.md says (an integer of milliseconds) and reads
// the setting the SDK component that parses it ended up with: the OTLP
// trace client's export timeout, the batch span processor's schedule
// delay and export timeout, the metrics reader's interval. A Go duration
// ("5s") is not understood: the SDK keeps its default. And the docs'
// table says "milliseconds" in each variable's row.
func TestDocumentedOTelDurationUnits(t *testing.T) {
	field := func(v any, path ...string) time.Duration {
		r := reflect.ValueOf(v)
		for _, name := range path {
			for r.Kind() == reflect.Pointer || r.Kind() == reflect.Interface {
				r = r.Elem()
			}
			r = r.FieldByName(name)
			require.True(t, r.IsValid(), "no field %s in %T: the SDK changed", name, v)
		}
		return time.Duration(r.Int())
	}
	exportTimeout := func(t *testing.T) time.Duration {
		return field(otlptracegrpc.NewClient(traceExporterOptions(Config{})...), "exportTimeout")
	}
	bsp := func(t *testing.T, name string) time.Duration {
		p, err := NewBatchProcessor(tracetest.NewNoopExporter(), BatchConfig{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
		return field(p.bsp, "o", name)
	}
	interval := func(t *testing.T) time.Duration {
		exp, err := otlpmetricgrpc.New(context.Background(), otlpmetricgrpc.WithInsecure(), otlpmetricgrpc.WithEndpoint("127.0.0.1:1"))
		require.NoError(t, err)
		r := sdkmetric.NewPeriodicReader(exp)
		t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
		return field(r, "interval")
	}
	tests := []struct {
		env, value string
		read       func(*testing.T) time.Duration
		want       time.Duration
	}{
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "2500", exportTimeout, 2500 * time.Millisecond},
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "5s", exportTimeout, 10 * time.Second}, // ignored: the default
		{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "700", exportTimeout, 700 * time.Millisecond},
		{"OTEL_BSP_SCHEDULE_DELAY", "250", func(t *testing.T) time.Duration { return bsp(t, "BatchTimeout") }, 250 * time.Millisecond},
		{"OTEL_BSP_SCHEDULE_DELAY", "1s", func(t *testing.T) time.Duration { return bsp(t, "BatchTimeout") }, 5 * time.Second},
		{"OTEL_BSP_EXPORT_TIMEOUT", "7000", func(t *testing.T) time.Duration { return bsp(t, "ExportTimeout") }, 7 * time.Second},
		{"OTEL_METRIC_EXPORT_INTERVAL", "1500", interval, 1500 * time.Millisecond},
		{"OTEL_METRIC_EXPORT_INTERVAL", "15s", interval, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.env+"="+tt.value, func(t *testing.T) {
			clearOTLPEnv(t)
			t.Setenv(tt.env, tt.value)
			assert.Equal(t, tt.want, tt.read(t))
		})
	}

	doc, err := os.ReadFile("../docs/configuration.md")
	require.NoError(t, err)
	for _, env := range []string{"OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT", "OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_METRIC_EXPORT_INTERVAL"} {
		found := false
		for _, line := range strings.Split(string(doc), "\n") {
			if strings.HasPrefix(line, "| `") && strings.Contains(line, "`"+env+"`") {
				found = true
				assert.Contains(t, line, "integer milliseconds", "the docs give %s's unit", env)
			}
		}
		assert.True(t, found, "docs/configuration.md has a row for %s", env)
	}
}
