package audit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Roll-up tables (schema version 10).
const (
	// HourlyTable holds gate_decisions counted per hour (UTC) and per
	// rollupDims: what `auditq stats` and the dashboard read for whole
	// hours that no decision has reached since they were counted.
	HourlyTable = "gate_decisions_hourly"
	// HourlyView is the refreshable materialized view that recounts, every
	// minute, the hours decisions reached since its last run.
	HourlyView = "gate_decisions_hourly_mv"
)

// DefaultRollupDelay is how long after a decision's InsertedAt the
// roll-up may treat it as committed: an insert that stamps its rows (the
// view's now64()) must finish within this time. Rows inserted later than
// (the roll-up's last run − delay) make their hour read from
// gate_decisions instead, so the delay bounds only how soon an hour is
// served from the roll-up, never what is counted.
const DefaultRollupDelay = 5 * time.Minute

// rollupDim is one grouping column of the roll-up: its name in
// HourlyTable and the expression over gate_decisions it counts.
type rollupDim struct {
	name, expr, typ string
}

// rollupDims are the roll-up's dimensions, in its sorting key's order
// (lowest cardinality and most filtered first). Rule is ByRule's
// expression (the Rule column, else the reason's first "[rule]"). The
// dimensions left out — Reason (reasons quote the call: as many values as
// decisions), the gates of VerdictGates (an array) — and the filters on
// other columns are answered from gate_decisions.
func rollupDims() []rollupDim {
	return []rollupDim{
		{"Action", "Action", "LowCardinality(String)"},
		{"Agent", "Agent", "LowCardinality(String)"},
		{"ToolName", "ToolName", "LowCardinality(String)"},
		{"Rule", ByRule.column(), "LowCardinality(String)"},
		{"RiskLevel", "RiskLevel", "LowCardinality(String)"},
		{"Source", "Source", "LowCardinality(String)"},
		{"Stage", "Stage", "LowCardinality(String)"},
		{"Approval", "Approval", "LowCardinality(String)"},
		{"Approver", "Approver", "String"},
		{"ServiceName", "ServiceName", "LowCardinality(String)"},
	}
}

// rollupColumn is the HourlyTable column of d, or "" when the roll-up
// cannot group by d.
func (d Dimension) rollupColumn() string {
	switch d {
	case ByTool:
		return "ToolName"
	case ByAgent, ByAction, ByRisk, BySource, ByApproval, ByApprover, ByStage:
		return d.column()
	case ByRule:
		return "Rule"
	}
	return ""
}

// hourExpr is the UTC hour of a decision's Timestamp.
const hourExpr = "toStartOfHour(toDateTime(Timestamp, 'UTC'))"

// hourlyDDL is HourlyTable: one row per hour and group, replaced as a
// whole when its hour is recounted (ReplacingMergeTree on RolledThrough;
// Stats reads each hour's newest recount, see rollupSource).
// rollupMeasures are the columns every roll-up table sums (after its time
// bucket and dimensions), up to its ENGINE clause.
const rollupMeasures = `    Calls UInt64,
    Denied UInt64,
    Waited UInt64,
    WaitSumMs UInt64,
    WaitMaxMs UInt64,
    RolledThrough DateTime64(9)
) ENGINE = `

func (c config) hourlyDDL() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + c.table(HourlyTable) + c.onCluster() + " (\n    Hour DateTime('UTC'),\n")
	var key []string
	for _, d := range rollupDims() {
		fmt.Fprintf(&b, "    %s %s,\n", d.name, d.typ)
		key = append(key, d.name)
	}
	b.WriteString(rollupMeasures + c.engine("ReplacingMergeTree", "RolledThrough") + `
PARTITION BY toYYYYMM(Hour)
ORDER BY (Hour, ` + strings.Join(key, ", ") + ")" + c.ttl("Hour"))
	return b.String()
}

// rollSelect counts the decisions of every hour that a row inserted after
// the roll-up's last run (max RolledThrough; none: every hour) reached,
// from gate_decisions FINAL (each span once, whatever its duplicates),
// stamping the rows RolledThrough = now − delay.
func (c config) rollSelect() string {
	delay := int64(c.rollupDelay / time.Millisecond)
	var inner, outer, group []string
	for _, d := range rollupDims() {
		inner = append(inner, d.expr+" AS k"+d.name)
		outer = append(outer, "k"+d.name+" AS "+d.name)
		group = append(group, "k"+d.name)
	}
	decisions := c.table(DecisionsTable)
	return "SELECT Hour, " + strings.Join(outer, ", ") + ",\n" +
		"    sum(cCalls) AS Calls, sumIf(cCalls, kAction = 'deny') AS Denied, countIf(cWait > 0) AS Waited,\n" +
		"    sum(cWait) AS WaitSumMs, max(cWait) AS WaitMaxMs,\n" +
		fmt.Sprintf("    now64(9) - toIntervalMillisecond(%d) AS RolledThrough\n", delay) +
		"FROM (\n    SELECT " + hourExpr + " AS Hour, " + strings.Join(inner, ", ") + ", Calls AS cCalls, ApprovalWaitMs AS cWait\n" +
		"    FROM " + decisions + " FINAL\n" +
		"    WHERE " + hourExpr + " IN (\n" +
		"        SELECT DISTINCT " + hourExpr + " FROM " + decisions + "\n" +
		"        WHERE InsertedAt > (SELECT max(RolledThrough) FROM " + c.table(HourlyTable) + "))\n" +
		")\nGROUP BY Hour, " + strings.Join(group, ", ") + finalSettings
}

// hourlyViewDDL is HourlyView: rollSelect every minute, appended to
// HourlyTable (REFRESH … APPEND: the rows of a recounted hour replace its
// older ones on merge, and at once for readers, which read each hour's
// newest recount).
func (c config) hourlyViewDDL() string {
	return "CREATE MATERIALIZED VIEW IF NOT EXISTS " + c.table(HourlyView) + c.onCluster() +
		"\nREFRESH EVERY 1 MINUTE APPEND TO " + c.table(HourlyTable) + " AS\n" + c.rollSelect()
}

// rollup is migration 10: HourlyTable, its backfill (every hour: the
// table is empty) and HourlyView; on a cluster (WithCluster) also the
// Distributed tables of a sharded layout (distributedDDL).
func (c config) rollup() Migration {
	m := Migration{Version: 10, Name: "hourly_rollup", Statements: []string{
		c.hourlyDDL(),
		"INSERT INTO " + c.table(HourlyTable) + "\n" + c.rollSelect(),
		c.hourlyViewDDL(),
	}}
	if c.cluster != "" {
		m.Statements = append(m.Statements, c.distributedDDL()...)
	}
	return m
}

// Distributed tables of a sharded cluster (WithCluster): each is the
// local table of every shard, read (and for otel_traces written) across
// all shards.
const distributedSuffix = "_all"

// distributedDDL creates, ON CLUSTER, otel_traces_all, gate_decisions_all
// and gate_decisions_hourly_all over the shards' local tables. Writes go
// to otel_traces_all (or, with the cluster collector's load balancing by
// trace ID, to each shard's own otel_traces): its sharding key
// cityHash64(TraceId) sends every copy of a span, and every span of a
// trace (a run's chain), to one shard, so that each shard deduplicates
// its own spans (FINAL, the roll-up) and the shards' answers add up
// exactly. docs/deployment.md says which queries stay exact.
func (c config) distributedDDL() []string {
	dist := func(local, key string) string {
		return "CREATE TABLE IF NOT EXISTS " + c.table(local+distributedSuffix) + c.onCluster() + " AS " + c.table(local) +
			"\nENGINE = Distributed(`" + c.cluster + "`, `" + c.database + "`, `" + local + "`" + key + ")"
	}
	return []string{
		dist(c.tracesTable, ", cityHash64(TraceId)"),
		dist(DecisionsTable, ", cityHash64(TraceId)"),
		dist(HourlyTable, ""),
	}
}

// Roll recounts now, into the roll-up, every hour that decisions reached
// since its last run, then refreshes the daily roll-ups from it (schema
// version 11): what HourlyView and the daily views do every minute, for
// tests and for servers whose refreshable views are stopped. conn must be allowed
// to insert (the writer). Options as for Migrate (WithRollupDelay).
func Roll(ctx context.Context, conn driver.Conn, opts ...Option) error {
	c, err := newConfig(opts)
	if err != nil {
		return err
	}
	if err := conn.Exec(ctx, "INSERT INTO "+c.table(HourlyTable)+"\n"+c.rollSelect()); err != nil {
		return fmt.Errorf("audit: roll up: %w", err)
	}
	return c.rollDaily(ctx, conn)
}

// rolledThrough is the roll-up's watermark: every decision inserted
// (InsertedAt) at or before it is counted in the roll-up rows of its
// hour. ok is false without a roll-up (schema older than version 10, or
// nothing rolled up yet).
func (s *Store) rolledThrough(ctx context.Context) (w int64, ok bool) {
	// On a cluster each shard rolls its own decisions up: the watermark
	// that holds for every shard is the least of theirs.
	sql := "SELECT toUnixTimestamp64Nano(max(RolledThrough)) FROM " + s.cfg.table(HourlyTable)
	if s.cfg.cluster != "" {
		sql = "SELECT toUnixTimestamp64Nano(min(w)) FROM (SELECT max(RolledThrough) AS w FROM " + s.cfg.read(HourlyTable) + " GROUP BY _shard_num)"
	}
	row := s.conn.QueryRow(ctx, sql)
	if err := row.Scan(&w); err != nil || w <= 0 {
		return 0, false
	}
	return w, true
}

// rollupFits reports whether q can be answered from the roll-up plus
// gate_decisions for the hours it does not cover: every dimension and
// filter is a roll-up column, and the buckets are whole hours that start
// on hour boundaries in q's location.
func (q StatsQuery) rollupFits() bool {
	for _, d := range q.By {
		if d.rollupColumn() == "" {
			return false
		}
	}
	f := q.Filter
	if f.Reason != "" || f.TraceID != "" || f.RunID != "" || f.Rewritten || f.Interrupted || f.ApprovalID != "" {
		return false
	}
	if q.Every != 0 {
		if q.Every%time.Hour != 0 {
			return false
		}
		if !wholeHourZone(q.Location, f.Since, f.Until) {
			return false
		}
	}
	return true
}

// wholeHourZone reports whether loc's offset from UTC is a whole number
// of hours at every instant from since to until (zero: from 1970, the
// roll-up's first hour; to 2106, its last), so that every bucket starts on
// a UTC hour. It walks loc's offset changes (time.Time.ZoneBounds): a
// zone whose offset is a whole hour at both ends of the range and a half
// hour in between (Australia/Lord_Howe, +11 in summer and +10:30 in
// winter; America/Caracas, −4:30 from 2007 to 2016) is not whole. The
// offset at since is checked whatever until is (an empty or inverted
// range, a since past 2106).
func wholeHourZone(loc *time.Location, since, until time.Time) bool {
	if loc == nil {
		return true
	}
	if since.IsZero() {
		since = time.Unix(0, 0)
	}
	if until.IsZero() {
		until = time.Unix(1<<32-1, 0) // a DateTime's last second
	}
	for t := since; ; {
		zt := t.In(loc)
		if _, off := zt.Zone(); off%3600 != 0 {
			return false
		}
		_, end := zt.ZoneBounds()
		if end.IsZero() {
			return true // the offset holds from t on
		}
		if !end.After(t) {
			// Go's zone data can give a zone that ends where it starts
			// (Europe/London at 2040-12-31, where the rule that extends
			// the table takes over): look again an hour on (no offset
			// lasts less).
			end = t.Add(time.Hour)
		}
		if !end.Before(until) {
			return true
		}
		t = end
	}
}

// maxDirtyHours is how many hours touched after the watermark a roll-up
// query takes; past it (a large late upload not yet rolled up) Stats reads
// gate_decisions alone.
const maxDirtyHours = 2000

// dirtyHours lists the UTC hours (Unix seconds) that a decision inserted
// after the watermark w reached: the hours the roll-ups may not hold
// completely. Once schema_migrations records version 12 (arrivalsReady)
// it reads them from ArrivalsTable (a few rows per hour); before, from
// gate_decisions (InsertedAt > w, through the minmax index on InsertedAt:
// a read of that index in every part). The recorded version, not the
// table's existence, decides: during migration 12 the table exists
// before its backfill has filled it. ok is false past maxDirtyHours.
func (s *Store) dirtyHours(ctx context.Context, w int64) (hours []int64, ok bool, err error) {
	var p Params
	p.Int64("rolled", w)
	read := s.insertedHoursSQL
	if s.arrivalsReady(ctx) {
		read = s.arrivedHoursSQL
	}
	hours, err = s.scanHours(ctx, read(maxDirtyHours), &p)
	if errors.Is(err, ErrNotMigrated) && s.arrivals.CompareAndSwap(true, false) {
		// The arrivals are gone (a restore to an older schema while the
		// Store lives): gate_decisions answers, and the version is looked
		// up again next time.
		hours, err = s.scanHours(ctx, s.insertedHoursSQL(maxDirtyHours), &p)
	}
	if err != nil {
		return nil, false, err
	}
	return hours, len(hours) <= maxDirtyHours, nil
}

// insertedHoursSQL is arrivedHoursSQL from gate_decisions (before schema
// version 12).
func (s *Store) insertedHoursSQL(limit int) string {
	return "SELECT DISTINCT toInt64(toUnixTimestamp(" + hourExpr + ")) AS h FROM " + s.cfg.read(DecisionsTable) +
		" WHERE InsertedAt > fromUnixTimestamp64Nano({rolled:Int64}) ORDER BY h LIMIT " + fmt.Sprint(limit+1)
}

// timeList renders Unix seconds as a ClickHouse tuple of UTC DateTimes
// for IN (values this package computed, not input).
func timeList(secs []int64) string {
	parts := make([]string, len(secs))
	for i, v := range secs {
		parts[i] = fmt.Sprintf("toDateTime(%d, 'UTC')", v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// rollupSource is the FROM source of a stats query served by the roll-up:
// the roll-up's rows of the whole hours in [Since, Until) outside dirty
// (dirtyHours of the watermark), and gate_decisions' rows of every other
// hour of the range (its partial first and last hours, the dirty hours),
// in the roll-up's columns, time T. p receives the parameters. The dirty
// hours are a list, read once before the query, so that every source
// excludes or includes the same hours, and gate_decisions is read only
// for the ranges of its edges and dirty hours (the primary key prunes
// the rest).
//
// With daily (a narrow daily roll-up whose watermark the dirty hours are
// of), the whole UTC days of the range with no dirty hour are read from
// daily instead, and the hourly roll-up serves only the other whole
// hours: each hour of the range comes from exactly one of the three
// sources.
func (s *Store) rollupSource(f Filter, dirty []int64, p *Params, daily *dailyRollup) string {
	var names []string
	for _, d := range rollupDims() {
		names = append(names, d.name)
	}
	decisions := s.cfg.read(DecisionsTable)
	// Whole hours of the range: [lo, hi).
	var hourConds, rawEdges []string
	var lo, hi time.Time
	if !f.Since.IsZero() {
		lo = f.Since.UTC().Truncate(time.Hour)
		if !lo.Equal(f.Since) {
			lo = lo.Add(time.Hour)
		}
		p.Int64("hour_lo", lo.Unix())
		hourConds = append(hourConds, "Hour >= toDateTime({hour_lo:Int64}, 'UTC')")
		rawEdges = append(rawEdges, "Timestamp < toDateTime64({hour_lo:Int64}, 9, 'UTC')")
	}
	if !f.Until.IsZero() {
		hi = f.Until.UTC().Truncate(time.Hour)
		p.Int64("hour_hi", hi.Unix())
		hourConds = append(hourConds, "Hour < toDateTime({hour_hi:Int64}, 'UTC')")
		rawEdges = append(rawEdges, "Timestamp >= toDateTime64({hour_hi:Int64}, 9, 'UTC')")
	}
	for _, h := range dirty {
		rawEdges = append(rawEdges, fmt.Sprintf("(Timestamp >= toDateTime64(%d, 9, 'UTC') AND Timestamp < toDateTime64(%d, 9, 'UTC'))", h, h+3600))
	}
	dims := f
	dims.Since, dims.Until = time.Time{}, time.Time{}
	// Whole UTC days of the whole hours: [dlo, dhi).
	var dailyPart string
	if daily != nil {
		var dayConds []string
		var dlo, dhi time.Time
		if !lo.IsZero() {
			dlo = lo.Truncate(24 * time.Hour)
			if !dlo.Equal(lo) {
				dlo = dlo.Add(24 * time.Hour)
			}
			p.Int64("day_lo", dlo.Unix())
			dayConds = append(dayConds, "Day >= toDateTime({day_lo:Int64}, 'UTC')")
		}
		if !hi.IsZero() {
			dhi = hi.Truncate(24 * time.Hour)
			p.Int64("day_hi", dhi.Unix())
			dayConds = append(dayConds, "Day < toDateTime({day_hi:Int64}, 'UTC')")
		}
		if dlo.IsZero() || dhi.IsZero() || dlo.Before(dhi) {
			var days []int64
			seen := map[int64]bool{}
			for _, h := range dirty {
				if d := h - h%86400; !seen[d] {
					seen[d] = true
					days = append(days, d)
				}
			}
			if len(days) > 0 {
				dayConds = append(dayConds, "Day NOT IN "+timeList(days))
			}
			where := dims.where(p)
			if len(dayConds) > 0 {
				if where == "" {
					where = "\nWHERE " + strings.Join(dayConds, "\n  AND ")
				} else {
					where += "\n  AND " + strings.Join(dayConds, "\n  AND ")
				}
			}
			var cols []string
			for _, n := range names {
				if daily.has(n) {
					cols = append(cols, n)
				} else {
					cols = append(cols, "'' AS "+n)
				}
			}
			dailyPart = "SELECT Day AS T, " + strings.Join(cols, ", ") +
				", Calls AS cCalls, Denied AS cDenied, Waited AS cWaited, WaitSumMs AS cWaitSum, WaitMaxMs AS cWaitMax\n" +
				"FROM " + s.cfg.read(daily.table) + where + "\nUNION ALL\n"
			// The hourly roll-up: only hours outside those days.
			var notDaily []string
			if len(days) > 0 {
				notDaily = append(notDaily, "toStartOfDay(Hour, 'UTC') IN "+timeList(days))
			}
			if !dlo.IsZero() {
				notDaily = append(notDaily, "Hour < toDateTime({day_lo:Int64}, 'UTC')")
			}
			if !dhi.IsZero() {
				notDaily = append(notDaily, "Hour >= toDateTime({day_hi:Int64}, 'UTC')")
			}
			if len(notDaily) == 0 {
				notDaily = []string{"0"} // every hour is in a daily row
			}
			hourConds = append(hourConds, "("+strings.Join(notDaily, " OR ")+")")
		}
	}
	rolled := dims.where(p)
	if len(dirty) > 0 {
		hourConds = append(hourConds, "Hour NOT IN "+timeList(dirty))
	}
	if len(hourConds) == 0 {
		hourConds = []string{"1"}
	}
	// Each hour's newest recount only, instead of FINAL: a recount writes
	// every group of its hour with one RolledThrough (rollSelect's
	// now64), and decisions are only added, so the newest recount holds
	// the whole hour; FINAL would merge all ten dimensions of every older
	// recount's rows to find it (15 ms of a 60 ms query at 10M decisions).
	// The subquery is not filtered by f's dimensions (an hour's newest
	// recount is newest for every group of it) and reads the local table:
	// on a cluster each shard evaluates it over its own rows, the newest
	// recount of that shard's decisions.
	newest := "(Hour, RolledThrough) IN (SELECT Hour, max(RolledThrough) FROM " + s.cfg.table(HourlyTable) +
		"\n    WHERE " + strings.Join(hourConds, " AND ") + "\n    GROUP BY Hour)"
	hourConds = append(hourConds, newest)
	if rolled == "" {
		rolled = "\nWHERE " + strings.Join(hourConds, "\n  AND ")
	} else {
		rolled += "\n  AND " + strings.Join(hourConds, "\n  AND ")
	}
	raw := f.where(p)
	if len(rawEdges) == 0 {
		rawEdges = []string{"0"} // no edges, nothing dirty: the roll-ups hold every hour
	}
	edge := "(" + strings.Join(rawEdges, " OR ") + ")"
	if raw == "" {
		raw = "\nWHERE " + edge
	} else {
		raw += "\n  AND " + edge
	}
	var rawCols []string
	for _, d := range rollupDims() {
		rawCols = append(rawCols, d.expr+" AS k"+d.name)
	}
	var renamed []string
	for _, n := range names {
		renamed = append(renamed, "k"+n+" AS "+n)
	}
	return "(\n" + dailyPart +
		"SELECT Hour AS T, " + strings.Join(names, ", ") +
		", Calls AS cCalls, Denied AS cDenied, Waited AS cWaited, WaitSumMs AS cWaitSum, WaitMaxMs AS cWaitMax\n" +
		"FROM " + s.cfg.read(HourlyTable) + rolled + "\n" +
		"UNION ALL\n" +
		"SELECT T, " + strings.Join(renamed, ", ") + ", cCalls, cDenied, cWaited, cWaitSum, cWaitMax FROM (\n" +
		"    SELECT toDateTime(Timestamp, 'UTC') AS T, " + strings.Join(rawCols, ", ") + ", Calls AS cCalls,\n" +
		"        if(Action = 'deny', Calls, 0) AS cDenied, toUInt64(ApprovalWaitMs > 0) AS cWaited,\n" +
		"        ApprovalWaitMs AS cWaitSum, ApprovalWaitMs AS cWaitMax\n" +
		"    FROM " + decisions + " FINAL" + raw + ")\n)"
}
