package audit

import "time"

// The first column of gate_decisions' primary key is
// toStartOfHour(Timestamp) (migration 2), and the engine does not derive a
// bound on it from a bound on Timestamp: EXPLAIN indexes = 1 of an export
// window of two hours at 10M decisions shows the primary key searched by
// Timestamp alone (its fifth column, "generic exclusion search") and all
// 46 granules of the merged day part kept (5 hold the window); with FINAL
// the engine reads the key columns of every kept granule. A/B in one
// process at 10M, merged parts, 28 days deep: 105k rows/s over 200,000
// decisions without the key's bounds, 134–138k with them (unmerged
// parts: about the same). An export window therefore also bounds the key
// column itself, by bounds that hold in every time zone and need no knowledge of
// the one the key was written in:
//
//   - the start of the hour holding t is never after t, so
//     Timestamp < hi implies toStartOfHour(Timestamp) < hi (rounded up to
//     a second: the key is a DateTime);
//   - and never more than two hours before it, so Timestamp >= lo
//     implies toStartOfHour(Timestamp) >= lo − 2 h. The engine takes the
//     hour's start at the instant's own offset: around every offset change
//     of the 597 zones in system.time_zones between 1970-01-03 and
//     2105-12-01 (Antarctica/Troll's two-hour shift, Lord Howe's half hour
//     and Monrovia's −0:44:30 among them) it was never more than one hour
//     before the instant (red team, session 12); two leave room.
//
// Both hold only where the key is the hour's start: a DateTime counts
// seconds from 1970 to 2106, and the key of a Timestamp outside is not
// (clamped or wrapped); nor, in a zone east of UTC, on 1970-01-01
// (measured: with session_timezone Asia/Kolkata, the keyed windows lost
// that day's decisions, TestExportKeyBoundsInEveryZone). So only windows
// between keyFloor and keyCeil, two days or more inside that range, are
// keyed; the rest of time is read by windows without the key's bounds
// (splitKeyed), which the day partitions and the parts' minmax index
// prune at once when they hold nothing.

// keyFloorUnix and keyCeilUnix (seconds since the Unix epoch) bound the
// Timestamps whose key bounds are exact: 1970-01-03 and 2105-12-01, 00:00
// UTC (a DateTime ends 2106-02-07).
const (
	keyFloorUnix = 2 * 86400
	keyCeilUnix  = 4289068800
)

// keyFloor and keyCeil are keyFloorUnix and keyCeilUnix as times.
func keyFloor() time.Time { return time.Unix(keyFloorUnix, 0).UTC() }
func keyCeil() time.Time  { return time.Unix(keyCeilUnix, 0).UTC() }

// keyMargin is how long before a Timestamp its hour's start may lie.
const keyMargin = 2 * time.Hour

// splitKeyed cuts windows (newest first, contiguous) at keyCeil and
// keyFloor and marks the parts between them keyed: the same time in the
// same order, in up to two more windows.
func splitKeyed(ws []window) []window {
	var out []window
	for _, w := range ws {
		for _, r := range []window{{lo: keyCeil()}, {lo: keyFloor(), hi: keyCeil(), keyed: true}, {hi: keyFloor()}} {
			lo, hi := w.lo, w.hi
			if !r.lo.IsZero() && (lo.IsZero() || lo.Before(r.lo)) {
				lo = r.lo
			}
			if !r.hi.IsZero() && (hi.IsZero() || hi.After(r.hi)) {
				hi = r.hi
			}
			if !lo.IsZero() && !hi.IsZero() && !lo.Before(hi) {
				continue // empty
			}
			out = append(out, window{lo: lo, hi: hi, keyed: r.keyed})
		}
	}
	return out
}

// keyBounds returns the conditions on the key's first column that a keyed
// window w implies, and sets their parameters.
func keyBounds(p *Params, w window) []string {
	klo := w.lo.Add(-keyMargin).Unix() // floor: lo is after 1970
	khi := w.hi.Unix()
	if w.hi.Nanosecond() > 0 {
		khi++ // ceil
	}
	p.Int64("win_key_lo", klo).Int64("win_key_hi", khi)
	return []string{
		"toStartOfHour(Timestamp) >= toDateTime({win_key_lo:Int64})",
		"toStartOfHour(Timestamp) < toDateTime({win_key_hi:Int64})",
	}
}
