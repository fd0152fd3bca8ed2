package bridge

import (
	"context"
	"crypto/sha256"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/gate"
)

// DefaultToolCallCapacity is how many keys a [ToolCallIndex] remembers by
// default; a call with a decision takes two (its key with its decision,
// and under any decision).
const DefaultToolCallCapacity = 1 << 16

// ToolCallKey identifies one tool call for [ToolCallIndex]: the agent
// (gen_ai.agent.name), the run (toolgate.run.id), the tool
// (gen_ai.tool.name), the tool-call ID (gen_ai.tool.call.id) and the
// decision recorded for it ([DecisionKey] of its gate.* attributes). The
// ID is the model's to choose — any run can reuse another's "call_1", and
// a model can reuse it in its own run for another call of the same tool
// (an allowed `ls`, then a denied `rm -rf ~`) — so two reports are one
// call only when all five are equal: a reused ID never hides a call that
// was decided differently. Values are compared as recorded on spans
// (gate.SafeText, bounded by gate.MaxNameBytes).
//
// An empty Decision in a key given to [ToolCallIndex.Has] means "any
// decision": a report that carries no decision (a framework's event of a
// call it ran through the executor) matches any recorded report of the
// call, and drops no decision when collapsed.
type ToolCallKey struct {
	Agent, RunID, Tool, ID string
	// Decision is DecisionKey of the call's gate.* attributes; "" when the
	// report carries no decision.
	Decision string
}

// decisionRank orders the gate.* attributes that tell one decision from
// another (what was decided, by whom, why, at what stage, for what input,
// for how many calls); -1 for any other attribute.
func decisionRank(k attribute.Key) int {
	switch k {
	case gate.AttrAction:
		return 0
	case gate.AttrStage:
		return 1
	case gate.AttrSource:
		return 2
	case gate.AttrReason:
		return 3
	case gate.AttrRule:
		return 4
	case gate.AttrError:
		return 5
	case gate.AttrApproval:
		return 6
	case gate.AttrOriginalInputHash:
		return 7
	case gate.AttrCalls:
		return 8
	case gate.AttrGated:
		return 9
	}
	return -1
}

const decisionFields = 10

// DecisionKey is the decision a tool call's span records, as one string:
// its gate.action, gate.stage, gate.source, gate.reason, gate.rule,
// gate.error, gate.approval, gate.input.original_sha256, gate.calls and
// gate.gated values (each length-prefixed, absent ones empty), or "" when
// attrs carry no gate.action (no decision). The executor's span and a
// bridged span of the same decision give the same key: both are encoded
// by gate.Record.Attributes.
func DecisionKey(attrs []attribute.KeyValue) string {
	var vals [decisionFields]string
	var has bool
	for _, kv := range attrs {
		if r := decisionRank(kv.Key); r >= 0 {
			vals[r] = kv.Value.Emit()
			has = has || kv.Key == gate.AttrAction
		}
	}
	if !has {
		return ""
	}
	var b []byte
	for _, v := range vals {
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		b = append(b, v...)
	}
	return string(b)
}

// ToolCallIndex remembers the execute_tool spans — made live by toolgate's
// executor, or by [Bridge] itself — by their [ToolCallKey], so that a
// Bridge does not make a second span for the same call. It is an
// sdktrace.SpanProcessor: register it on the provider (otelbridge.Setup does). It
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
	b := make([]byte, 0, 40+len(k.Agent)+len(k.RunID)+len(k.Tool)+len(k.ID)+len(k.Decision))
	for _, f := range [...]string{k.Agent, k.RunID, k.Tool, k.ID, k.Decision} {
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

// Add records a tool call with its decision (and, for reports that carry
// none, the call under any decision); a key without an ID is ignored (it
// cannot be matched).
func (x *ToolCallIndex) Add(key ToolCallKey) {
	if key.ID == "" {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.add(keyOf(key))
	if key.Decision != "" {
		key.Decision = ""
		x.add(keyOf(key))
	}
}

func (x *ToolCallIndex) add(k string) {
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

// Has reports whether a tool call was recorded (and not yet forgotten)
// with key's decision — with any decision when key.Decision is "".
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
	attrs := s.Attributes()
	k.Decision = DecisionKey(attrs)
	for _, kv := range attrs {
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
