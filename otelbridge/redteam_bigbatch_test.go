package otelbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// TestRedTeamBatchLargerThanTheCollectorTakes (red team): spool off, the
// default exporter, content recorded at the default record limit. A
// model whose calls all return large outputs (cat a big file) makes each
// span ~9 KiB, and a full batch of 512 spans ~5 MiB: more than a gRPC
// receiver takes (4 MiB, the collector's default), refused with
// ResourceExhausted, which the exporter does not retry — the whole batch
// of decisions was lost. Requests are now split under the limit.
func TestRedTeamBatchLargerThanTheCollectorTakes(t *testing.T) {
	r := startReceiver(t)
	p, err := Setup(context.Background(), Config{Endpoint: r.addr, Insecure: true, SkipCheck: true,
		Sampling: sampling.Config{Setting: sampling.MustParse("all")},
		Batch:    BatchConfig{BatchTimeout: time.Hour, BatchSize: 512, QueueSize: 2048}})
	require.NoError(t, err)
	big := strings.Repeat("0123456789abcdef", 512) // 8 KiB: cut to the 4 KiB record limit
	reg, err := executor.NewRegistry(executor.Tool{Name: "cat",
		Execute: func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text(big), nil }})
	require.NoError(t, err)
	ex, err := executor.New(reg, executor.WithTracerProvider(p), executor.WithRecordContent(true),
		executor.WithGates(gate.DenyTools("policy", "nosuch")))
	require.NoError(t, err)
	a, err := ex.Agent("coder", executor.AgentAllow("cat"))
	require.NoError(t, err)
	run := a.Run("run-big")
	const n = 600
	for i := range n {
		in, _ := json.Marshal(map[string]string{"path": fmt.Sprint(i, big)})
		run.Execute(context.Background(), executor.ToolCall{ID: fmt.Sprint("c", i), Name: "cat", Input: in})
	}
	run.End()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, p.Shutdown(ctx))
	got := 0
	for _, s := range r.spans() {
		if strings.HasPrefix(s.span.GetName(), "execute_tool") {
			got++
		}
	}
	assert.Equal(t, n, got, "every decision delivered")
	assert.Zero(t, p.Stats().Lost())
}
