package spool

import (
	"context"
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

// CheckInvariants is checkLocked under the lock.
func (s *Spool) CheckInvariants() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checkLocked()
}

// StopDrainer stops the drainer goroutine, so that a test drives uploads
// itself with DrainStep (deterministic interleavings).
func (s *Spool) StopDrainer() {
	s.drainCancel()
	<-s.drainDone
}

// DrainStep does what one turn of the drainer does: takes the next batch,
// uploads it and records the outcome (sent, or dropped when permanent).
// It returns the number of records in the batch (0: nothing to send) and
// the upload error.
func (s *Spool) DrainStep(ctx context.Context) (int, error) {
	b := s.nextBatch(0)
	if b == nil {
		return 0, nil
	}
	err := s.client.UploadTraces(ctx, b.rs)
	switch {
	case err == nil:
		s.acked(b.idxs, stSent)
	case permanent(err):
		s.acked(b.idxs, stDropped)
	}
	return len(b.idxs), err
}

// RestartDrainer starts a drainer again after StopDrainer.
func (s *Spool) RestartDrainer() {
	s.drainCtx, s.drainCancel = context.WithCancel(context.Background())
	s.drainDone = make(chan struct{})
	go s.drain()
}
