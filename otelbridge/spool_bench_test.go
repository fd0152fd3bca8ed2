package otelbridge

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// discardClient is an otlptrace.Client that accepts every upload.
type discardClient struct{ n atomic.Int64 }

func (*discardClient) Start(context.Context) error { return nil }
func (*discardClient) Stop(context.Context) error  { return nil }
func (c *discardClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	c.n.Add(int64(len(rs)))
	return nil
}

// batchBaseline is the BatchProcessor's OnEnd cost per span, in ns, over
// n spans, serially or from parallel goroutines.
func batchBaseline(b *testing.B, spans []sdktrace.ReadOnlySpan, parallel bool) float64 {
	bp, err := NewBatchProcessor(discard{}, BatchConfig{QueueSize: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = bp.Shutdown(context.Background()) }()
	const n = 200_000
	start := time.Now()
	if parallel {
		done := make(chan struct{})
		for g := range 8 {
			go func() {
				for i := range n / 8 {
					bp.OnEnd(spans[(i+g)%len(spans)])
				}
				done <- struct{}{}
			}()
		}
		for range 8 {
			<-done
		}
	} else {
		for i := range n {
			bp.OnEnd(spans[i%len(spans)])
		}
	}
	return float64(time.Since(start).Nanoseconds()) / n
}

// BenchmarkSpoolOnEnd measures the spool's cost per span at OnEnd (encode
// to OTLP, append to the log, fsync under SyncAlways; the drainer uploads
// to a discarding client meanwhile), and reports it as a ratio to the
// BatchProcessor's OnEnd (x-batch), measured in the same run.
func BenchmarkSpoolOnEnd(b *testing.B) {
	// The spans carry the resource Setup makes (service, SDK, host,
	// process: 9 attributes), as in a real agent.
	res, err := newResource(context.Background(), Config{ServiceName: "bench"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var spans []sdktrace.ReadOnlySpan
	for _, sp := range benchSpans() {
		stub := tracetest.SpanStubFromReadOnlySpan(sp)
		stub.Resource = res
		spans = append(spans, stub.Snapshot())
	}
	for _, tt := range []struct {
		name     string
		sync     spool.SyncPolicy
		parallel bool
	}{
		{"interval", spool.SyncInterval, false},
		{"always", spool.SyncAlways, false},
		{"interval-parallel", spool.SyncInterval, true},
		{"always-parallel", spool.SyncAlways, true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			base := batchBaseline(b, spans, tt.parallel)
			sp, err := spool.Open(context.Background(), spool.Config{Dir: b.TempDir(), Sync: tt.sync, MaxBytes: 1 << 30}, &discardClient{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			if tt.parallel {
				b.SetParallelism(4) // 4 x GOMAXPROCS goroutines
				var g atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					i := int(g.Add(1))
					for pb.Next() {
						sp.OnEnd(spans[i%len(spans)])
						i++
					}
				})
			} else {
				i := 0
				for b.Loop() {
					sp.OnEnd(spans[i%len(spans)])
					i++
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x-batch")
			b.ReportMetric(base, "batch-ns/span")
			_ = sp.Shutdown(context.Background())
		})
	}
}
