package otelbridge

import (
	"context"
	"crypto/sha256"
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
// forgotten first, and an ID longer than 256 bytes (tool-call IDs are the
// model's) is kept as its SHA-256, so memory does not grow with the IDs'
// lengths.
type ToolCallIndex struct {
	mu   sync.Mutex
	set  map[string]struct{}
	ring []string // keys (see keyOf)
	head int
}

// maxKeptID is the longest tool-call ID the index keeps as it is.
const maxKeptID = 256

// keyOf is the key the index keeps for id: id itself when it is at most
// maxKeptID bytes long, else its SHA-256 zero-padded to maxKeptID+1 bytes
// (longer than any ID kept as it is, so the two kinds never collide).
func keyOf(id string) string {
	if len(id) <= maxKeptID {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	k := make([]byte, maxKeptID+1)
	copy(k, sum[:])
	return string(k)
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
	k := keyOf(id)
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.set[k]; ok {
		return
	}
	if old := x.ring[x.head]; old != "" {
		delete(x.set, old)
	}
	x.ring[x.head] = k
	x.set[k] = struct{}{}
	x.head = (x.head + 1) % len(x.ring)
}

// Has reports whether a tool-call ID was recorded (and not yet forgotten).
func (x *ToolCallIndex) Has(id string) bool {
	if id == "" {
		return false
	}
	k := keyOf(id)
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.set[k]
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
