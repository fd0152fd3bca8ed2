package audit_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
)

// modelDecision is what the Go model of the store keeps of one span.
type modelDecision struct {
	ts                                                                 time.Time
	agent, tool, action, rule, risk, source, stage, approval, approver string
	calls, wait                                                        uint64
}

func (d modelDecision) key(dim audit.Dimension) string {
	switch dim {
	case audit.ByTool:
		return d.tool
	case audit.ByAgent:
		return d.agent
	case audit.ByAction:
		return d.action
	case audit.ByRule:
		return d.rule
	case audit.ByRisk:
		return d.risk
	case audit.BySource:
		return d.source
	case audit.ByStage:
		return d.stage
	case audit.ByApproval:
		return d.approval
	case audit.ByApprover:
		return d.approver
	}
	panic("no model for " + dim)
}

func (d modelDecision) span(id string) audittest.Span {
	a := map[attribute.Key]string{
		semconv.GenAIOperationNameKey: "execute_tool", semconv.GenAIToolNameKey: d.tool, semconv.GenAIAgentNameKey: d.agent,
		gate.AttrGated: "true", gate.AttrAction: d.action, gate.AttrSource: d.source, gate.AttrStage: d.stage,
	}
	set := func(k attribute.Key, v string) {
		if v != "" {
			a[k] = v
		}
	}
	set(gate.AttrRule, d.rule)
	set(gate.AttrRiskLevel, d.risk)
	set(gate.AttrApproval, d.approval)
	set(gate.AttrApprover, d.approver)
	if d.wait > 0 {
		a[gate.AttrApprovalWait] = strconv.FormatUint(d.wait, 10)
	}
	if d.calls > 1 {
		a[gate.AttrCalls] = strconv.FormatUint(d.calls, 10)
	}
	return audittest.Span{Timestamp: d.ts, TraceID: strings.Repeat("ab", 16), SpanID: id, Name: "execute_tool " + d.tool,
		Service: "rollup-model", Attrs: a, Duration: time.Millisecond}
}

type modelRow struct{ count, denied, waited, waitSum, waitMax uint64 }

// modelStats answers q over the deduplicated decisions.
func modelStats(ds map[string]modelDecision, q audit.StatsQuery) map[string]modelRow {
	out := map[string]modelRow{}
	loc := q.Location
	if loc == nil {
		loc = time.UTC
	}
	for _, d := range ds {
		f := q.Filter
		if (!f.Since.IsZero() && d.ts.Before(f.Since)) || (!f.Until.IsZero() && !d.ts.Before(f.Until)) ||
			(f.Agent != "" && d.agent != f.Agent) || (f.Tool != "" && d.tool != f.Tool) || (f.Action != "" && d.action != f.Action) ||
			(f.Approval == audit.ApprovalNone && d.approval != "") || (f.Approval != "" && f.Approval != audit.ApprovalNone && d.approval != f.Approval) {
			continue
		}
		var parts []string
		if q.Every != 0 {
			lt := d.ts.In(loc)
			var b time.Time
			if q.Every == 24*time.Hour {
				b = time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, loc)
			} else {
				b = time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), 0, 0, 0, loc)
			}
			parts = append(parts, strconv.FormatInt(b.Unix(), 10))
		}
		for _, dim := range q.By {
			parts = append(parts, d.key(dim))
		}
		k := strings.Join(parts, "|")
		r := out[k]
		r.count += d.calls
		if d.action == "deny" {
			r.denied += d.calls
		}
		if d.wait > 0 {
			r.waited++
		}
		r.waitSum += d.wait
		r.waitMax = max(r.waitMax, d.wait)
		out[k] = r
	}
	return out
}

func statsMap(st audit.Stats) map[string]modelRow {
	out := map[string]modelRow{}
	for _, r := range st.Rows {
		var parts []string
		if st.Every != 0 {
			parts = append(parts, strconv.FormatInt(r.Bucket.Unix(), 10))
		}
		parts = append(parts, r.Keys...)
		out[strings.Join(parts, "|")] = modelRow{r.Count, r.Denied, r.Waited, r.WaitSumMs, r.WaitMaxMs}
	}
	return out
}

// TestRollupIsExactUnderDuplicates is the roll-up's guarantee as a
// property, on the real engine: decisions inserted at random times over
// three days, each span possibly inserted again in a later batch (a
// retried export), with merges stopped so that duplicates stay in
// separate parts, the roll-up run at random points (audit.Roll, as its
// refreshable view does) and parts merged at random points — and for a
// random stats question (dimensions, filters, a range whose ends are not
// on the hour, hourly or daily buckets in UTC or a half-hour zone), the
// answer from the roll-up, the answer from gate_decisions alone and
// Stats itself all equal the Go model over the deduplicated decisions.
func TestRollupIsExactUnderDuplicates(t *testing.T) {
	nearHour := []time.Duration{-500 * time.Millisecond, -time.Millisecond, -time.Microsecond, -1, 0, 1, time.Microsecond, time.Millisecond, 500 * time.Millisecond}
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, env.Writer.Exec(ctx, "SYSTEM STOP MERGES otel.gate_decisions"))
	require.NoError(t, env.Writer.Exec(ctx, "SYSTEM STOP VIEW otel.gate_decisions_hourly_mv"))
	base := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	model := map[string]modelDecision{}
	var all []string
	seq := 0
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	require.NoError(t, err)
	dimsFit := []audit.Dimension{audit.ByTool, audit.ByAgent, audit.ByAction, audit.ByRule, audit.ByRisk, audit.BySource, audit.ByStage, audit.ByApproval, audit.ByApprover}
	rolledUsed, checked := 0, 0
	sources := map[string]int{}
	// Bounded in time: each draw costs a few engine round trips (~0.3 s
	// on an idle 2-core machine), so after the budget the remaining draws
	// of rapid's 100 stop at once; the state (the model and the table)
	// grows across draws either way, so a failure reports the draw that
	// found it (rapid calls it flaky: the table it ran on is gone).
	start := time.Now()
	const budget = 45 * time.Second
	rapid.Check(t, func(rt *rapid.T) {
		if time.Since(start) > budget {
			return
		}
		checked++
		// New decisions, and copies of earlier ones.
		var spans []audittest.Span
		for range rapid.IntRange(1, 40).Draw(rt, "new") {
			seq++
			id := fmt.Sprintf("%016x", 0x1000000+seq)
			kind := rapid.IntRange(0, 9).Draw(rt, "kind")
			d := modelDecision{
				ts:     base.Add(time.Duration(rapid.Int64Range(0, int64(72*time.Hour)).Draw(rt, "at"))),
				agent:  rapid.SampledFrom([]string{"coder", "ops", "eve'\\"}).Draw(rt, "agent"),
				tool:   rapid.SampledFrom([]string{"bash", "read_file", "deploy"}).Draw(rt, "tool"),
				source: rapid.SampledFrom([]string{"classify.bash", "policy.network"}).Draw(rt, "source"),
				stage:  "gate", action: "allow", risk: "safe", calls: 1,
			}
			switch {
			case kind < 3:
				d.action, d.risk, d.rule = "deny", "high", rapid.SampledFrom([]string{"rm.root", "net.egress"}).Draw(rt, "rule")
			case kind == 3:
				d.approval, d.approver, d.wait = "approved", rapid.SampledFrom([]string{"alice", "bob"}).Draw(rt, "approver"), uint64(rapid.IntRange(1, 5000).Draw(rt, "wait"))
			case kind == 4:
				d.action, d.stage, d.source, d.calls = "deny", "run", "executor", uint64(rapid.IntRange(1, 64).Draw(rt, "calls"))
			}
			if rapid.IntRange(0, 2).Draw(rt, "near-hour") == 0 {
				// Just before, on or just after an hour: the edges between
				// the roll-up's whole hours and gate_decisions (a DateTime
				// bound once dropped a decision a nanosecond to half a
				// second before the range's first whole hour).
				d.ts = base.Add(time.Duration(rapid.IntRange(0, 72).Draw(rt, "hour")) * time.Hour).Add(rapid.SampledFrom(nearHour).Draw(rt, "off"))
			}
			model[id] = d
			all = append(all, id)
			spans = append(spans, d.span(id))
		}
		for range rapid.IntRange(0, 10).Draw(rt, "dups") {
			id := rapid.SampledFrom(all).Draw(rt, "dup")
			spans = append(spans, model[id].span(id))
		}
		// In one or two batches (parts).
		cut := rapid.IntRange(0, len(spans)).Draw(rt, "cut")
		for _, b := range [][]audittest.Span{spans[:cut], spans[cut:]} {
			if len(b) > 0 {
				require.NoError(rt, audittest.InsertSpans(ctx, env.Writer, "otel", b))
			}
		}
		if rapid.IntRange(0, 2).Draw(rt, "roll") > 0 {
			require.NoError(rt, audit.Roll(ctx, env.Writer, audit.WithRollupDelay(0)))
		}
		if rapid.IntRange(0, 5).Draw(rt, "merge") == 0 {
			require.NoError(rt, env.Writer.Exec(ctx, "OPTIMIZE TABLE otel.gate_decisions_hourly FINAL"))
		}
		if rapid.IntRange(0, 5).Draw(rt, "merge-arrivals") == 0 {
			require.NoError(rt, env.Writer.Exec(ctx, "OPTIMIZE TABLE otel.gate_decisions_arrivals FINAL"))
		}
		// The hours decisions reached after a watermark, from the arrivals
		// (what Stats reads) and from gate_decisions itself, agree for a
		// watermark at, just before and just after a decision's InsertedAt
		// (equal here, where gate_decisions is not merged; a merge that
		// keeps a span's first copy can only drop hours from gate_decisions'
		// side, see TestMigrateUpgradesVersion11).
		var marks []int64
		rows, err := env.Writer.Query(ctx, "SELECT DISTINCT toUnixTimestamp64Nano(InsertedAt) FROM otel.gate_decisions")
		require.NoError(rt, err)
		for rows.Next() {
			var m int64
			require.NoError(rt, rows.Scan(&m))
			marks = append(marks, m)
		}
		require.NoError(rt, rows.Err())
		rows.Close()
		slices.Sort(marks)
		w := rapid.SampledFrom(marks).Draw(rt, "mark") + rapid.Int64Range(-1, 1).Draw(rt, "mark-off")
		arrived, err := audit.DirtyHoursFrom(ctx, env.Store, w, true)
		require.NoError(rt, err)
		inserted, err := audit.DirtyHoursFrom(ctx, env.Store, w, false)
		require.NoError(rt, err)
		require.Equal(rt, inserted, arrived, "hours reached after %d", w)
		if w < marks[len(marks)-1] {
			require.NotEmpty(rt, arrived, "a decision was inserted after %d", w)
		}
		// A question.
		var q audit.StatsQuery
		// Half the questions are the common ones the daily roll-ups
		// answer: by tool, agent, action and rule only.
		common := rapid.Bool().Draw(rt, "common")
		for _, d := range dimsFit {
			if common && d != audit.ByTool && d != audit.ByAgent && d != audit.ByAction && d != audit.ByRule {
				continue
			}
			if rapid.IntRange(0, 3).Draw(rt, "by-"+string(d)) == 0 {
				q.By = append(q.By, d)
			}
		}
		// The range's ends: anywhere, or at a decision's Timestamp (1 ns
		// either side), so that decisions sit on and next to both edges.
		end := func(label string, lo, hi time.Duration) time.Time {
			if rapid.Bool().Draw(rt, label+"-at-decision") {
				return model[rapid.SampledFrom(all).Draw(rt, label+"-decision")].ts.Add(time.Duration(rapid.Int64Range(-1, 1).Draw(rt, label+"-off")))
			}
			return base.Add(time.Duration(rapid.Int64Range(int64(lo), int64(hi)).Draw(rt, label+"-at")))
		}
		if rapid.Bool().Draw(rt, "since") {
			q.Filter.Since = end("since", 0, 36*time.Hour)
		}
		if rapid.Bool().Draw(rt, "until") {
			q.Filter.Until = end("until", 36*time.Hour, 80*time.Hour)
		}
		q.Filter.Agent = rapid.SampledFrom([]string{"", "", "coder", "eve'\\"}).Draw(rt, "f-agent")
		q.Filter.Action = rapid.SampledFrom([]string{"", "", "deny"}).Draw(rt, "f-action")
		if !common {
			q.Filter.Approval = rapid.SampledFrom([]string{"", "", "", audit.ApprovalNone, "approved"}).Draw(rt, "f-approval")
		}
		q.Every = rapid.SampledFrom([]time.Duration{0, time.Hour, 24 * time.Hour}).Draw(rt, "every")
		q.Location = rapid.SampledFrom([]*time.Location{time.UTC, kolkata}).Draw(rt, "loc")
		want := modelStats(model, q)
		raw, _, err := audit.StatsFrom(ctx, env.Store, q, false)
		require.NoError(rt, err)
		require.Equal(rt, want, statsMap(raw), "gate_decisions alone")
		rolled, ok, err := audit.StatsFrom(ctx, env.Store, q, true)
		require.NoError(rt, err)
		if ok {
			rolledUsed++
			src := audit.StatsSource(ctx, env.Store, q)
			sources[src]++
			require.Equal(rt, want, statsMap(rolled), "roll-up (%s)", src)
		}
		got, err := env.Store.Stats(ctx, q)
		require.NoError(rt, err)
		require.Equal(rt, want, statsMap(got), "Stats")
	})
	require.Positive(t, rolledUsed, "no question was answered from the roll-up")
	require.Positive(t, sources["daily:gate_decisions_daily_rule"]+sources["daily:gate_decisions_daily_tool"], "no question was answered from a daily roll-up")
	t.Logf("%d questions checked, %d of them from the roll-ups %v", checked, rolledUsed, sources)
	var rows, spans uint64
	require.NoError(t, env.Writer.QueryRow(ctx, "SELECT count(), uniqExact(SpanId) FROM otel.gate_decisions").Scan(&rows, &spans))
	require.Greater(t, rows, spans, "the test left no duplicate unmerged")
}

// TestStatsRangeEndsBetweenSeconds: decisions a nanosecond to half a
// second before the first whole hour of a range, and as far after its
// last, are counted by every path (the red team's example, session 13:
// the edges were bounds of type DateTime, and the engine's index analysis
// compared a DateTime64(9) Timestamp just below one as not less than it,
// so the roll-up path lost the first decision).
func TestStatsRangeEndsBetweenSeconds(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	h := time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)
	offs := []time.Duration{1, time.Microsecond, time.Millisecond, 500 * time.Millisecond}
	var spans []audittest.Span
	for i, off := range offs {
		for j, ts := range []time.Time{h.Add(-off), h.Add(24*time.Hour + off)} {
			d := modelDecision{ts: ts, agent: "coder", tool: "bash", action: "allow", risk: "safe", source: "policy", stage: "gate", calls: 1}
			spans = append(spans, d.span(fmt.Sprintf("%016x", 0x5ec0000+2*i+j)))
		}
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, spans))
	require.NoError(t, audit.Roll(ctx, env.Writer, audit.WithRollupDelay(0)))
	for i, off := range offs {
		want := 2 * (i + 1) // the decisions of this offset and of the smaller ones
		for _, every := range []time.Duration{0, time.Hour, 24 * time.Hour} {
			q := audit.StatsQuery{Filter: audit.Filter{Since: h.Add(-off), Until: h.Add(24*time.Hour + off + 1)}, Every: every}
			for _, rollup := range []bool{false, true} {
				st, ok, err := audit.StatsFrom(ctx, env.Store, q, rollup)
				require.NoError(t, err)
				require.True(t, ok)
				assert.EqualValues(t, want, st.Total, "off %v, every %v, roll-up %v (%s)", off, every, rollup, audit.StatsSource(ctx, env.Store, q))
			}
			st, err := env.Store.Stats(ctx, q)
			require.NoError(t, err)
			assert.EqualValues(t, want, st.Total, "Stats, off %v, every %v", off, every)
		}
	}
}

// TestBucketsInAZoneThatIsWholeOnlyAtTheEnds: hourly and daily buckets in
// Australia/Lord_Howe over 2026-01-01…2026-12-01 (+11 at both ends, +10:30
// in June) equal the model: three decisions around local midnight of 15
// June are split across the day and hour boundaries, not counted in one
// bucket (the red team's example, session 13: the roll-up was used because
// the offset was whole at the range's ends and now).
func TestBucketsInAZoneThatIsWholeOnlyAtTheEnds(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	lh, err := time.LoadLocation("Australia/Lord_Howe")
	require.NoError(t, err)
	model := map[string]modelDecision{}
	var spans []audittest.Span
	for i, ts := range []time.Time{ // 23:40 on the 15th, 00:10 and 00:20 on the 16th, local
		time.Date(2026, 6, 15, 13, 10, 0, 0, time.UTC),
		time.Date(2026, 6, 15, 13, 40, 0, 0, time.UTC),
		time.Date(2026, 6, 15, 13, 50, 0, 0, time.UTC),
	} {
		id := fmt.Sprintf("%016x", 0x7000+i)
		d := modelDecision{ts: ts, agent: "lh", tool: "bash", action: "allow", risk: "safe", source: "policy", stage: "gate", calls: 1}
		model[id] = d
		spans = append(spans, d.span(id))
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, spans))
	require.NoError(t, audit.Roll(ctx, env.Writer, audit.WithRollupDelay(0)))
	for _, every := range []time.Duration{time.Hour, 24 * time.Hour} {
		q := audit.StatsQuery{Every: every, Location: lh, Filter: audit.Filter{
			Since: time.Date(2026, 1, 1, 0, 0, 0, 0, lh), Until: time.Date(2026, 12, 1, 0, 0, 0, 0, lh)}}
		want := modelStats(model, q)
		require.Len(t, want, 2, "the model splits the decisions")
		got, err := env.Store.Stats(ctx, q)
		require.NoError(t, err)
		assert.Equal(t, want, statsMap(got), "every %v: Stats (%s)", every, audit.StatsSource(ctx, env.Store, q))
	}
}
