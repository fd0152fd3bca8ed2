package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/audit"
)

// dimensionField is the json/csv field name of a stats dimension: the
// same name the decision field has.
func dimensionField(d audit.Dimension) string {
	switch d {
	case audit.ByTool:
		return "tool_name"
	case audit.ByRisk:
		return "risk_level"
	}
	return string(d)
}

func newStatsCmd(io stdio) *cobra.Command {
	var (
		conn  connFlags
		out   outFlags
		filt  filterFlags
		by    string
		every string
	)
	formats := []string{formatTable, formatJSON, formatJSONL, formatCSV}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count decisions grouped by tool, agent, action, reason, risk, rule, source, approval, approver, gate or stage",
		Long: `stats counts the tool calls decided (each decided call once), grouped by the
dimensions in --by, optionally per time bucket (--every). On a terminal each
row gets a bar (share of the largest group) or, with --every, a sparkline of
its counts over the buckets.

Rows are ordered by bucket, then count (largest first). json, jsonl and csv
rows carry bucket (with --every), one field per dimension (tool_name, agent,
action, reason, risk_level, rule, source, approval, approver, gate, stage),
count and denied.

approver is who answered the asks (gate.approver), approval how they ended
(approved, declined, timeout, invalid, pending). Grouped by either, each row
also says how long the answers took: the table's WAITED, AVG WAIT and MAX
WAIT columns, and waited, avg_wait_ms and max_wait_ms in json, jsonl and csv
(over the decisions that recorded the time from ask to answer,
gate.approval.wait_ms).

rule is the deciding gate's rule (gate.rule: Decision.Rule of a classifier
or of a custom gate); for decisions recorded without it (before schema
version 6, or bridged from other frameworks) the rule ID the reason names
first in brackets ("[net.upload]"). The way to count denials by kind, since
reasons quote the call itself.

source is the gate that decided; gate is every gate that judged the call
(its recorded verdicts; the deciding gate for calls recorded without
them): a call judged by two gates counts once in each gate's row, so the
counts add up to more than the calls, and denied counts the calls that
ended denied, whichever gate denied them.

count is calls, not rows: a decision that records several calls (the
executor groups an aborted run's refused calls past its refusal budget into
one span per up to 64 calls, gate.calls; auditq decisions shows it as
calls, "×n" in the table) counts its calls, so the total is the number of
calls made.`,
		Example: `  # which tools were denied most this week, and by which rule?
  auditq stats --since 7d --action deny --by tool,rule
  # hourly decisions per action over the last day
  auditq stats --since 24h --by action --every 1h
  auditq stats --by agent,risk --format csv
  # who let what through this week, and how fast did they answer?
  auditq stats --since 7d --by approver,approval
  # which gates judged the denied calls (each gate of a chain counts)?
  auditq stats --action deny --by gate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(formats...); err != nil {
				return err
			}
			dims, err := audit.ParseDimensions(by)
			if err != nil {
				return usagef("--by: %v", err)
			}
			var width time.Duration
			if every != "" {
				if width, err = parseDuration(every); err != nil || width < time.Second || width%time.Second != 0 {
					return usagef("--every %q: want a whole number of seconds or more, like 1h, 15m or 1d", every)
				}
			}
			f, err := filt.filter(time.Now())
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), conn.timeout)
			defer cancel()
			st, err := conn.open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			res, err := st.Stats(ctx, audit.StatsQuery{Filter: f, By: dims, Every: width, Location: out.location()})
			if err != nil {
				return explain(err, conn.database)
			}
			if len(res.Rows) == 0 && out.format == formatTable {
				fmt.Fprintln(io.err, "auditq: no decisions match")
				return nil
			}
			return writeStats(io.out, out, res)
		},
	}
	conn.add(cmd)
	out.add(cmd, formats...)
	filt.add(cmd, true, "24h")
	cmd.Flags().StringVar(&by, "by", "action", "group by these, comma-separated: tool, agent, action, reason, risk, rule, source, approval, approver, gate, stage")
	cmd.Flags().StringVar(&every, "every", "", "count per time bucket of this width (1h, 15m, 1d)")
	_ = cmd.RegisterFlagCompletionFunc("by", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var ds []string
		for _, d := range audit.Dimensions() {
			ds = append(ds, string(d))
		}
		return ds, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
	return cmd
}

func statsRecord(s audit.Stats, r audit.StatsRow, loc *time.Location) record {
	var rec record
	if s.Every != 0 {
		rec.set("bucket", timeValue(r.Bucket, loc))
	}
	for i, d := range s.By {
		rec.set(dimensionField(d), r.Keys[i])
	}
	rec.set("count", r.Count)
	rec.set("denied", r.Denied)
	if showWaits(s) {
		rec.set("waited", r.Waited)
		rec.set("avg_wait_ms", r.AvgWaitMs())
		rec.set("max_wait_ms", r.WaitMaxMs)
	}
	return rec
}

// showWaits: s is grouped by approver or approval, so its rows say how
// long the answers took.
func showWaits(s audit.Stats) bool {
	return slices.Contains(s.By, audit.ByApprover) || slices.Contains(s.By, audit.ByApproval)
}

// waitCell is a wait for the table: formatWait, "-" when none was
// recorded.
func waitCell(waited, ms uint64) string {
	if waited == 0 {
		return "-"
	}
	return formatWait(ms)
}

func writeStats(w io.Writer, o outFlags, s audit.Stats) error {
	loc := o.location()
	switch o.format {
	case formatJSON:
		recs := make([]record, 0, len(s.Rows))
		for _, r := range s.Rows {
			recs = append(recs, statsRecord(s, r, loc))
		}
		return writeJSON(w, recs)
	case formatJSONL:
		for _, r := range s.Rows {
			if err := writeJSONL(w, statsRecord(s, r, loc)); err != nil {
				return err
			}
		}
		return nil
	case formatCSV:
		cw := newCSV(w)
		if err := cw.Write(statsRecord(s, audit.StatsRow{Keys: make([]string, len(s.By))}, loc).keys); err != nil {
			return err
		}
		for _, r := range s.Rows {
			if err := cw.Write(statsRecord(s, r, loc).csvRow()); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	term := detectTerminal(w, o.noColor)
	var header []string
	for _, d := range s.By {
		header = append(header, strings.ToUpper(string(d)))
	}
	if s.Every != 0 && term.tty {
		return writeStatsSparklines(w, s, header, term, loc)
	}
	if s.Every != 0 {
		header = append([]string{"BUCKET"}, header...)
	}
	header = append(header, "COUNT", "DENIED")
	waits := showWaits(s)
	if waits {
		header = append(header, "WAITED", "AVG WAIT", "MAX WAIT")
	}
	if term.tty {
		header = append(header, "")
	}
	t := &table{header: header, shrink: []string{"REASON", "AGENT", "TOOL"}}
	var maxCount uint64
	for _, r := range s.Rows {
		maxCount = max(maxCount, r.Count)
	}
	for _, r := range s.Rows {
		var cells []string
		if s.Every != 0 {
			cells = append(cells, formatTime(r.Bucket, loc)[:16])
		}
		for _, k := range r.Keys {
			cells = append(cells, emptyDash(oneLine(k)))
		}
		cells = append(cells, strconv.FormatUint(r.Count, 10), strconv.FormatUint(r.Denied, 10))
		if waits {
			cells = append(cells, strconv.FormatUint(r.Waited, 10), waitCell(r.Waited, r.AvgWaitMs()), waitCell(r.Waited, r.WaitMaxMs))
		}
		if term.tty {
			cells = append(cells, bar(r.Count, maxCount, 20))
		}
		t.add(cells...)
	}
	// No total by gate: a call judged by several gates is in several rows.
	if keyCols := len(header) - 2 - 3*boolInt(waits) - boolInt(term.tty); keyCols > 0 && len(s.Rows) > 1 && !slices.Contains(s.By, audit.ByGate) {
		total := append(make([]string, keyCols), strconv.FormatUint(s.Total, 10), strconv.FormatUint(s.TotalDenied, 10))
		if waits {
			total = append(total, "", "", "")
		}
		total[0] = "TOTAL"
		if term.tty {
			total = append(total, "")
		}
		t.add(total...)
	}
	return t.render(w, term)
}

// writeStatsSparklines pivots bucketed counts: one row per group with its
// total and a sparkline over every bucket of the range.
func writeStatsSparklines(w io.Writer, s audit.Stats, header []string, term terminal, loc *time.Location) error {
	type group struct {
		keys          []string
		total, denied uint64
		counts        map[int64]uint64
	}
	var groups []*group
	index := map[string]*group{}
	var first, last time.Time
	for _, r := range s.Rows {
		k := strings.Join(r.Keys, "\x00")
		g, ok := index[k]
		if !ok {
			g = &group{keys: r.Keys, counts: map[int64]uint64{}}
			index[k] = g
			groups = append(groups, g)
		}
		g.total += r.Count
		g.denied += r.Denied
		g.counts[r.Bucket.Unix()] += r.Count
		if first.IsZero() || r.Bucket.Before(first) {
			first = r.Bucket
		}
		if r.Bucket.After(last) {
			last = r.Bucket
		}
	}
	// Order groups by total, largest first (stable for equal totals).
	for i := 1; i < len(groups); i++ {
		for j := i; j > 0 && groups[j].total > groups[j-1].total; j-- {
			groups[j], groups[j-1] = groups[j-1], groups[j]
		}
	}
	var buckets []int64
	for b := first; !b.After(last); b = b.Add(s.Every) {
		buckets = append(buckets, b.Unix())
		if len(buckets) > 400 {
			break
		}
	}
	title := fmt.Sprintf("PER %s FROM %s", humanWidth(s.Every), formatTime(first, loc)[:16])
	t := &table{header: append(header, "COUNT", "DENIED", title), shrink: []string{"REASON", "AGENT", "TOOL"}}
	for _, g := range groups {
		var cells []string
		for _, k := range g.keys {
			cells = append(cells, emptyDash(oneLine(k)))
		}
		series := make([]uint64, len(buckets))
		for i, b := range buckets {
			series[i] = g.counts[b]
		}
		cells = append(cells, strconv.FormatUint(g.total, 10), strconv.FormatUint(g.denied, 10), sparkline(series))
		t.add(cells...)
	}
	return t.render(w, term)
}

// bar draws n/max as a bar of up to width cells.
func bar(n, maxN uint64, width int) string {
	if maxN == 0 {
		return ""
	}
	cells := int((n*uint64(width) + maxN - 1) / maxN)
	return strings.Repeat("█", cells)
}

// sparkline draws a series with the eight block heights.
func sparkline(series []uint64) string {
	ticks := []rune("▁▂▃▄▅▆▇█")
	var maxN uint64
	for _, v := range series {
		maxN = max(maxN, v)
	}
	var b strings.Builder
	for _, v := range series {
		switch {
		case v == 0:
			b.WriteRune(' ')
		case maxN == 0:
			b.WriteRune(ticks[0])
		default:
			b.WriteRune(ticks[int((v*uint64(len(ticks)-1))/maxN)])
		}
	}
	return b.String()
}

// humanWidth renders a bucket width as its largest whole unit: 1d, 6h, 30m, 45s.
func humanWidth(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

func emptyDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
