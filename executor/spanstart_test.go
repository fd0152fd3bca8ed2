package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// onStartIDs records, for every span, the tool-call ID a span processor
// sees in OnStart.
type onStartIDs struct {
	mu  sync.Mutex
	ids map[string]string // span ID -> gen_ai.tool.call.id at start
}

func (p *onStartIDs) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	for _, kv := range s.Attributes() {
		if kv.Key == semconv.GenAIToolCallIDKey {
			p.mu.Lock()
			p.ids[s.SpanContext().SpanID().String()] = kv.Value.AsString()
			p.mu.Unlock()
		}
	}
}
func (*onStartIDs) OnEnd(sdktrace.ReadOnlySpan)      {}
func (*onStartIDs) Shutdown(context.Context) error   { return nil }
func (*onStartIDs) ForceFlush(context.Context) error { return nil }

// TestSpanStartIdentityUnderConcurrency: the span's start options are
// pooled; concurrent calls still each start their span with their own
// identity (a span processor sees it in OnStart), and it is the identity
// the span ends with.
func TestSpanStartIdentityUnderConcurrency(t *testing.T) {
	p := &onStartIDs{ids: map[string]string{}}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p), sdktrace.WithSyncer(exp))
	reg, err := executor.NewRegistry(benchTool())
	require.NoError(t, err)
	ex, err := executor.New(reg, executor.WithTracerProvider(tp), executor.WithGates(gate.AllowAll()))
	require.NoError(t, err)
	a, err := ex.Agent("a", executor.AgentAllow("bash"))
	require.NoError(t, err)
	run := a.Run("r")
	const workers, calls = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				id := fmt.Sprintf("call-%d-%d", w, i)
				res := run.Execute(context.Background(), executor.ToolCall{ID: id, Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)})
				if res.IsError || p.idOf(res.SpanID.String()) != id {
					t.Errorf("call %s: started as %q (%s)", id, p.idOf(res.SpanID.String()), res.Content)
				}
			}
		})
	}
	wg.Wait()
	spans := exp.GetSpans()
	require.Len(t, spans, workers*calls)
	for _, s := range spans {
		require.Equal(t, attrMap(s.Attributes)[semconv.GenAIToolCallIDKey].AsString(), p.idOf(s.SpanContext.SpanID().String()))
	}
}

func (p *onStartIDs) idOf(spanID string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ids[spanID]
}
