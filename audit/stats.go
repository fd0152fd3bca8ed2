package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/gate"
)

// Dimension is a column decisions can be grouped by.
type Dimension string

// Dimensions, in the order auditq documents them.
const (
	ByTool   Dimension = "tool"
	ByAgent  Dimension = "agent"
	ByAction Dimension = "action"
	ByReason Dimension = "reason"
	ByRisk   Dimension = "risk"
	// ByRule groups by the deciding gate's rule: the Rule column
	// (gate.rule, schema version 6: Decision.Rule of any gate, classifier
	// or custom) when set; else, for rows without it (spans of older
	// producers, reasons bridged from other frameworks), the first rule ID
	// the reason names in brackets ("… [delete.root-home]; also [net]" →
	// "delete.root-home", RulePattern); "" when neither names one.
	// Classifier reasons quote the call (paths, commands), so grouping by
	// reason scatters; by rule it doesn't.
	ByRule Dimension = "rule"
	// BySource groups by the policy that decided (gate.source).
	BySource Dimension = "source"
	// ByApproval groups by the approval outcome of asks (gate.approval:
	// approved, declined, timeout, invalid, pending; "" when nobody was
	// asked).
	ByApproval Dimension = "approval"
	// ByApprover groups by who answered the asks (gate.approver: the
	// approver's name, or the person a durable request's answer names;
	// "" when nobody was asked). With ByApproval: who let what through,
	// and who refused. StatsRow's Waited and wait fields say how long
	// they took.
	ByApprover Dimension = "approver"
	// ByGate groups by every gate that judged the call (VerdictGates:
	// each gate of Decision.Verdicts once, however many rounds it judged;
	// for a span without gate.verdicts, the deciding gate). A call judged
	// by two gates counts once in each gate's row, so the counts (and
	// Stats.Total) add up to calls × gates; Denied counts the calls whose
	// final action was deny, whichever gate denied; a call no gate judged
	// (opted out) is in no row. BySource is the deciding gate only.
	ByGate Dimension = "gate"
	// ByStage groups by how far the calls got (gate.stage): registry,
	// reachability and input are the calls the executor refused before any
	// gate (unknown tool, unreachable tool, invalid input); gate is every
	// call that reached the gate.
	ByStage Dimension = "stage"
)

// RulePattern is the RE2 pattern ByRule extracts a rule ID from a reason
// with (its first group), for rows without a Rule; the demo's summary uses
// the same pattern for decisions without a rule.
const RulePattern = `\[([a-z0-9][a-z0-9_.-]*)\]`

// Dimensions lists every Dimension.
func Dimensions() []Dimension {
	return []Dimension{ByTool, ByAgent, ByAction, ByReason, ByRisk, ByRule, BySource, ByApproval, ByApprover, ByGate, ByStage}
}

// column is the gate_decisions column of d, or "".
func (d Dimension) column() string {
	switch d {
	case ByTool:
		return "ToolName"
	case ByAgent:
		return "Agent"
	case ByAction:
		return "Action"
	case ByReason:
		return "Reason"
	case ByRisk:
		return "RiskLevel"
	case ByRule:
		return "if(Rule != '', Rule, extract(Reason, " + quoteString(RulePattern) + "))"
	case BySource:
		return "Source"
	case ByApproval:
		return "Approval"
	case ByApprover:
		return "Approver"
	case ByGate:
		return "Gate"
	case ByStage:
		return "Stage"
	}
	return ""
}

// selectExpr is what the stats query selects for d: its column, or for
// ByGate the call's distinct gates, one row each (arrayJoin), named Gate.
func (d Dimension) selectExpr() string {
	if d == ByGate {
		return "arrayJoin(arrayDistinct(VerdictGates)) AS Gate"
	}
	return d.column()
}

// ParseDimensions parses a comma-separated list such as "tool,action".
func ParseDimensions(s string) ([]Dimension, error) {
	var out []Dimension
	seen := map[Dimension]bool{}
	for _, part := range strings.Split(s, ",") {
		d := Dimension(strings.TrimSpace(strings.ToLower(part)))
		if d == "" {
			continue
		}
		if d.column() == "" {
			return nil, fmt.Errorf("audit: unknown dimension %q (want tool, agent, action, reason, risk, rule, source, approval, approver, gate or stage)", d)
		}
		if seen[d] {
			return nil, fmt.Errorf("audit: dimension %q given twice", d)
		}
		seen[d] = true
		out = append(out, d)
	}
	return out, nil
}

// StatsQuery asks for decision counts.
type StatsQuery struct {
	Filter Filter
	// By are the grouping dimensions; none gives one total per bucket.
	By []Dimension
	// Every, when non-zero, splits counts into time buckets of this width
	// (whole seconds, at least 1s). Buckets of whole days, hours or minutes
	// start on those boundaries in Location.
	Every time.Duration
	// Location aligns day buckets (nil: UTC).
	Location *time.Location
}

// StatsRow is the count of one group in one bucket.
type StatsRow struct {
	// Bucket is the bucket's start; zero without StatsQuery.Every.
	Bucket time.Time
	// Keys are the group's values, one per StatsQuery.By.
	Keys []string
	// Count is the number of tool calls the group's decisions record
	// (sum of Decision.Calls: a row is one call, a grouped refusal its
	// calls); Denied of them with action deny.
	Count  uint64
	Denied uint64
	// Waited is how many of the group's decisions recorded the time from
	// an ask to its answer (Decision.ApprovalWaitMs > 0, schema version
	// 9); WaitSumMs and WaitMaxMs are the sum and the largest of those
	// times, in milliseconds (AvgWaitMs is their mean).
	Waited    uint64
	WaitSumMs uint64
	WaitMaxMs uint64
}

// AvgWaitMs is the mean time from ask to answer of the group's decisions
// that recorded one (WaitSumMs / Waited), 0 when none did.
func (r StatsRow) AvgWaitMs() uint64 {
	if r.Waited == 0 {
		return 0
	}
	return r.WaitSumMs / r.Waited
}

// Stats is the answer to a StatsQuery: rows ordered by bucket, then count
// descending, then keys.
type Stats struct {
	By    []Dimension
	Every time.Duration
	Rows  []StatsRow
	// Total and TotalDenied sum all rows.
	Total       uint64
	TotalDenied uint64
}

// Stats counts the tool calls decided, grouped by q.By, per time bucket
// when q.Every is set: each decision counts the calls it records
// (Decision.Calls, sum(Calls): 1 per row except the executor's grouped
// refusals), so the total is the number of calls made, however the
// executor grouped their spans. Duplicated spans count once (ByGate counts
// a call once per gate).
//
// When the question fits the hourly roll-up (schema version 10: every
// dimension and filter one of its columns, buckets of whole hours; see
// rollupFits), the whole hours of the range are read from it and only the
// rest — the range's partial first and last hours, and the hours decisions
// reached since the roll-up last ran — from gate_decisions: the answer is
// the same, and its cost grows with the hours of the range, not with the
// decisions. Otherwise, or without a roll-up, gate_decisions answers.
//
// When the question also fits a narrow daily roll-up (schema version 11:
// grouped and filtered only by action, agent and tool, or action, agent
// and rule; no buckets or buckets of whole UTC days), the narrowest one
// serves the whole days of the range, and the hourly roll-up only the
// other whole hours (see dailyRollup).
func (s *Store) Stats(ctx context.Context, q StatsQuery) (Stats, error) {
	if r, ok := q.dailyFor(); ok {
		if w, ok := s.dailyRolledThrough(ctx, r); ok {
			return s.stats(ctx, q, w, &r)
		}
	}
	if q.rollupFits() {
		if w, ok := s.rolledThrough(ctx); ok {
			return s.stats(ctx, q, w, nil)
		}
	}
	return s.stats(ctx, q, 0, nil)
}

// stats runs q over gate_decisions (rolled = 0) or over the roll-ups and
// gate_decisions (rolled: the watermark of the hourly roll-up, or of
// daily when it is not nil).
func (s *Store) stats(ctx context.Context, q StatsQuery, rolled int64, daily *dailyRollup) (Stats, error) {
	out := Stats{By: q.By, Every: q.Every}
	var p Params
	var sel, group []string
	timeCol := "Timestamp"
	if rolled != 0 {
		timeCol = "T"
	}
	if q.Every != 0 {
		if q.Every < time.Second || q.Every%time.Second != 0 {
			return out, fmt.Errorf("audit: bucket width %v is not a whole number of seconds", q.Every)
		}
		unit, n := "Second", q.Every/time.Second
		switch {
		case q.Every%(24*time.Hour) == 0:
			unit, n = "Day", q.Every/(24*time.Hour)
		case q.Every%time.Hour == 0:
			unit, n = "Hour", q.Every/time.Hour
		case q.Every%time.Minute == 0:
			unit, n = "Minute", q.Every/time.Minute
		}
		loc := q.Location
		if loc == nil {
			loc = time.UTC
		}
		p.Int64("every", int64(n))
		p.String("tz", zoneName(loc))
		sel = append(sel, "toInt64(toUnixTimestamp(toStartOfInterval(toDateTime("+timeCol+", {tz:String}), toInterval"+unit+"({every:UInt32}), {tz:String}))) AS Bucket")
		group = append(group, "Bucket")
	}
	col := func(d Dimension) string {
		if rolled != 0 {
			return d.rollupColumn()
		}
		return d.column()
	}
	for _, d := range q.By {
		if d.column() == "" {
			return out, fmt.Errorf("audit: unknown dimension %q", d)
		}
		if rolled != 0 {
			sel = append(sel, d.rollupColumn())
		} else {
			sel = append(sel, d.selectExpr())
		}
		group = append(group, col(d))
	}
	var from string
	var dirty []int64
	if rolled != 0 {
		var ok bool
		var err error
		if dirty, ok, err = s.dirtyHours(ctx, rolled); err != nil {
			return out, err
		} else if !ok {
			return s.stats(ctx, q, 0, nil) // too many hours to exclude: the trail answers
		}
	}
	if rolled != 0 {
		sel = append(sel, "sum(cCalls) AS Count", "sum(cDenied) AS Denied", "sum(cWaited) AS Waited", "sum(cWaitSum) AS WaitSum", "max(cWaitMax) AS WaitMax")
		from = s.rollupSource(q.Filter, dirty, &p, daily)
	} else {
		sel = append(sel, "sum(Calls) AS Count", "sumIf(Calls, Action = "+quoteString(string(gate.ActionDeny))+") AS Denied",
			"countIf(ApprovalWaitMs > 0) AS Waited", "sum(ApprovalWaitMs) AS WaitSum", "max(ApprovalWaitMs) AS WaitMax")
		from = s.cfg.read(DecisionsTable) + " FINAL" + q.Filter.where(&p)
	}
	sql := "SELECT " + strings.Join(sel, ", ") + "\nFROM " + from
	order := []string{"Count DESC"}
	if len(group) > 0 {
		sql += "\nGROUP BY " + strings.Join(group, ", ")
		if q.Every != 0 {
			order = append([]string{"Bucket"}, order...)
		}
		for _, d := range q.By {
			order = append(order, col(d))
		}
	}
	sql += "\nORDER BY " + strings.Join(order, ", ") + finalSettings
	rows, err := s.query(ctx, "stats", sql, &p)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	// One set of scan targets for every row, the rows' keys cut from
	// shared blocks, and the rows gathered in chunks that are copied once
	// into Rows at the end: a bucketed answer has tens of thousands of
	// rows, and per-row allocations were a third of its time, then growing
	// Rows by append (each growth copying every row so far, with write
	// barriers) 15 % of it.
	var (
		bucket int64
		r      StatsRow
		scan   = make([]string, len(q.By))
		dest   []any
		slab   []string
		chunks [][]StatsRow
		chunk  []StatsRow
		n      int
	)
	if q.Every != 0 {
		dest = append(dest, &bucket)
	}
	for i := range scan {
		dest = append(dest, &scan[i])
	}
	dest = append(dest, &r.Count, &r.Denied, &r.Waited, &r.WaitSumMs, &r.WaitMaxMs)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return out, s.wrap("stats", err)
		}
		if r.Count == 0 {
			continue // an ungrouped count over no rows
		}
		row := r
		if q.Every != 0 {
			row.Bucket = time.Unix(bucket, 0).UTC()
		}
		if len(slab)+len(scan) > cap(slab) || slab == nil {
			slab = make([]string, 0, 1024*len(scan))
		}
		slab = append(slab, scan...)
		row.Keys = slab[len(slab)-len(scan) : len(slab) : len(slab)]
		if len(chunk) == cap(chunk) {
			if chunk != nil {
				chunks = append(chunks, chunk)
			}
			chunk = make([]StatsRow, 0, statsChunkRows)
		}
		chunk = append(chunk, row)
		n++
		out.Total += row.Count
		out.TotalDenied += row.Denied
	}
	if err := rows.Err(); err != nil {
		return out, s.wrap("stats", err)
	}
	if n > 0 {
		out.Rows = make([]StatsRow, 0, n)
		for _, c := range append(chunks, chunk) {
			out.Rows = append(out.Rows, c...)
		}
	}
	return out, nil
}

// statsChunkRows is how many rows Stats gathers per chunk before Rows is
// built (4096 rows: 360 KiB).
const statsChunkRows = 4096
