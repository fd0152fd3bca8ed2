package audit_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
)

// schemaOf describes db's gate_decisions columns and its view's query,
// with the database name taken out.
func schemaOf(t *testing.T, ctx context.Context, conn driver.Conn, db string) (columns []string, view string) {
	t.Helper()
	p := new(audit.Params).String("db", db).Context(ctx)
	rows, err := conn.Query(p, "SELECT name, type, default_kind, default_expression, compression_codec FROM system.columns "+
		"WHERE database = {db:String} AND table = 'gate_decisions' ORDER BY position")
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var name, typ, kind, expr, codec string
		require.NoError(t, rows.Scan(&name, &typ, &kind, &expr, &codec))
		columns = append(columns, strings.Join([]string{name, typ, kind, expr, codec}, " | "))
	}
	require.NoError(t, rows.Err())
	require.NoError(t, conn.QueryRow(p, "SELECT as_select FROM system.tables WHERE database = {db:String} AND name = 'gate_decisions_mv'").Scan(&view))
	return columns, strings.ReplaceAll(view, db+".", "")
}

// insertedAt maps SpanId to the InsertedAt of each stored copy.
func insertedAt(t *testing.T, ctx context.Context, conn driver.Conn, db string) map[string][]time.Time {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT SpanId, InsertedAt FROM `"+db+"`.gate_decisions ORDER BY SpanId, InsertedAt")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string][]time.Time{}
	for rows.Next() {
		var id string
		var at time.Time
		require.NoError(t, rows.Scan(&id, &at))
		out[id] = append(out[id], at)
	}
	require.NoError(t, rows.Err())
	return out
}

// verdictColumns reads VerdictGates and VerdictActions per span, as "gates
// / actions".
func verdictColumns(t *testing.T, ctx context.Context, conn driver.Conn, db string) map[string]string {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT SpanId, VerdictGates, VerdictActions FROM `"+db+"`.gate_decisions FINAL")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id string
		var gates, actions []string
		require.NoError(t, rows.Scan(&id, &gates, &actions))
		out[id] = strings.Join(gates, ",") + " / " + strings.Join(actions, ",")
	}
	require.NoError(t, rows.Err())
	return out
}

// fixtureVerdictColumns is verdictColumns of the fixture: recorded
// verdicts split (each round's gates; the rewrite's two rounds), and for
// the calls recorded without verdicts the deciding gate, with "ask" when
// an approver answered.
var fixtureVerdictColumns = map[string]string{
	"a1a1a1a1a1a1a101": "classify.bash,policy.network / allow,allow",
	"a1a1a1a1a1a1a102": "classify.bash / deny",
	"a1a1a1a1a1a1a103": "classify.path,policy.network / allow,allow",
	"a1a1a1a1a1a1a104": "classify.path,policy.consequential / allow,ask",
	"b2b2b2b2b2b2b201": "policy.network / deny",
	"b2b2b2b2b2b2b202": "classify.path / allow",
	"b2b2b2b2b2b2b203": "policy.consequential / ask",
	"c3c3c3c3c3c3c301": "chain[0]:approval / deny",
	"c3c3c3c3c3c3c302": "sandbox,classify.bash,sandbox,classify.bash / rewrite,allow,allow,allow",
	"c3c3c3c3c3c3c303": "default / allow",
}

// An existing database at schema version 3, holding decisions (some
// spans already carrying the version-4 attributes, from producers upgraded
// before the schema), is upgraded by Migrate in place: the table gains the
// columns (same layout as a fresh install), the view its new query, the
// old rows still read, and the rows of spans with new attributes are
// repaired without being reported again or counted twice.
func TestMigrateUpgradesVersion3(t *testing.T) {
	env := audittest.Start(t) // a fresh install in "otel", to compare with
	ctx := context.Background()
	const db = "upgrade"
	opts := []audit.Option{audit.WithDatabase(db)}
	require.NoError(t, audittest.CreateAtVersion3(ctx, env.Writer, db))
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, audittest.Fixture()))
	before := insertedAt(t, ctx, env.Writer, db)
	require.Len(t, before, audittest.FixtureDecisions)

	st, err := audit.Open(ctx, env.ReaderDSN, opts...)
	require.NoError(t, err)
	defer st.Close()

	// This package's queries need the newest version: the reader is told to migrate.
	_, err = st.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.ErrorIs(t, err, audit.ErrNotMigrated)
	var ex *clickhouse.Exception
	require.True(t, errors.As(err, &ex), "%v", err)
	assert.EqualValues(t, 47, ex.Code) // UNKNOWN_IDENTIFIER
	sts, err := audit.Status(ctx, env.Writer, opts...)
	require.NoError(t, err)
	require.Len(t, sts, 12)
	for _, s := range sts {
		assert.Equal(t, s.Version <= 3, s.Applied, s.Name)
		assert.False(t, s.Changed, s.Name)
	}

	res, err := audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	assert.Equal(t, []int{4, 5, 6, 7, 8, 9, 10, 11, 12}, res.Applied)
	assert.Equal(t, 12, res.Current)

	t.Run("same schema as a fresh install", func(t *testing.T) {
		freshCols, freshView := schemaOf(t, ctx, env.Writer, env.Database)
		cols, view := schemaOf(t, ctx, env.Writer, db)
		assert.Equal(t, freshCols, cols)
		assert.Equal(t, freshView, view)
		assert.Contains(t, strings.Join(cols, "\n"), "Verdicts | Array(String) |  |  | CODEC(ZSTD(1))")
		assert.Contains(t, strings.Join(cols, "\n"), "VerdictGates | Array(LowCardinality(String)) | DEFAULT | arrayMap(")
	})

	t.Run("old rows read, repaired rows keep their InsertedAt", func(t *testing.T) {
		page, err := st.Decisions(ctx, audit.Filter{}, audit.Page{})
		require.NoError(t, err)
		require.Len(t, page.Decisions, audittest.FixtureDecisions, "each decision once")
		by := map[string]audit.Decision{}
		for _, d := range page.Decisions {
			by[d.SpanID] = d
			require.Len(t, before[d.SpanID], 1)
			assert.True(t, d.InsertedAt.Equal(before[d.SpanID][0]), "%s: InsertedAt %v, was %v", d.SpanID, d.InsertedAt, before[d.SpanID][0])
		}
		old := by["b2b2b2b2b2b2b203"] // recorded without the new attributes
		assert.Equal(t, "deny", old.Action)
		assert.Equal(t, "approval declined", old.Reason)
		assert.Equal(t, "declined", old.Approval)
		assert.Equal(t, []string{"policy.consequential|ask|review|"}, old.Verdicts)
		assert.False(t, old.Rewritten)
		assert.Zero(t, old.Rounds)
		// Recorded with them before the migration: repaired.
		assert.Equal(t, []string{"classify.bash|deny|high|delete.root"}, by["a1a1a1a1a1a1a102"].Verdicts)
		rw := by["c3c3c3c3c3c3c302"]
		assert.True(t, rw.Rewritten)
		assert.Equal(t, "sandbox", rw.RewrittenBy)
		assert.Equal(t, audittest.FixtureOriginalInputHash, rw.OriginalInputHash)
		assert.EqualValues(t, 2, rw.Rounds)
		assert.Len(t, rw.Verdicts, 4)
		assert.Equal(t, fixtureVerdictColumns, verdictColumns(t, ctx, env.Writer, db))

		// The follow stream from the beginning has each decision once.
		got, err := st.NewFollower(audit.Filter{}, audit.FollowFrom(time.Unix(0, 0))).Poll(ctx)
		require.NoError(t, err)
		assert.Len(t, got, audittest.FixtureDecisions)
		s, err := st.Stats(ctx, audit.StatsQuery{By: []audit.Dimension{audit.ByAction}})
		require.NoError(t, err)
		assert.EqualValues(t, audittest.FixtureDecisions, s.Total)
	})

	t.Run("a merge keeps the repaired copies", func(t *testing.T) {
		require.NoError(t, env.Writer.Exec(ctx, "OPTIMIZE TABLE `"+db+"`.gate_decisions FINAL"))
		after := insertedAt(t, ctx, env.Writer, db)
		assert.Equal(t, before, after, "one row per span, with its first InsertedAt")
		assert.Equal(t, fixtureVerdictColumns, verdictColumns(t, ctx, env.Writer, db))
	})

	t.Run("the view fills the new columns", func(t *testing.T) {
		at := audittest.FixtureBase.Add(3 * time.Hour)
		span := func(id string, attrs map[attribute.Key]string) audittest.Span {
			attrs[semconv.GenAIToolNameKey] = "bash"
			attrs[gate.AttrGated] = "true"
			return audittest.Span{Timestamp: at, TraceID: audittest.TraceCoder, SpanID: id, Name: "execute_tool bash", Service: "svc", Attrs: attrs}
		}
		require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, []audittest.Span{
			span("d4d4d4d4d4d4d401", map[attribute.Key]string{gate.AttrAction: "allow", gate.AttrSource: "sandbox",
				gate.AttrVerdicts: audittest.StringList("sandbox|rewrite||", "sandbox|allow||"), gate.AttrRounds: "2",
				gate.AttrRewritten: "true", gate.AttrRewrittenBy: "sandbox", gate.AttrOriginalInputHash: "ab"}),
			span("d4d4d4d4d4d4d402", map[attribute.Key]string{gate.AttrAction: "deny", gate.AttrSource: "classify.bash", gate.AttrRiskLevel: "high"}),
		}))
		page, err := st.Decisions(ctx, audit.Filter{Since: at}, audit.Page{})
		require.NoError(t, err)
		require.Len(t, page.Decisions, 2)
		sort.Slice(page.Decisions, func(i, j int) bool { return page.Decisions[i].SpanID < page.Decisions[j].SpanID })
		d := page.Decisions[0]
		assert.Equal(t, []string{"sandbox|rewrite||", "sandbox|allow||"}, d.Verdicts)
		assert.True(t, d.Rewritten)
		assert.Equal(t, "sandbox", d.RewrittenBy)
		assert.Equal(t, "ab", d.OriginalInputHash)
		assert.EqualValues(t, 2, d.Rounds)
		assert.Equal(t, []string{"classify.bash|deny|high|"}, page.Decisions[1].Verdicts)
		vc := verdictColumns(t, ctx, env.Writer, db)
		assert.Equal(t, "sandbox,sandbox / rewrite,allow", vc["d4d4d4d4d4d4d401"])
		assert.Equal(t, "classify.bash / deny", vc["d4d4d4d4d4d4d402"])
	})

	res, err = audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	assert.Empty(t, res.Applied)
	sts, err = audit.Status(ctx, env.Writer, opts...)
	require.NoError(t, err)
	for _, s := range sts {
		assert.True(t, s.Applied, s.Name)
		assert.False(t, s.Changed, s.Name)
	}
}

// TestMigrateUpgradesVersion10: a store at schema version 10 (the hourly
// roll-up alone) with rolled-up decisions, and duplicates of some, is
// upgraded to 11: the daily roll-ups are backfilled from the hourly one,
// and the common questions they answer (by tool and action, by agent and
// rule per day) equal the answers from gate_decisions alone.
func TestMigrateUpgradesVersion10(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	const db = "upgrade10"
	opts := []audit.Option{audit.WithDatabase(db), audit.WithRollupDelay(0)}
	require.NoError(t, audittest.CreateAtVersion(ctx, env.Writer, db, 10))
	require.NoError(t, env.Writer.Exec(ctx, "SYSTEM STOP VIEW "+db+".gate_decisions_hourly_mv"))
	end := time.Now()
	require.NoError(t, audittest.LoadShaped(ctx, env.Writer, db, 5000, end, audittest.ShapedOptions{Batch: 1000}))
	require.NoError(t, audittest.LoadShaped(ctx, env.Writer, db, 500, end, audittest.ShapedOptions{Offset: 2000, Total: 5000}))
	require.NoError(t, audit.Roll(ctx, env.Writer, opts...)) // hourly only: no daily views at version 10

	res, err := audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	assert.Equal(t, []int{11, 12}, res.Applied)
	assert.Equal(t, 12, res.Current)
	require.NoError(t, audit.Roll(ctx, env.Writer, opts...))

	st, err := audit.Open(ctx, env.ReaderDSN, opts...)
	require.NoError(t, err)
	defer st.Close()
	since := end.Add(-720 * time.Hour)
	all, err := st.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{Since: since}, By: []audit.Dimension{audit.ByAction}})
	require.NoError(t, err)
	assert.EqualValues(t, 5000, all.Total, "each span once, its retried copies not counted")
	for _, q := range []audit.StatsQuery{
		{Filter: audit.Filter{Since: since}, By: []audit.Dimension{audit.ByTool, audit.ByAction}},
		{Filter: audit.Filter{Since: since}, By: []audit.Dimension{audit.ByAgent, audit.ByRule}, Every: 24 * time.Hour},
		{Filter: audit.Filter{Agent: "agent-07"}, By: []audit.Dimension{audit.ByTool}},
	} {
		assert.Contains(t, audit.StatsSource(ctx, st, q), "daily:", "the upgraded store answers %v from a daily roll-up", q.By)
		raw, _, err := audit.StatsFrom(ctx, st, q, false)
		require.NoError(t, err)
		got, err := st.Stats(ctx, q)
		require.NoError(t, err)
		assert.Equal(t, statsMap(raw), statsMap(got), "%v", q.By)
		assert.Positive(t, got.Total)
	}
}

// TestMigrateUpgradesVersion11: a store at schema version 11 with
// rolled-up decisions, duplicates of some, and decisions inserted after
// the last roll-up (hours the roll-ups do not hold), answers stats from
// the roll-ups exactly before the upgrade (the dirty hours read from
// gate_decisions) and after it (read from the arrivals, which the
// upgrade backfills), and the arrivals name the same hours as
// gate_decisions for every watermark.
func TestMigrateUpgradesVersion11(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	const db = "upgrade11"
	opts := []audit.Option{audit.WithDatabase(db), audit.WithRollupDelay(0)}
	require.NoError(t, audittest.CreateAtVersion(ctx, env.Writer, db, 11))
	require.NoError(t, env.Writer.Exec(ctx, "SYSTEM STOP VIEW "+db+".gate_decisions_hourly_mv"))
	end := time.Now()
	require.NoError(t, audittest.LoadShaped(ctx, env.Writer, db, 5000, end, audittest.ShapedOptions{Batch: 1000}))
	require.NoError(t, audittest.LoadShaped(ctx, env.Writer, db, 500, end, audittest.ShapedOptions{Offset: 2000, Total: 5000}))
	require.NoError(t, audit.Roll(ctx, env.Writer, opts...))
	// After the roll-up: new decisions in a few old hours, and copies.
	require.NoError(t, audittest.LoadShaped(ctx, env.Writer, db, 300, end.Add(-100*time.Hour), audittest.ShapedOptions{Offset: 9000, Total: 90000}))
	require.NoError(t, audittest.LoadShaped(ctx, env.Writer, db, 200, end, audittest.ShapedOptions{Offset: 100, Total: 5000}))

	st, err := audit.Open(ctx, env.ReaderDSN, opts...)
	require.NoError(t, err)
	defer st.Close()
	since := end.Add(-720 * time.Hour)
	questions := []audit.StatsQuery{
		{Filter: audit.Filter{Since: since}, By: []audit.Dimension{audit.ByTool, audit.ByAction}},
		{Filter: audit.Filter{Since: since}, By: []audit.Dimension{audit.ByAgent, audit.ByRule}, Every: 24 * time.Hour},
		{Filter: audit.Filter{Since: since.Add(90 * time.Minute)}, By: []audit.Dimension{audit.ByRisk}, Every: time.Hour},
	}
	check := func(stage string) {
		for _, q := range questions {
			raw, _, err := audit.StatsFrom(ctx, st, q, false)
			require.NoError(t, err)
			got, err := st.Stats(ctx, q)
			require.NoError(t, err, stage)
			assert.Equal(t, statsMap(raw), statsMap(got), "%s: %v", stage, q.By)
			assert.NotEqual(t, "decisions", audit.StatsSource(ctx, st, q), "%s: %v is answered from a roll-up", stage, q.By)
		}
	}
	check("at version 11")
	_, err = audit.DirtyHoursFrom(ctx, st, 0, true)
	require.ErrorIs(t, err, audit.ErrNotMigrated, "no arrivals before version 12")
	// Migration 12 half-run (or stopped): the arrivals table and its view
	// exist, the backfill has not run. Stats does not trust the table
	// until the version is recorded.
	ms, err := audit.Migrations(opts...)
	require.NoError(t, err)
	require.Equal(t, 12, ms[11].Version)
	for _, stmt := range ms[11].Statements[:2] {
		require.NoError(t, env.Writer.Exec(ctx, stmt))
	}
	check("migration 12 without its backfill")

	res, err := audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	assert.Equal(t, []int{12}, res.Applied)
	check("at version 12")
	var marks []int64
	rows, err := env.Writer.Query(ctx, "SELECT DISTINCT toUnixTimestamp64Nano(InsertedAt) FROM "+db+".gate_decisions")
	require.NoError(t, err)
	for rows.Next() {
		var m int64
		require.NoError(t, rows.Scan(&m))
		marks = append(marks, m, m-1)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.Greater(t, len(marks), 4)
	same := func(stage string, equal bool) {
		for _, w := range append(marks, 0) {
			arrived, err := audit.DirtyHoursFrom(ctx, st, w, true)
			require.NoError(t, err)
			inserted, err := audit.DirtyHoursFrom(ctx, st, w, false)
			require.NoError(t, err)
			if equal {
				require.Equal(t, inserted, arrived, "%s: hours reached after %d", stage, w)
			} else {
				require.Subset(t, arrived, inserted, "%s: hours reached after %d", stage, w)
			}
		}
	}
	same("after the upgrade", true)
	// Decisions inserted after the upgrade reach the arrivals through the
	// view, and Stats still answers them exactly.
	require.NoError(t, audittest.LoadShaped(ctx, env.Writer, db, 300, end.Add(-300*time.Hour), audittest.ShapedOptions{Offset: 20000, Total: 200000}))
	check("after the upgrade, new decisions")
	// Copies of rolled-up spans, then a merge of gate_decisions: it keeps
	// each span's first copy (the smaller InsertedAt), so gate_decisions
	// no longer shows that the copies' hours were reached later; the
	// arrivals still do. A superset only makes more hours read from
	// gate_decisions: Stats stays exact.
	require.NoError(t, audittest.LoadShaped(ctx, env.Writer, db, 100, end, audittest.ShapedOptions{Offset: 500, Total: 5000}))
	require.NoError(t, env.Writer.Exec(ctx, "OPTIMIZE TABLE "+db+".gate_decisions FINAL"))
	same("after merging copies", false)
	check("after merging copies")
	// Restored to version 11 while the Store lives: the arrivals are
	// gone, and Stats answers from gate_decisions again.
	require.NoError(t, env.Writer.Exec(ctx, "DROP TABLE "+db+".gate_decisions_arrivals_mv"))
	require.NoError(t, env.Writer.Exec(ctx, "DROP TABLE "+db+".gate_decisions_arrivals"))
	require.NoError(t, env.Writer.Exec(ctx, "ALTER TABLE "+db+".schema_migrations DELETE WHERE Version = 12 SETTINGS mutations_sync = 1"))
	check("restored to version 11")
}
