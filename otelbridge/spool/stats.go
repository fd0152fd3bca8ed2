package spool

import "time"

// Stats are a [Spool]'s counters since Open (spans unless said otherwise)
// and its state now.
type Stats struct {
	// Spooled: spans appended as final records (OnEnd, and interrupted
	// calls recovered by Open).
	Spooled int64
	// Committed: pending records written by Commit.
	Committed int64
	// Sent: spans uploaded and acknowledged by the collector.
	Sent int64
	// Dropped: spans dropped unsent — by DropOldest when the budget was
	// full (pending records included), or rejected by the collector as
	// invalid. A loss.
	Dropped int64
	// Refused: spans OnEnd did not append — budget full under Refuse, the
	// spool shut down, a write error. A loss.
	Refused int64
	// RefusedCommits: Commit calls refused with ErrFull (the executor
	// denies those calls; their spans are not lost by that).
	RefusedCommits int64
	// TornRecovered: torn or corrupt records (whose CRC or length did not
	// check) cut off or skipped, in records.
	TornRecovered int64
	// Interrupted: committed calls without a final record that Open found
	// and spooled as interrupted.
	Interrupted int64
	// UploadFailed: spans in upload attempts that failed and are retried
	// (not a loss).
	UploadFailed int64
	// Unsent: spans in the log not yet acknowledged.
	Unsent int64
	// Pending: committed calls whose final record has not been appended.
	Pending int64
	// BytesOnDisk: bytes of the log's records (sent ones not yet truncated
	// included).
	BytesOnDisk int64
	// BudgetBytes: bytes counted against MaxBytes (unsent finals and
	// pending records).
	BudgetBytes int64
	// OldestUnsent: age of the oldest unsent final record; 0 when none.
	OldestUnsent time.Duration
}

// Lost is the spans the spool lost: Dropped + Refused.
func (s Stats) Lost() int64 { return s.Dropped + s.Refused }

// Stats returns the counters.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	st := Stats{Unsent: s.unsent, Pending: int64(len(s.pending)), BytesOnDisk: s.disk, BudgetBytes: s.live}
	if s.cursor < s.next() {
		st.OldestUnsent = max(time.Since(time.Unix(0, s.recs[s.cursor-s.first].t)), 0)
	}
	s.mu.Unlock()
	st.Spooled, st.Committed, st.Sent = s.spooled.Load(), s.committed.Load(), s.sent.Load()
	st.Dropped, st.Refused, st.RefusedCommits = s.dropped.Load(), s.refused.Load(), s.refusedCommits.Load()
	st.TornRecovered, st.Interrupted, st.UploadFailed = s.torn.Load(), s.interrupted.Load(), s.uploadFailed.Load()
	return st
}
