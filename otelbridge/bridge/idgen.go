package bridge

import (
	"context"
	"math/rand/v2"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// IDGenerator is an sdktrace.IDGenerator that returns random IDs, except
// for a span started with a context from [withPresetIDs]: that span gets
// the preset IDs. [Bridge] uses this to give a parent span the span ID its
// children, bridged earlier, already point to. otelbridge.Setup installs it; a
// provider built elsewhere needs sdktrace.WithIDGenerator(NewIDGenerator())
// for the bridge's out-of-order parentage.
type IDGenerator struct{}

var _ sdktrace.IDGenerator = IDGenerator{}

// NewIDGenerator returns the generator.
func NewIDGenerator() IDGenerator { return IDGenerator{} }

type presetKey struct{}

type presetIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// withPresetIDs returns ctx asking the generator for these IDs. A zero
// trace ID keeps the parent's (for a child span).
func withPresetIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, presetKey{}, presetIDs{t, s})
}

// NewIDs returns the preset IDs for a root span, else random ones.
func (IDGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if p, ok := ctx.Value(presetKey{}).(presetIDs); ok && p.trace.IsValid() && p.span.IsValid() {
		return p.trace, p.span
	}
	return randomTraceID(), randomSpanID()
}

// NewSpanID returns the preset span ID for a child span, else a random one.
func (IDGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if p, ok := ctx.Value(presetKey{}).(presetIDs); ok && p.span.IsValid() {
		return p.span
	}
	return randomSpanID()
}

// randomTraceID and randomSpanID use math/rand/v2's runtime-seeded
// ChaCha8 source, safe for concurrent use; they never return a zero ID.
func randomTraceID() trace.TraceID {
	var t trace.TraceID
	for !t.IsValid() {
		a, b := rand.Uint64(), rand.Uint64()
		for i := range 8 {
			t[i] = byte(a >> (8 * i))
			t[8+i] = byte(b >> (8 * i))
		}
	}
	return t
}

func randomSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		a := rand.Uint64()
		for i := range 8 {
			s[i] = byte(a >> (8 * i))
		}
	}
	return s
}
