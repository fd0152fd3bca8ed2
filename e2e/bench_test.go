package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// benchWorkload runs about n gated calls on `workers` goroutines, in agent
// runs of 50 calls, and returns what the executor decided.
func benchWorkload(b *testing.B, tp trace.TracerProvider, service string, n, workers int, opts ...executor.Option) *outcome {
	b.Helper()
	ex := newExecutor(b, tp, 0, opts...)
	cmds := commands(b)
	o := newOutcome()
	const per = 50
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r := int(next.Add(1) - 1)
				if r*per >= n {
					return
				}
				off := (r * per) % (len(cmds) - per)
				runAgent(context.Background(), b, tp, ex, o, fmt.Sprintf("agent-%d", r%4), fmt.Sprintf("%s-run%d", service, r), cmds[off:off+per])
			}
		}()
	}
	wg.Wait()
	return o
}

// BenchmarkEndToEnd measures decisions per second from the executor through
// otelbridge (OTLP/gRPC), the collector (both pipelines: audit → ClickHouse,
// tail sampling → Jaeger) into gate_decisions, with zero loss: the clock
// stops when ClickHouse holds every decision. It reports decisions/s and the
// collector's CPU time per 1,000 decisions (/proc/<pid>/stat). One op is
// one gated call. Run with -benchtime=20000x (or more).
func BenchmarkEndToEnd(b *testing.B) {
	s := startStack(b)
	service := fmt.Sprintf("e2e-bench-%d", b.N)
	p := s.providerCfg(b, otelbridge.Config{ServiceName: service, Batch: otelbridge.BatchConfig{QueueSize: 1 << 20, BatchSize: 1024}})
	cpu0, err := s.collector.CPUTime()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	o := benchWorkload(b, p, service, b.N, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := p.ForceFlush(ctx); err != nil {
		b.Fatal(err)
	}
	want := len(o.ids(gate.ActionAllow, gate.ActionDeny))
	got := s.waitDecisions(ctx, b, service, want, 5*time.Minute)
	elapsed := time.Since(start)
	b.StopTimer()
	if got != want {
		b.Fatalf("lost decisions: ClickHouse has %d of %d (SDK lost %d)", got, want, p.Stats().Lost())
	}
	cpu1, err := s.collector.CPUTime()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(want)/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(float64((cpu1-cpu0).Milliseconds())/(float64(want)/1000), "collector-cpu-ms/1k-decisions")
}

// BenchmarkEndToEndSpool is BenchmarkEndToEnd with the exporter's path
// as the sub-benchmark says: Off (the SDK's batch processor), On (the
// durable spool, default sync interval) and Strict (the spool, and every
// call's decision committed before its tool runs: WithWriteAhead), on 4
// workers, and Strict32 on 32 (concurrent commits share an fsync). Zero
// loss; it reports decisions/s. Run with -benchtime=20000x (or more).
func BenchmarkEndToEndSpool(b *testing.B) {
	s := startStack(b)
	for _, mode := range []string{"Off", "On", "Strict", "Strict32"} {
		b.Run(mode, func(b *testing.B) {
			workers := 4
			if mode == "Strict32" {
				workers = 32 // concurrent commits share an fsync
			}
			service := fmt.Sprintf("e2e-bench-spool-%s-%d-%d", mode, b.N, time.Now().UnixNano()) // unique per run: -count > 1 reuses b.N
			cfg := otelbridge.Config{ServiceName: service, Batch: otelbridge.BatchConfig{QueueSize: 1 << 20, BatchSize: 1024}}
			if mode != "Off" {
				cfg.Spool = spool.Config{Dir: b.TempDir(), MaxBytes: 1 << 30}
			}
			p := s.providerCfg(b, cfg)
			var opts []executor.Option
			if strings.HasPrefix(mode, "Strict") {
				opts = append(opts, executor.WithWriteAhead(p))
			}
			b.ResetTimer()
			start := time.Now()
			o := benchWorkload(b, p, service, b.N, workers, opts...)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := p.ForceFlush(ctx); err != nil {
				b.Fatal(err)
			}
			want := len(o.ids(gate.ActionAllow, gate.ActionDeny))
			got := s.waitDecisions(ctx, b, service, want, 5*time.Minute)
			elapsed := time.Since(start)
			b.StopTimer()
			if got != want {
				b.Fatalf("lost decisions: ClickHouse has %d of %d (lost %d)", got, want, p.Stats().Lost())
			}
			b.ReportMetric(float64(want)/elapsed.Seconds(), "decisions/s")
		})
	}
}

// BenchmarkExecutorOnly is the same workload with spans recorded but not
// exported (the SDK with no exporter): the baseline for BenchmarkEndToEnd's
// ratio.
func BenchmarkExecutorOnly(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	b.ResetTimer()
	start := time.Now()
	o := benchWorkload(b, tp, "e2e-bench-baseline", b.N, 4)
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(len(o.calls))/elapsed.Seconds(), "decisions/s")
}
