package audit

import (
	"context"
	"fmt"
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
// whose result the server streams: rows/s stay the same however deep the
// export goes, and the result is never held whole: the server hands it
// over block by block, and the engine's sort spills to disk past
// [exportSortBytes] instead of growing with the export.
//
// fn's error stops the export and is returned as is. Other errors: the
// store's ([ErrNotMigrated], [*UnreachableError], the driver's), wrapped;
// a connection lost mid-export is an error, never a short export.
func (s *Store) Export(ctx context.Context, f Filter, after *Cursor, fn func(Decision) error) error {
	var p Params
	where := f.where(&p)
	if after != nil {
		cond := "Timestamp <= fromUnixTimestamp64Nano({after_ts:Int64})" +
			" AND (Timestamp, SpanId) < (fromUnixTimestamp64Nano({after_ts:Int64}), {after_span:String})"
		if where == "" {
			where = "\nWHERE " + cond
		} else {
			where += "\n  AND " + cond
		}
		p.Int64("after_ts", after.Timestamp.UnixNano())
		p.String("after_span", after.SpanID)
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
