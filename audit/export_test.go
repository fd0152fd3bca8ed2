package audit

import "context"

// StatsFrom runs q the way Stats would with the roll-up (rollup true: its
// watermark; false: gate_decisions alone), for tests that compare the
// two paths. ok is false when rollup is asked for and q does not fit it
// or nothing is rolled up.
func StatsFrom(ctx context.Context, s *Store, q StatsQuery, rollup bool) (st Stats, ok bool, err error) {
	if !rollup {
		st, err = s.stats(ctx, q, 0)
		return st, true, err
	}
	if !q.rollupFits() {
		return Stats{}, false, nil
	}
	w, ok := s.rolledThrough(ctx)
	if !ok {
		return Stats{}, false, nil
	}
	st, err = s.stats(ctx, q, w)
	return st, true, err
}
