package audit_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// stageCounts is Stats by stage as "stage" → count.
func stageCounts(t *testing.T, ctx context.Context, st *audit.Store, f audit.Filter) map[string]uint64 {
	t.Helper()
	s, err := st.Stats(ctx, audit.StatsQuery{Filter: f, By: []audit.Dimension{audit.ByStage}})
	require.NoError(t, err)
	out := map[string]uint64{}
	for _, r := range s.Rows {
		out[r.Keys[0]] = r.Count
	}
	return out
}

// An existing database at schema version 4 holding decisions — older
// spans without gate.stage, and the calls of a newer producer that the
// executor refused before the gate (stored by the version-4 view, which
// already selects them by their gate.action) — is upgraded by Migrate in
// place: the table gains Stage (same layout as a fresh install), old rows
// read stage "gate", refused calls are repaired to their stage with no
// verdict, each decision is read once with its first InsertedAt, and the
// view fills Stage from then on.
func TestMigrateUpgradesVersion4(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	const db = "upgrade4"
	opts := []audit.Option{audit.WithDatabase(db)}
	require.NoError(t, audittest.CreateAtVersion(ctx, env.Writer, db, 4))
	spans := append(audittest.Fixture(), audittest.PreGateFixture()...)
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, spans))
	total := audittest.FixtureDecisions + audittest.PreGateFixtureRefused + 1
	before := insertedAt(t, ctx, env.Writer, db)
	require.Len(t, before, total, "the version-4 view stores the refused calls too (they carry gate.action)")

	st, err := audit.Open(ctx, env.ReaderDSN, opts...)
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.ErrorIs(t, err, audit.ErrNotMigrated)

	res, err := audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	assert.Equal(t, []int{5, 6, 7, 8, 9, 10, 11, 12}, res.Applied)

	freshCols, freshView := schemaOf(t, ctx, env.Writer, env.Database)
	cols, view := schemaOf(t, ctx, env.Writer, db)
	assert.Equal(t, freshCols, cols, "same schema as a fresh install")
	assert.Equal(t, freshView, view)
	assert.Contains(t, cols, "Stage | LowCardinality(String) | DEFAULT | 'gate' | CODEC(ZSTD(1))")

	page, err := st.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.NoError(t, err)
	require.Len(t, page.Decisions, total, "each decision once")
	by := map[string]audit.Decision{}
	for _, d := range page.Decisions {
		by[d.SpanID] = d
		assert.True(t, d.InsertedAt.Equal(before[d.SpanID][0]), "%s keeps its InsertedAt", d.SpanID)
	}
	assert.Equal(t, "gate", by["b2b2b2b2b2b2b203"].Stage, "an older span reads stage gate")
	unknown := by["d5d5d5d5d5d5d501"]
	assert.Equal(t, "registry", unknown.Stage)
	assert.Equal(t, "delete_everything", unknown.ToolName)
	assert.Equal(t, "deny", unknown.Action)
	assert.False(t, unknown.Gated)
	assert.Equal(t, "executor", unknown.Source)
	assert.Equal(t, "tool_not_found", unknown.ErrorKind)
	assert.Empty(t, unknown.Verdicts, "no gate judged it")
	assert.Equal(t, "reachability", by["d5d5d5d5d5d5d502"].Stage)
	assert.Equal(t, "input", by["d5d5d5d5d5d5d503"].Stage)
	assert.Equal(t, "gate", by["d5d5d5d5d5d5d504"].Stage)
	vc := verdictColumns(t, ctx, env.Writer, db)
	for id, want := range fixtureVerdictColumns {
		assert.Equal(t, want, vc[id], id)
	}
	for _, id := range []string{"d5d5d5d5d5d5d501", "d5d5d5d5d5d5d502", "d5d5d5d5d5d5d503"} {
		assert.Equal(t, " / ", vc[id], "%s: no gate, no verdict (repaired)", id)
	}
	assert.Equal(t, "classify.bash / allow", vc["d5d5d5d5d5d5d504"])

	assert.Equal(t, map[string]uint64{"gate": audittest.FixtureDecisions + 1, "registry": 1, "reachability": 1, "input": 1},
		stageCounts(t, ctx, st, audit.Filter{}))
	got, err := st.NewFollower(audit.Filter{}, audit.FollowFrom(time.Unix(0, 0))).Poll(ctx)
	require.NoError(t, err)
	assert.Len(t, got, total, "the follow stream reports no repaired row again")

	// Spans arriving after the migration: the view fills Stage.
	later := audittest.PreGateFixture()
	for i := range later {
		later[i].SpanID = "e6" + later[i].SpanID[2:]
		later[i].TraceID = "e6" + later[i].TraceID[2:]
		later[i].Timestamp = later[i].Timestamp.Add(time.Hour)
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, later))
	vc = verdictColumns(t, ctx, env.Writer, db)
	assert.Equal(t, " / ", vc["e6d5d5d5d5d5d501"])
	assert.Equal(t, map[string]uint64{"gate": 1, "registry": 1, "reachability": 1, "input": 1},
		stageCounts(t, ctx, st, audit.Filter{TraceID: later[0].TraceID}))

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

// The calls refused before the gate are decisions of a fresh install:
// filtered by stage, grouped by stage, in their run's trace.
func TestStageFilterAndStats(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, append(audittest.Fixture(), audittest.PreGateFixture()...)))

	for _, tc := range []struct {
		stage string
		want  []string
	}{
		{"registry", []string{"delete_everything"}},
		{"reachability", []string{"deploy"}},
		{"input", []string{"bash"}},
	} {
		page, err := env.Store.Decisions(ctx, audit.Filter{Stage: tc.stage}, audit.Page{})
		require.NoError(t, err)
		var tools []string
		for _, d := range page.Decisions {
			tools = append(tools, d.ToolName)
			assert.Equal(t, tc.stage, d.Stage)
			assert.Equal(t, audittest.TracePreGate, d.TraceID)
		}
		assert.Equal(t, tc.want, tools, tc.stage)
	}
	page, err := env.Store.Decisions(ctx, audit.Filter{Stage: "gate"}, audit.Page{})
	require.NoError(t, err)
	assert.Len(t, page.Decisions, audittest.FixtureDecisions+1)

	s, err := env.Store.Stats(ctx, audit.StatsQuery{By: []audit.Dimension{audit.ByStage, audit.ByAction}})
	require.NoError(t, err)
	var rows []string
	for _, r := range s.Rows {
		rows = append(rows, r.Keys[0]+"/"+r.Keys[1])
	}
	sort.Strings(rows)
	assert.Equal(t, []string{"gate/allow", "gate/deny", "input/deny", "reachability/deny", "registry/deny"}, rows)
	assert.EqualValues(t, audittest.FixtureDenied+audittest.PreGateFixtureRefused, s.TotalDenied)

	// By gate: the refused calls were judged by no gate.
	g, err := env.Store.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{TraceID: audittest.TracePreGate}, By: []audit.Dimension{audit.ByGate}})
	require.NoError(t, err)
	require.Len(t, g.Rows, 1)
	assert.Equal(t, []string{"classify.bash"}, g.Rows[0].Keys)

	tree, err := env.Store.Trace(ctx, audittest.TracePreGate)
	require.NoError(t, err)
	require.Len(t, tree.Roots, 1)
	assert.Equal(t, "invoke_agent intruder", tree.Roots[0].Name)
	var stages []string
	for _, sp := range tree.Roots[0].Children {
		require.NotNil(t, sp.Decision, sp.Name)
		stages = append(stages, sp.ToolName+":"+sp.Decision.Stage)
	}
	assert.Equal(t, []string{"delete_everything:registry", "deploy:reachability", "bash:input", "bash:gate"}, stages,
		"the trace lists every call of the run with its decision")
}
