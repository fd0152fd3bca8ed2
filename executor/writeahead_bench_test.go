package executor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// nullClient is an OTLP client that acknowledges every upload: the spool's
// drainer costs what it costs, the network nothing.
type nullClient struct{}

func (nullClient) Start(context.Context) error                                  { return nil }
func (nullClient) Stop(context.Context) error                                   { return nil }
func (nullClient) UploadTraces(context.Context, []*tracepb.ResourceSpans) error { return nil }

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
// gate, a recording span): Off is the non-strict path (spans to a
// discarding syncer); Memory commits to an in-memory log with a context
// that cannot end (Commit runs inline); MemoryCancelable with a context
// that can (Commit runs on its own goroutine, bounded by the context).
// SpoolOff, Spool and SpoolSyncAlways run on a real spool
// (otelbridge/spool in a temporary directory, draining to a client that
// acknowledges everything): SpoolOff exports through it without strict
// mode, Spool commits each call's decision (fsync per commit, grouped)
// with the default sync interval, SpoolSyncAlways also fsyncs every final
// record. The Parallel cases make calls on 16 goroutines per CPU (concurrent
// commits share an fsync). The cost ratio is a strict case's ns/op over its baseline (Off
// for Memory, SpoolOff for the spool cases).
func BenchmarkWriteAhead(b *testing.B) {
	allow := gate.Named("a", gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		return gate.Decision{Action: gate.ActionAllow}, nil
	}))
	live, cancel := context.WithCancel(context.Background())
	defer cancel()
	type tc struct {
		name   string
		log    bool // strict: commit to the memory log or the spool
		spool  bool
		always bool
		ctx    context.Context
		par    bool // 16 goroutines per CPU (commits grouped into one fsync)
	}
	cases := []tc{
		{"Off", false, false, false, context.Background(), false},
		{"Memory", true, false, false, context.Background(), false},
		{"MemoryCancelable", true, false, false, live, false},
		{"SpoolOff", false, true, false, context.Background(), false},
		{"Spool", true, true, false, context.Background(), false},
		{"SpoolSyncAlways", true, true, true, context.Background(), false},
		{"SpoolOffParallel", false, true, false, context.Background(), true},
		{"SpoolParallel", true, true, false, context.Background(), true},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			reg, err := executor.NewRegistry(benchTool())
			require.NoError(b, err)
			tp := benchProvider()
			var log executor.WriteAheadLog = &copyLog{}
			if tc.spool {
				cfg := spool.Config{Dir: b.TempDir(), MaxBytes: 1 << 30}
				if tc.always {
					cfg.Sync = spool.SyncAlways
				}
				sp, err := spool.Open(context.Background(), cfg, nullClient{})
				require.NoError(b, err)
				b.Cleanup(func() { _ = sp.Shutdown(context.Background()) })
				tp = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(sp))
				log = sp
			}
			opts := []executor.Option{executor.WithTracerProvider(tp), executor.WithGates(allow)}
			if tc.log {
				opts = append(opts, executor.WithWriteAhead(log))
			}
			ex, err := executor.New(reg, opts...)
			require.NoError(b, err)
			ag, err := ex.Agent("bench", executor.AgentAllow("bash"))
			require.NoError(b, err)
			run := ag.Run("r")
			c := executor.ToolCall{ID: "c1", Name: "bash", Input: benchInput}
			b.ReportAllocs()
			if tc.par {
				b.SetParallelism(16)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if res := run.Execute(tc.ctx, c); res.IsError {
							b.Error(res.Content)
							return
						}
					}
				})
				return
			}
			for b.Loop() {
				if res := run.Execute(tc.ctx, c); res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}
