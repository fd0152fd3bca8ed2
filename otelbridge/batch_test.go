package otelbridge

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// gatedExporter blocks its first export until released and fails when told.
type gatedExporter struct {
	entered chan struct{} // receives once per export call
	release chan struct{} // closed to let exports finish
	fail    error

	mu    sync.Mutex
	spans int
}

func newGatedExporter() *gatedExporter {
	return &gatedExporter{entered: make(chan struct{}, 1024), release: make(chan struct{})}
}

func (e *gatedExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.entered <- struct{}{}
	select {
	case <-e.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if e.fail != nil {
		return e.fail
	}
	e.mu.Lock()
	e.spans += len(spans)
	e.mu.Unlock()
	return nil
}

func (*gatedExporter) Shutdown(context.Context) error { return nil }

func stub(i int) sdktrace.ReadOnlySpan {
	var tid trace.TraceID
	tid[0], tid[15] = 1, byte(i)
	sid := trace.SpanID{1, byte(i >> 8), byte(i)}
	return tracetest.SpanStub{
		Name:        "s",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
	}.Snapshot()
}

func TestBatchProcessorCountsQueueDrops(t *testing.T) {
	exp := newGatedExporter()
	p, err := NewBatchProcessor(exp, WithQueueSize(5), WithBatchSize(1))
	require.NoError(t, err)
	p.OnEnd(stub(0))
	<-exp.entered // span 0 is in the exporter, which blocks
	for i := 1; i <= 10; i++ {
		p.OnEnd(stub(i))
	}
	st := p.Stats()
	assert.Equal(t, int64(6), st.Accepted, "one in export, five queued")
	assert.Equal(t, int64(5), st.QueueDropped)
	assert.Equal(t, int64(5), st.Pending)
	assert.Equal(t, int64(1), st.InFlight)

	close(exp.release)
	require.NoError(t, p.Shutdown(context.Background()))
	st = p.Stats()
	assert.Equal(t, int64(6), st.Exported)
	assert.Equal(t, 6, exp.spans)
	assert.Zero(t, st.Pending)
	assert.Zero(t, st.InFlight)
	assert.Equal(t, int64(5), st.Lost())

	p.OnEnd(stub(99))
	assert.Equal(t, int64(1), p.Stats().DroppedAfterShutdown)
	assert.Equal(t, int64(6), p.Stats().Lost())
}

func TestBatchProcessorCountsFailedExports(t *testing.T) {
	exp := newGatedExporter()
	exp.fail = errors.New("collector said no")
	close(exp.release)
	p, err := NewBatchProcessor(exp, WithQueueSize(100), WithBatchSize(10))
	require.NoError(t, err)
	for i := range 25 {
		p.OnEnd(stub(i))
	}
	err = p.Shutdown(context.Background())
	require.Error(t, err)
	assert.ErrorIs(t, err, exp.fail, "the exporter's error is wrapped")
	st := p.Stats()
	assert.Equal(t, int64(25), st.Accepted)
	assert.Equal(t, int64(25), st.ExportFailed)
	assert.Zero(t, st.Exported)
	assert.Equal(t, int64(25), st.Lost())
}

func TestBatchProcessorIgnoresUnsampled(t *testing.T) {
	exp := newGatedExporter()
	close(exp.release)
	p, err := NewBatchProcessor(exp)
	require.NoError(t, err)
	p.OnEnd(tracetest.SpanStub{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}})}.Snapshot())
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, BatchStats{QueueCapacity: 2048}, p.Stats())
}

func TestBatchProcessorConcurrentAccounting(t *testing.T) {
	// Many goroutines against a small queue: every span is accepted or
	// dropped, and every accepted span is exported by Shutdown.
	exp := newGatedExporter()
	close(exp.release)
	p, err := NewBatchProcessor(exp, WithQueueSize(16), WithBatchSize(4))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				p.OnEnd(stub(g*500 + i))
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Shutdown(context.Background()))
	st := p.Stats()
	assert.Equal(t, int64(4000), st.Accepted+st.QueueDropped)
	assert.Equal(t, st.Accepted, st.Exported)
	assert.Equal(t, int(st.Exported), exp.spans)
}

func TestNewBatchProcessorErrors(t *testing.T) {
	_, err := NewBatchProcessor(nil)
	require.Error(t, err)
	_, err = NewBatchProcessor(newGatedExporter(), WithQueueSize(-1))
	require.Error(t, err)
}

func TestBatchProcessorReportsExportErrors(t *testing.T) {
	exp := newGatedExporter()
	exp.fail = errors.New("collector unreachable")
	close(exp.release)
	var got []error
	var mu sync.Mutex
	p, err := NewBatchProcessor(exp, WithExportErrorHandler(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, err)
	}))
	require.NoError(t, err)
	p.OnEnd(stub(1))
	p.OnEnd(stub(2))
	_ = p.ForceFlush(context.Background())
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, got)
	assert.Contains(t, got[0].Error(), "export of 2 spans failed")
	assert.Contains(t, got[0].Error(), "collector unreachable")
	assert.Equal(t, int64(2), p.Stats().ExportFailed)
}
