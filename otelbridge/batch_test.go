package otelbridge

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/gate"
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

func stub(i int, attrs ...attribute.KeyValue) sdktrace.ReadOnlySpan {
	var tid trace.TraceID
	tid[0], tid[15] = 1, byte(i)
	sid := trace.SpanID{1, byte(i >> 8), byte(i)}
	return tracetest.SpanStub{
		Name:        "s",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
		Attributes:  attrs,
	}.Snapshot()
}

// tierAttrs are the attributes of a span of each priority tier, as the
// executor records them.
var tierAttrs = [numPriorities][]attribute.KeyValue{
	PriorityOther: {gate.AttrGated.Bool(true), gate.AttrAction.String("allow"), gate.AttrStage.String("gate")},
	PriorityRefusal: {gate.AttrGated.Bool(false), gate.AttrAction.String("deny"), gate.AttrStage.String("registry"),
		gate.AttrSamplingPriority.Int(1)},
	PriorityDecision: {gate.AttrGated.Bool(true), gate.AttrAction.String("deny"), gate.AttrStage.String("gate"),
		gate.AttrSamplingPriority.Int(1)},
}

func TestBatchProcessorCountsQueueDrops(t *testing.T) {
	exp := newGatedExporter()
	p, err := NewBatchProcessor(exp, BatchConfig{QueueSize: 5, BatchSize: 1})
	require.NoError(t, err)
	p.OnEnd(stub(0))
	<-exp.entered // span 0 is in the exporter, which blocks
	for i := 1; i <= 10; i++ {
		p.OnEnd(stub(i, tierAttrs[PriorityDecision]...)) // denials may fill the whole queue
	}
	st := p.Stats()
	assert.Equal(t, int64(6), st.Accepted, "one in export, five queued")
	assert.Equal(t, int64(5), st.QueueDropped)
	assert.Equal(t, int64(5), st.DroppedDecisions)
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
	p, err := NewBatchProcessor(exp, BatchConfig{QueueSize: 100, BatchSize: 10})
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
	p, err := NewBatchProcessor(exp, BatchConfig{})
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
	p, err := NewBatchProcessor(exp, BatchConfig{QueueSize: 16, BatchSize: 4})
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
	_, err := NewBatchProcessor(nil, BatchConfig{})
	require.Error(t, err)
	_, err = NewBatchProcessor(newGatedExporter(), BatchConfig{QueueSize: -1})
	require.Error(t, err)
}

func TestBatchProcessorReportsExportErrors(t *testing.T) {
	exp := newGatedExporter()
	exp.fail = errors.New("collector unreachable")
	close(exp.release)
	var got []error
	var mu sync.Mutex
	p, err := NewBatchProcessor(exp, BatchConfig{ErrorHandler: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, err)
	}})
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

// askAttrs are the attributes of a gated ask's decision with outcome o.
func askAttrs(action string, o gate.ApprovalOutcome) []attribute.KeyValue {
	return []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String(action), gate.AttrStage.String("gate"),
		gate.AttrApproval.String(string(o)), gate.AttrApprover.String("human")}
}

func TestSpanPriorityOf(t *testing.T) {
	tests := []struct {
		name  string
		attrs []attribute.KeyValue
		want  SpanPriority
	}{
		{"gated deny", tierAttrs[PriorityDecision], PriorityDecision},
		{"deny of a producer without stages", []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String("deny")}, PriorityDecision},
		{"unknown tool", tierAttrs[PriorityRefusal], PriorityRefusal},
		{"aborted run", []attribute.KeyValue{gate.AttrAction.String("deny"), gate.AttrStage.String("run")}, PriorityRefusal},
		{"cancelled", []attribute.KeyValue{gate.AttrAction.String("deny"), gate.AttrStage.String("cancelled")}, PriorityRefusal},
		{"allow", tierAttrs[PriorityOther], PriorityOther},
		{"agent span", []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent}, PriorityDecision},
		{"no decision", nil, PriorityOther},
		{"priority without a decision", []attribute.KeyValue{gate.AttrSamplingPriority.Int(1)}, PriorityOther},
		// The second red team's F2: an approver's answer or a rewrite is
		// what an auditor needs most, allowed or not.
		{"ask approved", askAttrs("allow", gate.ApprovalApproved), PriorityDecision},
		{"ask declined", askAttrs("deny", gate.ApprovalDeclined), PriorityDecision},
		{"ask timed out", askAttrs("deny", gate.ApprovalTimeout), PriorityDecision},
		{"ask answered invalid", askAttrs("deny", gate.ApprovalInvalid), PriorityDecision},
		{"rewritten and allowed", []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String("allow"), gate.AttrStage.String("gate"),
			gate.AttrRewritten.Bool(true), gate.AttrRewrittenBy.String("sanitize")}, PriorityDecision},
		{"rewritten false", []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String("allow"), gate.AttrRewritten.Bool(false)}, PriorityOther},
		{"empty approval", append(askAttrs("allow", ""), gate.AttrStage.String("gate")), PriorityOther},
		{"approval without a decision", []attribute.KeyValue{gate.AttrApproval.String("approved")}, PriorityOther},
		{"budget abort by a gate", []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String("deny"), gate.AttrStage.String("gate"),
			gate.AttrError.String("refusal_budget")}, PriorityDecision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, PriorityOf(stub(1, tt.attrs...)))
		})
	}
}

// TestBatchProcessorDropsLowerPrioritiesFirst: a blocked exporter, a queue
// of 32 (R = 2), then a flood of refusals and allows before denials: the
// refusals stop at 30 queued, the allows get none, and 2 of the denials
// still get in.
func TestBatchProcessorDropsLowerPrioritiesFirst(t *testing.T) {
	exp := newGatedExporter()
	p, err := NewBatchProcessor(exp, BatchConfig{QueueSize: 32, BatchSize: 1})
	require.NoError(t, err)
	p.OnEnd(stub(0))
	<-exp.entered
	i := 1
	push := func(n int, tier SpanPriority) {
		for range n {
			p.OnEnd(stub(i, tierAttrs[tier]...))
			i++
		}
	}
	push(100, PriorityRefusal)
	push(100, PriorityOther)
	push(10, PriorityDecision)
	st := p.Stats()
	assert.Equal(t, int64(70), st.DroppedRefusals)
	assert.Equal(t, int64(100), st.DroppedOther)
	assert.Equal(t, int64(8), st.DroppedDecisions)
	assert.Equal(t, st.DroppedRefusals+st.DroppedOther+st.DroppedDecisions, st.QueueDropped)
	assert.Equal(t, int64(32), st.Pending)
	close(exp.release)
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, int64(33), p.Stats().Exported)
}

// TestBatchProcessorPriorityProperty: for any sequence of spans of any
// tiers against a blocked exporter and any queue size, every span is
// accepted or dropped and counted in its tier; other spans never hold more
// than size-2R slots nor refusals and others together more than size-R;
// and a denial is dropped only when the queue is full and holds at least R
// denials.
func TestBatchProcessorPriorityProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		size := rapid.IntRange(1, 100).Draw(rt, "size")
		tiers := rapid.SliceOfN(rapid.IntRange(0, int(numPriorities)-1), 0, 200).Draw(rt, "tiers")
		exp := newGatedExporter()
		p, err := NewBatchProcessor(exp, BatchConfig{QueueSize: size, BatchSize: 1})
		require.NoError(rt, err)
		defer func() { close(exp.release); _ = p.Shutdown(context.Background()) }()
		p.OnEnd(stub(0))
		<-exp.entered
		r := int64(size / reserveDivisor)
		var acc, drop [numPriorities]int64
		for i, tier := range tiers {
			before := p.Stats()
			p.OnEnd(stub(i+1, tierAttrs[tier]...))
			after := p.Stats()
			if after.Accepted > before.Accepted {
				acc[tier]++
			} else {
				drop[tier]++
				if SpanPriority(tier) == PriorityDecision && (before.Pending != int64(size) || acc[PriorityDecision] < r) {
					rt.Fatalf("a denial dropped with %d queued of %d, %d denials", before.Pending, size, acc[PriorityDecision])
				}
			}
		}
		st := p.Stats()
		if st.DroppedDecisions != drop[PriorityDecision] || st.DroppedRefusals != drop[PriorityRefusal] || st.DroppedOther != drop[PriorityOther] {
			rt.Fatalf("drops by tier %+v, counted %v", st, drop)
		}
		if acc[PriorityOther] > int64(size)-2*r || acc[PriorityOther]+acc[PriorityRefusal] > int64(size)-r {
			rt.Fatalf("accepted by tier %v over the bounds of size %d", acc, size)
		}
		if st.Accepted != 1+acc[0]+acc[1]+acc[2] || st.QueueDropped != drop[0]+drop[1]+drop[2] {
			rt.Fatalf("stats %+v, accepted %v dropped %v", st, acc, drop)
		}
	})
}
