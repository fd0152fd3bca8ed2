package otelbridge

import (
	"context"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// DefaultToolCallCapacity is how many tool-call IDs a [ToolCallIndex]
// remembers by default.
const DefaultToolCallCapacity = 1 << 16

// ToolCallIndex remembers the gen_ai.tool.call.id of execute_tool spans —
// made live by toolgate's executor, or by [Bridge] itself — so that a
// Bridge does not make a second span for the same call. It is an sdktrace.SpanProcessor:
// register it on the provider (Setup does). It records at span start (the
// executor sets the ID at start, and the call's after-the-fact event can
// only come later) and again at end. Memory is bounded: the oldest IDs are
// forgotten first.
type ToolCallIndex struct {
	mu   sync.Mutex
	set  map[string]struct{}
	ring []string
	head int
}

var _ sdktrace.SpanProcessor = (*ToolCallIndex)(nil)

// NewToolCallIndex returns an index holding up to capacity IDs (values
// below 1 mean DefaultToolCallCapacity).
func NewToolCallIndex(capacity int) *ToolCallIndex {
	if capacity < 1 {
		capacity = DefaultToolCallCapacity
	}
	return &ToolCallIndex{set: make(map[string]struct{}), ring: make([]string, capacity)}
}

// Add records a tool-call ID; "" is ignored.
func (x *ToolCallIndex) Add(id string) {
	if id == "" {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.set[id]; ok {
		return
	}
	if old := x.ring[x.head]; old != "" {
		delete(x.set, old)
	}
	x.ring[x.head] = id
	x.set[id] = struct{}{}
	x.head = (x.head + 1) % len(x.ring)
}

// Has reports whether a tool-call ID was recorded (and not yet forgotten).
func (x *ToolCallIndex) Has(id string) bool {
	if id == "" {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.set[id]
	return ok
}

// OnStart records the tool-call ID of a live execute_tool span.
func (x *ToolCallIndex) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) { x.observe(s) }

// OnEnd records the tool-call ID of a live execute_tool span.
func (x *ToolCallIndex) OnEnd(s sdktrace.ReadOnlySpan) { x.observe(s) }

func (x *ToolCallIndex) observe(s sdktrace.ReadOnlySpan) {
	var id string
	var tool bool
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case semconv.GenAIToolCallIDKey:
			id = kv.Value.AsString()
		case semconv.GenAIOperationNameKey:
			tool = kv.Value.AsString() == semconv.GenAIOperationNameExecuteTool.Value.AsString()
		}
	}
	if tool {
		x.Add(id)
	}
}

// Shutdown does nothing.
func (*ToolCallIndex) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing.
func (*ToolCallIndex) ForceFlush(context.Context) error { return nil }
