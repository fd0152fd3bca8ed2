package executor

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/gate"
)

// Metric names (toolgate's own; the GenAI conventions define none for
// gate decisions).
const (
	// MetricDecisions counts gate decisions ({decision}), by
	// gen_ai.tool.name and gate.action.
	MetricDecisions = "toolgate.gate.decisions"
	// MetricGateDuration is the time spent deciding (s), approval
	// included, by gen_ai.tool.name and gate.action.
	MetricGateDuration = "toolgate.gate.duration"
	// MetricErrors counts errors no caller could receive ({error}), by
	// error.type: trace_hook, record, grant_store (see WithErrorHandler).
	MetricErrors = "toolgate.executor.errors"
)

type metrics struct {
	decisions metric.Int64Counter
	duration  metric.Float64Histogram
	errors    metric.Int64Counter
	// auditUnavailable counts calls strict mode denied (writeahead.go).
	auditUnavailable metric.Int64Counter
}

// measureOpts are prebuilt option slices: passing them with ... does not
// allocate per call.
type measureOpts struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

// newMeasureOpts returns the measurement options of tool's decisions, for
// allow and deny (attribute sets do not depend on the meter, so a registry
// entry holds them for every executor that uses it).
func newMeasureOpts(tool string) [2]measureOpts {
	mk := func(a gate.Action) measureOpts {
		o := metric.WithAttributeSet(attribute.NewSet(semconv.GenAIToolName(tool), gate.AttrAction.String(string(a))))
		return measureOpts{add: []metric.AddOption{o}, record: []metric.RecordOption{o}}
	}
	return [2]measureOpts{mk(gate.ActionAllow), mk(gate.ActionDeny)}
}

func newMetrics(m metric.Meter) (metrics, error) {
	d, err := m.Int64Counter(MetricDecisions, metric.WithUnit("{decision}"),
		metric.WithDescription("Gate decisions on tool calls, by tool and final action."))
	if err != nil {
		return metrics{}, fmt.Errorf("executor: metric %s: %w", MetricDecisions, err)
	}
	h, err := m.Float64Histogram(MetricGateDuration, metric.WithUnit("s"),
		metric.WithDescription("Time spent deciding on a tool call, approval included."))
	if err != nil {
		return metrics{}, fmt.Errorf("executor: metric %s: %w", MetricGateDuration, err)
	}
	errs, err := m.Int64Counter(MetricErrors, metric.WithUnit("{error}"),
		metric.WithDescription("Errors of the trace hook, span recording and the grant store, by error.type."))
	if err != nil {
		return metrics{}, fmt.Errorf("executor: metric %s: %w", MetricErrors, err)
	}
	au, err := m.Int64Counter(MetricAuditUnavailable, metric.WithUnit("{call}"),
		metric.WithDescription("Calls denied because their decision could not be recorded before the tool ran (strict mode), by error.type."))
	if err != nil {
		return metrics{}, fmt.Errorf("executor: metric %s: %w", MetricAuditUnavailable, err)
	}
	return metrics{decisions: d, duration: h, errors: errs, auditUnavailable: au}, nil
}

// fail counts one error of the given kind.
func (m metrics) fail(ctx context.Context, kind string) {
	m.errors.Add(ctx, 1, metric.WithAttributes(semconv.ErrorTypeKey.String(kind)))
}

// record counts one decision, with the attribute sets built once per
// registered tool (entry.measure).
func (m metrics) record(ctx context.Context, ent *entry, action gate.Action, d time.Duration) {
	i := 0
	if action != gate.ActionAllow {
		i = 1
	}
	o := &ent.measure[i]
	m.decisions.Add(ctx, 1, o.add...)
	m.duration.Record(ctx, d.Seconds(), o.record...)
}
