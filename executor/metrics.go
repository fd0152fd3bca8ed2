package executor

import (
	"context"
	"fmt"
	"sync"
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
)

type metrics struct {
	decisions metric.Int64Counter
	duration  metric.Float64Histogram
	sets      *sync.Map // metricKey -> metric.MeasurementOption
}

type metricKey struct {
	tool   string
	action gate.Action
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
	return metrics{decisions: d, duration: h, sets: &sync.Map{}}, nil
}

// record counts one decision. Attribute sets are cached per tool and action
// (registered tool names only, so the cache is bounded).
func (m metrics) record(ctx context.Context, tool string, action gate.Action, d time.Duration) {
	k := metricKey{tool, action}
	opt, ok := m.sets.Load(k)
	if !ok {
		opt, _ = m.sets.LoadOrStore(k, metric.WithAttributeSet(attribute.NewSet(
			semconv.GenAIToolName(tool), gate.AttrAction.String(string(action)))))
	}
	o := opt.(metric.MeasurementOption)
	m.decisions.Add(ctx, 1, o)
	m.duration.Record(ctx, d.Seconds(), o)
}
