package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
)

// stageCalls is Stats by stage as "stage" → count (calls).
func stageCalls(t *testing.T, ctx context.Context, st *audit.Store, f audit.Filter) map[string]uint64 {
	t.Helper()
	s, err := st.Stats(ctx, audit.StatsQuery{Filter: f, By: []audit.Dimension{audit.ByStage}})
	require.NoError(t, err)
	out := map[string]uint64{}
	for _, r := range s.Rows {
		out[r.Keys[0]] = r.Count
	}
	return out
}

// callsBySpan is Decision.Calls of f's decisions by span ID.
func callsBySpan(t *testing.T, ctx context.Context, st *audit.Store, f audit.Filter) map[string]uint64 {
	t.Helper()
	page, err := st.Decisions(ctx, f, audit.Page{})
	require.NoError(t, err)
	out := map[string]uint64{}
	for _, d := range page.Decisions {
		out[d.SpanID] = d.Calls
	}
	return out
}

// wantCalls is CallsFixture's Decision.Calls by span.
func wantCalls() map[string]uint64 {
	return map[string]uint64{
		"f3f3f3f3f3f3f301": 1, "f3f3f3f3f3f3f302": 1, "f3f3f3f3f3f3f303": 1, "f3f3f3f3f3f3f304": 1,
		"f3f3f3f3f3f3f305": 64, "f3f3f3f3f3f3f306": 31, "f3f3f3f3f3f3f307": 1,
	}
}

// Stats counts calls, not rows: a decision recording n calls (gate.calls,
// the executor's grouped refusals) counts n — in the total, the denied
// count and every group — and a row without gate.calls counts 1, so the
// counts of a fixture without grouped spans are its rows, as before.
func TestStatsCountCalls(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	fixture := audittest.Fixture()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, append(fixture, audittest.CallsFixture()...)))

	flood := audit.Filter{TraceID: audittest.TraceCalls}
	s, err := env.Store.Stats(ctx, audit.StatsQuery{Filter: flood})
	require.NoError(t, err)
	assert.EqualValues(t, audittest.CallsFixtureCalls, s.Total, "the calls made, not the 7 rows")
	assert.EqualValues(t, audittest.CallsFixtureCalls, s.TotalDenied)
	assert.Equal(t, audittest.CallsFixtureByStage(), stageCalls(t, ctx, env.Store, flood))
	assert.Equal(t, wantCalls(), callsBySpan(t, ctx, env.Store, flood))

	s, err = env.Store.Stats(ctx, audit.StatsQuery{Filter: flood, By: []audit.Dimension{audit.ByStage, audit.ByAction}, Every: time.Hour})
	require.NoError(t, err)
	var sum uint64
	for _, r := range s.Rows {
		sum += r.Count
		assert.Equal(t, r.Count, r.Denied, r.Keys)
	}
	assert.EqualValues(t, audittest.CallsFixtureCalls, sum, "bucketed and grouped: the same calls")

	// The rest of the store: one call per row, whatever the dimension.
	for _, by := range [][]audit.Dimension{nil, {audit.ByTool}, {audit.ByGate}} {
		s, err = env.Store.Stats(ctx, audit.StatsQuery{By: by, Filter: audit.Filter{Agent: "coder"}})
		require.NoError(t, err)
		page, err := env.Store.Decisions(ctx, audit.Filter{Agent: "coder"}, audit.Page{})
		require.NoError(t, err)
		if by == nil {
			assert.EqualValues(t, len(page.Decisions), s.Total, "no grouped rows: calls = rows")
		}
		for _, d := range page.Decisions {
			assert.EqualValues(t, 1, d.Calls, d.SpanID)
		}
	}
}

// A span whose gate.calls is 0, not a number, or absent records one call
// (the column's reading is never 0: a call is never lost from the count).
func TestCallsReadsOneForAbsentOrBadValues(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	spans := audittest.CallsFixture()[:2] // the root and one refused call
	for i, v := range []string{"0", "junk", "-3", "", "12"} {
		s := spans[1]
		s.SpanID = "f3f3f3f3f3f3f3a" + string(rune('0'+i))
		s.Attrs = map[attribute.Key]string{}
		for k, val := range spans[1].Attrs {
			s.Attrs[k] = val
		}
		if v != "" {
			s.Attrs[gate.AttrCalls] = v
		}
		spans = append(spans, s)
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, spans))
	got := callsBySpan(t, ctx, env.Store, audit.Filter{TraceID: audittest.TraceCalls})
	assert.Equal(t, map[string]uint64{
		"f3f3f3f3f3f3f301": 1, "f3f3f3f3f3f3f3a0": 1, "f3f3f3f3f3f3f3a1": 1, "f3f3f3f3f3f3f3a2": 1,
		"f3f3f3f3f3f3f3a3": 1, "f3f3f3f3f3f3f3a4": 12,
	}, got)
}

// A database at schema version 6 holding grouped refusal spans (stored by
// the version-6 view, which has no Calls) is upgraded by Migrate in
// place: the table gains Calls (same layout as a fresh install; older rows
// read 1), the spans carrying gate.calls are repaired and keep their
// InsertedAt, each decision is read once, stats count their calls, and the
// view fills Calls from then on.
func TestMigrateUpgradesVersion6(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	const db = "upgrade6"
	opts := []audit.Option{audit.WithDatabase(db)}
	require.NoError(t, audittest.CreateAtVersion(ctx, env.Writer, db, 6))
	spans := append(audittest.Fixture(), audittest.CallsFixture()...)
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, spans))
	before := insertedAt(t, ctx, env.Writer, db)
	total := len(before)

	st, err := audit.Open(ctx, env.ReaderDSN, opts...)
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.ErrorIs(t, err, audit.ErrNotMigrated)
	_, err = st.Stats(ctx, audit.StatsQuery{})
	require.ErrorIs(t, err, audit.ErrNotMigrated, "stats read Calls too")

	res, err := audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	assert.Equal(t, []int{7, 8, 9, 10, 11, 12}, res.Applied)

	freshCols, freshView := schemaOf(t, ctx, env.Writer, env.Database)
	cols, view := schemaOf(t, ctx, env.Writer, db)
	assert.Equal(t, freshCols, cols, "same schema as a fresh install")
	assert.Equal(t, freshView, view)
	assert.Contains(t, cols, "Calls | UInt64 | DEFAULT | 1 | CODEC(ZSTD(1))")

	page, err := st.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.NoError(t, err)
	require.Len(t, page.Decisions, total, "each decision once")
	for _, d := range page.Decisions {
		assert.True(t, d.InsertedAt.Equal(before[d.SpanID][0]), "%s keeps its InsertedAt", d.SpanID)
	}
	flood := audit.Filter{TraceID: audittest.TraceCalls}
	assert.Equal(t, wantCalls(), callsBySpan(t, ctx, st, flood), "repaired: the grouped spans' counts")
	assert.Equal(t, audittest.CallsFixtureByStage(), stageCalls(t, ctx, st, flood))
	got, err := st.NewFollower(audit.Filter{}, audit.FollowFrom(time.Unix(0, 0))).Poll(ctx)
	require.NoError(t, err)
	assert.Len(t, got, total, "the follow stream reports no repaired row again")

	// Spans arriving after the migration: the view fills Calls.
	later := audittest.CallsFixture()
	for i := range later {
		later[i].SpanID = "f9" + later[i].SpanID[2:]
		later[i].TraceID = "f9" + later[i].TraceID[2:]
		later[i].Timestamp = later[i].Timestamp.Add(time.Hour)
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, later))
	s, err := st.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{TraceID: later[0].TraceID}})
	require.NoError(t, err)
	assert.EqualValues(t, audittest.CallsFixtureCalls, s.Total)

	res, err = audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	assert.Empty(t, res.Applied)
	sts, err := audit.Status(ctx, env.Writer, opts...)
	require.NoError(t, err)
	for _, s := range sts {
		assert.True(t, s.Applied, s.Name)
		assert.False(t, s.Changed, s.Name)
	}
}
