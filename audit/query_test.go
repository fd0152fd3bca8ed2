package audit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
)

// fixtureEnv starts a server with the fixture spans written once.
func fixtureEnv(t *testing.T) *audittest.Env {
	t.Helper()
	env := audittest.Start(t)
	require.NoError(t, audittest.InsertSpans(context.Background(), env.Writer, env.Database, audittest.Fixture()))
	return env
}

func spanIDs(ds []audit.Decision) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.SpanID
	}
	return out
}

func TestQueries(t *testing.T) {
	env := fixtureEnv(t)
	ctx := context.Background()
	st := env.Store
	base := audittest.FixtureBase

	t.Run("view fills typed columns", func(t *testing.T) {
		page, err := st.Decisions(ctx, audit.Filter{TraceID: audittest.TraceCoder}, audit.Page{})
		require.NoError(t, err)
		require.Len(t, page.Decisions, 4)
		var deny audit.Decision
		for _, d := range page.Decisions {
			if d.SpanID == "a1a1a1a1a1a1a102" {
				deny = d
			}
		}
		assert.True(t, deny.Timestamp.Equal(base.Add(400*time.Millisecond)), deny.Timestamp)
		assert.False(t, deny.InsertedAt.IsZero())
		assert.Equal(t, audittest.TraceCoder, deny.TraceID)
		assert.Equal(t, "a1a1a1a1a1a1a1a1", deny.ParentSpanID)
		assert.Equal(t, "toolgate-demo", deny.ServiceName)
		assert.Equal(t, "coder", deny.Agent)
		assert.Equal(t, "run-1", deny.RunID)
		assert.Equal(t, "task-1", deny.TaskID)
		assert.Equal(t, "bash", deny.ToolName)
		assert.Equal(t, "call_a1a1a1a1a1a1a102", deny.ToolCallID)
		assert.True(t, deny.Gated)
		assert.False(t, deny.OptOut)
		assert.Equal(t, "deny", deny.Action)
		assert.Equal(t, "rm -rf outside the workspace", deny.Reason)
		assert.Equal(t, "classify.bash", deny.Source)
		assert.Equal(t, "high", deny.RiskLevel)
		assert.Equal(t, "gate_denied", deny.ErrorType)
		assert.True(t, deny.IsError)
		assert.EqualValues(t, 2*time.Millisecond, deny.DurationNs)
		assert.EqualValues(t, 1100*time.Microsecond, deny.GateDuration)
		assert.Equal(t, `{"command":"rm -rf /"}`, deny.Input)
		assert.Equal(t, []string{"classify.bash|deny|high|delete.root"}, deny.Verdicts)
		assert.False(t, deny.Rewritten)
		assert.Zero(t, deny.Rounds, "one round: not recorded")
	})

	t.Run("rewrites, rounds and verdicts", func(t *testing.T) {
		page, err := st.Decisions(ctx, audit.Filter{Rewritten: true}, audit.Page{})
		require.NoError(t, err)
		require.Len(t, page.Decisions, 1)
		d := page.Decisions[0]
		assert.Equal(t, "c3c3c3c3c3c3c302", d.SpanID)
		assert.True(t, d.Rewritten)
		assert.Equal(t, "sandbox", d.RewrittenBy)
		assert.Equal(t, audittest.FixtureOriginalInputHash, d.OriginalInputHash)
		assert.EqualValues(t, 2, d.Rounds)
		assert.Equal(t, []string{"sandbox|rewrite||", "classify.bash|allow|safe|", "sandbox|allow||", "classify.bash|allow|safe|read.git"}, d.Verdicts)
		// Recorded without verdicts (an older producer): the deciding
		// gate's verdict, "ask" when an approver was asked.
		page, err = st.Decisions(ctx, audit.Filter{TraceID: audittest.TraceReviewer}, audit.Page{})
		require.NoError(t, err)
		got := map[string][]string{}
		for _, d := range page.Decisions {
			got[d.SpanID] = d.Verdicts
		}
		assert.Equal(t, map[string][]string{
			"b2b2b2b2b2b2b201": {"policy.network|deny|high|"},
			"b2b2b2b2b2b2b202": {"classify.path|allow|safe|"},
			"b2b2b2b2b2b2b203": {"policy.consequential|ask|review|"},
		}, got)
		// Split per gate and action, with the deciding gate standing in
		// for missing verdicts.
		assert.Equal(t, fixtureVerdictColumns, verdictColumns(t, ctx, env.Writer, env.Database))
	})

	t.Run("filters", func(t *testing.T) {
		tests := []struct {
			name string
			f    audit.Filter
			want []string
		}{
			{"all, newest first", audit.Filter{}, []string{"c3c3c3c3c3c3c303", "c3c3c3c3c3c3c302", "c3c3c3c3c3c3c301", "b2b2b2b2b2b2b203", "b2b2b2b2b2b2b202", "b2b2b2b2b2b2b201", "a1a1a1a1a1a1a104", "a1a1a1a1a1a1a103", "a1a1a1a1a1a1a102", "a1a1a1a1a1a1a101"}},
			{"deny", audit.Filter{Action: "deny"}, []string{"c3c3c3c3c3c3c301", "b2b2b2b2b2b2b203", "b2b2b2b2b2b2b201", "a1a1a1a1a1a1a102"}},
			{"agent and tool", audit.Filter{Agent: "coder", Tool: "bash"}, []string{"a1a1a1a1a1a1a102", "a1a1a1a1a1a1a101"}},
			{"risk", audit.Filter{Risk: "review"}, []string{"b2b2b2b2b2b2b203", "a1a1a1a1a1a1a104"}},
			{"reason substring, any case", audit.Filter{Reason: "EGRESS"}, []string{"b2b2b2b2b2b2b201"}},
			{"reason with LIKE wildcards is literal", audit.Filter{Reason: "%"}, nil},
			{"time range [since, until)", audit.Filter{Since: base.Add(time.Hour), Until: base.Add(130*time.Minute + 100*time.Millisecond)}, []string{"b2b2b2b2b2b2b203", "b2b2b2b2b2b2b202", "b2b2b2b2b2b2b201"}},
			{"trace, upper case", audit.Filter{TraceID: "5B8EFFF798038103D269B633813FC60C"}, []string{"c3c3c3c3c3c3c303", "c3c3c3c3c3c3c302", "c3c3c3c3c3c3c301"}},
			{"run", audit.Filter{RunID: "run-2", Action: "allow"}, []string{"b2b2b2b2b2b2b202"}},
			{"service", audit.Filter{Service: "toolgate-demo", Tool: "grep"}, []string{"c3c3c3c3c3c3c303"}},
			{"other service", audit.Filter{Service: "elsewhere"}, nil},
			{"injection attempt is just a value", audit.Filter{Agent: "x' OR 1=1 --"}, nil},
			{"no match", audit.Filter{Tool: "nope"}, nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				page, err := st.Decisions(ctx, tc.f, audit.Page{})
				require.NoError(t, err)
				if tc.want == nil {
					assert.Empty(t, page.Decisions)
				} else {
					assert.Equal(t, tc.want, spanIDs(page.Decisions))
				}
				assert.Nil(t, page.Next)
			})
		}
	})

	t.Run("paging", func(t *testing.T) {
		all, err := st.Decisions(ctx, audit.Filter{}, audit.Page{})
		require.NoError(t, err)
		var got []string
		pg := audit.Page{Limit: 3}
		pages := 0
		for {
			res, err := st.Decisions(ctx, audit.Filter{}, pg)
			require.NoError(t, err)
			pages++
			got = append(got, spanIDs(res.Decisions)...)
			if res.Next == nil {
				break
			}
			// Tokens survive a round trip through text.
			c, err := audit.ParseCursor(res.Next.String())
			require.NoError(t, err)
			pg.After = &c
		}
		assert.Equal(t, 4, pages)
		assert.Equal(t, spanIDs(all.Decisions), got)
		_, err = st.Decisions(ctx, audit.Filter{}, audit.Page{Limit: audit.MaxLimit + 1})
		assert.Error(t, err)
	})

	t.Run("stats grouped", func(t *testing.T) {
		s, err := st.Stats(ctx, audit.StatsQuery{By: []audit.Dimension{audit.ByAction}})
		require.NoError(t, err)
		assert.EqualValues(t, audittest.FixtureDecisions, s.Total)
		assert.EqualValues(t, audittest.FixtureDenied, s.TotalDenied)
		require.Len(t, s.Rows, 2)
		assert.Equal(t, audit.StatsRow{Keys: []string{"allow"}, Count: 6}, s.Rows[0])
		assert.Equal(t, audit.StatsRow{Keys: []string{"deny"}, Count: 4, Denied: 4}, s.Rows[1])

		s, err = st.Stats(ctx, audit.StatsQuery{By: []audit.Dimension{audit.ByTool, audit.ByRisk}, Filter: audit.Filter{Agent: "coder"}})
		require.NoError(t, err)
		assert.Equal(t, []audit.StatsRow{
			{Keys: []string{"bash", "high"}, Count: 1, Denied: 1},
			{Keys: []string{"bash", "safe"}, Count: 1},
			{Keys: []string{"read_file", "safe"}, Count: 1},
			{Keys: []string{"write_file", "review"}, Count: 1},
		}, s.Rows)
	})

	t.Run("stats by gate", func(t *testing.T) {
		tests := []struct {
			name string
			q    audit.StatsQuery
			want []audit.StatsRow
		}{
			{
				// A call counts once for each gate that judged it (the
				// rewritten call's two rounds count once per gate).
				name: "every gate",
				q:    audit.StatsQuery{By: []audit.Dimension{audit.ByGate}},
				want: []audit.StatsRow{
					{Keys: []string{"classify.bash"}, Count: 3, Denied: 1},
					{Keys: []string{"classify.path"}, Count: 3},
					{Keys: []string{"policy.network"}, Count: 3, Denied: 1},
					{Keys: []string{"policy.consequential"}, Count: 2, Denied: 1},
					{Keys: []string{"chain[0]:approval"}, Count: 1, Denied: 1},
					{Keys: []string{"default"}, Count: 1},
					{Keys: []string{"sandbox"}, Count: 1},
				},
			},
			{
				name: "with another dimension and a filter",
				q:    audit.StatsQuery{By: []audit.Dimension{audit.ByGate, audit.ByTool}, Filter: audit.Filter{Agent: "coder"}},
				want: []audit.StatsRow{
					{Keys: []string{"classify.bash", "bash"}, Count: 2, Denied: 1},
					{Keys: []string{"classify.path", "read_file"}, Count: 1},
					{Keys: []string{"classify.path", "write_file"}, Count: 1},
					{Keys: []string{"policy.consequential", "write_file"}, Count: 1},
					{Keys: []string{"policy.network", "bash"}, Count: 1},
					{Keys: []string{"policy.network", "read_file"}, Count: 1},
				},
			},
			{
				name: "source is the deciding gate only",
				q:    audit.StatsQuery{By: []audit.Dimension{audit.BySource}, Filter: audit.Filter{Agent: "coder"}},
				want: []audit.StatsRow{
					{Keys: []string{"classify.bash"}, Count: 2, Denied: 1},
					{Keys: []string{"classify.path"}, Count: 1},
					{Keys: []string{"policy.consequential"}, Count: 1},
				},
			},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s, err := st.Stats(ctx, tc.q)
				require.NoError(t, err)
				assert.Equal(t, tc.want, s.Rows)
			})
		}
	})

	t.Run("stats per bucket", func(t *testing.T) {
		s, err := st.Stats(ctx, audit.StatsQuery{Every: time.Hour, By: []audit.Dimension{audit.ByAction}})
		require.NoError(t, err)
		assert.Equal(t, []audit.StatsRow{
			{Bucket: base, Keys: []string{"allow"}, Count: 3},
			{Bucket: base, Keys: []string{"deny"}, Count: 1, Denied: 1},
			{Bucket: base.Add(time.Hour), Keys: []string{"deny"}, Count: 2, Denied: 2},
			{Bucket: base.Add(time.Hour), Keys: []string{"allow"}, Count: 1},
			{Bucket: base.Add(2 * time.Hour), Keys: []string{"allow"}, Count: 2},
			{Bucket: base.Add(2 * time.Hour), Keys: []string{"deny"}, Count: 1, Denied: 1},
		}, s.Rows)
		// Day buckets start at midnight in the given location.
		tokyo, err := time.LoadLocation("Asia/Tokyo")
		require.NoError(t, err)
		s, err = st.Stats(ctx, audit.StatsQuery{Every: 24 * time.Hour, Location: tokyo})
		require.NoError(t, err)
		require.Len(t, s.Rows, 1)
		assert.True(t, s.Rows[0].Bucket.Equal(time.Date(2026, 11, 28, 0, 0, 0, 0, tokyo)), s.Rows[0].Bucket)
		// time.Local ("Local" to Go) is resolved to a zone ClickHouse knows.
		s, err = st.Stats(ctx, audit.StatsQuery{Every: time.Hour, Location: time.Local})
		require.NoError(t, err)
		assert.EqualValues(t, audittest.FixtureDecisions, s.Total)
		_, err = st.Stats(ctx, audit.StatsQuery{Every: 1500 * time.Millisecond})
		assert.Error(t, err)
	})

	t.Run("trace tree", func(t *testing.T) {
		tree, err := st.Trace(ctx, audittest.TraceOps)
		require.NoError(t, err)
		assert.Equal(t, 5, tree.Spans)
		require.Len(t, tree.Roots, 1)
		root := tree.Roots[0]
		assert.Equal(t, "invoke_agent ops", root.Name)
		assert.Equal(t, "invoke_agent", root.Operation)
		assert.Nil(t, root.Decision)
		var names []string
		for _, c := range root.Children {
			names = append(names, c.Name)
		}
		assert.Equal(t, []string{"execute_tool deploy", "chat gpt-5", "execute_tool bash", "execute_tool grep"}, names)
		require.NotNil(t, root.Children[0].Decision)
		assert.Equal(t, "timeout", root.Children[0].Decision.ErrorKind)
		assert.Nil(t, root.Children[1].Decision, "the chat span is not a decision")
		_, err = st.Trace(ctx, "00000000000000000000000000000000")
		assert.ErrorIs(t, err, audit.ErrTraceNotFound)
	})
}

func TestDuplicateDeliveryCollapses(t *testing.T) {
	env := fixtureEnv(t)
	ctx := context.Background()
	// The exporter retries a batch: the same spans arrive again, twice.
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, audittest.Fixture()))
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, audittest.Fixture()[:5]))
	var raw uint64
	require.NoError(t, env.Writer.QueryRow(ctx, "SELECT count() FROM otel.gate_decisions").Scan(&raw))
	assert.EqualValues(t, 2*audittest.FixtureDecisions+4, raw, "unmerged copies are stored")

	page, err := env.Store.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.NoError(t, err)
	assert.Len(t, page.Decisions, audittest.FixtureDecisions)
	s, err := env.Store.Stats(ctx, audit.StatsQuery{By: []audit.Dimension{audit.ByTool}})
	require.NoError(t, err)
	assert.EqualValues(t, audittest.FixtureDecisions, s.Total)
	tree, err := env.Store.Trace(ctx, audittest.TraceCoder)
	require.NoError(t, err)
	assert.Equal(t, 5, tree.Spans)

	// After a merge the table holds one row per span.
	require.NoError(t, env.Writer.Exec(ctx, "OPTIMIZE TABLE otel.gate_decisions FINAL"))
	require.NoError(t, env.Writer.QueryRow(ctx, "SELECT count() FROM otel.gate_decisions").Scan(&raw))
	assert.EqualValues(t, audittest.FixtureDecisions, raw)
}

func TestWhichSpansAreDecisions(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	at := audittest.FixtureBase
	span := func(id string, attrs map[attribute.Key]string) audittest.Span {
		attrs[semconv.GenAIToolNameKey] = "bash"
		return audittest.Span{Timestamp: at, TraceID: audittest.TraceCoder, SpanID: id, Name: "execute_tool bash", Service: "svc", Attrs: attrs}
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, []audittest.Span{
		span("0000000000000001", map[attribute.Key]string{gate.AttrGated: "true", gate.AttrAction: "allow"}),
		span("0000000000000002", map[attribute.Key]string{gate.AttrGated: "false", gate.AttrOptOut: "true"}),
		span("0000000000000003", map[attribute.Key]string{gate.AttrGated: "false"}), // refused before any gate ran
		span("0000000000000004", map[attribute.Key]string{}),                        // not a gate span at all
	}))
	page, err := env.Store.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.NoError(t, err)
	assert.Equal(t, []string{"0000000000000002", "0000000000000001"}, spanIDs(page.Decisions))
	assert.True(t, page.Decisions[0].OptOut)
	assert.Empty(t, page.Decisions[0].Action)
	assert.Equal(t, []string{}, page.Decisions[0].Verdicts, "no gate judged an opted-out call")
	assert.Equal(t, []string{"|allow||"}, page.Decisions[1].Verdicts)
	// An opted-out call is in no gate's row.
	s, err := env.Store.Stats(ctx, audit.StatsQuery{By: []audit.Dimension{audit.ByGate}})
	require.NoError(t, err)
	assert.Equal(t, []audit.StatsRow{{Keys: []string{""}, Count: 1}}, s.Rows)
}

func TestFollower(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	all := env.Store.NewFollower(audit.Filter{})
	denials := env.Store.NewFollower(audit.Filter{Action: "deny"})
	for _, f := range []*audit.Follower{all, denials} {
		got, err := f.Poll(ctx) // sets the starting point
		require.NoError(t, err)
		assert.Empty(t, got)
	}
	fx := audittest.Fixture()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, fx[:5])) // the coder run
	got, err := all.Poll(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a1a1a1a1a1a1a101", "a1a1a1a1a1a1a102", "a1a1a1a1a1a1a103", "a1a1a1a1a1a1a104"}, spanIDs(got))
	got, err = all.Poll(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "nothing new, nothing repeated from the overlap window")

	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, fx[5:]))
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, fx[:5])) // a re-sent batch
	got, err = all.Poll(ctx)
	require.NoError(t, err)
	assert.Len(t, got, audittest.FixtureDecisions-4, "each new decision once, the re-sent ones not again")
	for i := 1; i < len(got); i++ {
		assert.False(t, got[i].InsertedAt.Before(got[i-1].InsertedAt), "arrival order")
	}
	got, err = denials.Poll(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a1a1a1a1a1a1a102", "b2b2b2b2b2b2b201", "b2b2b2b2b2b2b203", "c3c3c3c3c3c3c301"}, spanIDs(got))

	// Follow from the start delivers everything once, through pages
	// smaller than the data (the overlap re-read included).
	from := env.Store.NewFollower(audit.Filter{}, audit.FollowFrom(time.Unix(0, 0)))
	got, err = from.Poll(ctx)
	require.NoError(t, err)
	assert.Len(t, got, audittest.FixtureDecisions)
	got, err = from.Poll(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)

	// Follow stops when its context ends.
	fctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	n := 0
	err = env.Store.Follow(fctx, audit.Filter{}, 100*time.Millisecond, func(audit.Decision) error { n++; return nil },
		audit.FollowFrom(time.Unix(0, 0)))
	require.NoError(t, err)
	assert.Equal(t, audittest.FixtureDecisions, n)
}

// TestFollowerOverlap checks the no-gap rule: a row whose InsertedAt is a
// little behind the newest one already reported (its insert committed
// late) is still reported, once.
func TestFollowerOverlap(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	insert := func(span string, insertedAt time.Time) {
		t.Helper()
		var p audit.Params
		p.String("span", span).Int64("at", insertedAt.UnixNano())
		require.NoError(t, env.Writer.Exec(p.Context(ctx), "INSERT INTO otel.gate_decisions (Timestamp, InsertedAt, TraceId, SpanId, Action) "+
			"SELECT now64(9), fromUnixTimestamp64Nano({at:Int64}), 'ff', {span:String}, 'deny'"))
	}
	// A decision that arrived just before following started is not new.
	insert("00000000000000ff", time.Now())
	live := env.Store.NewFollower(audit.Filter{})
	got, err := live.Poll(ctx) // the starting point
	require.NoError(t, err)
	assert.Empty(t, got)

	var now time.Time
	require.NoError(t, env.Writer.QueryRow(ctx, "SELECT now64(9)").Scan(&now))
	f := env.Store.NewFollower(audit.Filter{}, audit.FollowFrom(now.Add(-time.Minute)), audit.FollowOverlap(5*time.Second))
	insert("0000000000000001", now)
	got, err = f.Poll(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"00000000000000ff", "0000000000000001"}, spanIDs(got), "FollowFrom a minute ago")
	got, err = live.Poll(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"0000000000000001"}, spanIDs(got), "only what arrived after the start")
	// Committed late: stamped 2s before the newest reported row.
	insert("0000000000000002", now.Add(-2*time.Second))
	// Committed very late: stamped before the overlap window (missed by
	// design; the overlap bounds how late a commit may be).
	insert("0000000000000003", now.Add(-10*time.Second))
	got, err = f.Poll(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"0000000000000002"}, spanIDs(got))
	got, err = f.Poll(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestBadQuerySurfacesClickHouseError(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	// Tables missing: the error says so and keeps ClickHouse's code.
	st, err := audit.Open(ctx, env.ReaderDSN, audit.WithDatabase("missing"))
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.ErrorIs(t, err, audit.ErrNotMigrated)
	var ex *clickhouse.Exception
	require.True(t, errors.As(err, &ex), "%v", err)
	assert.EqualValues(t, 81, ex.Code) // UNKNOWN_DATABASE
	// An engine error on the store's connection.
	err = env.Store.Conn().Exec(ctx, "SELECT no_such_function(1)")
	require.True(t, errors.As(err, &ex), "%v", err)
	assert.EqualValues(t, 46, ex.Code) // UNKNOWN_FUNCTION
}

func TestOpenUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := audit.Open(ctx, "http://127.0.0.1:1") // nothing listens on port 1
	var ue *audit.UnreachableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "127.0.0.1:1", ue.Addr)
}

func TestParseCursor(t *testing.T) {
	for _, c := range []audit.Cursor{
		{Timestamp: time.Unix(1764324000, 123456789).UTC(), SpanID: "a1a1a1a1a1a1a102"},
		// A producer's names may hold the separator and any byte.
		{Timestamp: time.Unix(1764324000, 1).UTC(), SpanID: "a1", Action: "deny", Agent: "a:b:\x00", ToolName: "\xff::"},
		// A hostile span ID that holds the separator (red team: it once
		// parsed back as another cursor, and paging skipped decisions).
		{Timestamp: time.Unix(1764324000, 1).UTC(), SpanID: "ab:::"},
		{Timestamp: time.Unix(1764324000, 1).UTC(), SpanID: "AB\xff"},
	} {
		got, err := audit.ParseCursor(c.String())
		require.NoError(t, err)
		assert.Equal(t, c, got)
	}
	// A token of an earlier version (no Action, Agent, ToolName) still parses.
	old, err := audit.ParseCursor("MTc5NTg2MzkwMTEwMDAwMDAwMDpiMmIyYjJiMmIyYjJiMjAz")
	require.NoError(t, err)
	assert.Equal(t, "b2b2b2b2b2b2b203", old.SpanID)
	for _, bad := range []string{"", "!!!", "bm9zZXA", "YWJjOmRlZg", "MTphYjp4", "MTphYjohOjo", "MTohOjo6"} {
		_, err := audit.ParseCursor(bad)
		assert.ErrorIs(t, err, audit.ErrBadCursor, bad)
	}
}

// The decision record as the executor encodes it (gate.Record.Attributes),
// stored the way the exporter stores attributes (audittest.SpanAttrs),
// reads back field by field, its verdicts in order; the derived gate and
// action columns leave out the entry that summarises verdicts beyond
// gate.MaxVerdicts.
func TestRecordRoundTrip(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	many := make([]gate.Verdict, gate.MaxVerdicts+3)
	for i := range many {
		many[i] = gate.Verdict{Gate: fmt.Sprintf("g%02d", i%4), Action: gate.ActionAllow}
	}
	tests := []struct {
		name        string
		rec         gate.Record
		want        func(t *testing.T, d audit.Decision)
		wantGates   string
		wantActions string
	}{
		{
			name: "rewritten, two rounds, odd characters",
			rec: gate.Record{
				Gated: true, Action: gate.ActionAllow, Source: "classify.bash", Risk: gate.RiskReview,
				Reason: `approved "as rewritten" <&>`, Approval: gate.ApprovalApproved, Approver: "terminal",
				Rewritten: true, RewrittenBy: "sandbox", OriginalInputHash: "05239f897663e2de54bf775f59125ecc5644bc267fc47614a42b84b68c75ce2c",
				Rounds: 2, Duration: 1500 * time.Microsecond,
				Verdicts: []gate.Verdict{
					{Gate: "sandbox", Action: gate.ActionAllow, Rewrote: true, Rule: `strip|pipe "curl" <&> é`},
					{Gate: "classify.bash", Action: gate.ActionAsk, Risk: gate.RiskReview, Rule: `net\upload`},
					{Gate: "sandbox", Action: gate.ActionAllow},
					{Gate: "classify.bash", Action: gate.ActionAsk, Risk: gate.RiskReview},
				},
			},
			want: func(t *testing.T, d audit.Decision) {
				assert.Equal(t, "allow", d.Action)
				assert.Equal(t, `approved "as rewritten" <&>`, d.Reason)
				assert.Equal(t, "approved", d.Approval)
				assert.True(t, d.Rewritten)
				assert.Equal(t, "sandbox", d.RewrittenBy)
				assert.Equal(t, "05239f897663e2de54bf775f59125ecc5644bc267fc47614a42b84b68c75ce2c", d.OriginalInputHash)
				assert.EqualValues(t, 2, d.Rounds)
				assert.EqualValues(t, 1500*time.Microsecond, d.GateDuration)
				assert.Equal(t, []string{`sandbox|rewrite||strip/pipe "curl" <&> é`, `classify.bash|ask|review|net\upload`,
					"sandbox|allow||", "classify.bash|ask|review|"}, d.Verdicts)
				g, a, r, rule := gate.ParseVerdict(d.Verdicts[1])
				assert.Equal(t, []string{"classify.bash", "ask", "review", `net\upload`}, []string{g, a, r, rule})
			},
			wantGates:   "sandbox,classify.bash,sandbox,classify.bash",
			wantActions: "rewrite,ask,allow,ask",
		},
		{
			name: "an invalid approval answer",
			rec: gate.Record{Gated: true, Action: gate.ActionDeny, Source: "policy.consequential", Reason: "approver answered nonsense",
				Approval: gate.ApprovalInvalid, Approver: "channel",
				Verdicts: []gate.Verdict{{Gate: "policy.consequential", Action: gate.ActionAsk}}},
			want: func(t *testing.T, d audit.Decision) {
				assert.Equal(t, "deny", d.Action)
				assert.Equal(t, "invalid", d.Approval)
				assert.False(t, d.Rewritten)
				assert.Zero(t, d.Rounds)
			},
			wantGates:   "policy.consequential",
			wantActions: "ask",
		},
		{
			// The producer leaves gate.verdicts out: the single verdict
			// is the decision (no rule). It reads back from the
			// decision's attributes.
			name: "one verdict that is the decision",
			rec: gate.Record{Gated: true, Action: gate.ActionDeny, Source: "classify.bash", Risk: gate.RiskHigh,
				Reason: "rm -rf /", Verdicts: []gate.Verdict{{Gate: "classify.bash", Action: gate.ActionDeny, Risk: gate.RiskHigh}}},
			want: func(t *testing.T, d audit.Decision) {
				assert.Equal(t, []string{"classify.bash|deny|high|"}, d.Verdicts)
			},
			wantGates:   "classify.bash",
			wantActions: "deny",
		},
		{
			// A single verdict with a rule is recorded: the rule lives
			// only in gate.verdicts.
			name: "one verdict with a rule",
			rec: gate.Record{Gated: true, Action: gate.ActionDeny, Source: "classify.bash", Risk: gate.RiskHigh, Rule: "delete.root",
				Reason: "rm -rf / [delete.root]", Verdicts: []gate.Verdict{{Gate: "classify.bash", Action: gate.ActionDeny, Risk: gate.RiskHigh, Rule: "delete.root"}}},
			want: func(t *testing.T, d audit.Decision) {
				assert.Equal(t, []string{"classify.bash|deny|high|delete.root"}, d.Verdicts)
			},
			wantGates:   "classify.bash",
			wantActions: "deny",
		},
		{
			name: "more verdicts than recorded",
			rec:  gate.Record{Gated: true, Action: gate.ActionAllow, Source: "g00", Verdicts: many},
			want: func(t *testing.T, d audit.Decision) {
				require.Len(t, d.Verdicts, gate.MaxVerdicts+1)
				assert.Equal(t, "…|more|3|", d.Verdicts[gate.MaxVerdicts])
			},
			wantGates:   strings.TrimSuffix(strings.Repeat("g00,g01,g02,g03,", gate.MaxVerdicts/4), ","),
			wantActions: strings.TrimSuffix(strings.Repeat("allow,", gate.MaxVerdicts), ","),
		},
	}
	var spans []audittest.Span
	for i, tc := range tests {
		attrs := audittest.SpanAttrs(tc.rec.Attributes(nil, 0))
		attrs[semconv.GenAIToolNameKey] = "bash"
		spans = append(spans, audittest.Span{Timestamp: audittest.FixtureBase.Add(time.Duration(i) * time.Second),
			TraceID: audittest.TraceCoder, SpanID: fmt.Sprintf("e5e5e5e5e5e5e5%02d", i), Name: "execute_tool bash", Service: "svc", Attrs: attrs})
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, spans))
	vc := verdictColumns(t, ctx, env.Writer, env.Database)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("e5e5e5e5e5e5e5%02d", i)
			page, err := env.Store.Decisions(ctx, audit.Filter{TraceID: audittest.TraceCoder, Since: spans[i].Timestamp, Until: spans[i].Timestamp.Add(time.Nanosecond)}, audit.Page{})
			require.NoError(t, err)
			require.Len(t, page.Decisions, 1)
			require.Equal(t, id, page.Decisions[0].SpanID)
			tc.want(t, page.Decisions[0])
			assert.Equal(t, tc.wantGates+" / "+tc.wantActions, vc[id])
		})
	}
}
