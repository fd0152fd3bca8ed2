package audit

import (
	"strconv"
	"testing"
	"time"
	_ "time/tzdata"

	"pgregory.net/rapid"
)

// TestExportWindows: for any hours (newest first, distinct) and window
// size, the windows are newest first, the first has no upper bound, each
// ends where the one before it starts, the last has no lower bound,
// every hour falls in exactly one window, and every window but the last
// holds at least rows decisions and would hold fewer without its oldest
// hour.
func TestExportWindows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows := rapid.Uint64Range(1, 100).Draw(t, "rows")
		n := rapid.IntRange(0, 60).Draw(t, "hours")
		var hours []hourCount
		h := int64(1_800_000_000 / 3600 * 3600)
		for range n {
			hours = append(hours, hourCount{hour: h, n: rapid.Uint64Range(1, 150).Draw(t, "n")})
			h -= 3600 * rapid.Int64Range(1, 50).Draw(t, "gap")
		}
		ws := exportWindows(hours, rows)
		if n == 0 {
			if len(ws) != 0 {
				t.Fatalf("no hours, %d windows", len(ws))
			}
			return
		}
		if !ws[0].hi.IsZero() {
			t.Fatalf("the newest window is bounded above: %v", ws[0])
		}
		if last := ws[len(ws)-1].lo; !last.IsZero() {
			t.Fatalf("the oldest window is bounded below: %v", last)
		}
		for i := 1; i < len(ws); i++ {
			if !ws[i].hi.Equal(ws[i-1].lo) || !ws[i].lo.IsZero() && !ws[i].lo.Before(ws[i].hi) {
				t.Fatalf("window %d %v does not continue %v", i, ws[i], ws[i-1])
			}
		}
		in := func(w window, x hourCount) bool {
			ts := time.Unix(x.hour, 0)
			return (w.lo.IsZero() || !ts.Before(w.lo)) && (w.hi.IsZero() || ts.Before(w.hi))
		}
		sums := make([]uint64, len(ws))
		oldest := make([]uint64, len(ws))
		for _, x := range hours {
			k := 0
			for i, w := range ws {
				if in(w, x) {
					k++
					sums[i] += x.n
					oldest[i] = x.n // hours are newest first
				}
			}
			if k != 1 {
				t.Fatalf("hour %d in %d windows", x.hour, k)
			}
		}
		for i := range len(ws) - 1 {
			if sums[i] < rows || sums[i]-oldest[i] >= rows {
				t.Fatalf("window %d holds %d decisions (%d without its oldest hour), size %d", i, sums[i], sums[i]-oldest[i], rows)
			}
		}
	})
}

// TestSplitKeyed: for any planned windows (also from hours out of order
// or repeated: then exportWindows skips an hour not older than the window
// above it, and windows never overlap), splitKeyed keeps the same time
// in the same order (newest first, contiguous, unbounded at both ends) and
// marks keyed exactly the windows inside [keyFloor, keyCeil), whose key
// bounds then hold for every instant of the window in every zone tested
// (Go's zone database): the start of its local hour lies in
// [win_key_lo, win_key_hi).
func TestSplitKeyed(t *testing.T) {
	zones := []string{"UTC", "Asia/Kolkata", "Australia/Lord_Howe", "America/St_Johns", "Pacific/Chatham", "Asia/Kathmandu", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Europe/London"}
	var locs []*time.Location
	for _, z := range zones {
		l, err := time.LoadLocation(z) // time/tzdata: never missing
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, l)
	}
	rapid.Check(t, func(t *rapid.T) {
		// Hours anywhere from 1960 to 2120, newest first.
		h := rapid.Int64Range(-315619200, 4733510400).Draw(t, "newest hour") / 3600 * 3600
		var hours []hourCount
		for range rapid.IntRange(1, 30).Draw(t, "hours") {
			hours = append(hours, hourCount{hour: h, n: rapid.Uint64Range(1, 500).Draw(t, "n")})
			h -= 3600 * rapid.Int64Range(1, 1<<rapid.IntRange(0, 20).Draw(t, "gap bits")).Draw(t, "gap")
		}
		if rapid.Bool().Draw(t, "out of order") {
			// Counts whose hours the engine wrapped (a Timestamp past
			// 2106) or that repeat: the windows must still not overlap.
			hours = rapid.Permutation(append(hours, hours[0])).Draw(t, "hours in any order")
		}
		ws := splitKeyed(exportWindows(hours, rapid.Uint64Range(1, 400).Draw(t, "rows")))
		if !ws[0].hi.IsZero() || !ws[len(ws)-1].lo.IsZero() {
			t.Fatalf("not unbounded at both ends: %v … %v", ws[0], ws[len(ws)-1])
		}
		for i, w := range ws {
			if i > 0 && !w.hi.Equal(ws[i-1].lo) {
				t.Fatalf("window %d %v does not continue %v", i, w, ws[i-1])
			}
			if !w.lo.IsZero() && !w.hi.IsZero() && !w.lo.Before(w.hi) {
				t.Fatalf("window %d is empty: %v", i, w)
			}
			inside := !w.lo.IsZero() && !w.hi.IsZero() && !w.lo.Before(keyFloor()) && !w.hi.After(keyCeil())
			if w.keyed != inside {
				t.Fatalf("window %d %v keyed %v, inside the key's range %v", i, w, w.keyed, inside)
			}
			if !w.keyed {
				continue
			}
			var p Params
			keyBounds(&p, w)
			lo, _ := strconv.ParseInt(p.m["win_key_lo"], 10, 64)
			hi, _ := strconv.ParseInt(p.m["win_key_hi"], 10, 64)
			at := w.lo.Add(time.Duration(rapid.Int64Range(0, int64(w.hi.Sub(w.lo))-1).Draw(t, "instant")))
			for _, l := range locs {
				lt := at.In(l)
				start := time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), 0, 0, 0, l).Unix()
				if start < lo || start >= hi {
					t.Fatalf("%v in %s: hour start %d outside the key bounds [%d, %d) of %v", at, l, start, lo, hi, w)
				}
			}
		}
	})
}
