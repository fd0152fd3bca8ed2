package otelbridge

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.41.0/otelconv"
)

// ScopeName is the instrumentation scope of the metrics this package
// records (and of the spans [Bridge] makes).
const ScopeName = "github.com/toolgate/toolgate/otelbridge"

// Names of the metrics instruments for the sampling processor's own
// counters; no semantic convention covers a span dropped on purpose.
const (
	// MetricSpansFiltered (counter, {span}) counts spans the sampling
	// setting dropped, by attribute "toolgate.sampling.mode".
	MetricSpansFiltered = "toolgate.sampling.span.filtered"
	// MetricSpansKept (counter, {span}) counts spans the sampling setting
	// kept.
	MetricSpansKept = "toolgate.sampling.span.kept"
	// attrSamplingMode is the attribute on both counters.
	attrSamplingMode attribute.Key = "toolgate.sampling.mode"
	// attrSpanPriority is the priority tier of queue_full drops.
	attrSpanPriority attribute.Key = "toolgate.span.priority"
)

// RegisterMetrics records the pipeline's counters as OTel metrics on mp,
// observed at each collection:
//
//   - otel.sdk.processor.span.processed{otel.component.type=batching_span_processor}
//     (semconv v1.41.0 otelconv): spans handed to the exporter, and with
//     error.type=queue_full the spans dropped on a full queue, by
//     toolgate.span.priority (decision, refusal, other: see BatchProcessor)
//     (error.type=shutdown: ended after shutdown);
//   - otel.sdk.processor.span.queue.size / .queue.capacity;
//   - otel.sdk.exporter.span.exported{otel.component.type=otlp_grpc_span_exporter}:
//     spans whose export succeeded, and with error.type=_OTHER failed;
//   - otel.sdk.exporter.span.inflight;
//   - toolgate.sampling.span.kept / .filtered by toolgate.sampling.mode.
//
// With the spool on, [Setup] also registers the spool's own metrics
// (toolgate.spool.*, see spool.Spool.RegisterMetrics) on the same provider.
//
// The returned function unregisters the callback.
func RegisterMetrics(mp metric.MeterProvider, stats func() Stats, s Sampling) (unregister func() error, err error) {
	if mp == nil || stats == nil {
		return nil, errors.New("otelbridge: RegisterMetrics: nil meter provider or stats")
	}
	m := mp.Meter(ScopeName)
	processed, err1 := otelconv.NewSDKProcessorSpanProcessedObservable(m)
	qsize, err2 := otelconv.NewSDKProcessorSpanQueueSize(m)
	qcap, err3 := otelconv.NewSDKProcessorSpanQueueCapacity(m)
	exported, err4 := otelconv.NewSDKExporterSpanExportedObservable(m)
	inflight, err5 := otelconv.NewSDKExporterSpanInflightObservable(m)
	kept, err6 := m.Int64ObservableCounter(MetricSpansKept, metric.WithUnit("{span}"),
		metric.WithDescription("Spans the sampling setting forwarded to export."))
	filtered, err7 := m.Int64ObservableCounter(MetricSpansFiltered, metric.WithUnit("{span}"),
		metric.WithDescription("Spans the sampling setting dropped on purpose (not a loss)."))
	if err := errors.Join(err1, err2, err3, err4, err5, err6, err7); err != nil {
		return nil, fmt.Errorf("otelbridge: RegisterMetrics: %w", err)
	}
	const procName, expName = "toolgate_batching_span_processor", "toolgate_otlp_grpc_span_exporter"
	procAttrs := []attribute.KeyValue{
		processed.AttrComponentType(otelconv.ComponentTypeBatchingSpanProcessor),
		processed.AttrComponentName(procName),
	}
	expAttrs := []attribute.KeyValue{
		exported.AttrComponentType(otelconv.ComponentTypeOtlpGRPCSpanExporter),
		exported.AttrComponentName(expName),
	}
	with := func(base []attribute.KeyValue, more ...attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributes(append(append([]attribute.KeyValue(nil), base...), more...)...)
	}
	modeAttr := metric.WithAttributes(attrSamplingMode.String(s.orDefault().String()))
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := stats()
		o.ObserveInt64(processed.Inst(), st.Batch.Accepted-st.Batch.Pending, with(procAttrs))
		for _, d := range []struct {
			p SpanPriority
			n int64
		}{{PriorityDecision, st.Batch.DroppedDecisions}, {PriorityRefusal, st.Batch.DroppedRefusals}, {PriorityOther, st.Batch.DroppedOther}} {
			o.ObserveInt64(processed.Inst(), d.n, with(procAttrs, processed.AttrErrorType("queue_full"), attrSpanPriority.String(d.p.String())))
		}
		o.ObserveInt64(processed.Inst(), st.Batch.DroppedAfterShutdown, with(procAttrs, processed.AttrErrorType("shutdown")))
		o.ObserveInt64(qsize.Inst(), st.Batch.Pending, with(procAttrs))
		o.ObserveInt64(qcap.Inst(), st.Batch.QueueCapacity, with(procAttrs))
		o.ObserveInt64(exported.Inst(), st.Batch.Exported, with(expAttrs))
		o.ObserveInt64(exported.Inst(), st.Batch.ExportFailed, with(expAttrs, exported.AttrErrorType(otelconv.ErrorTypeOther)))
		o.ObserveInt64(inflight.Inst(), st.Batch.InFlight, with(expAttrs))
		o.ObserveInt64(kept, st.Sampling.Kept, modeAttr)
		o.ObserveInt64(filtered, st.Sampling.Filtered, modeAttr)
		return nil
	}, processed.Inst(), qsize.Inst(), qcap.Inst(), exported.Inst(), inflight.Inst(), kept, filtered)
	if err != nil {
		return nil, fmt.Errorf("otelbridge: RegisterMetrics: %w", err)
	}
	return reg.Unregister, nil
}
