package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// TestExportKeyBoundsInEveryZone: export windows bound the primary key's
// toStartOfHour(Timestamp) as well as Timestamp (keybound.go). Over
// decisions at the edges of what that key can hold (across 1970-01-03
// and 2105-12-01, up to 2106-02-06, after 2106) and in the present, read
// by sessions in zones whose hours do not start on UTC's (Asia/Kolkata
// +5:30, Australia/Lord_Howe with its half-hour daylight saving,
// America/St_Johns −3:30) and in UTC, an export stopped and resumed at
// random points with windows of a few decisions (many cut inside an
// hour) yields exactly what one plain query without the key's bounds
// yields: the same decisions in the same order.
func TestExportKeyBoundsInEveryZone(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	w := env.Writer
	now := time.Now()
	// Each load spreads its decisions over the 30 days before its end.
	// (Not before 1970 or after 2149: time-bounded reads of gate_decisions
	// lose those already, keyed or not; the day partitions cannot hold
	// them.)
	loads := []time.Time{
		time.Date(1970, 1, 31, 0, 0, 0, 0, time.UTC),  // from 1970-01-01 00:00: across keyFloor
		time.Date(2105, 12, 15, 0, 0, 0, 0, time.UTC), // across keyCeil
		time.Date(2106, 2, 6, 0, 0, 0, 0, time.UTC),   // to the end of a DateTime
		time.Date(2149, 5, 1, 0, 0, 0, 0, time.UTC),   // after what the key can hold
		now,
	}
	for i, end := range loads {
		require.NoError(t, audittest.LoadShaped(ctx, w, env.Database, 300, end, audittest.ShapedOptions{Batch: 150, Offset: 1000 * i, Total: 300 + 1000*i}))
	}
	require.NoError(t, audit.Roll(ctx, w, audit.WithRollupDelay(0)))
	var want []string
	rows, err := w.Query(ctx, "SELECT SpanId FROM otel.gate_decisions FINAL ORDER BY Timestamp DESC, SpanId DESC, Action DESC, Agent DESC, ToolName DESC")
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		want = append(want, s)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.Len(t, want, 300*len(loads))

	stores := zoneStores(t, env, []string{"UTC", "Asia/Kolkata", "Australia/Lord_Howe", "America/St_Johns"}, func(i int) int { return rapid.IntRange(8, 200).Example(i) })
	for _, st := range stores {
		require.Equal(t, want, exportAll(t, st))
	}
	start := time.Now()
	checked := 0
	rapid.Check(t, func(rt *rapid.T) {
		if time.Since(start) > 20*time.Second {
			return
		}
		checked++
		st := rapid.SampledFrom(stores).Draw(rt, "store")
		got := resumedExport(rt, st, audit.Filter{}, 1, 2000, func(d audit.Decision) string { return d.SpanID })
		require.Equal(rt, want, got)
	})
	require.Greater(t, checked, 3, "too few exports checked in the budget")
}

// TestExportOnWindowBounds (from the red team of the key's bounds):
// decisions exactly on hour starts, so on every window's bounds, one of
// them on keyFloor and one on keyCeil, in three loads that reuse the same
// span IDs at other times; exported with windows of 4 to 28 decisions
// (every bound an hour start, so a decision's Timestamp) by sessions in
// four zones, whole and resumed at random
// points, they are exactly what one plain query yields.
func TestExportOnWindowBounds(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	w := env.Writer
	keyFloor := time.Date(1970, 1, 3, 0, 0, 0, 0, time.UTC) // audit's keyFloor and keyCeil
	keyCeil := time.Date(2105, 12, 1, 0, 0, 0, 0, time.UTC)
	// Total 720 over 30 days: one decision per hour, each exactly on an hour start.
	for _, end := range []time.Time{keyFloor.Add(28 * 24 * time.Hour), keyCeil.Add(5 * 24 * time.Hour), time.Now().Truncate(time.Hour)} {
		require.NoError(t, audittest.LoadShaped(ctx, w, env.Database, 720, end, audittest.ShapedOptions{Batch: 100, Total: 720}))
	}
	require.NoError(t, audit.Roll(ctx, w, audit.WithRollupDelay(0)))
	var want []string
	rows, err := w.Query(ctx, "SELECT SpanId, Timestamp FROM otel.gate_decisions FINAL ORDER BY Timestamp DESC, SpanId DESC, Action DESC, Agent DESC, ToolName DESC")
	require.NoError(t, err)
	onFloor, onCeil := 0, 0
	for rows.Next() {
		var s string
		var ts time.Time
		require.NoError(t, rows.Scan(&s, &ts))
		if ts.Equal(keyFloor) {
			onFloor++
		}
		if ts.Equal(keyCeil) {
			onCeil++
		}
		want = append(want, s)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.Len(t, want, 3*720)
	require.Equal(t, 1, onFloor, "a decision on keyFloor")
	require.Equal(t, 1, onCeil, "a decision on keyCeil")
	zones := []string{"UTC", "Asia/Kolkata", "Pacific/Chatham", "Pacific/Pago_Pago"}
	stores := zoneStores(t, env, zones, func(i int) int { return 4 + 8*i })
	for zi, st := range stores {
		require.Equal(t, want, exportAll(t, st), "zone %s", zones[zi])
	}
	start := time.Now()
	rapid.Check(t, func(rt *rapid.T) {
		if time.Since(start) > 8*time.Second {
			return
		}
		st := rapid.SampledFrom(stores).Draw(rt, "store")
		got := resumedExport(rt, st, audit.Filter{}, 1, 1500, func(d audit.Decision) string { return d.SpanID })
		require.Equal(rt, want, got)
	})
}

// zoneStores opens a Store on env per zone (session_timezone, checked),
// the i-th exporting windows of window(i) decisions.
func zoneStores(t *testing.T, env *audittest.Env, zones []string, window func(i int) int) []*audit.Store {
	var stores []*audit.Store
	for i, zone := range zones {
		st, err := audit.Open(context.Background(), env.ReaderDSN+"?session_timezone="+zone, audit.WithExportWindow(window(i)))
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		var tz string
		require.NoError(t, st.Conn().QueryRow(context.Background(), "SELECT timezone()").Scan(&tz))
		require.Equal(t, zone, tz, "the session's zone")
		stores = append(stores, st)
	}
	return stores
}

// exportAll returns the span IDs of a whole export of st, in order.
func exportAll(t *testing.T, st *audit.Store) []string {
	var got []string
	require.NoError(t, st.Export(context.Background(), audit.Filter{}, nil, func(d audit.Decision) error {
		got = append(got, d.SpanID)
		return nil
	}))
	return got
}
