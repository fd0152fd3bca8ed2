package executor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// copyLog is an in-memory WriteAheadLog that copies each committed span's
// attributes into its buffer: strict mode's cost without a disk.
type copyLog struct {
	mu  sync.Mutex
	buf []attribute.KeyValue
}

func (l *copyLog) Commit(_ context.Context, span trace.Span) error {
	ro := span.(sdktrace.ReadOnlySpan)
	l.mu.Lock()
	l.buf = append(l.buf[:0], ro.Attributes()...)
	l.mu.Unlock()
	return nil
}

// BenchmarkWriteAhead is the cost of strict mode per call (one allow
// gate, a recording span): Off is the non-strict path; Memory commits to
// an in-memory log with a context that cannot end (Commit runs inline);
// MemoryCancelable with a context that can (Commit runs on its own
// goroutine, bounded by the context). Ratio = strict ns/op ÷ Off ns/op; a
// real spool's cost is in otelbridge's BenchmarkProviderCommit.
func BenchmarkWriteAhead(b *testing.B) {
	allow := gate.Named("a", gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		return gate.Decision{Action: gate.ActionAllow}, nil
	}))
	live, cancel := context.WithCancel(context.Background())
	defer cancel()
	cases := []struct {
		name string
		log  executor.WriteAheadLog
		ctx  context.Context
	}{
		{"Off", nil, context.Background()},
		{"Memory", &copyLog{}, context.Background()},
		{"MemoryCancelable", &copyLog{}, live},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			reg, err := executor.NewRegistry(benchTool())
			require.NoError(b, err)
			opts := []executor.Option{executor.WithTracerProvider(benchProvider()), executor.WithGates(allow)}
			if tc.log != nil {
				opts = append(opts, executor.WithWriteAhead(tc.log))
			}
			ex, err := executor.New(reg, opts...)
			require.NoError(b, err)
			ag, err := ex.Agent("bench", executor.AgentAllow("bash"))
			require.NoError(b, err)
			run := ag.Run("r")
			c := executor.ToolCall{ID: "c1", Name: "bash", Input: benchInput}
			b.ReportAllocs()
			for b.Loop() {
				if res := run.Execute(tc.ctx, c); res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}
