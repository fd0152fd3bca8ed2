package spool

import (
	"fmt"
	"sync"
	"time"

	"github.com/tidwall/wal"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// final is an encoded final record of one span, waiting to be appended.
type final struct {
	data []byte
	rs   []*tracepb.ResourceSpans
	key  spanKey
	t    time.Time

	idx  uint64 // out: its index
	err  error  // out
	done bool   // guarded by group.mu
}

// group gathers the final records of spans ending concurrently, so that
// one caller (the leader) appends them all with one write() while the
// others wait: each caller still returns only once its record is in the
// kernel, so a SIGKILL loses no span whose OnEnd returned.
type group struct {
	mu    sync.Mutex
	cond  *sync.Cond
	queue []*final
	spare []*final
	busy  bool // a leader is appending
	batch wal.Batch
}

// appendFinal appends f to the log, together with the final records of
// other spans ending meanwhile, and returns its index. Errors: as put's.
func (s *Spool) appendFinal(f *final) (uint64, error) {
	g := &s.group
	g.mu.Lock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	g.queue = append(g.queue, f)
	for !f.done {
		if g.busy {
			g.cond.Wait()
			continue
		}
		// Lead: append what is queued (f included: a queued record is
		// done only once a leader appended it).
		g.busy = true
		batch := g.queue
		g.queue = g.spare[:0]
		g.mu.Unlock()
		s.putFinals(batch)
		g.mu.Lock()
		for _, q := range batch {
			q.done = true
		}
		clear(batch)
		g.spare = batch[:0]
		g.busy = false
		g.cond.Broadcast()
	}
	g.mu.Unlock()
	return f.idx, f.err
}

// putFinals appends final records with one write when the budget admits
// them all without dropping anything; else one by one, as put does.
func (s *Spool) putFinals(fs []*final) {
	if len(fs) == 1 {
		f := fs[0]
		f.idx, f.err = s.put(kindFinal, 1, f.t, f.data, f.key, f.rs)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		for _, f := range fs {
			f.err = ErrClosed
		}
		return
	}
	var need int64
	for _, f := range fs {
		if _, committed := s.pending[f.key]; !committed {
			need += entrySize(len(f.data))
		}
	}
	if s.live+need > s.cfg.MaxBytes {
		s.mu.Unlock()
		for _, f := range fs {
			f.idx, f.err = s.put(kindFinal, 1, f.t, f.data, f.key, f.rs)
		}
		return
	}
	defer s.mu.Unlock()
	b := &s.group.batch
	b.Clear()
	first := s.next()
	for i, f := range fs {
		b.Write(first+uint64(i), f.data)
	}
	werr := s.log.WriteBatch(b)
	b.Clear()
	last := first + uint64(len(fs)) - 1
	if werr != nil {
		// Some may have been written before the error.
		if l, err := s.log.LastIndex(); err == nil && l < last {
			last = l
		} else if err != nil {
			last = first - 1
		}
		werr = fmt.Errorf("spool: write to %s: %w", s.cfg.Dir, werr)
	}
	for i, f := range fs {
		idx := first + uint64(i)
		if idx > last {
			f.err = werr
			continue
		}
		f.idx = idx
		s.recordLocked(idx, kindFinal, 1, f.t.UnixNano(), len(f.data))
		if f.rs != nil && len(s.cache) < maxCached {
			s.cache[idx] = f.rs
		}
		s.resolveLocked(f.key)
	}
}
