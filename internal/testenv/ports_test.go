package testenv_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	otelcollector "github.com/toolgate/toolgate/deploy/otel-collector"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestCheckLocalStackPorts: a collector or Jaeger config whose ${env:…}
// defaults, literal addresses or explicit values use a default port of the
// local stack is reported with the address and the variable to set; one
// whose every address is the test's own passes.
func TestCheckLocalStackPorts(t *testing.T) {
	own := func(names ...string) []string {
		var env []string
		for i, n := range names {
			v := fmt.Sprintf("127.0.0.1:%d", 41000+i)
			if strings.HasSuffix(n, "_ENDPOINT") {
				v = "http://" + v
			}
			if strings.HasSuffix(n, "_PORT") {
				v = fmt.Sprint(41000 + i)
			}
			env = append(env, n+"="+v)
		}
		return env
	}
	collectorVars := []string{"TOOLGATE_OTELCOL_GRPC", "TOOLGATE_OTELCOL_HTTP", "TOOLGATE_OTELCOL_HEALTH",
		"TOOLGATE_OTELCOL_METRICS_PORT", "TOOLGATE_CLICKHOUSE_ENDPOINT", "TOOLGATE_JAEGER_OTLP_GRPC"}
	jaegerVars := []string{"TOOLGATE_JAEGER_OTLP_GRPC", "TOOLGATE_JAEGER_OTLP_HTTP", "TOOLGATE_JAEGER_QUERY_HTTP",
		"TOOLGATE_JAEGER_QUERY_GRPC", "TOOLGATE_JAEGER_HEALTH"}
	tests := []struct {
		name    string
		configs [][]byte
		env     []string
		want    []string // nil: passes
	}{
		{"collector, every port the test's", [][]byte{otelcollector.Config()}, own(collectorVars...), nil},
		{"collector with the TLS overlay, every port the test's", [][]byte{otelcollector.Config(), otelcollector.TLSOverlay()},
			own(collectorVars...), nil},
		{"collector, no variables", [][]byte{otelcollector.Config()}, nil, []string{
			"127.0.0.1:8123 (ClickHouse HTTP", "set TOOLGATE_CLICKHOUSE_ENDPOINT",
			"127.0.0.1:14317 (Jaeger's OTLP receiver)", "set TOOLGATE_JAEGER_OTLP_GRPC",
			"127.0.0.1:4317", "127.0.0.1:4318", "127.0.0.1:13133", "port 8888"}},
		{"collector, Jaeger exporter left at its default (the prod-tls leak)", [][]byte{otelcollector.Config(), otelcollector.TLSOverlay()},
			own(collectorVars[:5]...), []string{"127.0.0.1:14317 (Jaeger's OTLP receiver)", "set TOOLGATE_JAEGER_OTLP_GRPC"}},
		{"collector, Jaeger exporter set to the demo's port", [][]byte{otelcollector.Config()},
			append(own(collectorVars...), "TOOLGATE_JAEGER_OTLP_GRPC=localhost:14317"), []string{"localhost:14317"}},
		{"Jaeger, every port the test's", [][]byte{otelcollector.JaegerConfig()}, own(jaegerVars...), nil},
		{"Jaeger, no variables", [][]byte{otelcollector.JaegerConfig()}, nil, []string{"127.0.0.1:16686", "127.0.0.1:14317", "127.0.0.1:14133"}},
		{"a literal endpoint", [][]byte{[]byte("exporters:\n  otlp:\n    endpoint: \"localhost:4317\"\n")}, nil,
			[]string{"localhost:4317 (the collector's OTLP receiver)"}},
		{"a comment", [][]byte{[]byte("# the demo listens on 127.0.0.1:4317\nexporters:\n  debug:\n")}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := testenv.CheckLocalStackPorts(tt.configs, tt.env)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestStartCollectorUsesNoLocalStackPort starts the collector as tests do —
// with the debug sinks, and with configs of their own (WithConfigs, as
// deploy/otel-collector's TLS test does) — and checks the running
// process's real environment against its configs: no listener and no
// exporter uses a default port of the local stack, so a running make demo
// never receives a test's spans or decisions.
func TestStartCollectorUsesNoLocalStackPort(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []testenv.CollectorOption
	}{
		{"debug sinks", nil},
		{"WithConfigs(config.yaml)", []testenv.CollectorOption{testenv.WithConfigs(otelcollector.Config())}},
		{"Jaeger only", []testenv.CollectorOption{testenv.WithJaegerOTLP("127.0.0.1:1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := testenv.StartCollector(t, tc.opts...)
			environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", col.PID()))
			require.NoError(t, err)
			var env []string
			for _, kv := range bytes.Split(environ, []byte{0}) {
				env = append(env, string(kv))
			}
			files, err := filepath.Glob(filepath.Join(col.Dir, "*.yaml"))
			require.NoError(t, err)
			require.NotEmpty(t, files)
			var configs [][]byte
			for _, f := range files {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				configs = append(configs, b)
			}
			assert.NoError(t, testenv.CheckLocalStackPorts(configs, env))
		})
	}
}
