package otelbridge

import (
	"context"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/otelbridge/sampling"
)

type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// benchSpans is one agent run per 64 traces: chat, three allowed calls, one
// denied call, then the agent span (children first, as spans end).
func benchSpans() []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for r := range 64 {
		tid := trace.TraceID{byte(r), 1, 2, 3, 4, 5, 6, 7, 8, byte(r * 37), 10, 11, 12, 13, 14, byte(r)}
		agentID := trace.SpanID{byte(r), 0xa}
		sc := func(id trace.SpanID) trace.SpanContext {
			return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: id, TraceFlags: trace.FlagsSampled})
		}
		child := func(i byte, name string, attrs ...attribute.KeyValue) sdktrace.ReadOnlySpan {
			return tracetest.SpanStub{Name: name, SpanContext: sc(trace.SpanID{byte(r), 0xb, i}), Parent: sc(agentID),
				Attributes: attrs}.Snapshot()
		}
		out = append(out,
			child(1, "chat m", semconv.GenAIOperationNameChat),
			child(2, "execute_tool a", toolAttrs("a", allowed...)...),
			child(3, "execute_tool b", toolAttrs("b", allowed...)...),
			child(4, "execute_tool c", toolAttrs("c", allowed...)...),
			child(5, "execute_tool d", toolAttrs("d", denied...)...),
			tracetest.SpanStub{Name: "invoke_agent x", SpanContext: sc(agentID), Attributes: agentAttrs("x")}.Snapshot(),
		)
	}
	return out
}

type nop struct{}

func (nop) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (nop) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (nop) Shutdown(context.Context) error                  { return nil }
func (nop) ForceFlush(context.Context) error                { return nil }

// countingDiscard counts exported spans.
type countingDiscard struct{ n atomic.Int64 }

func (c *countingDiscard) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	c.n.Add(int64(len(s)))
	return nil
}
func (*countingDiscard) Shutdown(context.Context) error { return nil }

// BenchmarkSamplingDecision measures the sampling processor's own cost per
// span (the decision and the ancestor marks) in front of a processor that
// does nothing; "none" is the bare call.
func BenchmarkSamplingDecision(b *testing.B) {
	spans := benchSpans()
	for _, mode := range []string{"none", "all", "decisions", "deny-only", "ratio:0.1"} {
		b.Run(mode, func(b *testing.B) {
			var p sdktrace.SpanProcessor = nop{}
			if mode != "none" {
				sp, err := sampling.NewProcessor(nop{}, sampling.Config{Setting: sampling.MustParse(mode)})
				if err != nil {
					b.Fatal(err)
				}
				p = sp
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p.OnEnd(spans[i%len(spans)])
				i++
			}
		})
	}
}

// BenchmarkBatchOnEnd compares the SDK's batch processor with our counting
// one (same queue and batch size, an exporter that discards), flushing every
// 1,024 spans so that the queue never fills: "exported/op" is 1 and the time
// is the accepted path plus its share of the export.
func BenchmarkBatchOnEnd(b *testing.B) {
	spans := benchSpans()
	for _, name := range []string{"sdk", "counting"} {
		b.Run(name, func(b *testing.B) {
			exp := &countingDiscard{}
			var p sdktrace.SpanProcessor
			if name == "sdk" {
				p = sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithMaxQueueSize(2048))
			} else {
				bp, err := NewBatchProcessor(exp, BatchConfig{QueueSize: 2048})
				if err != nil {
					b.Fatal(err)
				}
				p = bp
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p.OnEnd(spans[i%len(spans)])
				i++
				if i%1024 == 0 {
					_ = p.ForceFlush(context.Background())
				}
			}
			b.StopTimer()
			_ = p.Shutdown(context.Background())
			b.ReportMetric(float64(exp.n.Load())/float64(i), "exported/op")
		})
	}
}

// BenchmarkSpanLifecycle measures a whole span (start, attributes, end)
// through a provider: the SDK's batch processor vs Setup's pipeline.
func BenchmarkSpanLifecycle(b *testing.B) {
	run := func(b *testing.B, tp trace.TracerProvider, shutdown func(context.Context) error) {
		tr := tp.Tracer("bench")
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			attrs := allowed
			if i%5 == 0 {
				attrs = denied
			}
			_, s := tr.Start(ctx, "execute_tool bash", trace.WithAttributes(toolAttrs("bash", attrs...)...))
			s.End()
			i++
		}
		b.StopTimer()
		_ = shutdown(ctx)
	}
	b.Run("sdk-batch", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}, sdktrace.WithMaxQueueSize(1<<16)))
		run(b, tp, tp.Shutdown)
	})
	for _, mode := range []string{"all", "decisions", "deny-only"} {
		b.Run("setup-"+mode, func(b *testing.B) {
			p, err := Setup(context.Background(), Config{Batch: BatchConfig{QueueSize: 1 << 16}, Sampling: sampling.Config{Setting: sampling.MustParse(mode)}, Exporter: discard{}})
			if err != nil {
				b.Fatal(err)
			}
			run(b, p, p.Shutdown)
		})
	}
}
