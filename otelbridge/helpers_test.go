package otelbridge

import (
	"sort"

	"github.com/toolgate/toolgate/otelbridge/internal/spantest"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Span helpers of this package's tests; the fixtures are shared (internal/spantest).
// Span fixtures shared with the other otelbridge parts' tests (internal/spantest).
var (
	agentAttrs = spantest.AgentAttrs
	toolAttrs  = spantest.ToolAttrs
	allowed    = spantest.Allowed
	denied     = spantest.Denied
	rejected   = spantest.Rejected
	optedOut   = spantest.OptedOut
	leaf       = spantest.Leaf
	emitRuns   = spantest.EmitRuns
)

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, 0, len(spans))
	for _, s := range spans {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}
