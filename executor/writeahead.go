package executor

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// WriteAheadLog durably records a call's decision before its tool runs
// (strict mode, WithWriteAhead). *otelbridge.Provider satisfies it (its
// spool syncs the span's record to disk).
//
// Commit receives the call's live execute_tool span with its final
// decision attributes already set (the gate.* record of the allowed call,
// agent and run attributes, gen_ai.tool.call.arguments when content is
// recorded) and returns nil only once that record is durable. It must be
// safe for concurrent use, should honour ctx (its deadline is the call's),
// and must not end the span.
type WriteAheadLog interface {
	Commit(ctx context.Context, span trace.Span) error
}

// ErrAuditUnavailable: strict mode (WithWriteAhead) could not record the
// call's decision before its tool ran, so the tool did not run. The
// ToolResult's Err wraps it and the cause (the log's error, its panic, or
// the call's context error when the log did not answer in time).
var ErrAuditUnavailable = errors.New("executor: audit unavailable")

// ErrorTypeAuditUnavailable is the error.type and gate.error of a call
// denied because its decision could not be recorded (WithWriteAhead).
const ErrorTypeAuditUnavailable = "audit_unavailable"

// MetricAuditUnavailable counts calls denied because their decision could
// not be recorded before the tool ran ({call}), by error.type: error (the
// log returned an error), timeout (the call's context ended first), panic.
const MetricAuditUnavailable = "toolgate.executor.audit_unavailable"

// WithWriteAhead turns on strict mode: a call the gates allowed (or that
// no gate applies to) runs its tool only after w.Commit recorded its
// decision. When Commit returns an error, panics, or has not returned when
// the call's context ends, the call is denied instead — its tool never
// runs — with ErrorType and gate.error "audit_unavailable" and a reason
// "audit unavailable: <cause>" (redacted and bounded like every reason),
// and the denial still ends on the call's span (an exporter that can
// still send it records it); each such call is counted in
// MetricAuditUnavailable. A gated call keeps its gates' record (stage
// gate, verdicts, rounds; action deny by the executor); an ungated one is
// refused at gate.stage "run". Calls the executor refuses before their
// tool would run are not committed (their span, ended at once, is the
// record). A denied call does not count towards the refusal budget (the
// model did not cause it). Commit runs on its own goroutine when the
// call's context can end, so a log that ignores ctx cannot hold the call
// past its deadline. Off by default (w nil).
func WithWriteAhead(w WriteAheadLog) Option {
	return func(c *config) { c.writeAhead = w }
}

// Causes of a write-ahead failure (error.type of MetricAuditUnavailable).
const (
	walError   = "error"
	walTimeout = "timeout"
	walPanic   = "panic"
)

// walFailure is why a call's decision could not be committed.
type walFailure struct {
	kind string // walError, walTimeout, walPanic
	err  error
}

// commit sets the allowed call's final decision attributes on its span and
// commits it through the write-ahead log. It returns nil when the record
// is durable and the call may run.
func (e *Executor) commit(ctx context.Context, span trace.Span, r *Run, call ToolCall, info *gate.Record, toolType string, cs *callState) *walFailure {
	if span.IsRecording() {
		var input string
		if e.cfg.recordContent {
			in := call.Input
			if cs.ran != nil {
				in = cs.ran
			}
			input = e.record(string(in))
		}
		res := ToolResult{Gate: *info}
		buf := e.attrPool.Get().(*[]attribute.KeyValue)
		attrs := e.decisionAttributes((*buf)[:0], r, &res, toolType, cs.calls)
		if e.cfg.recordContent {
			// Before the seal: the chain covers the recorded arguments
			// (the Input column), the same finish records.
			attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(input))
		}
		// The decision takes its chain position now: the committed record
		// is the one the store keeps when the process dies while the tool
		// runs. finish keeps the position (the record has its link).
		attrs = r.sealSpan(span, &res.Gate, true, cs.toolName, gate.SafeText(call.ID, gate.MaxNameBytes), attrs)
		info.Chain = res.Gate.Chain
		span.SetAttributes(attrs...)
		clear(attrs)
		*buf = attrs[:0]
		e.attrPool.Put(buf)
	}
	w := e.cfg.writeAhead
	if ctx.Done() == nil { // the call cannot end: nothing to bound
		return safeCommit(ctx, w, span)
	}
	done := make(chan *walFailure, 1)
	go func() { done <- safeCommit(ctx, w, span) }()
	select {
	case f := <-done:
		if f == nil && ctx.Err() != nil {
			return &walFailure{walTimeout, fmt.Errorf("the decision was recorded only after the call's context ended: %w", context.Cause(ctx))}
		}
		return f
	case <-ctx.Done():
		return &walFailure{walTimeout, fmt.Errorf("the write-ahead log did not record the decision before the call's context ended: %w", context.Cause(ctx))}
	}
}

func safeCommit(ctx context.Context, w WriteAheadLog, span trace.Span) (f *walFailure) {
	defer func() {
		if p := recover(); p != nil {
			f = &walFailure{walPanic, fmt.Errorf("the write-ahead log panicked: %v", p)}
		}
	}()
	if err := w.Commit(ctx, span); err != nil {
		return &walFailure{walError, err}
	}
	return nil
}

// auditUnavailable is the result of an allowed call whose decision could
// not be committed: denied by the executor, the tool not run.
func (e *Executor) auditUnavailable(ctx context.Context, call ToolCall, info gate.Record, f *walFailure) ToolResult {
	e.metrics.auditUnavailable.Add(ctx, 1, metric.WithAttributes(semconv.ErrorTypeKey.String(f.kind)))
	cause := e.record(f.err.Error())
	why := "audit unavailable: " + cause
	var rec gate.Record
	info.Chain = gate.Link{} // the denial takes a position of its own; the allow's, never recorded, shows as missing
	if info.Gated {
		rec = info
		rec.Action, rec.Source, rec.ErrorKind = gate.ActionDeny, gate.SourceExecutor, ErrorTypeAuditUnavailable
		if info.Reason != "" {
			why += "; the gates had allowed the call: " + info.Reason
		}
		rec.Reason = e.record(why)
	} else {
		rec = e.refused(gate.StageRun, ErrorTypeAuditUnavailable, why)
		rec.OptOut = info.OptOut
	}
	res := errorResult(call, ErrorTypeAuditUnavailable, fmt.Errorf("%w: %w", ErrAuditUnavailable, f.err),
		fmt.Sprintf("Tool %q was not run: its decision could not be recorded in the audit trail (%s). The tool may be available again later.", call.Name, cause))
	res.Gate = rec
	return res
}
