package audit_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// benchDecisions is the table size the query goals are stated for.
const benchDecisions = 1_000_000

// BenchmarkQueries measures the query API over 1,000,000 decisions, all
// within the last 24 hours (the worst case for --since 24h), written
// through otel_traces and the materialized view, as the exporter's would be.
// Each sub-benchmark reports p50-ms and p95-ms (goal: p50 < 100 ms).
func BenchmarkQueries(b *testing.B) {
	env := audittest.Start(b)
	ctx := context.Background()
	now := time.Now()
	start := time.Now()
	require.NoError(b, audittest.LoadSynthetic(ctx, env.Writer, env.Database, benchDecisions, now, 24*time.Hour))
	b.Logf("loaded %d decisions through the view in %v", benchDecisions, time.Since(start))
	var n uint64
	require.NoError(b, env.Writer.QueryRow(ctx, "SELECT count() FROM otel.gate_decisions").Scan(&n))
	require.EqualValues(b, benchDecisions, n)
	since := now.Add(-24 * time.Hour)
	cases := []struct {
		name string
		run  func() error
	}{
		{"decisions-since-24h", func() error {
			_, err := env.Store.Decisions(ctx, audit.Filter{Since: since}, audit.Page{})
			return err
		}},
		{"decisions-deny-tool", func() error {
			_, err := env.Store.Decisions(ctx, audit.Filter{Since: since, Action: "deny", Tool: "bash"}, audit.Page{})
			return err
		}},
		{"decisions-reason-substring", func() error {
			_, err := env.Store.Decisions(ctx, audit.Filter{Since: since, Reason: "egress"}, audit.Page{})
			return err
		}},
		{"trace", func() error {
			// LoadSynthetic's traces are lower(hex(MD5(toString(n / 8)))).
			sum := md5.Sum([]byte("12345"))
			tree, err := env.Store.Trace(ctx, hex.EncodeToString(sum[:]))
			if err == nil && tree.Spans != 8 {
				err = fmt.Errorf("trace has %d spans, want 8", tree.Spans)
			}
			return err
		}},
		{"stats-by-action", func() error {
			_, err := env.Store.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{Since: since}, By: []audit.Dimension{audit.ByAction}})
			return err
		}},
		{"stats-by-gate", func() error {
			_, err := env.Store.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{Since: since}, By: []audit.Dimension{audit.ByGate}})
			return err
		}},
		{"stats-by-tool-action-every-1h", func() error {
			_, err := env.Store.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{Since: since}, By: []audit.Dimension{audit.ByTool, audit.ByAction}, Every: time.Hour})
			return err
		}},
	}
	// First as loaded (ten unmerged parts, duplicates resolved at query
	// time), then after a merge, the steady state of older data.
	for _, state := range []string{"fresh", "merged"} {
		if state == "merged" {
			require.NoError(b, env.Writer.Exec(ctx, "OPTIMIZE TABLE otel.gate_decisions FINAL"))
		}
		for _, c := range cases {
			b.Run(state+"/"+c.name, func(b *testing.B) {
				var ds []time.Duration
				for b.Loop() {
					t0 := time.Now()
					if err := c.run(); err != nil {
						b.Fatal(err)
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
