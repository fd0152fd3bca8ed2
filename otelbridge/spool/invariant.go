package spool

import "fmt"

// checkLocked verifies the invariants of the spool's state machine, which
// every operation under mu (append, group write, Commit, resolve, move,
// budget drop, acknowledgement, truncation) must keep:
//   - first <= cursor <= next(); no unsent final record below the cursor,
//     and the cursor is on an unsent final record unless it is next() (so
//     that nextBatch, which starts at the cursor, reaches every unsent
//     record, and ForceFlush, which waits for the cursor, returns);
//   - pending/pendIdx are inverse maps of the stPending records;
//   - live, unsent and disk are the sums they cache; deadN leading
//     records are done.
//
// It returns nil or an error naming the first broken invariant; tests
// call it after every operation.
func (s *Spool) checkLocked() error {
	if s.cursor < s.first || s.cursor > s.next() {
		return fmt.Errorf("cursor %d outside the log [%d, %d]", s.cursor, s.first, s.next())
	}
	if s.cursor < s.next() && s.recs[s.cursor-s.first].state != stUnsent {
		return fmt.Errorf("cursor %d on a record in state %d, not an unsent final (log [%d, %d))", s.cursor, s.recs[s.cursor-s.first].state, s.first, s.next())
	}
	var live, disk, unsent int64
	npend := 0
	for i, m := range s.recs {
		idx := s.first + uint64(i)
		disk += m.size
		switch m.state {
		case stUnsent:
			if idx < s.cursor {
				return fmt.Errorf("unsent record %d below the cursor %d", idx, s.cursor)
			}
			live += m.size
			unsent += int64(m.spans)
		case stPending:
			live += m.size
			npend++
			k, ok := s.pendIdx[idx]
			if !ok || s.pending[k] != idx {
				return fmt.Errorf("pending record %d not in the pending maps", idx)
			}
		}
		if i < s.deadN && (m.state == stUnsent || m.state == stPending) {
			return fmt.Errorf("record %d counted dead but in state %d", idx, m.state)
		}
	}
	if npend != len(s.pending) || npend != len(s.pendIdx) {
		return fmt.Errorf("%d pending records, maps hold %d and %d", npend, len(s.pending), len(s.pendIdx))
	}
	if live != s.live || disk != s.disk || unsent != s.unsent {
		return fmt.Errorf("live/disk/unsent %d/%d/%d, records sum to %d/%d/%d", s.live, s.disk, s.unsent, live, disk, unsent)
	}
	return nil
}
