package audit_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
)

// approvalSpans lists the span IDs of the decisions f selects, sorted.
func approvalSpans(t *testing.T, ctx context.Context, st *audit.Store, f audit.Filter) []string {
	t.Helper()
	f.TraceID = audittest.TraceApprovals
	page, err := st.Decisions(ctx, f, audit.Page{})
	require.NoError(t, err)
	var out []string
	for _, d := range page.Decisions {
		out = append(out, d.SpanID)
	}
	sort.Strings(out)
	return out
}

const apr = "a9a9a9a9a9a9a9" // ApprovalFixture's span ID prefix

// wantApprovalColumns is ApprovalFixture's approval columns by span:
// approval, approver, ID and wait in milliseconds, as stored (hostile
// strings in gate.SafeText's form).
func wantApprovalColumns() map[string][4]any {
	return map[string][4]any{
		apr + "01": {"approved", "alice@example.com", "apr-1", uint64(123000)},
		apr + "02": {"pending", "inbox", "apr-2", uint64(0)},
		apr + "03": {"approved", "bob", "apr-2", uint64(3900000)},
		apr + "04": {"declined", "bob", "apr-3", uint64(45000)},
		apr + "05": {"approved", "terminal", "", uint64(850)},
		apr + "06": {"approved", gate.SafeText(audittest.ApprovalHostileApprover, gate.MaxNameBytes), gate.SafeText(audittest.ApprovalHostileID, gate.MaxNameBytes), uint64(1)},
		apr + "07": {"", "", "", uint64(0)},
	}
}

func approvalColumns(t *testing.T, ctx context.Context, st *audit.Store) map[string][4]any {
	t.Helper()
	page, err := st.Decisions(ctx, audit.Filter{TraceID: audittest.TraceApprovals}, audit.Page{})
	require.NoError(t, err)
	out := map[string][4]any{}
	for _, d := range page.Decisions {
		out[d.SpanID] = [4]any{d.Approval, d.Approver, d.ApprovalID, d.ApprovalWaitMs}
	}
	return out
}

// Asks written through otel_traces (gate.Record.Attributes, the exporter's
// string forms) land in the approval columns, hostile names byte for byte
// as recorded; decisions filter by outcome, approver and request ID
// (bound as parameters), and stats group by approver with the time the
// answers took.
func TestApprovalColumns(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, append(audittest.Fixture(), audittest.ApprovalFixture()...)))
	st := env.Store
	assert.Equal(t, wantApprovalColumns(), approvalColumns(t, ctx, st))

	t.Run("filters", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			f    audit.Filter
			want []string
		}{
			{"approved", audit.Filter{Approval: "approved"}, []string{apr + "01", apr + "03", apr + "05", apr + "06"}},
			{"pending", audit.Filter{Approval: "pending"}, []string{apr + "02"}},
			{"declined", audit.Filter{Approval: "declined"}, []string{apr + "04"}},
			{"nobody asked", audit.Filter{Approval: audit.ApprovalNone}, []string{apr + "07"}},
			{"approver", audit.Filter{Approver: "bob"}, []string{apr + "03", apr + "04"}},
			{"approved by", audit.Filter{Approver: "bob", Approval: "approved"}, []string{apr + "03"}},
			{"one request: its pending ask and the resumed call", audit.Filter{ApprovalID: "apr-2"}, []string{apr + "02", apr + "03"}},
			{"hostile approver", audit.Filter{Approver: gate.SafeText(audittest.ApprovalHostileApprover, gate.MaxNameBytes)}, []string{apr + "06"}},
			{"hostile request ID", audit.Filter{ApprovalID: gate.SafeText(audittest.ApprovalHostileID, gate.MaxNameBytes)}, []string{apr + "06"}},
			{"unknown approver", audit.Filter{Approver: "mallory' OR '1'='1"}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				assert.Equal(t, tc.want, approvalSpans(t, ctx, st, tc.f))
			})
		}
		// The older fixture's asks: approval filters see them too.
		page, err := st.Decisions(ctx, audit.Filter{Approval: "declined", TraceID: audittest.TraceReviewer}, audit.Page{})
		require.NoError(t, err)
		require.Len(t, page.Decisions, 1)
		assert.Equal(t, "b2b2b2b2b2b2b203", page.Decisions[0].SpanID)
		assert.Zero(t, page.Decisions[0].ApprovalID)
		assert.Zero(t, page.Decisions[0].ApprovalWaitMs)
	})

	t.Run("stats by approver", func(t *testing.T) {
		s, err := st.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{TraceID: audittest.TraceApprovals}, By: []audit.Dimension{audit.ByApprover}})
		require.NoError(t, err)
		type agg struct{ count, denied, waited, avg, max uint64 }
		got := map[string]agg{}
		for _, r := range s.Rows {
			got[r.Keys[0]] = agg{r.Count, r.Denied, r.Waited, r.AvgWaitMs(), r.WaitMaxMs}
		}
		assert.Equal(t, map[string]agg{
			"alice@example.com": {1, 0, 1, 123000, 123000},
			"inbox":             {1, 1, 0, 0, 0},
			"bob":               {2, 1, 2, (3900000 + 45000) / 2, 3900000},
			"terminal":          {1, 0, 1, 850, 850},
			gate.SafeText(audittest.ApprovalHostileApprover, gate.MaxNameBytes): {1, 0, 1, 1, 1},
			"": {1, 0, 0, 0, 0},
		}, got)
		assert.EqualValues(t, 7, s.Total)
		assert.Equal(t, "bob", s.Rows[0].Keys[0], "largest group first")

		s, err = st.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{TraceID: audittest.TraceApprovals, Approval: "approved"},
			By: []audit.Dimension{audit.ByApprover, audit.ByApproval}})
		require.NoError(t, err)
		assert.EqualValues(t, 4, s.Total, "who let what through")
		for _, r := range s.Rows {
			assert.Equal(t, "approved", r.Keys[1])
		}
		dims, err := audit.ParseDimensions("approver,approval")
		require.NoError(t, err)
		assert.Equal(t, []audit.Dimension{audit.ByApprover, audit.ByApproval}, dims)
	})
}

// chainedApprovalSpans is one run of n chained decisions (agent
// "chained-asks", run "run-chained-asks"), every other one an answered
// durable ask (approval ID and wait set), as the executor records them.
func chainedApprovalSpans(traceID string, n int) []audittest.Span {
	spans := make([]audittest.Span, n)
	prev := ""
	base := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)
	for i := range spans {
		rec := gate.Record{Gated: true, Action: gate.ActionAllow, Source: "policy.consequential", Reason: "call", Stage: gate.StageGate}
		if i%2 == 0 {
			rec.Approval, rec.Approver = gate.ApprovalApproved, audittest.ApprovalHostileApprover
			rec.ApprovalID, rec.ApprovalWait = "apr-chained-"+string(rune('a'+i)), time.Duration(i+1)*time.Minute
		}
		ids := []attribute.KeyValue{semconv.GenAIToolName("deploy"), semconv.GenAIToolCallID("call_" + string(rune('a'+i))),
			semconv.GenAIAgentName("chained-asks"), gate.AttrRunID.String("run-chained-asks")}
		attrs := rec.Attributes(ids, 0)
		d := gate.StoredDecision{TraceID: traceID, SpanID: spanIDOf(0xa9c4<<16 + i)}
		d.ReadAttributes(attrs)
		d.Defaults()
		rec.Chain = gate.Link{ID: "00a9c4", Seq: int64(i + 1), Prev: prev}
		rec.Chain.Hash = gate.LinkHash(rec.Chain.ID, uint64(i+1), prev, d.Digest())
		prev = rec.Chain.Hash
		spans[i] = audittest.Span{Timestamp: base.Add(time.Duration(i) * time.Second), TraceID: traceID, SpanID: d.SpanID,
			Name: "execute_tool deploy", Service: "chained", Attrs: audittest.SpanAttrs(rec.Chain.Attributes(attrs))}
	}
	return spans
}

func spanIDOf(n int) string {
	const hexd = "0123456789abcdef"
	b := make([]byte, 16)
	for i := 15; i >= 0; i-- {
		b[i] = hexd[n&15]
		n >>= 4
	}
	return string(b)
}

// A database at schema version 8 holding decisions — the fixture's, a
// chain recorded before the approval attributes existed, and asks that
// carry them (their producer upgraded first) — is upgraded by migration 9
// in place: the table gains ApprovalId and ApprovalWaitMs (same layout as
// a fresh install), the rows of spans carrying them are repaired keeping
// their InsertedAt, each decision reads once, the view fills the columns
// from then on, and `verify` finds the old chain and a chain with
// approval columns complete.
func TestMigrateUpgradesVersion8(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	const db = "upgrade8"
	opts := []audit.Option{audit.WithDatabase(db)}
	require.NoError(t, audittest.CreateAtVersion(ctx, env.Writer, db, 8))
	oldChain := chainedSpans(fmtTrace("c4"), 4)
	asks := chainedApprovalSpans(fmtTrace("a9c4"), 6)
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, append(append(append(audittest.Fixture(), oldChain...), audittest.ApprovalFixture()...), asks[:3]...)))
	before := insertedAt(t, ctx, env.Writer, db)

	st, err := audit.Open(ctx, env.ReaderDSN, opts...)
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.ErrorIs(t, err, audit.ErrNotMigrated)
	_, err = st.Chains(ctx, audit.ChainQuery{RunID: "run-chained"})
	require.ErrorIs(t, err, audit.ErrNotMigrated, "verify reads the approval columns")

	res, err := audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	assert.Equal(t, []int{9, 10, 11, 12}, res.Applied)
	freshCols, freshView := schemaOf(t, ctx, env.Writer, env.Database)
	cols, view := schemaOf(t, ctx, env.Writer, db)
	assert.Equal(t, freshCols, cols, "same schema as a fresh install")
	assert.Equal(t, freshView, view)
	assert.Contains(t, cols, "ApprovalId | String |  |  | CODEC(ZSTD(1))")
	assert.Contains(t, cols, "ApprovalWaitMs | UInt64 |  |  | CODEC(ZSTD(1))")

	page, err := st.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.NoError(t, err)
	require.Len(t, page.Decisions, len(before), "each decision once")
	for _, d := range page.Decisions {
		require.Len(t, before[d.SpanID], 1, d.SpanID)
		assert.True(t, d.InsertedAt.Equal(before[d.SpanID][0]), "%s keeps its InsertedAt", d.SpanID)
	}
	assert.Equal(t, wantApprovalColumns(), approvalColumns(t, ctx, st), "repaired rows carry the approval columns")
	got, err := st.NewFollower(audit.Filter{}, audit.FollowFrom(time.Unix(0, 0))).Poll(ctx)
	require.NoError(t, err)
	assert.Len(t, got, len(before), "the follow stream reports no repaired row again")

	// The rest of the asking run arrives through the new view.
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, asks[3:]))
	ids, err := st.Decisions(ctx, audit.Filter{ApprovalID: "apr-chained-e"}, audit.Page{})
	require.NoError(t, err)
	require.Len(t, ids.Decisions, 1)
	assert.EqualValues(t, 5*60*1000, ids.Decisions[0].ApprovalWaitMs)

	for run, n := range map[string]uint64{"run-chained": 4, "run-chained-asks": 6} {
		chains, err := st.Chains(ctx, audit.ChainQuery{RunID: run})
		require.NoError(t, err)
		require.Len(t, chains.Rows, int(n), run)
		reps := audit.Verify(chains)
		require.Len(t, reps, 1, run)
		assert.True(t, reps[0].Complete, "%s: %+v", run, reps[0].Problems)
	}
	// An approval ID cleared after the fact is an edit.
	chains, err := st.Chains(ctx, audit.ChainQuery{RunID: "run-chained-asks"})
	require.NoError(t, err)
	chains.Rows[0].ApprovalID = ""
	reps := audit.Verify(chains)
	require.Len(t, reps, 1)
	require.NotEmpty(t, reps[0].Problems)
	assert.Equal(t, audit.ProblemEdited, reps[0].Problems[0].Kind)

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

// fmtTrace is a 32-digit trace ID repeating p.
func fmtTrace(p string) string {
	out := ""
	for len(out) < 32 {
		out += p
	}
	return out[:32]
}
