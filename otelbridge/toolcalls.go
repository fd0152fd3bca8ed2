package otelbridge

import (
	"context"
	"crypto/sha256"
	"strconv"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/gate"
)

// DefaultToolCallCapacity is how many tool calls a [ToolCallIndex]
// remembers by default.
const DefaultToolCallCapacity = 1 << 16

// ToolCallKey identifies one tool call for [ToolCallIndex]: the agent
// (gen_ai.agent.name), the run (toolgate.run.id), the tool
// (gen_ai.tool.name) and the tool-call ID (gen_ai.tool.call.id). The ID
// alone is the model's to choose — any run can reuse another's "call_1" —
// so two calls are one only when all four are equal: a model that reuses
// an ID in its own run for another tool does not hide that call either.
// Values are compared as recorded on spans (gate.SafeText, bounded by
// gate.MaxNameBytes).
type ToolCallKey struct {
	Agent, RunID, Tool, ID string
}

// ToolCallIndex remembers the execute_tool spans — made live by toolgate's
// executor, or by [Bridge] itself — by their [ToolCallKey], so that a
// Bridge does not make a second span for the same call. It is an
// sdktrace.SpanProcessor: register it on the provider (Setup does). It
// records a span at its start when the span carries its agent there (a
// bridged span), and at its end (the executor sets the agent and run when
// the call ends; the call's after-the-fact event can only come later).
// Memory is bounded: the oldest keys are forgotten first, and a key longer
// than 256 bytes (tool-call IDs are the model's) is kept as its SHA-256, so
// memory does not grow with the IDs' lengths.
type ToolCallIndex struct {
	mu   sync.Mutex
	set  map[string]struct{}
	ring []string // keys (see keyOf)
	head int
}

// maxKeptID is the longest key the index keeps as it is.
const maxKeptID = 256

// keyOf is the key the index keeps for k: its fields, each prefixed with
// its length (so no two keys' fields run into each other), when that is
// at most maxKeptID bytes long, else its SHA-256 zero-padded to
// maxKeptID+1 bytes (longer than any key kept as it is, so the two kinds
// never collide).
func keyOf(k ToolCallKey) string {
	b := make([]byte, 0, 32+len(k.Agent)+len(k.RunID)+len(k.Tool)+len(k.ID))
	for _, f := range [...]string{k.Agent, k.RunID, k.Tool, k.ID} {
		b = strconv.AppendInt(b, int64(len(f)), 10)
		b = append(b, ':')
		b = append(b, f...)
	}
	if len(b) <= maxKeptID {
		return string(b)
	}
	sum := sha256.Sum256(b)
	out := make([]byte, maxKeptID+1)
	copy(out, sum[:])
	return string(out)
}

var _ sdktrace.SpanProcessor = (*ToolCallIndex)(nil)

// NewToolCallIndex returns an index holding up to capacity keys (values
// below 1 mean DefaultToolCallCapacity).
func NewToolCallIndex(capacity int) *ToolCallIndex {
	if capacity < 1 {
		capacity = DefaultToolCallCapacity
	}
	return &ToolCallIndex{set: make(map[string]struct{}), ring: make([]string, capacity)}
}

// Add records a tool call; a key without an ID is ignored (it cannot be
// matched).
func (x *ToolCallIndex) Add(key ToolCallKey) {
	if key.ID == "" {
		return
	}
	k := keyOf(key)
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

// Has reports whether a tool call was recorded (and not yet forgotten).
func (x *ToolCallIndex) Has(key ToolCallKey) bool {
	if key.ID == "" {
		return false
	}
	k := keyOf(key)
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.set[k]
	return ok
}

// OnStart records a live execute_tool span that carries its agent.
func (x *ToolCallIndex) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) { x.observe(s, true) }

// OnEnd records a live execute_tool span.
func (x *ToolCallIndex) OnEnd(s sdktrace.ReadOnlySpan) { x.observe(s, false) }

func (x *ToolCallIndex) observe(s sdktrace.ReadOnlySpan, start bool) {
	var k ToolCallKey
	var tool, agent bool
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case semconv.GenAIToolCallIDKey:
			k.ID = kv.Value.AsString()
		case semconv.GenAIToolNameKey:
			k.Tool = kv.Value.AsString()
		case semconv.GenAIAgentNameKey:
			k.Agent, agent = kv.Value.AsString(), true
		case gate.AttrRunID:
			k.RunID = kv.Value.AsString()
		case semconv.GenAIOperationNameKey:
			tool = kv.Value.AsString() == semconv.GenAIOperationNameExecuteTool.Value.AsString()
		}
	}
	if tool && (agent || !start) {
		x.Add(k)
	}
}

// Shutdown does nothing.
func (*ToolCallIndex) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing.
func (*ToolCallIndex) ForceFlush(context.Context) error { return nil }
