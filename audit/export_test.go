package audit

import "context"

// StatsFrom runs q the way Stats would with the roll-ups (rollup true: the
// narrowest daily roll-up that fits, else the hourly one; false:
// gate_decisions alone), for tests that compare the
// two paths. ok is false when rollup is asked for and q does not fit it
// or nothing is rolled up.
func StatsFrom(ctx context.Context, s *Store, q StatsQuery, rollup bool) (st Stats, ok bool, err error) {
	if !rollup {
		st, err = s.stats(ctx, q, 0, nil)
		return st, true, err
	}
	if r, ok := q.dailyFor(); ok {
		if w, ok := s.dailyRolledThrough(ctx, r); ok {
			st, err = s.stats(ctx, q, w, &r)
			return st, true, err
		}
	}
	if !q.rollupFits() {
		return Stats{}, false, nil
	}
	w, ok := s.rolledThrough(ctx)
	if !ok {
		return Stats{}, false, nil
	}
	st, err = s.stats(ctx, q, w, nil)
	return st, true, err
}

// StatsSource names what Stats answers q from: "daily:<table>", "hourly"
// or "decisions".
func StatsSource(ctx context.Context, s *Store, q StatsQuery) string {
	if r, ok := q.dailyFor(); ok {
		if _, ok := s.dailyRolledThrough(ctx, r); ok {
			return "daily:" + r.table
		}
	}
	if q.rollupFits() {
		if _, ok := s.rolledThrough(ctx); ok {
			return "hourly"
		}
	}
	return "decisions"
}

// DirtyHoursFrom lists the hours a decision inserted after w (Unix
// nanoseconds) reached, from ArrivalsTable (arrivals) or from
// gate_decisions' InsertedAt: the two must agree.
func DirtyHoursFrom(ctx context.Context, s *Store, w int64, arrivals bool) ([]int64, error) {
	var p Params
	p.Int64("rolled", w)
	if arrivals {
		return s.scanHours(ctx, s.arrivedHoursSQL(1<<20), &p)
	}
	return s.scanHours(ctx, s.insertedHoursSQL(1<<20), &p)
}
