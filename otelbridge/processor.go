package otelbridge

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// DefaultAncestorCapacity is the default number of pending "a descendant
// was kept" marks a [SamplingProcessor] holds (about 40 bytes each).
const DefaultAncestorCapacity = 1 << 16

// SamplingProcessor is an sdktrace.SpanProcessor that applies a [Sampling]
// setting when a span ends and forwards the spans it keeps to the next
// processor (normally a batch processor: see [NewBatchProcessor]).
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
// counted in [SamplingStats].AncestorsEvicted. A kept span that ends after
// its parent cannot bring the parent back.
//
// Spans without the sampled flag are passed to the next processor unchanged
// (a batch processor ignores them).
type SamplingProcessor struct {
	next     sdktrace.SpanProcessor
	sampling Sampling
	bound    uint64
	marks    *markSet
	force    func(trace.SpanContext) bool // nil: none

	ended, kept, filtered atomic.Int64
}

var _ sdktrace.SpanProcessor = (*SamplingProcessor)(nil)

// SamplingOption configures a [SamplingProcessor].
type SamplingOption func(*samplingConfig)

type samplingConfig struct {
	ancestorCap int
	keep        func(trace.SpanContext) bool
}

// keepWhen keeps every span for which f is true (the spool's committed
// calls), like a denial: its ancestors are kept too.
func keepWhen(f func(trace.SpanContext) bool) SamplingOption {
	return func(c *samplingConfig) { c.keep = f }
}

// WithAncestorCapacity sets how many ancestor marks are held at most
// (default [DefaultAncestorCapacity]; values below 1 mean the default).
func WithAncestorCapacity(n int) SamplingOption {
	return func(c *samplingConfig) { c.ancestorCap = n }
}

// NewSamplingProcessor returns a processor that applies s in front of next.
// The zero Sampling means [DefaultSampling](). It returns an error wrapping
// [ErrInvalidSampling] when s is invalid, and an error when next is nil.
func NewSamplingProcessor(next sdktrace.SpanProcessor, s Sampling, opts ...SamplingOption) (*SamplingProcessor, error) {
	if next == nil {
		return nil, fmt.Errorf("otelbridge: NewSamplingProcessor: nil next processor")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.orDefault()
	cfg := samplingConfig{ancestorCap: DefaultAncestorCapacity}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.ancestorCap < 1 {
		cfg.ancestorCap = DefaultAncestorCapacity
	}
	return &SamplingProcessor{
		next:     next,
		sampling: s,
		bound:    ratioBound(s.AllowRatio),
		marks:    newMarkSet(cfg.ancestorCap),
		force:    cfg.keep,
	}, nil
}

// Sampling returns the setting the processor applies.
func (p *SamplingProcessor) Sampling() Sampling { return p.sampling }

// OnStart forwards to the next processor. Under [ModeDecisions], an agent
// span (invoke_agent, invoke_workflow) that starts under a local parent of
// its trace marks that parent at once: the agent span will be kept, and
// its parent (say, the request span a run's first call came under) may
// well end before it. Other modes keep an agent span only as the ancestor
// of a kept span, which is known when it ends; a parent that ended before
// then is not exported (Jaeger shows the agent span under a missing
// parent).
func (p *SamplingProcessor) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	if p.sampling.Mode == ModeDecisions {
		sc, parent := s.SpanContext(), s.Parent()
		if sc.IsSampled() && parent.IsValid() && !parent.IsRemote() && parent.TraceID() == sc.TraceID() && classify(s).agent {
			p.marks.put(parent.TraceID(), parent.SpanID())
		}
	}
	p.next.OnStart(ctx, s)
}

// OnEnd keeps or drops s by the sampling setting; see [SamplingProcessor].
func (p *SamplingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
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
func (p *SamplingProcessor) keep(s sdktrace.ReadOnlySpan) bool {
	if p.sampling.Mode == ModeAll {
		return true
	}
	c := classify(s)
	sc := s.SpanContext()
	var keep bool
	switch {
	case p.force != nil && p.force(sc):
		keep = true
	case c.decision && c.denied:
		keep = true
	case c.decision:
		keep = keepsTrace(sc.TraceID(), p.bound)
	}
	// A span may be marked whatever its kind (an execute_tool span whose
	// nested call was kept): take the mark in every case, so none is left.
	if p.marks.take(sc.TraceID(), sc.SpanID()) {
		keep = true
	}
	if !keep && c.agent && p.sampling.Mode == ModeDecisions {
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
func (p *SamplingProcessor) Shutdown(ctx context.Context) error { return p.next.Shutdown(ctx) }

// ForceFlush flushes the next processor.
func (p *SamplingProcessor) ForceFlush(ctx context.Context) error { return p.next.ForceFlush(ctx) }

// SamplingStats counts a [SamplingProcessor]'s decisions since it was made.
// Ended = Kept + Filtered. Filtered spans are dropped on purpose, not lost.
type SamplingStats struct {
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
func (p *SamplingProcessor) Stats() SamplingStats {
	pending, evicted := p.marks.stats()
	return SamplingStats{
		Ended:            p.ended.Load(),
		Kept:             p.kept.Load(),
		Filtered:         p.filtered.Load(),
		AncestorsPending: pending,
		AncestorsEvicted: evicted,
	}
}

// spanClass is what the sampler needs to know about a span.
type spanClass struct {
	decision bool // gate.gated or gate.opt_out true, or gate.action set
	denied   bool // gate.action == "deny", or sampling.priority > 0
	agent    bool // an invoke_agent / invoke_workflow span
	preGate  bool // gate.stage is a stage before the gate (gate.Stage.PreGate)
	approval bool // gate.approval set: an approver answered (approved, declined, timeout, invalid)
	rewrite  bool // gate.rewritten true: a gate rewrote the input
}

// classify reads the attributes once.
func classify(s sdktrace.ReadOnlySpan) spanClass {
	var c spanClass
	var op string
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case gate.AttrGated, gate.AttrOptOut:
			if kv.Value.AsBool() {
				c.decision = true
			}
		case gate.AttrAction:
			c.decision = true
			if kv.Value.AsString() == string(gate.ActionDeny) {
				c.denied = true
			}
		case gate.AttrStage:
			c.preGate = gate.Stage(kv.Value.AsString()).PreGate()
		case gate.AttrApproval:
			c.approval = kv.Value.AsString() != ""
		case gate.AttrRewritten:
			c.rewrite = kv.Value.AsBool()
		case gate.AttrSamplingPriority:
			if samplingPriority(kv.Value) > 0 {
				c.denied = true
			}
		case semconv.GenAIOperationNameKey:
			op = kv.Value.AsString()
		}
	}
	// A priority without a decision (someone else's span) is not a denial.
	c.denied = c.denied && c.decision
	switch op {
	case semconv.GenAIOperationNameInvokeAgent.Value.AsString(),
		semconv.GenAIOperationNameInvokeWorkflow.Value.AsString():
		c.agent = true
	case "":
		name := s.Name()
		c.agent = strings.HasPrefix(name, "invoke_agent") || strings.HasPrefix(name, "invoke_workflow")
	}
	return c
}

// samplingPriority reads sampling.priority whatever its type.
func samplingPriority(v attribute.Value) float64 {
	switch v.Type() {
	case attribute.INT64:
		return float64(v.AsInt64())
	case attribute.FLOAT64:
		return v.AsFloat64()
	case attribute.BOOL:
		if v.AsBool() {
			return 1
		}
	case attribute.STRING:
		if s := v.AsString(); s != "" && s != "0" {
			return 1
		}
	}
	return 0
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
