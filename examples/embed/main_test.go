package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge"
)

// TestEmbed runs the example: each tool's calls are judged by the gate
// whose scope holds it — bash by classify.bash, read_file by
// classify.path, http_get by the custom gate — so no read_file or
// http_get call is denied by the bash gate; the dangerous call of each
// tool is denied with a reason and a do-not-retry message.
func TestEmbed(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "") // print only
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 18, out.String())
	want := []struct {
		call, verdict, content string
	}{
		{`bash {"command":"ls -la"}`, "isError=false gate=classify.bash risk=safe", `would run: {"command":"ls -la"}`},
		{`bash {"command":"rm -rf ~"}`, "isError=true gate=classify.bash risk=high", "deletes the home directory"},
		{`read_file {"path":"README.md"}`, "isError=false gate=classify.path risk=safe", `would read: {"path":"README.md"}`},
		{`read_file {"path":"~/.ssh/id_ed25519"}`, "isError=true gate=classify.path risk=high", "SSH private key"},
		{`http_get {"url":"https://example.com/"}`, "isError=false gate=no-internal-urls risk=safe", `would fetch: {"url":"https://example.com/"}`},
		{`http_get {"url":"http://169.254.169.254/latest/meta-data/"}`, "isError=true gate=no-internal-urls risk=high", "169.254.169.254 is an internal address"},
	}
	for i, w := range want {
		assert.Equal(t, w.call, lines[3*i])
		assert.Contains(t, lines[3*i+1], w.verdict, w.call)
		assert.Contains(t, lines[3*i+2], w.content, w.call)
		if strings.Contains(w.verdict, "isError=true") {
			assert.Contains(t, lines[3*i+2], "was denied by the tool gate", w.call)
			assert.Contains(t, lines[3*i+2], "Do not retry", w.call)
		}
	}
	assert.NotContains(t, out.String(), "no string field command", "the bash gate judges no other tool")
}

// TestEmbedExportsToCollector runs the example as the README's export
// instructions say — OTEL_EXPORTER_OTLP_ENDPOINT and the collector's token
// in OTEL_EXPORTER_OTLP_HEADERS — against our collector and Jaeger: the
// run's trace arrives in Jaeger whole (the invoke_agent span and its six
// execute_tool calls), because the example sets up otelbridge and flushes
// before it returns. Without the token, it refuses to start and names the
// fix instead of running the calls and losing their spans.
func TestEmbedExportsToCollector(t *testing.T) {
	j := testenv.StartJaeger(t)
	col := testenv.StartCollector(t, testenv.WithJaegerOTLP(j.OTLPGRPC), testenv.WithDecisionWait(200*time.Millisecond))
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+col.GRPCEndpoint)
	t.Setenv("TOOLGATE_SAMPLING", "all")

	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "")
	var out bytes.Buffer
	err := run(context.Background(), &out)
	require.ErrorIs(t, err, otelbridge.ErrUnauthenticated)
	assert.Contains(t, err.Error(), "set OTEL_EXPORTER_OTLP_HEADERS='authorization=Bearer <token>'")
	assert.Empty(t, out.String(), "no call ran")

	_, value, _ := strings.Cut(col.HeadersEnv(), "=")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", value)
	out.Reset()
	require.NoError(t, run(context.Background(), &out))
	assert.Contains(t, out.String(), "spans: 7 exported, 0 lost")

	ctx := context.Background()
	var traces []testenv.JaegerTrace
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		traces, err = j.Traces(ctx, "embed", nil, time.Hour, 10)
		require.NoError(t, err)
		if len(traces) == 1 && len(traces[0].Spans) == 7 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	require.Len(t, traces, 1, "one run, one trace")
	names := map[string]int{}
	for _, s := range traces[0].Spans {
		names[s.OperationName]++
	}
	assert.Equal(t, map[string]int{"invoke_agent coder": 1, "execute_tool bash": 2, "execute_tool read_file": 2, "execute_tool http_get": 2}, names)
}
