package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// ruleCounts is Stats by rule as "rule" → count.
func ruleCounts(t *testing.T, ctx context.Context, st *audit.Store, f audit.Filter) map[string]uint64 {
	t.Helper()
	s, err := st.Stats(ctx, audit.StatsQuery{Filter: f, By: []audit.Dimension{audit.ByRule}})
	require.NoError(t, err)
	out := map[string]uint64{}
	for _, r := range s.Rows {
		out[r.Keys[0]] = r.Count
	}
	return out
}

// A custom gate's rule (Decision.Rule, recorded as gate.rule) is what
// ByRule groups by; so is a classifier's, even when its reason quotes a
// command with brackets; a decision without gate.rule (older producers,
// bridged frameworks) falls back to the reason's "[rule]".
func TestStatsByRuleUsesTheRecordedRule(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, append(audittest.Fixture(), audittest.RuleFixture()...)))

	f := audit.Filter{TraceID: audittest.TraceRules}
	assert.Equal(t, audittest.RuleFixtureByRule(), ruleCounts(t, ctx, env.Store, f))

	page, err := env.Store.Decisions(ctx, f, audit.Page{})
	require.NoError(t, err)
	rules := map[string]string{}
	for _, d := range page.Decisions {
		rules[d.SpanID] = d.Rule
	}
	assert.Equal(t, map[string]string{
		"e7e7e7e7e7e7e701": "prod.write", "e7e7e7e7e7e7e702": "prod.write", "e7e7e7e7e7e7e703": "delete.root-home",
		"e7e7e7e7e7e7e704": "", "e7e7e7e7e7e7e705": "",
	}, rules, "Decision.Rule is gate.rule as recorded")

	// Grouped with another dimension, and among the denials only.
	s, err := env.Store.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{TraceID: audittest.TraceRules, Action: "deny"},
		By: []audit.Dimension{audit.BySource, audit.ByRule}})
	require.NoError(t, err)
	var got []string
	for _, r := range s.Rows {
		got = append(got, r.Keys[0]+"/"+r.Keys[1])
	}
	assert.ElementsMatch(t, []string{"no-prod/prod.write", "classify.bash/delete.root-home", "classify.http/net.egress"}, got)
}

// A database at schema version 5 holding spans that carry gate.rule
// (stored by the version-5 view without it) is upgraded by Migrate in
// place: the table gains Rule (same layout as a fresh install), the spans
// carrying gate.rule are repaired and keep their InsertedAt, each
// decision is read once, and the view fills Rule from then on.
func TestMigrateUpgradesVersion5(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	const db = "upgrade5"
	opts := []audit.Option{audit.WithDatabase(db)}
	require.NoError(t, audittest.CreateAtVersion(ctx, env.Writer, db, 5))
	spans := append(audittest.Fixture(), audittest.RuleFixture()...)
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, spans))
	before := insertedAt(t, ctx, env.Writer, db)
	total := len(before)

	st, err := audit.Open(ctx, env.ReaderDSN, opts...)
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.ErrorIs(t, err, audit.ErrNotMigrated)

	res, err := audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	assert.Equal(t, []int{6, 7, 8, 9, 10, 11, 12}, res.Applied)

	freshCols, freshView := schemaOf(t, ctx, env.Writer, env.Database)
	cols, view := schemaOf(t, ctx, env.Writer, db)
	assert.Equal(t, freshCols, cols, "same schema as a fresh install")
	assert.Equal(t, freshView, view)
	assert.Contains(t, cols, "Rule | LowCardinality(String) |  |  | CODEC(ZSTD(1))")

	page, err := st.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.NoError(t, err)
	require.Len(t, page.Decisions, total, "each decision once")
	for _, d := range page.Decisions {
		assert.True(t, d.InsertedAt.Equal(before[d.SpanID][0]), "%s keeps its InsertedAt", d.SpanID)
	}
	assert.Equal(t, audittest.RuleFixtureByRule(), ruleCounts(t, ctx, st, audit.Filter{TraceID: audittest.TraceRules}))
	got, err := st.NewFollower(audit.Filter{}, audit.FollowFrom(time.Unix(0, 0))).Poll(ctx)
	require.NoError(t, err)
	assert.Len(t, got, total, "the follow stream reports no repaired row again")

	// Spans arriving after the migration: the view fills Rule.
	later := audittest.RuleFixture()
	for i := range later {
		later[i].SpanID = "f8" + later[i].SpanID[2:]
		later[i].TraceID = "f8" + later[i].TraceID[2:]
		later[i].Timestamp = later[i].Timestamp.Add(time.Hour)
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, later))
	assert.Equal(t, audittest.RuleFixtureByRule(), ruleCounts(t, ctx, st, audit.Filter{TraceID: later[0].TraceID}))

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
