package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolgate/toolgate/otelbridge/internal/spanclass"
)

// BatchProcessor is sdktrace's batch span processor with its losses
// counted. The SDK's processor drops spans silently when its queue is full
// and forgets a batch whose export failed; it has no public counter for
// either. BatchProcessor therefore
//
//   - bounds the spans it has accepted but not yet handed to the exporter
//     (the SDK queue plus the batch being filled) at the queue size itself,
//     dropping and counting spans over the bound (QueueDropped). The SDK
//     queue is made larger than that bound, so the SDK never drops on its
//     own;
//   - wraps the exporter to count spans handed to export and spans whose
//     export returned an error (ExportFailed) — otlptracegrpc returns an
//     error only after its own retries gave up;
//   - counts spans that end after Shutdown (DroppedAfterShutdown).
//
// Nothing else loses spans, so Lost() in [BatchStats] is exact.
//
// Priorities: when the queue fills up, lower-priority spans are dropped
// first, so that what a model makes the trail spend (a flood of calls to
// unknown tools, or of allowed calls) is dropped before a gate's denial,
// an approver's answer or a rewrite. A span is one of three
// [SpanPriority] tiers (see [PriorityOf]): a denied gate decision
// (gate.action=deny, sampling.priority > 0, at gate.stage=gate or with no
// stage), a decision with an approval outcome (gate.approval: approved,
// declined, timeout, invalid) or a rewrite (gate.rewritten), or an agent
// span (invoke_agent, invoke_workflow), a refusal
// before the gate (a denial at a stage before it: cancelled, run,
// registry, reachability, input), or anything else (allowed calls, chat
// spans). With R = 1/16 of the queue size (128 of the default
// 2,048; none below 16), other spans are accepted while fewer than size-2R
// spans are queued, refusals while fewer than size-R, top-tier spans up
// to the full size: a top-tier span is dropped only when the queue is
// full and at least R of the queued spans are top-tier. The reserve is small, so an ordinary backlog (a
// collector outage) still has 7/8 of the queue for allowed calls. Drops
// are counted by tier (BatchStats.DroppedDecisions, DroppedRefusals,
// DroppedOther).
type BatchProcessor struct {
	bsp    sdktrace.SpanProcessor
	exp    *countingExporter
	limit  int64
	limits [numPriorities]int64 // the queue bound of each tier

	inflight     atomic.Int64 // accepted, not yet handed to the exporter
	accepted     atomic.Int64
	queueDropped [numPriorities]atomic.Int64
	afterStop    atomic.Int64
	stopMu       sync.RWMutex // held for reading by OnEnd, for writing to stop
	stopped      bool
}

var _ sdktrace.SpanProcessor = (*BatchProcessor)(nil)

// reserveDivisor: each higher tier has 1/reserveDivisor of the queue that
// lower tiers cannot use.
const reserveDivisor = 16

// BatchConfig configures a [BatchProcessor], standalone
// ([NewBatchProcessor]) or as the Batch field of [Config]. Every zero field
// means "not set here": the SDK's OTEL_BSP_* environment variables apply,
// then the SDK's defaults. Negative values are an error.
type BatchConfig struct {
	// QueueSize bounds the spans waiting for export, in spans; more are
	// dropped and counted by priority (see [BatchProcessor]). Unset:
	// OTEL_BSP_MAX_QUEUE_SIZE, else sdktrace.DefaultMaxQueueSize (2048).
	QueueSize int
	// BatchSize is the largest export request, in spans (at most
	// QueueSize). Unset: OTEL_BSP_MAX_EXPORT_BATCH_SIZE, else 512.
	BatchSize int
	// BatchTimeout is how long a span waits for its batch to fill. Unset:
	// OTEL_BSP_SCHEDULE_DELAY (integer milliseconds), else 5 s.
	BatchTimeout time.Duration
	// ExportTimeout bounds one export call, the exporter's retries
	// included. Unset: OTEL_BSP_EXPORT_TIMEOUT (integer milliseconds),
	// else 30 s.
	ExportTimeout time.Duration
	// ErrorHandler receives every failed export's error (after the
	// exporter's own retries), wrapped with the number of spans it lost;
	// each is also counted in BatchStats.ExportFailed. With the OTLP
	// exporter [Setup] makes, the error also carries the result of a
	// [Check] when that fails (errors.Is(err, ErrTLSMismatch), ...), whose
	// message names the fix. Unset: the errors reach only the SDK's global
	// handler (otel.Handle). It must be safe for concurrent use; its
	// panics are recovered. With the spool on (Config.Spool.Dir), Setup
	// gives it the spool's errors instead (failed uploads, which the
	// drainer retries; refused appends; recovery findings), unwrapped.
	ErrorHandler func(error)
}

// validate rejects negative sizes and durations.
func (c BatchConfig) validate() error {
	if c.QueueSize < 0 || c.BatchSize < 0 || c.BatchTimeout < 0 || c.ExportTimeout < 0 {
		return fmt.Errorf("negative size or duration (QueueSize %d, BatchSize %d, BatchTimeout %v, ExportTimeout %v)",
			c.QueueSize, c.BatchSize, c.BatchTimeout, c.ExportTimeout)
	}
	return nil
}

// NewBatchProcessor returns a counting batch processor exporting to exp,
// configured by cfg (zero fields: OTEL_BSP_*, then the SDK's defaults).
// It returns an error when exp is nil or a size or duration is negative.
func NewBatchProcessor(exp sdktrace.SpanExporter, cfg BatchConfig) (*BatchProcessor, error) {
	if exp == nil {
		return nil, errors.New("otelbridge: NewBatchProcessor: nil exporter")
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("otelbridge: NewBatchProcessor: %w", err)
	}
	if cfg.QueueSize == 0 {
		cfg.QueueSize = envInt("OTEL_BSP_MAX_QUEUE_SIZE", sdktrace.DefaultMaxQueueSize)
	}
	ce := &countingExporter{next: exp, onError: cfg.ErrorHandler}
	p := &BatchProcessor{exp: ce, limit: int64(cfg.QueueSize)}
	r := p.limit / reserveDivisor
	p.limits = [numPriorities]int64{PriorityOther: p.limit - 2*r, PriorityRefusal: p.limit - r, PriorityDecision: p.limit}
	ce.onHand = func(n int) { p.inflight.Add(-int64(n)) }

	// The SDK queue gets headroom over our bound so that it never drops on
	// its own: a span is in the SDK queue only while it counts in inflight,
	// and ForceFlush needs one slot.
	bopts := []sdktrace.BatchSpanProcessorOption{sdktrace.WithMaxQueueSize(cfg.QueueSize + 16)}
	batch := cfg.BatchSize
	if batch == 0 {
		batch = envInt("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", sdktrace.DefaultMaxExportBatchSize)
	}
	bopts = append(bopts, sdktrace.WithMaxExportBatchSize(min(batch, cfg.QueueSize)))
	if cfg.BatchTimeout > 0 {
		bopts = append(bopts, sdktrace.WithBatchTimeout(cfg.BatchTimeout))
	}
	if cfg.ExportTimeout > 0 {
		bopts = append(bopts, sdktrace.WithExportTimeout(cfg.ExportTimeout))
	}
	p.bsp = sdktrace.NewBatchSpanProcessor(ce, bopts...)
	return p, nil
}

// envInt reads a positive integer environment variable, else def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// OnStart does nothing: the batch processor acts at span end.
func (p *BatchProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span for export, or counts it as dropped when the
// queue is full for its priority or the processor is shut down. Unsampled
// spans are ignored.
func (p *BatchProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	p.stopMu.RLock()
	defer p.stopMu.RUnlock()
	if p.stopped {
		p.afterStop.Add(1)
		return
	}
	prio := PriorityOf(s)
	if p.inflight.Add(1) > p.limits[prio] {
		p.inflight.Add(-1)
		p.queueDropped[prio].Add(1)
		return
	}
	p.accepted.Add(1)
	p.bsp.OnEnd(s)
}

// Shutdown exports what is queued (bounded by ctx) and shuts the exporter
// down. It returns an error when spans failed to export meanwhile (the SDK
// only logs those). Spans ending later are counted as DroppedAfterShutdown.
func (p *BatchProcessor) Shutdown(ctx context.Context) error {
	p.stopMu.Lock()
	p.stopped = true
	p.stopMu.Unlock()
	failed := p.exp.failed.Load()
	err := p.bsp.Shutdown(ctx)
	if n := p.exp.failed.Load() - failed; n > 0 {
		err = errors.Join(err, fmt.Errorf("otelbridge: %d spans failed to export during shutdown: %w", n, p.exp.lastError()))
	}
	return err
}

// ForceFlush exports what is queued now, bounded by ctx.
func (p *BatchProcessor) ForceFlush(ctx context.Context) error { return p.bsp.ForceFlush(ctx) }

// SpanPriority is a span's tier in a full [BatchProcessor] queue: higher
// tiers are dropped last.
type SpanPriority int

// Span priorities, lowest first.
const (
	// PriorityOther: allowed calls, agent, chat and every other span.
	PriorityOther SpanPriority = iota
	// PriorityRefusal: a call the executor refused before the gate
	// (gate.action=deny at a gate.stage before the gate).
	PriorityRefusal
	// PriorityDecision: a denied gate decision (gate.action=deny or
	// sampling.priority > 0 on a decision span at gate.stage=gate or
	// without a stage), a decision with an approval outcome
	// (gate.approval) or a rewrite (gate.rewritten), and agent spans
	// (invoke_agent, invoke_workflow: the runs denials belong to, which
	// the host starts, not the model).
	PriorityDecision
	numPriorities
)

// String is the value of the toolgate.span.priority metric attribute:
// "other", "refusal" or "decision".
func (p SpanPriority) String() string {
	switch p {
	case PriorityRefusal:
		return "refusal"
	case PriorityDecision:
		return "decision"
	}
	return "other"
}

// PriorityOf is s's tier, read from its attributes (see [BatchProcessor]):
//
//   - PriorityDecision: an agent span (invoke_agent, invoke_workflow), or
//     a decision (gate.gated, gate.opt_out or gate.action set) that an
//     auditor needs most: a denial (gate.action=deny or sampling.priority
//     > 0) at gate.stage=gate or without a stage, any decision with an
//     approval outcome (gate.approval set: approved, declined, timeout,
//     invalid — an approved ask is an allow), or a rewrite (gate.rewritten
//     true);
//   - PriorityRefusal: a denial at a gate.stage before the gate;
//   - PriorityOther: everything else (allowed calls, chat spans).
func PriorityOf(s sdktrace.ReadOnlySpan) SpanPriority {
	c := spanclass.Of(s)
	switch {
	case c.Agent:
		return PriorityDecision // the run a denial belongs to; the host makes them, not the model
	case !c.Decision:
		return PriorityOther
	case c.Approval || c.Rewrite:
		return PriorityDecision // a human or a gate acted on the call
	case !c.Denied:
		return PriorityOther
	case c.PreGate:
		return PriorityRefusal
	}
	return PriorityDecision
}

// BatchStats are a [BatchProcessor]'s counters since it was made, in spans.
type BatchStats struct {
	Accepted             int64 // queued for export
	QueueDropped         int64 // dropped because the queue was full: DroppedDecisions + DroppedRefusals + DroppedOther
	DroppedDecisions     int64 // of QueueDropped: denied gate decisions (PriorityDecision)
	DroppedRefusals      int64 // of QueueDropped: refusals before the gate (PriorityRefusal)
	DroppedOther         int64 // of QueueDropped: every other span (PriorityOther)
	DroppedAfterShutdown int64 // ended after Shutdown
	Exported             int64 // export returned nil
	ExportFailed         int64 // export returned an error (retries exhausted, timeout)
	Pending              int64 // queued, not yet handed to the exporter
	InFlight             int64 // handed to the exporter, call not returned
	QueueCapacity        int64 // the queue bound
}

// Lost returns the spans lost so far: queue-full drops, failed exports and
// spans that ended after shutdown.
func (s BatchStats) Lost() int64 { return s.QueueDropped + s.ExportFailed + s.DroppedAfterShutdown }

// Stats returns the processor's counters. After Shutdown or ForceFlush
// returned nil, Accepted = Exported + ExportFailed + Pending + InFlight with
// Pending and InFlight zero.
func (p *BatchProcessor) Stats() BatchStats {
	d, r, o := p.queueDropped[PriorityDecision].Load(), p.queueDropped[PriorityRefusal].Load(), p.queueDropped[PriorityOther].Load()
	return BatchStats{
		Accepted:             p.accepted.Load(),
		QueueDropped:         d + r + o,
		DroppedDecisions:     d,
		DroppedRefusals:      r,
		DroppedOther:         o,
		DroppedAfterShutdown: p.afterStop.Load(),
		Exported:             p.exp.exported.Load(),
		ExportFailed:         p.exp.failed.Load(),
		Pending:              p.inflight.Load(),
		InFlight:             p.exp.inflight.Load(),
		QueueCapacity:        p.limit,
	}
}

// countingExporter counts spans handed to the wrapped exporter and the
// outcome of each export call.
type countingExporter struct {
	next     sdktrace.SpanExporter
	onHand   func(n int)
	inflight atomic.Int64
	exported atomic.Int64
	failed   atomic.Int64
	lastErr  atomic.Pointer[error]
	onError  func(error)
}

func (e *countingExporter) lastError() error {
	if p := e.lastErr.Load(); p != nil {
		return *p
	}
	return errors.New("unknown error")
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	n := int64(len(spans))
	e.inflight.Add(n)
	e.onHand(len(spans))
	err := e.next.ExportSpans(ctx, spans)
	e.inflight.Add(-n)
	if err != nil {
		e.failed.Add(n)
		e.lastErr.Store(&err)
		if e.onError != nil {
			func() {
				defer func() { _ = recover() }()
				e.onError(fmt.Errorf("otelbridge: export of %d spans failed: %w", n, err))
			}()
		}
		return err
	}
	e.exported.Add(n)
	return nil
}

func (e *countingExporter) Shutdown(ctx context.Context) error { return e.next.Shutdown(ctx) }
