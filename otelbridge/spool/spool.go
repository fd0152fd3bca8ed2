package spool

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/wal"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// ShutdownGrace bounds Shutdown's uploads when its context has no
// deadline: a collector that is down must not hang the program's exit (the
// spans are safe on disk).
const ShutdownGrace = 5 * time.Second

// maxCached bounds Spool.cache (records).
const maxCached = 8192

// Spool is a durable span spool; see the package documentation. It is an
// sdktrace.SpanProcessor and safe for concurrent use.
type Spool struct {
	cfg    Config
	client otlptrace.Client
	log    *wal.Log
	lock   *os.File
	ack    *os.File
	// ackOnDisk is the cursor the ACK file holds (ackKnown: it holds a
	// valid one) and ackDirty that it was written since its last fsync:
	// an unchanged cursor is neither written nor fsynced again (every
	// short-lived process would pay an fsync for nothing). Guarded by mu.
	ackOnDisk uint64
	ackKnown  bool
	ackDirty  bool
	segSize   int64
	enc       encoder
	dec       decoder // the drainer's
	group     group   // final records waiting to be written together

	mu       sync.Mutex
	first    uint64    // index of recs[0]
	recs     []recMeta // the log's records, first..first+len-1
	cursor   uint64    // every final record below it was sent or dropped
	pending  map[spanKey]uint64
	pendIdx  map[uint64]spanKey
	live     int64 // bytes of unsent finals and unresolved pendings (the budget)
	disk     int64 // bytes of every record in the log
	unsent   int64 // spans in unsent finals
	closed   bool
	npending atomic.Int64
	// cache holds the OTLP form of recently appended final records, so
	// that the drainer need not read and decode them (at most maxCached).
	cache map[uint64][]*tracepb.ResourceSpans
	// deadN and deadBytes: the leading records known to be done.
	deadN     int
	deadBytes int64

	written atomic.Uint64 // last index written to the OS
	syncMu  sync.Mutex
	synced  atomic.Uint64 // last index fsynced

	// The log's tail segment (tidwall/wal syncs a segment when it closes
	// it, and rewrites it when truncating): its first index, bytes, and a
	// generation bumped whenever it is replaced. Guarded by mu.
	tailStart uint64
	tailFill  int64
	tailGen   uint64
	// syncFile is our own handle on the tail, fsynced without holding the
	// log's lock (so that appends go on during an fsync and the next one
	// covers them all). Guarded by syncMu.
	syncFile *os.File
	syncGen  uint64

	spooled, committed, sent, dropped, refused, refusedCommits atomic.Int64
	torn, interrupted, uploadFailed                            atomic.Int64
	lastErr                                                    atomic.Pointer[error] // of the last failed upload

	wake        chan struct{}
	stopping    chan struct{}
	drainCtx    context.Context
	drainCancel context.CancelFunc
	drainDone   chan struct{}
	stopSync    chan struct{}
	syncDone    chan struct{}
}

var _ sdktrace.SpanProcessor = (*Spool)(nil)

// Record states.
const (
	stUnsent   uint8 = iota // final, not yet acknowledged
	stPending               // pending, no final yet
	stSent                  // final, acknowledged
	stDropped               // dropped by the budget, or undeliverable
	stResolved              // pending superseded by its final (or moved)
	stCorrupt               // unreadable
)

type recMeta struct {
	size  int64
	t     int64 // append time, unix ns
	spans int32
	state uint8
}

// entrySize is a record's size on disk (tidwall/wal: uvarint length + data).
func entrySize(n int) int64 {
	var b [binary.MaxVarintLen64]byte
	return int64(binary.PutUvarint(b[:], uint64(n)) + n)
}

// Open opens (creating it if needed) the spool in cfg.Dir, locks it, and
// starts its drainer, which uploads through client (Open calls
// client.Start; Shutdown calls client.Stop). What the directory holds
// from an earlier process is recovered first: a torn last record is cut
// off (Stats.TornRecovered), records not acknowledged are sent again, and
// committed calls without a final record are uploaded as interrupted
// (Stats.Interrupted). Errors: an invalid Config, [ErrLocked] when another
// process has the directory, I/O errors (unwritable directory, ...).
func Open(ctx context.Context, cfg Config, client otlptrace.Client) (*Spool, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, errors.New("spool: Open: nil otlptrace.Client")
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: create %s: %w", cfg.Dir, err)
	}
	lock, err := lockDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	s := &Spool{cfg: cfg, client: client, lock: lock, segSize: int64(segmentSize(cfg.MaxBytes)),
		pending: map[spanKey]uint64{}, pendIdx: map[uint64]spanKey{}, cache: map[uint64][]*tracepb.ResourceSpans{},
		wake: make(chan struct{}, 1), stopping: make(chan struct{}), drainDone: make(chan struct{}),
		stopSync: make(chan struct{}), syncDone: make(chan struct{})}
	if err := s.recover(); err != nil {
		if s.log != nil {
			_ = s.log.Close()
		}
		if s.ack != nil {
			_ = s.ack.Close()
		}
		_ = lock.Close()
		return nil, err
	}
	if err := client.Start(ctx); err != nil {
		_ = s.closeFiles()
		return nil, fmt.Errorf("spool: start the OTLP client: %w", err)
	}
	s.drainCtx, s.drainCancel = context.WithCancel(context.WithoutCancel(ctx))
	go s.drain()
	go s.syncLoop()
	return s, nil
}

// recover repairs and opens the log, rebuilds the records' state and
// turns unresolved pending records into interrupted finals.
func (s *Spool) recover() error {
	walDir := filepath.Join(s.cfg.Dir, "wal")
	cut, err := s.repair(walDir)
	if err != nil {
		return err
	}
	if cut {
		s.torn.Add(1)
		s.report(fmt.Errorf("spool: %s: cut off a torn or corrupt record at the end of the log (counted in TornRecovered)", walDir))
	}
	s.log, err = wal.Open(walDir, &wal.Options{NoSync: true, SegmentSize: int(s.segSize), AllowEmpty: true,
		SegmentCacheSize: 2, DirPerms: 0o700, FilePerms: 0o600})
	if err != nil {
		return fmt.Errorf("spool: open log %s: %w", walDir, err)
	}
	if s.tailStart, s.tailFill, err = tailSegment(walDir); err != nil {
		return err
	}
	s.tailGen = 1
	first, err1 := s.log.FirstIndex()
	last, err2 := s.log.LastIndex()
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("spool: open log %s: %w", walDir, err)
	}
	ackPath := filepath.Join(s.cfg.Dir, "ACK")
	cursor, ackOK := readAckValid(ackPath)
	s.ackOnDisk, s.ackKnown = cursor, ackOK
	// Past the end: records the ACK covered were lost with a torn tail;
	// their indexes will be reused, so never count them as sent.
	cursor = max(min(cursor, last+1), first)
	s.first, s.cursor = first, cursor
	for idx := first; idx <= last; idx++ {
		if err := s.load(idx); err != nil {
			return err
		}
	}
	s.written.Store(last)
	s.synced.Store(last)
	s.ack, err = os.OpenFile(ackPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("spool: open %s: %w", ackPath, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Committed calls that never ended: the process died while the tool
	// ran. Upload them, marked, as finals.
	for idx := first; idx <= last; idx++ {
		k, ok := s.pendIdx[idx]
		if !ok {
			continue
		}
		rec, err := s.log.Read(idx)
		if err != nil {
			return fmt.Errorf("spool: read record %d: %w", idx, err)
		}
		rs, err := decodeSpans(rec)
		if err != nil {
			return err
		}
		interrupt(rs)
		h, _ := decodeHeader(rec)
		data, err := encodeRecord(kindFinal, int(h.spans), time.Unix(0, h.t), rs)
		if err != nil {
			return err
		}
		if _, err := s.writeLocked(kindFinal, int(h.spans), h.t, data); err != nil {
			return err
		}
		s.resolveLocked(k)
		s.interrupted.Add(int64(h.spans))
	}
	s.advanceCursorLocked()
	if err := s.writeAckLocked(); err != nil {
		return err
	}
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("spool: sync log: %w", err)
	}
	s.synced.Store(s.written.Load())
	return nil
}

// repair is repairTail, reporting errors with the directory.
func (s *Spool) repair(walDir string) (bool, error) { return repairTail(walDir) }

// load reads record idx into the state (Open).
func (s *Spool) load(idx uint64) error {
	rec, err := s.log.Read(idx)
	m := recMeta{state: stCorrupt}
	if err == nil {
		m.size = entrySize(len(rec))
	}
	var h header
	if err == nil {
		h, err = decodeHeader(rec)
	}
	var keys []spanKey
	if err == nil && (h.kind == kindPending || len(s.pending) > 0) {
		// Only the keys: a wire scan, not a decode of the spans. A record
		// the scan accepts but proto.Unmarshal would not (the CRC held)
		// is found by the drainer, which decodes it to upload it.
		keys, err = scanKeys(rec)
	}
	if err != nil {
		s.torn.Add(1)
		s.report(fmt.Errorf("spool: record %d unreadable, skipped (counted in TornRecovered): %w", idx, err))
		s.recs = append(s.recs, m)
		s.disk += m.size
		return nil
	}
	m.t, m.spans = h.t, int32(h.spans)
	switch h.kind {
	case kindPending:
		m.state = stPending
		s.live += m.size
		for _, k := range keys {
			s.resolveLocked(k) // an older copy (moved record)
			s.pending[k], s.pendIdx[idx] = idx, k
		}
	default:
		for _, k := range keys {
			s.resolveLocked(k)
		}
		m.state = stSent
		if idx >= s.cursor {
			m.state = stUnsent
			s.live += m.size
			s.unsent += int64(m.spans)
		}
	}
	s.npending.Store(int64(len(s.pending)))
	s.recs = append(s.recs, m)
	s.disk += m.size
	return nil
}

// resolveLocked marks k's pending record superseded.
func (s *Spool) resolveLocked(k spanKey) {
	idx, ok := s.pending[k]
	if !ok {
		return
	}
	delete(s.pending, k)
	delete(s.pendIdx, idx)
	s.npending.Store(int64(len(s.pending)))
	if idx >= s.first {
		if m := &s.recs[idx-s.first]; m.state == stPending {
			m.state = stResolved
			s.live -= m.size
		}
	}
}

func (s *Spool) next() uint64 { return s.first + uint64(len(s.recs)) }

// writeLocked appends a record to the log (written to the OS, not synced).
func (s *Spool) writeLocked(kind byte, spans int, t int64, data []byte) (uint64, error) {
	idx := s.next()
	if err := s.log.Write(idx, data); err != nil {
		return 0, fmt.Errorf("spool: write to %s: %w", s.cfg.Dir, err)
	}
	s.recordLocked(idx, kind, spans, t, len(data))
	return idx, nil
}

// recordLocked adds record idx, of n bytes, just written to the log, to
// the state.
func (s *Spool) recordLocked(idx uint64, kind byte, spans int, t int64, n int) {
	m := recMeta{size: entrySize(n), t: t, spans: int32(spans), state: stUnsent}
	// Mirror tidwall/wal's segment cycling (writeBatch): a full tail is
	// closed before the write, or right after it when the write fills it.
	if s.tailFill > s.segSize {
		s.tailStart, s.tailFill, s.tailGen = idx, 0, s.tailGen+1
	}
	s.tailFill += m.size
	if s.tailFill >= s.segSize {
		s.tailStart, s.tailFill, s.tailGen = idx+1, 0, s.tailGen+1
	}
	if kind == kindPending {
		m.state = stPending
		s.committed.Add(int64(spans))
	} else {
		s.spooled.Add(int64(spans))
		s.unsent += int64(spans)
	}
	s.recs = append(s.recs, m)
	s.live += m.size
	s.disk += m.size
	s.written.Store(idx)
	// A pending record appended at the cursor (all before it done; a
	// Commit, or a pending record moved by truncateLocked) must not hold
	// the cursor: nothing would ever move it on (invariant.go).
	s.advanceCursorLocked()
}

// put appends a record under the budget. A final whose span has a pending
// record resolves it and is admitted whatever the budget.
func (s *Spool) put(kind byte, spans int, t time.Time, data []byte, key spanKey, rs []*tracepb.ResourceSpans) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	_, committed := s.pending[key]
	committed = committed && kind == kindFinal
	if !committed {
		if err := s.admitLocked(entrySize(len(data))); err != nil {
			return 0, err
		}
	}
	idx, err := s.writeLocked(kind, spans, t.UnixNano(), data)
	if err != nil {
		return 0, err
	}
	if kind == kindFinal && rs != nil && len(s.cache) < maxCached {
		s.cache[idx] = rs
	}
	switch {
	case committed:
		s.resolveLocked(key)
	case kind == kindPending:
		s.resolveLocked(key)
		s.pending[key], s.pendIdx[idx] = idx, key
		s.npending.Store(int64(len(s.pending)))
	}
	return idx, nil
}

// admitLocked makes room for size bytes under the budget.
func (s *Spool) admitLocked(size int64) error {
	if s.live+size <= s.cfg.MaxBytes {
		return nil
	}
	if size > s.cfg.MaxBytes {
		return fmt.Errorf("%w: a record of %d bytes is larger than the budget (%d bytes): raise MaxBytes", ErrFull, size, s.cfg.MaxBytes)
	}
	if s.cfg.Full == Refuse {
		return fmt.Errorf("%w: %d of %d bytes unsent (policy refuse): the collector is not taking spans; raise MaxBytes or restore the collector", ErrFull, s.live, s.cfg.MaxBytes)
	}
	for i := range s.recs {
		if s.live+size <= s.cfg.MaxBytes {
			break
		}
		m := &s.recs[i]
		switch m.state {
		case stUnsent:
			s.unsent -= int64(m.spans)
			delete(s.cache, s.first+uint64(i))
		default:
			// A pending record is never dropped: its tool is running, and
			// if the process dies it is the only record of the call.
			continue
		}
		m.state = stDropped
		s.live -= m.size
		s.dropped.Add(int64(m.spans))
	}
	s.advanceCursorLocked()
	s.truncateLocked()
	if s.live+size > s.cfg.MaxBytes {
		return fmt.Errorf("%w: the budget (%d bytes) is held by the write-ahead records of %d running calls: raise MaxBytes", ErrFull, s.cfg.MaxBytes, len(s.pending))
	}
	return nil
}

// advanceCursorLocked moves the cursor to the first unsent final.
func (s *Spool) advanceCursorLocked() {
	for s.cursor < s.next() && s.recs[s.cursor-s.first].state != stUnsent {
		s.cursor++
	}
}

// truncateLocked removes the leading records that are done (sent,
// dropped, resolved) once they fill a segment; a pending record that pins
// more than two segments behind it is first copied to the log's end.
func (s *Spool) truncateLocked() {
	n, dead := s.deadN, s.deadBytes
	for n < len(s.recs) {
		m := &s.recs[n]
		if m.state == stPending && s.disk-dead-m.size > 2*s.segSize {
			s.moveLocked(s.first + uint64(n))
			m = &s.recs[n] // moveLocked appended
		}
		if m.state == stUnsent || m.state == stPending {
			break
		}
		dead += m.size
		n++
	}
	s.deadN, s.deadBytes = n, dead
	if dead < s.segSize {
		return
	}
	floor := s.first + uint64(n)
	if err := s.log.TruncateFront(floor); err != nil {
		s.report(fmt.Errorf("spool: truncate the log before record %d: %w", floor, err))
		return
	}
	s.recs = append([]recMeta(nil), s.recs[n:]...)
	s.first = floor
	s.cursor = max(s.cursor, floor) // the records below floor are done
	s.disk -= dead
	s.deadN, s.deadBytes = 0, 0
	if floor >= s.tailStart { // the tail was rewritten from floor on
		var fill int64
		for _, m := range s.recs {
			fill += m.size
		}
		s.tailStart, s.tailFill, s.tailGen = floor, fill, s.tailGen+1
	}
}

// moveLocked copies pending record idx to the log's end.
func (s *Spool) moveLocked(idx uint64) {
	k := s.pendIdx[idx]
	rec, err := s.log.Read(idx)
	if err != nil {
		s.report(fmt.Errorf("spool: move pending record %d: %w", idx, err))
		return
	}
	m := s.recs[idx-s.first]
	nidx, err := s.writeLocked(kindPending, int(m.spans), m.t, rec)
	if err != nil {
		s.report(fmt.Errorf("spool: move pending record %d: %w", idx, err))
		return
	}
	s.committed.Add(-int64(m.spans)) // a copy, not a new commit
	s.resolveLocked(k)
	s.pending[k], s.pendIdx[nidx] = nidx, k
	s.npending.Store(int64(len(s.pending)))
}

// syncTo fsyncs the log up to at least idx; concurrent callers share one
// fsync.
func (s *Spool) syncTo(idx uint64) error {
	if s.synced.Load() >= idx {
		return nil
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if s.synced.Load() >= idx {
		return nil
	}
	s.mu.Lock()
	w, gen, start := s.written.Load(), s.tailGen, s.tailStart
	if gen != s.syncGen || s.syncFile == nil {
		if s.syncFile != nil {
			_ = s.syncFile.Close()
			s.syncFile = nil
		}
		f, err := os.Open(filepath.Join(s.cfg.Dir, "wal", fmt.Sprintf("%020d", start)))
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("spool: fsync %s: %w", s.cfg.Dir, err)
		}
		s.syncFile, s.syncGen = f, gen
	}
	s.mu.Unlock()
	if err := s.syncFile.Sync(); err != nil {
		return fmt.Errorf("spool: fsync %s: %w", s.cfg.Dir, err)
	}
	if w > s.synced.Load() {
		s.synced.Store(w)
	}
	return nil
}

func (s *Spool) syncLoop() {
	defer close(s.syncDone)
	t := time.NewTicker(s.cfg.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stopSync:
			return
		case <-t.C:
			if w := s.written.Load(); w > s.synced.Load() {
				if err := s.syncTo(w); err != nil {
					s.report(err)
				}
			}
		}
	}
}

func (s *Spool) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// report hands err to the error handler, if any.
func (s *Spool) report(err error) {
	if s.cfg.ErrorHandler == nil {
		return
	}
	defer func() { _ = recover() }()
	s.cfg.ErrorHandler(err)
}

// OnStart does nothing: the spool acts at span end.
func (s *Spool) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd appends the span (sampled spans, and committed ones whatever the
// head sampler said: their tool ran) to the log as a final
// record: written to the OS before it returns, and fsynced too under
// SyncAlways. A span that cannot be appended (budget full under Refuse,
// spool shut down, write error) is counted in Stats.Refused and reported
// to the error handler.
func (s *Spool) OnEnd(sp sdktrace.ReadOnlySpan) {
	if !sp.SpanContext().IsSampled() && !s.Committed(sp.SpanContext()) {
		return
	}
	now := time.Now()
	data, rs, err := s.enc.final(sp, now)
	var idx uint64
	if err == nil {
		idx, err = s.appendFinal(&final{data: data, rs: rs, key: keyOf(sp.SpanContext()), t: now})
	}
	if err == nil && s.cfg.Sync == SyncAlways {
		err = s.syncTo(idx)
	}
	if idx != 0 {
		// In the log (even if its fsync failed): the drainer must see it.
		s.notify()
	}
	if err != nil {
		if idx == 0 {
			s.refused.Add(1)
		}
		s.report(fmt.Errorf("spool: span %s %q not spooled: %w", sp.SpanContext().SpanID(), sp.Name(), err))
	}
}

// Commit durably records span as it is now — its attributes so far, an
// end time of now — as a pending record, fsynced before it returns (the
// write-ahead record of a tool call about to run). The span's final
// record (OnEnd) supersedes it; only if the process dies first is it
// uploaded, by the next Open, marked interrupted (see [AttrInterrupted]).
// span must be a recording span of an OTel SDK TracerProvider. Errors wrap
// [ErrFull] (budget full under Refuse), [ErrClosed], [ErrNotRecording],
// ctx's error, or an I/O error; the caller should then not run the tool.
func (s *Spool) Commit(ctx context.Context, span trace.Span) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("spool: commit: %w", err)
	}
	ro, ok := span.(sdktrace.ReadOnlySpan)
	if !ok || !span.IsRecording() {
		return fmt.Errorf("%w (got %T, recording %v): use a span of the SDK TracerProvider the spool is on", ErrNotRecording, span, span != nil && span.IsRecording())
	}
	now := time.Now()
	data, _, err := s.enc.record(kindPending, snapshot{ReadOnlySpan: ro, end: now}, now)
	if err != nil {
		return err
	}
	idx, err := s.put(kindPending, 1, now, data, keyOf(ro.SpanContext()), nil)
	if err != nil {
		if errors.Is(err, ErrFull) {
			s.refusedCommits.Add(1)
		}
		return fmt.Errorf("spool: commit: %w", err)
	}
	if !ro.EndTime().IsZero() {
		// The span ended while this Commit ran (its caller gave up and
		// ended it): its final record may be in the log before this one,
		// which would then stay pending and be uploaded as an interrupted
		// call by the next Open. Append the final again after it: that
		// resolves it, now and at the next Open (the store keeps one copy).
		if frs, ferr := toOTLP([]sdktrace.ReadOnlySpan{ro}); ferr == nil {
			if fdata, ferr := encodeRecord(kindFinal, 1, now, frs); ferr == nil {
				if _, ferr := s.put(kindFinal, 1, now, fdata, keyOf(ro.SpanContext()), frs); ferr == nil {
					s.notify()
				}
			}
		}
		return fmt.Errorf("%w: the span ended before its write-ahead record was written", ErrNotRecording)
	}
	if err := s.syncTo(idx); err != nil {
		return fmt.Errorf("spool: commit: %w", err)
	}
	return nil
}

// Committed reports whether sc's span has a pending record that its final
// has not superseded yet: a sampling processor must keep such a span, or
// the next start would report the call as interrupted.
func (s *Spool) Committed(sc trace.SpanContext) bool {
	if s.npending.Load() == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pending[keyOf(sc)]
	return ok
}

// ForceFlush waits until every final record appended before the call was
// uploaded (or dropped), bounded by ctx, and fsyncs the log. It wakes the
// drainer again at every poll (every 2 ms), so that no lost wake-up can
// leave it idle while records wait.
func (s *Spool) ForceFlush(ctx context.Context) error {
	s.mu.Lock()
	target := s.next()
	s.mu.Unlock()
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		s.mu.Lock()
		done := s.closed || !s.unsentBelowLocked(target)
		s.mu.Unlock()
		if done {
			return s.syncTo(s.written.Load())
		}
		s.notify()
		select {
		case <-ctx.Done():
			return fmt.Errorf("spool: flush: %d spans still unsent: %w", s.Stats().Unsent, ctx.Err())
		case <-t.C:
		}
	}
}

// unsentBelowLocked reports whether an unsent final record below index
// target is left. By the cursor invariant (invariant.go) that is the
// cursor's record; the scan from the cursor does not rely on it.
func (s *Spool) unsentBelowLocked(target uint64) bool {
	for i := max(s.cursor, s.first); i < min(target, s.next()); i++ {
		if s.recs[i-s.first].state == stUnsent {
			return true
		}
	}
	return false
}

// Shutdown stops taking spans, uploads until the log is empty or ctx ends
// (without a deadline on ctx, at most [ShutdownGrace]), fsyncs and closes
// the log and stops the client. What was not sent stays in the directory
// for the next Open; the error then says how many spans and why. Spans
// ending after Shutdown are counted in Refused.
func (s *Spool) Shutdown(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ShutdownGrace)
		defer cancel()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stopping)
	select {
	case <-s.drainDone:
	case <-ctx.Done():
		s.drainCancel()
		<-s.drainDone
	}
	s.drainCancel()
	close(s.stopSync)
	<-s.syncDone
	left := s.Stats().Unsent
	err := s.closeFiles()
	err = errors.Join(err, s.client.Stop(ctx))
	if left > 0 {
		cause := ctx.Err()
		if p := s.lastErr.Load(); p != nil {
			cause = errors.Join(cause, *p)
		}
		err = errors.Join(fmt.Errorf("spool: %d spans not sent at shutdown stay in %s for the next start: %w", left, s.cfg.Dir, cause), err)
	}
	return err
}

// closeFiles records the cursor, fsyncs and closes the log and releases
// the lock.
func (s *Spool) closeFiles() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.writeAckLocked()
	if s.ack != nil {
		if s.ackDirty {
			err = errors.Join(err, s.ack.Sync())
			s.ackDirty = false
		}
		err = errors.Join(err, s.ack.Close())
	}
	err = errors.Join(err, s.log.Close())
	s.syncMu.Lock()
	if s.syncFile != nil {
		_ = s.syncFile.Close()
	}
	s.syncMu.Unlock()
	return errors.Join(err, s.lock.Close())
}

// writeAckLocked records the cursor in the ACK file.
func (s *Spool) writeAckLocked() error {
	if s.ackKnown && s.ackOnDisk == s.cursor {
		return nil
	}
	if _, err := s.ack.WriteAt(encodeAck(s.cursor), 0); err != nil {
		s.ackKnown = false
		return fmt.Errorf("spool: write ACK: %w", err)
	}
	s.ackOnDisk, s.ackKnown, s.ackDirty = s.cursor, true, true
	return nil
}
