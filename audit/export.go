package audit

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// exportSortBytes is the memory (bytes) past which the engine's sort of an
// export spills to temporary files: 256 MiB, a quarter of the laptop
// budget in docs/deployment.md.
const exportSortBytes = 256 << 20

// Cursor returns the position of d in the order Decisions and Export read
// (Timestamp DESC, SpanId DESC): Export from it resumes right after d.
func (d Decision) Cursor() Cursor { return Cursor{Timestamp: d.Timestamp, SpanID: d.SpanID} }

// exportWindowRows is about how many decisions one export query sorts:
// the hours of the range are grouped, newest first, into windows of at
// least this many decisions (counted before the filter's de-duplication,
// so never fewer), each window one query. Small enough that the first
// rows arrive after a sort of some milliseconds, large enough that the
// per-query cost (a few ms) stays a few percent of the export.
const exportWindowRows = 20000

// Export calls fn for every decision matching f, newest first (Timestamp
// DESC, then SpanId DESC), starting right after the cursor after when it
// is not nil (what [Decision.Cursor] of the last decision handled returns:
// an export that stopped resumes there, and no decision is skipped or
// read twice). Unlike paging with [Store.Decisions], it first counts the
// matching decisions per UTC hour, then runs one query per window of
// whole hours holding about [WithExportWindow] decisions (20,000), whose result
// the server streams: rows/s stay the same however deep the export goes
// and however many decisions a day holds, the first rows arrive after one
// window's sort, and no result is held whole: the server hands it over
// block by block, and the engine's sort of a window spills to disk past
// [exportSortBytes]. The newest window has no upper bound, so decisions
// that arrive during the export in or after its newest hour are read;
// decisions that arrive older than the oldest hour counted are not.
//
// fn's error stops the export and is returned as is. Other errors: the
// store's ([ErrNotMigrated], [*UnreachableError], the driver's), wrapped;
// a connection lost mid-export is an error, never a short export.
func (s *Store) Export(ctx context.Context, f Filter, after *Cursor, fn func(Decision) error) error {
	hours, err := s.hourCounts(ctx, f, after)
	if err != nil {
		return err
	}
	rows := s.cfg.exportWindow
	if rows == 0 {
		rows = exportWindowRows
	}
	for _, w := range exportWindows(hours, rows) {
		if err := s.exportWindow(ctx, f, w.lo, w.hi, after, fn); err != nil {
			return err
		}
	}
	return nil
}

// hourCount is how many decisions (duplicates included) an hour holds:
// hour is its start, UTC, in seconds since the Unix epoch.
type hourCount struct {
	hour int64
	n    uint64
}

// window is one export query's range [lo, hi); hi zero: no upper bound.
type window struct{ lo, hi time.Time }

// exportWindows groups hours (newest first) into windows of at least rows
// decisions each (the oldest may hold fewer), newest first; the first
// window has no upper bound and the last no lower bound, so together
// they cover all time, whatever the counts missed (a late decision in an
// hour older than every hour counted).
func exportWindows(hours []hourCount, rows uint64) []window {
	var ws []window
	hi := time.Time{}
	var acc uint64
	for i, h := range hours {
		acc += h.n
		if acc < rows && i < len(hours)-1 {
			continue
		}
		lo := time.Unix(h.hour, 0).UTC()
		if i == len(hours)-1 {
			lo = time.Time{}
		}
		ws = append(ws, window{lo: lo, hi: hi})
		hi, acc = lo, 0
	}
	return ws
}

// hourCounts counts the decisions matching f (at or before after when it
// is not nil) per UTC hour, newest first. Counts only size windows: one
// that is too large (duplicates, a grouped refusal's calls, the roll-up's
// unmerged rows) only makes a window smaller, and an hour missing from
// them is read by the window around it. When f fits the hourly roll-up
// the counts come from it (a scan of a few rows per hour instead of every
// decision's Timestamp: 0.4 s at 10M), with the hours after its newest
// from gate_decisions.
func (s *Store) hourCounts(ctx context.Context, f Filter, after *Cursor) ([]hourCount, error) {
	if (StatsQuery{Filter: f}).rollupFits() {
		if _, ok := s.rolledThrough(ctx); ok {
			hours, err := s.rolledHourCounts(ctx, f, after)
			if err != nil || len(hours) > 0 {
				return hours, err
			}
		}
	}
	return s.decisionHourCounts(ctx, f, after, 0)
}

// rolledHourCounts is hourCounts from the hourly roll-up, and from
// gate_decisions for the hours after the roll-up's newest.
func (s *Store) rolledHourCounts(ctx context.Context, f Filter, after *Cursor) ([]hourCount, error) {
	var p Params
	dims := f
	dims.Since, dims.Until = time.Time{}, time.Time{}
	where := dims.where(&p)
	var conds []string
	if !f.Since.IsZero() {
		conds = append(conds, "Hour >= toStartOfHour(fromUnixTimestamp64Nano({since:Int64}), 'UTC')")
		p.Int64("since", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, "Hour < fromUnixTimestamp64Nano({until:Int64})")
		p.Int64("until", f.Until.UnixNano())
	}
	if after != nil {
		conds = append(conds, "Hour <= fromUnixTimestamp64Nano({after_ts:Int64})")
		p.Int64("after_ts", after.Timestamp.UnixNano())
	}
	where = andWhere(where, conds)
	hours, err := s.scanHourCounts(ctx, "SELECT toUnixTimestamp(Hour) AS h, sum(Calls) FROM "+s.cfg.read(HourlyTable)+where+
		"\nGROUP BY h ORDER BY h DESC", &p)
	if err != nil || len(hours) == 0 {
		return hours, err
	}
	recent, err := s.decisionHourCounts(ctx, f, after, hours[0].hour+3600)
	if err != nil {
		return nil, err
	}
	return append(recent, hours...), nil
}

// decisionHourCounts is hourCounts from gate_decisions, for the hours
// from the Unix second from on (0: all).
func (s *Store) decisionHourCounts(ctx context.Context, f Filter, after *Cursor, from int64) ([]hourCount, error) {
	var p Params
	where := f.where(&p)
	var conds []string
	if after != nil {
		conds = append(conds, "Timestamp <= fromUnixTimestamp64Nano({after_ts:Int64})")
		p.Int64("after_ts", after.Timestamp.UnixNano())
	}
	if from != 0 {
		conds = append(conds, "Timestamp >= toDateTime({from:Int64}, 'UTC')")
		p.Int64("from", from)
	}
	where = andWhere(where, conds)
	return s.scanHourCounts(ctx, "SELECT toUnixTimestamp("+hourExpr+") AS h, count() FROM "+s.cfg.read(DecisionsTable)+where+
		"\nGROUP BY h ORDER BY h DESC", &p)
}

// scanHourCounts runs sql, whose rows are (hour UInt32, count UInt64).
func (s *Store) scanHourCounts(ctx context.Context, sql string, p *Params) ([]hourCount, error) {
	rows, err := s.query(ctx, "export", sql, p)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hours []hourCount
	for rows.Next() {
		var h uint32
		var n uint64
		if err := rows.Scan(&h, &n); err != nil {
			return nil, s.wrap("export", err)
		}
		hours = append(hours, hourCount{hour: int64(h), n: n})
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("export", err)
	}
	return hours, nil
}

// exportWindow streams the decisions of f in [lo, hi) (lo or hi zero: no
// bound on that side) after the cursor, newest first, to fn.
func (s *Store) exportWindow(ctx context.Context, f Filter, lo, hi time.Time, after *Cursor, fn func(Decision) error) error {
	var p Params
	where := f.where(&p)
	var conds []string
	if !lo.IsZero() {
		conds = append(conds, "Timestamp >= fromUnixTimestamp64Nano({win_lo:Int64})")
		p.Int64("win_lo", lo.UnixNano())
	}
	if !hi.IsZero() {
		conds = append(conds, "Timestamp < fromUnixTimestamp64Nano({win_hi:Int64})")
		p.Int64("win_hi", hi.UnixNano())
	}
	if after != nil {
		conds = append(conds, "Timestamp <= fromUnixTimestamp64Nano({after_ts:Int64})",
			"(Timestamp, SpanId) < (fromUnixTimestamp64Nano({after_ts:Int64}), {after_span:String})")
		p.Int64("after_ts", after.Timestamp.UnixNano())
		p.String("after_span", after.SpanID)
	}
	where = andWhere(where, conds)
	sql := "SELECT " + selectList() + "\nFROM " + s.cfg.read(DecisionsTable) + " FINAL" + where +
		"\nORDER BY Timestamp DESC, SpanId DESC" + finalSettings +
		fmt.Sprintf(", max_bytes_before_external_sort = %d", exportSortBytes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the stream when fn stops the export
	rows, err := s.query(ctx, "export", sql, &p)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDecision(rows)
		if err != nil {
			return s.wrap("export", err)
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.wrap("export", fmt.Errorf("reading the streamed result: %w", err))
	}
	return nil
}

// andWhere adds conds to a WHERE clause (Filter.where's, or "").
func andWhere(where string, conds []string) string {
	switch {
	case len(conds) == 0:
		return where
	case where == "":
		return "\nWHERE " + strings.Join(conds, "\n  AND ")
	}
	return where + "\n  AND " + strings.Join(conds, "\n  AND ")
}
