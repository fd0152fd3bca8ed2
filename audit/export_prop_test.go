package audit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

var errStop = errors.New("stop here")

// TestExportResumes: for random filters and random stopping points, an
// export stopped after k decisions and resumed from the last decision's
// Cursor (any number of times) yields exactly what paging with Decisions
// yields: the same decisions in the same order, none lost, none twice;
// also over retried (duplicated) spans in unmerged parts, and with
// windows sized from the hourly roll-up while decisions it does not count
// (a late upload older than every hour in it, the newest hours) exist.
func TestExportResumes(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	w := env.Writer
	require.NoError(t, w.Exec(ctx, "SYSTEM STOP MERGES otel.gate_decisions"))
	const n = 4000
	end := time.Now()
	require.NoError(t, audittest.LoadShaped(ctx, w, env.Database, n, end, audittest.ShapedOptions{Batch: 700}))
	// A retried export: spans 1000-1999 arrive again.
	require.NoError(t, audittest.LoadShaped(ctx, w, env.Database, 1000, end, audittest.ShapedOptions{Batch: 300, Offset: 1000, Total: n}))
	// The hourly roll-up sizes the export's windows once it has rows; then
	// decisions arrive that it does not count: a late upload 40 to 70 days
	// old (older than every hour counted) and one in the newest hours.
	require.NoError(t, audit.Roll(ctx, w, audit.WithRollupDelay(0)))
	require.NoError(t, audittest.LoadShaped(ctx, w, env.Database, 300, end.Add(-40*24*time.Hour), audittest.ShapedOptions{Batch: 300, Offset: 5000, Total: 5300}))
	require.NoError(t, audittest.LoadShaped(ctx, w, env.Database, 200, end.Add(29*24*time.Hour), audittest.ShapedOptions{Batch: 200, Offset: 6000, Total: 6200}))

	// Stores whose exports sort few decisions per query: many windows per
	// export, and windows of one hour.
	stores := []*audit.Store{env.Store}
	for _, rows := range []int{40, 600} {
		st, err := audit.Open(ctx, env.ReaderDSN, audit.WithExportWindow(rows))
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
	}

	// Bounded in time: an export is a query per day of its range; after
	// the budget the remaining draws of rapid's 100 return at once.
	start := time.Now()
	const budget = 25 * time.Second
	checked := 0
	rapid.Check(t, func(rt *rapid.T) {
		if time.Since(start) > budget {
			return
		}
		checked++
		var f audit.Filter
		if days := rapid.IntRange(0, 31).Draw(rt, "days (0: all)"); days > 0 {
			f.Since = end.Add(-time.Duration(days) * 24 * time.Hour)
		}
		f.Action = rapid.SampledFrom([]string{"", "allow", "deny"}).Draw(rt, "action")
		if rapid.Bool().Draw(rt, "one agent") {
			f.Agent = "agent-07"
		}
		var want []string
		pg := audit.Page{Limit: rapid.IntRange(50, 2000).Draw(rt, "page")}
		for {
			res, err := env.Store.Decisions(ctx, f, pg)
			require.NoError(rt, err)
			for _, d := range res.Decisions {
				want = append(want, d.SpanID)
			}
			if res.Next == nil {
				break
			}
			pg.After = res.Next
		}

		store := rapid.SampledFrom(stores).Draw(rt, "store")
		got := resumedExport(rt, store, f, 1, n, func(d audit.Decision) string { return d.SpanID })
		require.Equal(rt, want, got)
		uniq := map[string]bool{}
		for _, s := range got {
			require.False(rt, uniq[s], "span %s exported twice", s)
			uniq[s] = true
		}
	})
	require.Greater(t, checked, 5, "too few exports checked in the budget")
	t.Logf("%d exports checked", checked)
}

// resumedExport exports f from st, stopping after a drawn number (lo to
// hi) of decisions each time and resuming from the last one's Cursor until
// the export ends; it returns key of every decision handed over, in order.
func resumedExport(rt *rapid.T, st *audit.Store, f audit.Filter, lo, hi int, key func(audit.Decision) string) []string {
	var got []string
	var after *audit.Cursor
	for stops := 0; ; stops++ {
		k := rapid.IntRange(lo, hi).Draw(rt, "stop after")
		seen := 0
		err := st.Export(context.Background(), f, after, func(d audit.Decision) error {
			got = append(got, key(d))
			c := d.Cursor()
			after = &c
			if seen++; seen == k {
				return errStop
			}
			return nil
		})
		if err == nil {
			return got
		}
		require.ErrorIs(rt, err, errStop)
		require.Less(rt, stops, 100_000, "the export ends")
	}
}
