package audit

import (
	"testing"
	"time"

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
