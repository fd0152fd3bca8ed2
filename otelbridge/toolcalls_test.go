package otelbridge

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// TestToolCallIndexKeysOnTheWholeCall: the red team's reproduction. Run
// A's model calls a nonexistent tool with the ID call_1; a later bridged
// event of run B (another agent, another tool, a denial) that carries the
// same ID is a different call and is emitted, not dropped as a duplicate.
func TestToolCallIndexKeysOnTheWholeCall(t *testing.T) {
	b, p, mem := bridged(t, MustParseSampling("all"))
	ctx := context.Background()
	runA := Event{Type: EventToolCall, RunID: "runA", Agent: "coder", StartMs: t0, EndMs: t0 + 1, Tool: "nosuch", ToolCallID: "call_1",
		GateAction: "deny", GateSource: "executor", GateStage: "registry", GateError: "tool_not_found", IsError: true}
	require.NoError(t, b.Handle(ctx, runA))
	runB := Event{Type: EventToolCall, RunID: "runB", Agent: "other", StartMs: t0 + 2, EndMs: t0 + 5, Tool: "deploy", ToolCallID: "call_1",
		Gated: true, GateAction: "deny", GateReason: "framework policy", GateSource: "fw", GateStage: "gate", IsError: true}
	require.NoError(t, b.Handle(ctx, runB))
	require.NoError(t, b.Handle(ctx, runB)) // a repeated delivery is a duplicate
	spans := flushed(t, p, mem)
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	assert.ElementsMatch(t, []string{"execute_tool nosuch", "execute_tool deploy"}, names)
	assert.Equal(t, int64(1), b.Stats().Duplicates)
}

// TestToolCallIndexNeverCollapsesDistinctCalls: for any two keys, the
// index holding the first has the second only when the two are equal in
// agent, run, tool and ID — whatever the strings (separators, lengths
// past the hashing bound) — and a bridge emits one span per distinct call.
func TestToolCallIndexNeverCollapsesDistinctCalls(t *testing.T) {
	part := rapid.OneOf(rapid.SampledFrom([]string{"", "a", "a:", "1:a", "call_1", "run", "bash"}),
		rapid.String(), rapid.StringN(250, 300, -1))
	key := rapid.Custom(func(t *rapid.T) ToolCallKey {
		return ToolCallKey{Agent: part.Draw(t, "agent"), RunID: part.Draw(t, "run"), Tool: part.Draw(t, "tool"), ID: part.Draw(t, "id")}
	})
	rapid.Check(t, func(t *rapid.T) {
		k1 := key.Draw(t, "k1")
		k2 := key.Draw(t, "k2")
		// k2 differs from k1 in a chosen subset of fields, or not at all.
		if rapid.Bool().Draw(t, "derive") {
			k2 = k1
			switch rapid.IntRange(0, 3).Draw(t, "field") {
			case 0:
				k2.Agent += "x"
			case 1:
				k2.RunID = "x" + k2.RunID
			case 2:
				k2.Tool += ":"
			case 3:
				k2.ID += "1"
			}
		}
		x := NewToolCallIndex(0)
		x.Add(k1)
		if k1.ID == "" {
			if x.Has(k1) {
				t.Fatalf("a key without an ID is never recorded")
			}
			return
		}
		if !x.Has(k1) {
			t.Fatalf("%+v recorded but not found", k1)
		}
		if got, want := x.Has(k2), k1 == k2; got != want {
			t.Fatalf("Has(%+v) after Add(%+v) = %v, want %v", k2, k1, got, want)
		}
	})
}

// TestToolCallIndexExecutorIDReuse: the red team's reproduction with the
// executor's own span. Run A's model calls a nonexistent tool with ID
// call_1 through the executor; a framework's later tool_call event of run
// B (agent other, tool deploy, denied) with the same ID is emitted, while
// run A's own event for its call is still a duplicate.
func TestToolCallIndexExecutorIDReuse(t *testing.T) {
	b, p, mem := bridged(t, MustParseSampling("all"))
	ctx := context.Background()
	ex, err := executor.New(bashAndDeploy(t), executor.WithTracerProvider(p))
	require.NoError(t, err)
	ag, err := ex.Agent("coder", executor.AgentPresets(executor.PresetAll))
	require.NoError(t, err)
	run := ag.Run("runA")
	run.Execute(ctx, executor.ToolCall{ID: "call_1", Name: "nosuch", Input: json.RawMessage(`{}`)})
	run.End()
	now := float64(time.Now().UnixMilli())
	ev := Event{Type: EventToolCall, RunID: "runB", Agent: "other", StartMs: now, EndMs: now + 5, Tool: "deploy", ToolCallID: "call_1",
		Gated: true, GateAction: "deny", GateReason: "framework policy", GateSource: "fw", GateStage: "gate", IsError: true}
	require.NoError(t, b.Handle(ctx, ev))
	same := Event{Type: EventToolCall, RunID: "runA", Agent: "coder", StartMs: now, EndMs: now + 5, Tool: "nosuch", ToolCallID: "call_1",
		GateAction: "deny", GateSource: "executor", GateStage: "registry", IsError: true}
	require.NoError(t, b.Handle(ctx, same))
	var deploy int
	for _, s := range flushed(t, p, mem) {
		if s.Name == "execute_tool deploy" {
			deploy++
		}
	}
	assert.Equal(t, 1, deploy, "run B's call is emitted")
	assert.Equal(t, int64(1), b.Stats().Duplicates, "run A's own event is a duplicate")
}

// TestBridgedEventCarriesCalls: a bridged event that stands for a group of
// calls (calls > 1, e.g. a forwarded executor record of an aggregated
// refusal) records gate.calls on its span through gate.Record.Attributes;
// one call (0 or 1) records none. The JSON field is "calls".
func TestBridgedEventCarriesCalls(t *testing.T) {
	b, p, mem := bridged(t, MustParseSampling("all"))
	ctx := context.Background()
	var ev Event
	require.NoError(t, json.Unmarshal([]byte(`{"type":"tool_call","runId":"r","agent":"a","startMs":1700000000000,"endMs":1700000000001,
		"tool":"nosuch","toolCallId":"c1","gateAction":"deny","gateSource":"executor","gateStage":"run","gateError":"run_aborted","calls":64}`), &ev))
	assert.EqualValues(t, 64, ev.Calls)
	assert.EqualValues(t, 64, ev.Record().Calls)
	require.NoError(t, b.Handle(ctx, ev))
	one := ev
	one.ToolCallID, one.Calls = "c2", 1
	require.NoError(t, b.Handle(ctx, one))
	got := map[string]attribute.Value{}
	for _, s := range flushed(t, p, mem) {
		var id string
		var calls attribute.Value
		for _, kv := range s.Attributes {
			switch kv.Key {
			case semconv.GenAIToolCallIDKey:
				id = kv.Value.AsString()
			case gate.AttrCalls:
				calls = kv.Value
			}
		}
		if id != "" {
			got[id] = calls
		}
	}
	assert.Equal(t, map[string]attribute.Value{"c1": attribute.Int64Value(64), "c2": {}}, got)
	// The executor's own trace events are one call each.
	assert.Zero(t, EventFromTrace(executor.ToolCallTrace{Decision: gate.Record{Calls: 0}}).Calls)
	assert.EqualValues(t, 5, EventFromTrace(executor.ToolCallTrace{Decision: gate.Record{Calls: 5}}).Calls)
}
