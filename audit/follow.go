package audit

import (
	"context"
	"errors"
	"time"
)

// Follower reports new decisions as they reach gate_decisions, each once,
// in the order they arrived (InsertedAt, then the sorting key: SpanID,
// Timestamp, Action, Agent, ToolName).
//
// How it avoids gaps and duplicates: a decision's InsertedAt is set by the
// view when its insert is processed, a moment before the insert commits,
// so a poll can miss a row with an InsertedAt just below the newest one it
// saw. Each poll therefore re-reads an overlap window (default 10s) before
// its watermark and skips the decisions (by their sorting key, not the
// span ID alone: two decisions may share one) it already reported in that
// window.
// A batch the exporter re-sends later is not reported again either: the
// table keeps the first copy of a span (see the package doc), and reading
// FINAL gives that copy's InsertedAt, which is behind the watermark.
// Decisions that arrived before the starting point are never reported.
type Follower struct {
	s       *Store
	filter  Filter
	overlap time.Duration
	batch   int
	mark    time.Time         // newest InsertedAt reported
	floor   time.Time         // the starting point: nothing at or before it is reported
	seen    map[key]time.Time // decision → InsertedAt, for rows in the overlap window
	started bool
}

// FollowOption configures a Follower.
type FollowOption func(*Follower)

// FollowFrom starts after decisions inserted at t (default: the server's
// now when the first Poll runs, i.e. only new decisions).
func FollowFrom(t time.Time) FollowOption {
	return func(f *Follower) { f.mark, f.floor, f.started = t, t, true }
}

// FollowOverlap sets the re-read window (default 10s): a row whose insert
// commits later than this after its InsertedAt could be missed.
func FollowOverlap(d time.Duration) FollowOption { return func(f *Follower) { f.overlap = d } }

// NewFollower follows decisions matching f (its Since and Until are
// ignored; the follower reads by arrival, not by span time).
func (s *Store) NewFollower(f Filter, opts ...FollowOption) *Follower {
	f.Since, f.Until = time.Time{}, time.Time{}
	fl := &Follower{s: s, filter: f, overlap: 10 * time.Second, batch: 1000, seen: map[key]time.Time{}}
	for _, o := range opts {
		o(fl)
	}
	return fl
}

// Poll returns the decisions that arrived since the last Poll, oldest
// first. The first Poll without FollowFrom returns nothing and sets the
// starting point to the server's current time.
func (f *Follower) Poll(ctx context.Context) ([]Decision, error) {
	if !f.started {
		rows, err := f.s.query(ctx, "follow", "SELECT now64(9)", nil)
		if err != nil {
			return nil, err
		}
		var now time.Time
		for rows.Next() {
			if err := rows.Scan(&now); err != nil {
				rows.Close()
				return nil, f.s.wrap("follow", err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, f.s.wrap("follow", err)
		}
		f.mark, f.floor, f.started = now, now, true
		return nil, nil
	}
	lo := f.mark.Add(-f.overlap)
	if lo.Before(f.floor) {
		lo = f.floor // decisions from before the start are not new
	}
	for id, at := range f.seen {
		if at.Before(lo) {
			delete(f.seen, id)
		}
	}
	var out []Decision
	// cur is the last row read, in arrivalOrder; the first read starts
	// at lo, before every decision inserted then with a span ID.
	var cur *Decision
	for {
		var p Params
		where := f.filter.where(&p)
		if cur == nil {
			where = andWhere(where, []string{"(InsertedAt, SpanId) > (fromUnixTimestamp64Nano({cur_at:Int64}), '')"})
			p.Int64("cur_at", lo.UnixNano())
		} else {
			where = andWhere(where, []string{"InsertedAt >= fromUnixTimestamp64Nano({cur_at:Int64})",
				"(InsertedAt, SpanId, Timestamp, Action, Agent, ToolName) > (fromUnixTimestamp64Nano({cur_at:Int64}), {cur_span:String}, " +
					"fromUnixTimestamp64Nano({cur_ts:Int64}), {cur_action:String}, {cur_agent:String}, {cur_tool:String})"})
			p.Int64("cur_at", cur.InsertedAt.UnixNano()).Int64("cur_ts", cur.Timestamp.UnixNano())
			p.String("cur_span", cur.SpanID).String("cur_action", cur.Action).String("cur_agent", cur.Agent).String("cur_tool", cur.ToolName)
		}
		p.Int64("limit", int64(f.batch))
		sql := "SELECT " + selectList() + "\nFROM " + f.s.cfg.read(DecisionsTable) + " FINAL" + where +
			"\nORDER BY " + arrivalOrder + "\nLIMIT {limit:UInt32}" + finalSettings
		rows, err := f.s.query(ctx, "follow", sql, &p)
		if err != nil {
			return out, err
		}
		n := 0
		for rows.Next() {
			d, err := scanDecision(rows)
			if err != nil {
				rows.Close()
				return out, f.s.wrap("follow", err)
			}
			n++
			cur = &d
			k := d.key()
			if _, dup := f.seen[k]; dup {
				continue
			}
			f.seen[k] = d.InsertedAt
			if d.InsertedAt.After(f.mark) {
				f.mark = d.InsertedAt
			}
			out = append(out, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return out, f.s.wrap("follow", err)
		}
		if n < f.batch {
			return out, nil
		}
	}
}

// Follow polls every interval (at least 100ms) and calls fn for each new
// decision until ctx ends (it then returns nil) or fn or a query fails.
func (s *Store) Follow(ctx context.Context, f Filter, interval time.Duration, fn func(Decision) error, opts ...FollowOption) error {
	if interval < 100*time.Millisecond {
		interval = 100 * time.Millisecond
	}
	fl := s.NewFollower(f, opts...)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ds, err := fl.Poll(ctx)
		for _, d := range ds {
			if ferr := fn(d); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
