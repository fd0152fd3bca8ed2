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

// Export calls fn for every decision matching f, newest first (Timestamp
// DESC, then SpanId DESC), starting right after the cursor after when it
// is not nil (what [Decision.Cursor] of the last decision handled returns:
// an export that stopped resumes there, and no decision is skipped or
// read twice). Unlike paging with [Store.Decisions], it runs one query
// per UTC day of the range, whose result the server streams: rows/s stay
// the same however deep the export goes, the first rows arrive after one
// day's sort, and no result is held whole: the server hands it over block
// by block, and the engine's sort of a day spills to disk past
// [exportSortBytes].
//
// fn's error stops the export and is returned as is. Other errors: the
// store's ([ErrNotMigrated], [*UnreachableError], the driver's), wrapped;
// a connection lost mid-export is an error, never a short export.
func (s *Store) Export(ctx context.Context, f Filter, after *Cursor, fn func(Decision) error) error {
	// One streamed query per UTC day, newest first: the engine sorts a day
	// at a time (the first rows arrive after one day's sort, not the whole
	// range's), and each query prunes to its day's partition.
	anchor := time.Now().UTC()
	if after != nil {
		anchor = after.Timestamp.UTC()
	} else if !f.Until.IsZero() {
		anchor = f.Until.UTC()
	}
	oldest, ok, err := s.oldest(ctx, f)
	if err != nil || !ok {
		return err
	}
	hi := time.Time{} // the newest window has no upper bound but the filter's
	lo := anchor.Truncate(24 * time.Hour)
	for {
		if !f.Since.IsZero() && lo.Before(f.Since) {
			lo = f.Since
		}
		if err := s.exportWindow(ctx, f, lo, hi, after, fn); err != nil {
			return err
		}
		if !lo.After(oldest) || (!f.Since.IsZero() && !lo.After(f.Since)) {
			return nil
		}
		hi, lo = lo, lo.Add(-24*time.Hour)
	}
}

// oldest is the Timestamp of the oldest decision matching f (ok false:
// none).
func (s *Store) oldest(ctx context.Context, f Filter) (t time.Time, ok bool, err error) {
	var p Params
	sql := "SELECT min(Timestamp), count() > 0 FROM " + s.cfg.read(DecisionsTable) + f.where(&p)
	if err := s.conn.QueryRow(p.Context(ctx), sql).Scan(&t, &ok); err != nil {
		return time.Time{}, false, s.wrap("export", err)
	}
	return t, ok, nil
}

// exportWindow streams the decisions of f in [lo, hi) (hi zero: no upper
// bound) after the cursor, newest first, to fn.
func (s *Store) exportWindow(ctx context.Context, f Filter, lo, hi time.Time, after *Cursor, fn func(Decision) error) error {
	var p Params
	where := f.where(&p)
	conds := []string{"Timestamp >= fromUnixTimestamp64Nano({win_lo:Int64})"}
	p.Int64("win_lo", lo.UnixNano())
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
	if where == "" {
		where = "\nWHERE " + strings.Join(conds, "\n  AND ")
	} else {
		where += "\n  AND " + strings.Join(conds, "\n  AND ")
	}
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
