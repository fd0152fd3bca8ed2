package spool

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of the spool's metrics.
const ScopeName = "github.com/toolgate/toolgate/otelbridge/spool"

// Names of the spool's metrics instruments (no semantic convention covers
// an on-disk spool).
const (
	MetricSpooled      = "toolgate.spool.span.spooled"      // counter {span}: appended as final records
	MetricSent         = "toolgate.spool.span.sent"         // counter {span}: acknowledged by the collector
	MetricDropped      = "toolgate.spool.span.dropped"      // counter {span}: dropped unsent (budget, rejected)
	MetricRefused      = "toolgate.spool.span.refused"      // counter {span}: not appended (budget, closed, I/O)
	MetricTorn         = "toolgate.spool.record.torn"       // counter {record}: torn/corrupt records recovered from
	MetricInterrupted  = "toolgate.spool.call.interrupted"  // counter {call}: committed calls found without a final
	MetricUnsent       = "toolgate.spool.span.unsent"       // gauge {span}: in the log, not yet acknowledged
	MetricBytes        = "toolgate.spool.size"              // gauge By: bytes of records on disk
	MetricOldestUnsent = "toolgate.spool.oldest_unsent.age" // gauge s: age of the oldest unsent record
)

// RegisterMetrics records the spool's [Stats] as OTel metrics on mp,
// observed at each collection (names above). The returned function
// unregisters the callback; it stays registered after Shutdown so that a
// last collection reports the final counts.
func (s *Spool) RegisterMetrics(mp metric.MeterProvider) (unregister func() error, err error) {
	if mp == nil {
		return nil, errors.New("spool: RegisterMetrics: nil meter provider")
	}
	m := mp.Meter(ScopeName)
	counter := func(name, unit, desc string) (metric.Int64ObservableCounter, error) {
		return m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	}
	spooled, e1 := counter(MetricSpooled, "{span}", "Spans appended to the on-disk spool.")
	sent, e2 := counter(MetricSent, "{span}", "Spooled spans the collector acknowledged.")
	dropped, e3 := counter(MetricDropped, "{span}", "Spooled spans dropped unsent (budget full under drop-oldest, or rejected as invalid): lost.")
	refused, e4 := counter(MetricRefused, "{span}", "Spans the spool did not take (budget full under refuse, closed, write error): lost.")
	torn, e5 := counter(MetricTorn, "{record}", "Torn or corrupt records cut off or skipped when the spool was opened.")
	interrupted, e6 := counter(MetricInterrupted, "{call}", "Committed calls found without a final record when the spool was opened.")
	unsent, e7 := m.Int64ObservableGauge(MetricUnsent, metric.WithUnit("{span}"), metric.WithDescription("Spans in the spool not yet acknowledged."))
	size, e8 := m.Int64ObservableGauge(MetricBytes, metric.WithUnit("By"), metric.WithDescription("Bytes of records in the spool's log."))
	age, e9 := m.Float64ObservableGauge(MetricOldestUnsent, metric.WithUnit("s"), metric.WithDescription("Age of the oldest unsent record in the spool."))
	if err := errors.Join(e1, e2, e3, e4, e5, e6, e7, e8, e9); err != nil {
		return nil, fmt.Errorf("spool: RegisterMetrics: %w", err)
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := s.Stats()
		o.ObserveInt64(spooled, st.Spooled)
		o.ObserveInt64(sent, st.Sent)
		o.ObserveInt64(dropped, st.Dropped)
		o.ObserveInt64(refused, st.Refused)
		o.ObserveInt64(torn, st.TornRecovered)
		o.ObserveInt64(interrupted, st.Interrupted)
		o.ObserveInt64(unsent, st.Unsent)
		o.ObserveInt64(size, st.BytesOnDisk)
		o.ObserveFloat64(age, st.OldestUnsent.Seconds())
		return nil
	}, spooled, sent, dropped, refused, torn, interrupted, unsent, size, age)
	if err != nil {
		return nil, fmt.Errorf("spool: RegisterMetrics: %w", err)
	}
	return reg.Unregister, nil
}
