package executor

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// BenchmarkChainRatio is the chain's cost per call (chainLink: reading
// the stored form from the span's attributes, encoding and hashing it,
// and the link under the run's lock) in units of one bare recording span,
// interleaved with the span so that machine load affects both alike
// (medians). Reported: chain/span, and chain/call-span against a span
// carrying an allowed call's attributes.
func BenchmarkChainRatio(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	tr := tp.Tracer("bench")
	ctx := context.Background()
	reg, err := NewRegistry()
	if err != nil {
		b.Fatal(err)
	}
	ex, err := New(reg, WithTracerProvider(tp))
	if err != nil {
		b.Fatal(err)
	}
	a, err := ex.Agent("bench")
	if err != nil {
		b.Fatal(err)
	}
	r := a.Run("run-1")
	rec := gate.Record{Gated: true, Action: gate.ActionAllow, Source: "a", Duration: 120, Stage: gate.StageGate}
	attrs := rec.Attributes([]attribute.KeyValue{semconv.GenAIToolType("function"), semconv.GenAIAgentName("bench"),
		semconv.GenAIConversationID("run-1"), gate.AttrRunID.String("run-1"), gate.AttrTaskID.String("task-1")}, 0)
	ids := []attribute.KeyValue{semconv.GenAIToolName("bash"), semconv.GenAIToolCallID("call_1")}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: [16]byte{1}, SpanID: [8]byte{2}, TraceFlags: trace.FlagsSampled})
	var samples [3][]time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		_, s := tr.Start(ctx, "execute_tool bash")
		s.End()
		t1 := time.Now()
		_, s = tr.Start(ctx, "execute_tool bash", trace.WithAttributes(ids...))
		s.SetAttributes(attrs...)
		s.End()
		t2 := time.Now()
		_ = r.chainLink(sc, ids, attrs)
		t3 := time.Now()
		for i, d := range [3]time.Duration{t1.Sub(t0), t2.Sub(t1), t3.Sub(t2)} {
			samples[i] = append(samples[i], d)
		}
	}
	med := func(i int) float64 {
		s := samples[i]
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds())
	}
	span, callSpan, chain := med(0), med(1), med(2)
	b.ReportMetric(chain, "chain-ns")
	b.ReportMetric(chain/span, "chain/span")
	b.ReportMetric(chain/callSpan, "chain/call-span")
	b.ReportMetric(0, "ns/op")
}
