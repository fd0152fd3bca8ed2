package sampling

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/otelbridge/internal/spanclass"
)

// Processor is an sdktrace.SpanProcessor that applies a sampling
// [Setting] when a span ends and forwards the spans it keeps to the next
// processor (normally otelbridge's batch processor).
//
// It decides at span end, not at span start, because the gate's decision is
// known only after the gate ran: a head sdktrace.Sampler sees only the
// attributes given at start, and its Drop would cascade to the children
// through the sampled flag. Spans this processor drops were recorded and
// are simply not exported; their children are unaffected.
//
// Ancestors: when a kept span ends, its parent's span ID is marked; a span
// that ends while marked is kept (in every mode) and marks its own parent.
// Under ModeDecisions an agent span marks its parent when it starts (it is
// always kept; see OnStart).
// Spans end after their children, so an invoke_agent span learns whether a
// call under it was kept (deny-only: denied) by the time it ends. Marks are
// bounded by the ancestor capacity; the oldest are evicted first and
// counted in [Stats].AncestorsEvicted. A kept span that ends after
// its parent cannot bring the parent back.
//
// Spans without the sampled flag are passed to the next processor unchanged
// (a batch processor ignores them).
type Processor struct {
	next     sdktrace.SpanProcessor
	sampling Setting
	bound    uint64
	marks    *markSet
	force    func(trace.SpanContext) bool // Config.Keep; nil: none

	ended, kept, filtered atomic.Int64
}

var _ sdktrace.SpanProcessor = (*Processor)(nil)

// NewProcessor returns a processor that applies cfg in front of next
// (normally the batch processor: otelbridge.NewBatchProcessor). cfg's zero
// fields mean the environment, then the defaults (see [Config.Resolve]).
// It returns an error wrapping [ErrInvalid] when the setting (given, or
// read from [Env]) is invalid, and an error when next is nil.
func NewProcessor(next sdktrace.SpanProcessor, cfg Config) (*Processor, error) {
	if next == nil {
		return nil, fmt.Errorf("sampling: NewProcessor: nil next processor")
	}
	cfg, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	return &Processor{
		next:     next,
		sampling: cfg.Setting,
		bound:    ratioBound(cfg.Setting.AllowRatio),
		marks:    newMarkSet(cfg.AncestorCapacity),
		force:    cfg.Keep,
	}, nil
}

// Setting returns the setting the processor applies (never the zero
// value: the environment's or the default when none was given).
func (p *Processor) Setting() Setting { return p.sampling }

// OnStart forwards to the next processor. Under [ModeDecisions], an agent
// span (invoke_agent, invoke_workflow) that starts under a local parent of
// its trace marks that parent at once: the agent span will be kept, and
// its parent (say, the request span a run's first call came under) may
// well end before it. Other modes keep an agent span only as the ancestor
// of a kept span, which is known when it ends; a parent that ended before
// then is not exported (Jaeger shows the agent span under a missing
// parent).
func (p *Processor) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	if p.sampling.Mode == ModeDecisions {
		sc, parent := s.SpanContext(), s.Parent()
		if sc.IsSampled() && parent.IsValid() && !parent.IsRemote() && parent.TraceID() == sc.TraceID() && spanclass.Of(s).Agent {
			p.marks.put(parent.TraceID(), parent.SpanID())
		}
	}
	p.next.OnStart(ctx, s)
}

// OnEnd keeps or drops s by the sampling setting; see [Processor].
func (p *Processor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		p.next.OnEnd(s)
		return
	}
	p.ended.Add(1)
	if !p.keep(s) {
		p.filtered.Add(1)
		return
	}
	p.kept.Add(1)
	p.next.OnEnd(s)
}

// keep is the decision; it also maintains the ancestor marks.
func (p *Processor) keep(s sdktrace.ReadOnlySpan) bool {
	if p.sampling.Mode == ModeAll {
		return true
	}
	c := spanclass.Of(s)
	sc := s.SpanContext()
	var keep bool
	switch {
	case p.force != nil && p.force(sc): // Config.Keep: kept like a denial
		keep = true
	case c.Decision && c.Denied:
		keep = true
	case c.Decision:
		keep = keepsTrace(sc.TraceID(), p.bound)
	}
	// A span may be marked whatever its kind (an execute_tool span whose
	// nested call was kept): take the mark in every case, so none is left.
	if p.marks.take(sc.TraceID(), sc.SpanID()) {
		keep = true
	}
	if !keep && c.Agent && p.sampling.Mode == ModeDecisions {
		keep = true
	}
	if keep {
		if parent := s.Parent(); parent.IsValid() && parent.TraceID() == sc.TraceID() {
			p.marks.put(parent.TraceID(), parent.SpanID())
		}
	}
	return keep
}

// Shutdown shuts the next processor down.
func (p *Processor) Shutdown(ctx context.Context) error { return p.next.Shutdown(ctx) }

// ForceFlush flushes the next processor.
func (p *Processor) ForceFlush(ctx context.Context) error { return p.next.ForceFlush(ctx) }

// Stats counts a [Processor]'s decisions since it was made.
// Ended = Kept + Filtered. Filtered spans are dropped on purpose, not lost.
type Stats struct {
	Ended    int64 // sampled spans that ended
	Kept     int64 // forwarded to the next processor
	Filtered int64 // dropped by the sampling setting
	// AncestorsPending is the number of marks held now: parents of kept
	// spans that have not ended yet.
	AncestorsPending int64
	// AncestorsEvicted counts marks evicted at capacity: an ancestor that
	// ended after its mark was evicted was dropped although a descendant
	// was kept.
	AncestorsEvicted int64
}

// Stats returns the processor's counters.
func (p *Processor) Stats() Stats {
	pending, evicted := p.marks.stats()
	return Stats{
		Ended:            p.ended.Load(),
		Kept:             p.kept.Load(),
		Filtered:         p.filtered.Load(),
		AncestorsPending: pending,
		AncestorsEvicted: evicted,
	}
}

// markSet is a bounded set of span IDs with FIFO eviction.
type markSet struct {
	mu      sync.Mutex
	m       map[markKey]uint64 // key -> generation
	ring    []markEntry
	head    int // next slot to write
	gen     uint64
	evicted int64
}

type markKey struct {
	trace trace.TraceID
	span  trace.SpanID
}

type markEntry struct {
	key markKey
	gen uint64
}

func newMarkSet(capacity int) *markSet {
	return &markSet{m: make(map[markKey]uint64), ring: make([]markEntry, capacity)}
}

// put marks the key, evicting the oldest mark when full.
func (s *markSet) put(t trace.TraceID, id trace.SpanID) {
	k := markKey{t, id}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k]; ok {
		return
	}
	old := s.ring[s.head]
	if old.gen != 0 {
		if g, ok := s.m[old.key]; ok && g == old.gen {
			delete(s.m, old.key)
			s.evicted++
		}
	}
	s.gen++
	s.ring[s.head] = markEntry{key: k, gen: s.gen}
	s.m[k] = s.gen
	s.head = (s.head + 1) % len(s.ring)
}

// take reports whether the key was marked and removes the mark.
func (s *markSet) take(t trace.TraceID, id trace.SpanID) bool {
	k := markKey{t, id}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k]; !ok {
		return false
	}
	delete(s.m, k)
	return true
}

func (s *markSet) stats() (pending, evicted int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.m)), s.evicted
}
