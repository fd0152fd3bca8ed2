package audit

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// exportSortBytes is the memory (bytes) past which the engine's sort of an
// export spills to temporary files: 256 MiB, a quarter of the laptop
// budget in docs/deployment.md.
const exportSortBytes = 256 << 20

// Cursor returns the position of d in the order Decisions and Export read
// (Timestamp DESC, then the rest of the sorting key: SpanId, Action,
// Agent, ToolName, descending): Export from it resumes right after d.
func (d Decision) Cursor() Cursor {
	return Cursor{Timestamp: d.Timestamp, SpanID: d.SpanID, Action: d.Action, Agent: d.Agent, ToolName: d.ToolName}
}

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
// whole hours holding about [WithExportWindow] decisions (20,000), each
// also bounding the primary key (keybound.go), whose result the server
// streams: rows/s stay the same however deep the export goes
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
	return s.runWindows(ctx, f, splitKeyed(exportWindows(hours, rows)), after, fn)
}

// hourCount is how many decisions (duplicates included) an hour holds:
// hour is its start, UTC, in seconds since the Unix epoch.
type hourCount struct {
	hour int64
	n    uint64
}

// window is one export query's range [lo, hi) (lo zero: no lower bound;
// hi zero: no upper bound); keyed: the query also bounds the primary
// key's first column (keybound.go; splitKeyed sets it).
type window struct {
	lo, hi time.Time
	keyed  bool
}

// exportWindows groups hours (newest first) into windows of at least rows
// decisions each (the oldest may hold fewer), newest first; the first
// window has no upper bound and the last no lower bound, so together
// they cover all time, whatever the counts missed (a late decision in an
// hour older than every hour counted).
//
// An hour not older than the window above it is skipped (its decisions
// are in that window): counts come from the engine, and the hour of a
// Timestamp past 2106 is wrapped (toStartOfHour(toDateTime(…)) of a
// DateTime), so the list can be out of order, and windows that overlap
// would hand decisions over twice.
func exportWindows(hours []hourCount, rows uint64) []window {
	if len(hours) == 0 {
		return nil
	}
	var ws []window
	hi := time.Time{}
	var acc uint64
	for _, h := range hours {
		lo := time.Unix(h.hour, 0).UTC()
		if !hi.IsZero() && !lo.Before(hi) {
			continue
		}
		if acc += h.n; acc < rows {
			continue
		}
		ws = append(ws, window{lo: lo, hi: hi})
		hi, acc = lo, 0
	}
	if acc == 0 && len(ws) > 0 {
		ws[len(ws)-1].lo = time.Time{} // the last window has no lower bound
		return ws
	}
	return append(ws, window{hi: hi})
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
	// Each recount of an hour writes all its rows with one RolledThrough,
	// and the newest recount holds the whole hour: its sum is the hour's
	// count, however many older recounts the merges have not yet replaced
	// (a plain sum counted them all, and halved the windows). On a
	// cluster each shard recounts its own decisions: the newest recount
	// of each shard, summed.
	shard := "0"
	if s.cfg.cluster != "" {
		shard = "_shard_num"
	}
	hours, err := s.scanHourCounts(ctx, "SELECT h, sum(n) FROM (\n"+
		"  SELECT h, argMax(n, r) AS n FROM (\n"+
		"    SELECT toUnixTimestamp(Hour) AS h, "+shard+" AS sh, RolledThrough AS r, sum(Calls) AS n FROM "+s.cfg.read(HourlyTable)+where+
		"\n    GROUP BY h, sh, r)\n  GROUP BY h, sh)\nGROUP BY h ORDER BY h DESC", &p)
	if err != nil || len(hours) == 0 {
		return hours, err
	}
	recent, err := s.decisionHourCounts(ctx, f, after, hours[0].hour+3600)
	if err != nil {
		return nil, err
	}
	// Newest first as a whole: a Timestamp past 2106 gives a wrapped hour
	// among the recent ones (exportWindows skips what is out of order).
	hours = append(recent, hours...)
	sort.SliceStable(hours, func(i, j int) bool { return hours[i].hour > hours[j].hour })
	return hours, nil
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
		conds = append(conds, "Timestamp >= toDateTime64({from:Int64}, 9, 'UTC')")
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

// windowSQL is the query of the decisions of f in w after the cursor,
// newest first; the engine's sort spills past [exportSortBytes]. A keyed
// window also bounds the primary key (keybound.go).
func (s *Store) windowSQL(f Filter, w window, after *Cursor) (string, *Params) {
	p := new(Params)
	where := f.where(p)
	var conds []string
	if !w.lo.IsZero() {
		conds = append(conds, "Timestamp >= fromUnixTimestamp64Nano({win_lo:Int64})")
		p.Int64("win_lo", w.lo.UnixNano())
	}
	if !w.hi.IsZero() {
		conds = append(conds, "Timestamp < fromUnixTimestamp64Nano({win_hi:Int64})")
		p.Int64("win_hi", w.hi.UnixNano())
	}
	if w.keyed {
		conds = append(conds, keyBounds(p, w)...)
	}
	if after != nil {
		conds = append(conds, after.afterCursor(p)...)
	}
	return "SELECT " + selectList() + "\nFROM " + s.cfg.read(DecisionsTable) + " FINAL" + andWhere(where, conds) +
		"\nORDER BY " + newestFirst + finalSettings + fmt.Sprintf(", max_bytes_before_external_sort = %d", exportSortBytes), p
}

// opened is a window's query, started ahead: its rows, or the error.
type opened struct {
	rows driver.Rows
	err  error
}

// ahead is a window's query running on its own goroutine: the engine reads
// and sorts the next window while the caller decodes and hands over this
// one (a window's sort is most of its time at 10M decisions, and the
// caller waits for it otherwise). ch receives exactly one value; cancel
// stops the query.
type ahead struct {
	ch     chan opened
	cancel context.CancelFunc
	got    opened // what wait returned, once waited
	waited bool
}

// open starts w's query.
func (s *Store) open(ctx context.Context, f Filter, w window, after *Cursor) *ahead {
	ctx, cancel := context.WithCancel(ctx)
	a := &ahead{ch: make(chan opened, 1), cancel: cancel}
	go func() {
		sql, p := s.windowSQL(f, w, after)
		rows, err := s.query(ctx, "export", sql, p)
		a.ch <- opened{rows: rows, err: err}
	}()
	return a
}

// wait returns the query's rows or error (once).
func (a *ahead) wait() opened { return <-a.ch }

// done records what wait returned, for stop.
func (a *ahead) done(o opened) { a.got, a.waited = o, true }

// stop ends the query, started or not, and waits for its goroutine: the
// stream stops and the connection is freed. It may be called again.
func (a *ahead) stop() {
	a.cancel()
	if !a.waited {
		a.done(<-a.ch)
	}
	if a.got.rows != nil {
		a.got.rows.Close()
		a.got.rows = nil
	}
}

// runWindows runs the windows' queries in order, each started while the
// one before it is handed over, and hands every decision to fn. It returns
// only after every query it started has ended.
func (s *Store) runWindows(ctx context.Context, f Filter, ws []window, after *Cursor, fn func(Decision) error) error {
	if len(ws) == 0 {
		return nil
	}
	var cur, next *ahead
	defer func() { // also when fn panics: no query left running
		for _, a := range []*ahead{cur, next} {
			if a != nil {
				a.stop()
			}
		}
	}()
	cur = s.open(ctx, f, ws[0], after)
	for i := range ws {
		o := cur.wait()
		cur.done(o)
		if o.err != nil && i > 0 && ctx.Err() == nil {
			// Started ahead, it may have waited too long for a connection
			// (max_open_conns) or for the server while the window before it
			// was handed over to a slow fn: nothing of it was handed over,
			// so it runs again, now.
			cur.stop()
			cur = s.open(ctx, f, ws[i], after)
			o = cur.wait()
			cur.done(o)
		}
		if o.err == nil && i+1 < len(ws) {
			next = s.open(ctx, f, ws[i+1], after)
		}
		if o.err != nil {
			return o.err
		}
		if err := s.handOver(o.rows, fn); err != nil {
			return err
		}
		cur.stop()
		cur, next = next, nil
	}
	return nil
}

// handOver hands a window's rows to fn in the order the engine sent them.
func (s *Store) handOver(rows driver.Rows, fn func(Decision) error) error {
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
