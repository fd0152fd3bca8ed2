package main

import (
	"context"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/audittest"
)

// BenchmarkCommands measures whole auditq invocations (flag parsing,
// connect and ping, query, rendering) over 1,000,000 decisions within the
// last 24 hours, reporting p50-ms and p95-ms. Goal: p50 < 100 ms.
func BenchmarkCommands(b *testing.B) {
	env := audittest.Start(b)
	ctx := context.Background()
	require.NoError(b, audittest.LoadSynthetic(ctx, env.Writer, env.Database, 1_000_000, time.Now(), 24*time.Hour))
	for _, state := range []string{"fresh", "merged"} {
		if state == "merged" {
			require.NoError(b, env.Writer.Exec(ctx, "OPTIMIZE TABLE otel.gate_decisions FINAL"))
		}
		for _, args := range [][]string{
			{"decisions", "--since", "24h"},
			{"decisions", "--since", "24h", "--format", "json"},
			{"stats"},
			{"stats", "--by", "tool,action", "--every", "1h"},
		} {
			b.Run(state+"/"+strings.Join(args, "_"), func(b *testing.B) {
				full := append(append([]string{}, args...), "--dsn", env.ReaderDSN)
				var ds []time.Duration
				for b.Loop() {
					t0 := time.Now()
					var stderr strings.Builder
					if code := run(ctx, full, stdio{in: strings.NewReader(""), out: io.Discard, err: &stderr}); code != 0 {
						b.Fatalf("exit %d: %s", code, stderr.String())
					}
					ds = append(ds, time.Since(t0))
				}
				sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
				b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(ds[len(ds)*95/100].Microseconds())/1000, "p95-ms")
			})
		}
	}
}
