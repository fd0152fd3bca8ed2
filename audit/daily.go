package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// dailyRollup is a narrow daily roll-up (schema version 11): the hourly
// roll-up's counts summed per UTC day and a few of its dimensions, the
// ones the common questions group and filter by. Narrow and coarse, it
// holds a few rows per day and group (a month of `stats --by tool,action`
// reads tens of thousands of rows, not the millions of hour × ten
// dimension groups of HourlyTable).
//
// It is a refreshable materialized view (dailyViewDDL) that recomputes the
// whole table every minute from HourlyTable FINAL and replaces it
// atomically; every row carries the watermark of the hourly rows it was
// summed from (the largest RolledThrough read), so a reader knows which
// days it holds completely: every day in which no decision was inserted
// after that watermark.
type dailyRollup struct {
	table, view string
	dims        []string // HourlyTable columns, in sorting key order
}

// dailyRollups are the narrow roll-ups, narrowest first: the first one
// whose dimensions hold every dimension and filter of a question answers
// it (dailyFor).
func dailyRollups() []dailyRollup {
	return []dailyRollup{
		{"gate_decisions_daily_rule", "gate_decisions_daily_rule_mv", []string{"Action", "Agent", "Rule"}},
		{"gate_decisions_daily_tool", "gate_decisions_daily_tool_mv", []string{"Action", "Agent", "ToolName"}},
	}
}

// has reports whether col is one of r's dimensions.
func (r dailyRollup) has(col string) bool {
	for _, d := range r.dims {
		if d == col {
			return true
		}
	}
	return false
}

// dayExpr is the UTC day of an hourly row's Hour.
const dayExpr = "toStartOfDay(Hour, 'UTC')"

// dailyDDL is r's table: one row per UTC day and group, replaced as a
// whole at every refresh (plain MergeTree: no FINAL needed).
func (c config) dailyDDL(r dailyRollup) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + c.table(r.table) + c.onCluster() + " (\n    Day DateTime('UTC'),\n")
	hourly := map[string]string{}
	for _, d := range rollupDims() {
		hourly[d.name] = d.typ
	}
	for _, d := range r.dims {
		fmt.Fprintf(&b, "    %s %s,\n", d, hourly[d])
	}
	b.WriteString(rollupMeasures + c.engine("MergeTree") + `
ORDER BY (Day, ` + strings.Join(r.dims, ", ") + ")" + c.ttl("Day"))
	return b.String()
}

// dailySelect sums HourlyTable FINAL per day and r's dimensions; every row
// carries the largest RolledThrough of the hourly rows read (the window
// runs over the same read, so the watermark is the one of the very rows
// summed).
func (c config) dailySelect(r dailyRollup) string {
	dims := strings.Join(r.dims, ", ")
	return "SELECT " + dayExpr + " AS Day, " + dims + ",\n" +
		"    sum(Calls) AS Calls, sum(Denied) AS Denied, sum(Waited) AS Waited, sum(WaitSumMs) AS WaitSumMs, max(WaitMaxMs) AS WaitMaxMs,\n" +
		"    max(max(RolledThrough)) OVER () AS RolledThrough\n" +
		"FROM " + c.table(HourlyTable) + " FINAL\n" +
		"GROUP BY Day, " + dims + finalSettings
}

// dailyViewDDL is r's refreshable view: dailySelect every minute, the
// table replaced atomically (REFRESH without APPEND).
func (c config) dailyViewDDL(r dailyRollup) string {
	return "CREATE MATERIALIZED VIEW IF NOT EXISTS " + c.table(r.view) + c.onCluster() +
		"\nREFRESH EVERY 1 MINUTE TO " + c.table(r.table) + " AS\n" + c.dailySelect(r)
}

// daily is migration 11: the narrow daily roll-ups, each backfilled from
// the hourly roll-up, then its view; on a cluster also their Distributed
// tables.
func (c config) daily() Migration {
	m := Migration{Version: 11, Name: "daily_rollups"}
	for _, r := range dailyRollups() {
		m.Statements = append(m.Statements,
			c.dailyDDL(r),
			"INSERT INTO "+c.table(r.table)+"\n"+c.dailySelect(r),
			c.dailyViewDDL(r))
		if c.cluster != "" {
			m.Statements = append(m.Statements, "CREATE TABLE IF NOT EXISTS "+c.table(r.table+distributedSuffix)+c.onCluster()+" AS "+c.table(r.table)+
				"\nENGINE = Distributed(`"+c.cluster+"`, `"+c.database+"`, `"+r.table+"`)")
		}
	}
	return m
}

// rollDaily refreshes every daily roll-up now and waits for it (SYSTEM
// REFRESH VIEW, SYSTEM WAIT VIEW): what their views do every minute. A
// schema older than version 11 has none: nothing to do.
func (c config) rollDaily(ctx context.Context, conn driver.Conn) error {
	exec := func(ctx context.Context, sql string) error { return conn.Exec(ctx, sql) }
	var p Params
	p.String("db", c.database).String("view", dailyRollups()[0].view)
	var n uint64
	if err := conn.QueryRow(p.Context(ctx), "SELECT count() FROM system.tables WHERE database = {db:String} AND name = {view:String}").Scan(&n); err != nil {
		return fmt.Errorf("audit: roll up: %w", err)
	}
	if n == 0 {
		return nil
	}
	for _, r := range dailyRollups() {
		for _, sql := range []string{"SYSTEM REFRESH VIEW " + c.table(r.view), "SYSTEM WAIT VIEW " + c.table(r.view)} {
			if err := exec(ctx, sql); err != nil {
				return fmt.Errorf("audit: roll up %s: %w", r.table, err)
			}
		}
	}
	return nil
}

// dailyFor returns the narrowest daily roll-up that answers q (every
// dimension and filter one of its columns; no buckets, or buckets of whole
// days in UTC), or false.
func (q StatsQuery) dailyFor() (dailyRollup, bool) {
	if !q.rollupFits() {
		return dailyRollup{}, false
	}
	if q.Every != 0 && (q.Every%(24*time.Hour) != 0 || (q.Location != nil && zoneName(q.Location) != "UTC")) {
		return dailyRollup{}, false
	}
	f := q.Filter
	need := []string{}
	for _, d := range q.By {
		need = append(need, d.rollupColumn())
	}
	if f.Agent != "" {
		need = append(need, "Agent")
	}
	if f.Tool != "" {
		need = append(need, "ToolName")
	}
	if f.Action != "" {
		need = append(need, "Action")
	}
	if f.Risk != "" || f.Service != "" || f.Stage != "" || f.Approval != "" || f.Approver != "" {
		return dailyRollup{}, false
	}
next:
	for _, r := range dailyRollups() {
		for _, n := range need {
			if !r.has(n) {
				continue next
			}
		}
		return r, true
	}
	return dailyRollup{}, false
}

// dailyRolledThrough is r's watermark (see dailyRollup), or false when r
// is empty or missing (schema older than version 11).
func (s *Store) dailyRolledThrough(ctx context.Context, r dailyRollup) (w int64, ok bool) {
	sql := "SELECT toUnixTimestamp64Nano(max(RolledThrough)) FROM " + s.cfg.table(r.table)
	if s.cfg.cluster != "" {
		sql = "SELECT toUnixTimestamp64Nano(min(w)) FROM (SELECT max(RolledThrough) AS w FROM " + s.cfg.read(r.table) + " GROUP BY _shard_num)"
	}
	if err := s.conn.QueryRow(ctx, sql).Scan(&w); err != nil || w <= 0 {
		return 0, false
	}
	return w, true
}
