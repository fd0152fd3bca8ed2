package spool

import (
	"fmt"
	"path/filepath"
)

// Abandon simulates a crash: it stops the goroutines and closes the files
// without a final upload, sync or ACK write (what was written stays, as it
// would in the page cache after a SIGKILL), and releases the lock.
func (s *Spool) Abandon() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.drainCancel()
	<-s.drainDone
	close(s.stopSync)
	<-s.syncDone
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.ack.Close()
	_ = s.log.Close()
	_ = s.lock.Close()
}

// TailMismatch compares the tail segment the spool fsyncs with the log's
// real last segment file; "" when they agree.
func (s *Spool) TailMismatch() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	segs, err := segments(filepath.Join(s.cfg.Dir, "wal"))
	if err != nil || len(segs) == 0 {
		return fmt.Sprintf("no segments: %v", err)
	}
	if want := fmt.Sprintf("%020d", s.tailStart); segs[len(segs)-1] != want {
		return fmt.Sprintf("tail %s, last segment file %s", want, segs[len(segs)-1])
	}
	return ""
}
