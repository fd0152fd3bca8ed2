package audit_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/gate"
)

// TestPropertyVerifyStatus: for any chain, any set of its rows lost or
// deleted, any rows edited, and its run's end stored or not (a crash),
// verify reports exactly the lost positions it can see — every one below
// the last stored position, and with the run's end stored every one —,
// exactly the edited rows, and the status: complete only with the end
// stored and nothing wrong; open only without the end and nothing wrong
// among the stored positions (a lost tail is not visible, so it is never
// reported complete); problems otherwise.
func TestPropertyVerifyStatus(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(rt, "n")
		rows := chainRows("c", n)
		head := rows[n-1].ChainHash
		lost := map[uint64]bool{}
		edited := map[uint64]bool{}
		var kept []gate.StoredDecision
		for _, r := range rows {
			switch rapid.IntRange(0, 9).Draw(rt, "fate") {
			case 0:
				lost[r.ChainSeq] = true
				continue
			case 1:
				r.Reason += " (edited)"
				edited[r.ChainSeq] = true
			}
			kept = append(kept, r)
		}
		if len(kept) == 0 {
			return
		}
		ended := rapid.Bool().Draw(rt, "ended")
		c := audit.Chains{Rows: kept}
		if ended {
			c.Ends = map[string]audit.ChainEnd{"c": {Length: uint64(n), Head: head}}
		}
		reps := audit.Verify(c)
		if len(reps) != 1 {
			rt.Fatalf("%d reports", len(reps))
		}
		r := reps[0]
		last := kept[len(kept)-1].ChainSeq
		gotMissing, gotEdited := map[uint64]bool{}, map[uint64]bool{}
		for _, p := range r.Problems {
			switch p.Kind {
			case audit.ProblemMissing:
				for s := p.Seq; s <= p.Last; s++ {
					gotMissing[s] = true
				}
			case audit.ProblemEdited:
				gotEdited[p.Seq] = true
			case audit.ProblemHead:
				if !ended || !lostOrEdited(n, lost, edited) {
					rt.Fatalf("head mismatch without cause: %+v", p)
				}
			default:
				rt.Fatalf("unexpected problem %+v", p)
			}
		}
		wantMissing := map[uint64]bool{}
		for s := range lost {
			if ended || s < last {
				wantMissing[s] = true
			}
		}
		if !equalSet(gotMissing, wantMissing) {
			rt.Fatalf("missing %v, want %v (lost %v, ended %v)", gotMissing, wantMissing, lost, ended)
		}
		if !equalSet(gotEdited, edited) {
			rt.Fatalf("edited %v, want %v", gotEdited, edited)
		}
		want := audit.StatusProblems
		switch {
		case len(wantMissing) > 0 || len(edited) > 0:
		case ended:
			want = audit.StatusComplete
		default:
			want = audit.StatusOpen
		}
		if r.Status != want {
			rt.Fatalf("status %q, want %q (lost %v, edited %v, ended %v)", r.Status, want, lost, edited, ended)
		}
		if r.Status == audit.StatusComplete && len(lost) > 0 {
			rt.Fatalf("a chain with lost positions %v reported complete", lost)
		}
		if r.Complete != (len(r.Problems) == 0) || r.RunSpan != ended || r.Last != last {
			rt.Fatalf("report %+v", r)
		}
	})
}

// lostOrEdited: the last position n was lost or edited (the head it
// recorded no longer matches a stored row).
func lostOrEdited(n int, lost, edited map[uint64]bool) bool {
	return lost[uint64(n)] || edited[uint64(n)]
}

func equalSet(a, b map[uint64]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
