package spool

import (
	"context"
	"errors"
	"fmt"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// maxBatchBytes bounds an upload request's records (the collector's gRPC
// receiver takes 4 MiB by default).
const maxBatchBytes = 2 << 20

// batch is one upload request.
type batch struct {
	idxs  []uint64
	spans int
	rs    []*tracepb.ResourceSpans
}

// drain uploads the log until the spool stops; see the package
// documentation.
func (s *Spool) drain() {
	defer close(s.drainDone)
	if s.cfg.Offline {
		select {
		case <-s.stopping:
		case <-s.drainCtx.Done():
		}
		return
	}
	var wait time.Duration
	var singleUntil uint64 // records below it go one per request (after a rejected batch)
	rep := uploadReporter{every: s.cfg.ReportInterval}
	for {
		b := s.nextBatch(singleUntil)
		if b == nil {
			select {
			case <-s.wake:
			case <-s.stopping:
				if !s.hasUnsent() { // not nextBatch: it reads and decodes the batch
					return
				}
			case <-s.drainCtx.Done():
				return
			}
			continue
		}
		ctx, cancel := context.WithTimeout(s.drainCtx, s.cfg.UploadTimeout)
		err := s.client.UploadTraces(ctx, b.rs)
		cancel()
		if err == nil {
			wait = 0
			s.acked(b.idxs, stSent)
			if n := rep.succeeded(time.Now()); n != nil {
				s.report(n)
			}
			continue
		}
		if permanent(err) {
			if len(b.idxs) > 1 {
				// Find the record the collector rejects: send them singly.
				singleUntil = b.idxs[len(b.idxs)-1] + 1
				continue
			}
			s.report(fmt.Errorf("spool: the collector rejected a record of %d spans as invalid or too large; dropped (counted in Dropped): %w", b.spans, err))
			s.acked(b.idxs, stDropped)
			continue
		}
		s.uploadFailed.Add(int64(b.spans))
		s.lastErr.Store(&err)
		wait = min(max(2*wait, 100*time.Millisecond), s.cfg.MaxBackoff)
		if e := rep.failed(time.Now(), b.spans, wait, err); e != nil {
			s.report(e)
		}
		select {
		case <-time.After(wait):
		case <-s.drainCtx.Done():
			return
		}
	}
}

// permanent reports a gRPC status that retrying cannot change: the
// request itself is invalid (InvalidArgument), or too large for the
// receiver (ResourceExhausted without RetryInfo, which the OTLP
// specification and the OTLP exporter treat as not retryable; grpc-go's
// "received message larger than max").
func permanent(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	switch st.Code() {
	case codes.InvalidArgument:
		return true
	case codes.ResourceExhausted:
		for _, d := range st.Details() {
			if _, retry := d.(interface{ GetRetryDelay() *durationpb.Duration }); retry {
				return false
			}
		}
		return true
	}
	return false
}

// nextBatch collects unsent final records from the cursor on, up to the
// batch limits; nil when there are none.
func (s *Spool) nextBatch(singleUntil uint64) *batch {
	s.mu.Lock()
	var idxs []uint64
	var cached [][]*tracepb.ResourceSpans
	spans := 0
	var bytes int64
	for i := s.cursor; i < s.next(); i++ {
		m := s.recs[i-s.first]
		if m.state != stUnsent {
			continue
		}
		if len(idxs) > 0 && (spans+int(m.spans) > s.cfg.BatchSpans || bytes+m.size > maxBatchBytes || i < singleUntil) {
			break
		}
		idxs = append(idxs, i)
		cached = append(cached, s.cache[i])
		spans += int(m.spans)
		bytes += m.size
	}
	s.mu.Unlock()
	if len(idxs) == 0 {
		return nil
	}
	b := &batch{}
	for i, idx := range idxs {
		if rs := cached[i]; rs != nil {
			b.idxs = append(b.idxs, idx)
			b.spans += int(s.recsSpans(idx))
			b.rs = merge(b.rs, rs)
			continue
		}
		rec, err := s.log.Read(idx)
		var rs []*tracepb.ResourceSpans
		if err == nil {
			_, err = decodeHeader(rec)
		}
		if err == nil {
			rs, err = s.dec.decode(rec)
		}
		if err != nil {
			s.mu.Lock()
			if idx >= s.first && s.recs[idx-s.first].state == stUnsent {
				// Not dropped meanwhile: the record is unreadable.
				s.torn.Add(1)
				s.markLocked(idx, stCorrupt)
				s.advanceCursorLocked()
				s.report(fmt.Errorf("spool: record %d unreadable, skipped (counted in TornRecovered): %w", idx, err))
			}
			s.mu.Unlock()
			continue
		}
		b.idxs = append(b.idxs, idx)
		b.spans += len(keysOf(rs))
		b.rs = merge(b.rs, rs)
	}
	if len(b.idxs) == 0 {
		return s.nextBatch(singleUntil)
	}
	return b
}

// hasUnsent reports whether an unsent final record is left.
func (s *Spool) hasUnsent() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unsentBelowLocked(s.next())
}

// markLocked moves an unsent record to a final state.
func (s *Spool) markLocked(idx uint64, st uint8) {
	m := &s.recs[idx-s.first]
	if m.state != stUnsent {
		return
	}
	m.state = st
	s.live -= m.size
	s.unsent -= int64(m.spans)
	delete(s.cache, idx)
	switch st {
	case stSent:
		s.sent.Add(int64(m.spans))
	case stDropped:
		s.dropped.Add(int64(m.spans))
	}
}

// acked records the outcome of an upload and truncates the log.
func (s *Spool) acked(idxs []uint64, st uint8) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, idx := range idxs {
		if idx >= s.first {
			s.markLocked(idx, st)
		}
	}
	s.advanceCursorLocked()
	if err := s.writeAckLocked(); err != nil {
		s.report(err)
	}
	s.truncateLocked()
}

// recsSpans is record idx's span count (0 once truncated).
func (s *Spool) recsSpans(idx uint64) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if idx < s.first || idx >= s.next() {
		return 0
	}
	return s.recs[idx-s.first].spans
}
