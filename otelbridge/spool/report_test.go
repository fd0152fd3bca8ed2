package spool

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestUploadReporter: during an outage the handler gets the first failure,
// then the same failure at most once per interval with the count of
// attempts not reported, a different failure at once, and one recovery
// notice when an upload succeeds.
func TestUploadReporter(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	refused := errors.New("rpc error: code = Unavailable desc = connection refused")
	denied := errors.New("rpc error: code = Unauthenticated desc = invalid token")
	type step struct {
		at  time.Duration
		err error // nil: the upload succeeded
	}
	tests := []struct {
		name  string
		steps []step
		want  []string // the reports, as %T:Attempts/Suppressed
	}{
		{"no failure, nothing", []step{{0, nil}, {time.Second, nil}}, nil},
		{"first reported, repeats within the interval not",
			[]step{{0, refused}, {100 * time.Millisecond, refused}, {600 * time.Millisecond, refused}, {29 * time.Second, refused}},
			[]string{"upload:1/0"}},
		{"one per interval with the count",
			[]step{{0, refused}, {time.Second, refused}, {2 * time.Second, refused}, {30 * time.Second, refused}, {31 * time.Second, refused}, {61 * time.Second, refused}},
			[]string{"upload:1/0", "upload:4/2", "upload:6/1"}},
		{"a different failure at once",
			[]step{{0, refused}, {time.Second, refused}, {2 * time.Second, denied}, {3 * time.Second, denied}, {4 * time.Second, refused}},
			[]string{"upload:1/0", "upload:3/1", "upload:5/1"}},
		{"recovered once, then a new outage starts afresh",
			[]step{{0, refused}, {time.Second, refused}, {2 * time.Second, refused}, {5 * time.Second, nil}, {6 * time.Second, nil}, {7 * time.Second, refused}},
			[]string{"upload:1/0", "recovered:3/2", "upload:1/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := uploadReporter{every: 30 * time.Second}
			var got []string
			for _, s := range tt.steps {
				var e error
				if s.err == nil {
					e = r.succeeded(t0.Add(s.at))
				} else {
					e = r.failed(t0.Add(s.at), 7, 500*time.Millisecond, s.err)
				}
				switch e := e.(type) {
				case nil:
				case *UploadError:
					require.ErrorIs(t, e, s.err, "the client's error is kept")
					got = append(got, fmt.Sprintf("upload:%d/%d", e.Attempts, e.Suppressed))
				case *RecoveredError:
					got = append(got, fmt.Sprintf("recovered:%d/%d", e.Attempts, e.Suppressed))
				default:
					t.Fatalf("unexpected %T", e)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}

	e := (&uploadReporter{every: time.Minute}).failed(time.Now(), 3, time.Second, refused)
	assert.Equal(t, "spool: upload of 3 spans failed (retrying in 1s): "+refused.Error(), e.Error())
	r := uploadReporter{every: time.Minute}
	r.failed(t0, 3, time.Second, refused)
	r.failed(t0.Add(time.Second), 3, time.Second, refused)
	assert.Equal(t, "spool: uploads recovered after 12.5s, 2 retries (1 failures not reported)", r.succeeded(t0.Add(12500*time.Millisecond)).Error())
}

// TestPropertyUploadReporterAccountsForEveryAttempt: whatever the sequence
// of failures (a few distinct errors) and successes, at any times, every
// failed attempt is either reported or counted in the next report's
// Suppressed, reports of the same failure are at least the interval apart,
// the first failure of an outage and every change of failure are
// reported, and each outage ends with exactly one recovery notice whose
// counts add up.
func TestPropertyUploadReporterAccountsForEveryAttempt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		every := time.Duration(rapid.IntRange(1, 60).Draw(t, "every_s")) * time.Second
		errs := []error{errors.New("unavailable"), errors.New("unauthenticated"), errors.New("deadline exceeded")}
		r := uploadReporter{every: every}
		now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		var (
			attempts, reported, suppressed int // of the current outage
			failing                        bool
			lastKey                        string
			lastAt                         time.Time
		)
		n := rapid.IntRange(1, 200).Draw(t, "steps")
		for i := 0; i < n; i++ {
			now = now.Add(time.Duration(rapid.IntRange(0, 20000).Draw(t, "gap_ms")) * time.Millisecond)
			if rapid.IntRange(0, 9).Draw(t, "ok") == 0 {
				e := r.succeeded(now)
				if !failing {
					if e != nil {
						t.Fatalf("a recovery notice without an outage: %v", e)
					}
					continue
				}
				rec, ok := e.(*RecoveredError)
				if !ok {
					t.Fatalf("no recovery notice after %d failed attempts: %v", attempts, e)
				}
				if rec.Attempts != attempts || rec.Attempts != reported+rec.Suppressed {
					t.Fatalf("recovered %+v after %d attempts, %d reported", rec, attempts, reported)
				}
				failing, attempts, reported, suppressed = false, 0, 0, 0
				continue
			}
			err := errs[rapid.IntRange(0, len(errs)-1).Draw(t, "err")]
			e := r.failed(now, 1, time.Second, err)
			attempts++
			first, changed := !failing, err.Error() != lastKey
			failing = true
			if e == nil {
				if first || changed {
					t.Fatalf("attempt %d (%v) not reported: first %v, changed %v", attempts, err, first, changed)
				}
				suppressed++
				continue
			}
			ue := e.(*UploadError)
			if !first && !changed && now.Sub(lastAt) < every {
				t.Fatalf("the same failure reported again after %s < %s", now.Sub(lastAt), every)
			}
			if ue.Suppressed != suppressed || ue.Attempts != attempts || !errors.Is(ue, err) {
				t.Fatalf("report %+v: want %d suppressed, %d attempts", ue, suppressed, attempts)
			}
			reported++
			suppressed, lastKey, lastAt = 0, err.Error(), now
		}
	})
}
