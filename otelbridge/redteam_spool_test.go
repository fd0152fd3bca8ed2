package otelbridge

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// TestSpoolOversizedSpanDoesNotStallDrainer (red team): a decision span
// larger than the collector's gRPC receive limit (4 MiB by default) —
// a tool result recorded with WithRecordContent and a raised record
// limit, or any span of the provider — is refused by the receiver with
// ResourceExhausted on every attempt. The spool must neither retry it
// forever (stalling every later decision behind it) nor lose the
// decision: it is delivered with its large values cut, or counted.
//
// Spool off, the same span failed its whole export batch (the decisions
// around it lost): it is cut the same way.
func TestSpoolOversizedSpanDoesNotStallDrainer(t *testing.T) {
	for _, spooled := range []bool{true, false} {
		t.Run(fmt.Sprint("spool=", spooled), func(t *testing.T) { oversizedSpan(t, spooled) })
	}
}

func oversizedSpan(t *testing.T, spooled bool) {
	r := startReceiver(t) // grpc.NewServer(): MaxRecvMsgSize 4 MiB, as the collector
	cfg := Config{Endpoint: r.addr, Insecure: true, SkipCheck: true, Batch: BatchConfig{BatchTimeout: time.Hour}}
	if spooled {
		cfg.Spool = spool.Config{Dir: t.TempDir()}
	}
	p, err := Setup(context.Background(), cfg)
	require.NoError(t, err)
	tr := p.Tracer("t")
	decide(tr, "before", 20)
	huge := strings.Repeat("x", 5<<20)
	_, s := tr.Start(context.Background(), "huge", trace.WithAttributes(toolAttrs("bash", append(allowed,
		semconv.GenAIToolCallResultKey.String(huge), attribute.String("gen_ai.tool.call.arguments", huge))...)...))
	s.End()
	decide(tr, "after", 20)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, p.Shutdown(ctx), "every span delivered or counted before shutdown")
	seen := map[string]bool{}
	var hugeSpan bool
	for _, rs := range r.spans() {
		seen[rs.span.GetName()] = true
		if rs.span.GetName() == "huge" {
			hugeSpan = true
			var action string
			for _, kv := range rs.span.GetAttributes() {
				if kv.GetKey() == "gate.action" {
					action = kv.GetValue().GetStringValue()
				}
			}
			assert.Equal(t, "allow", action, "the decision survives the cut")
		}
	}
	for i := range 20 {
		assert.True(t, seen[fmt.Sprintf("after-%d", i)], "after-%d delivered", i)
	}
	assert.True(t, hugeSpan, "the oversized decision is delivered (its large values cut), not dropped")
}
