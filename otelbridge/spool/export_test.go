package spool

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
