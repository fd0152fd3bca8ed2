package bridge

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

	bashclassify "github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// TestToolCallIndexKeysOnTheWholeCall: the red team's reproduction. Run
// A's model calls a nonexistent tool with the ID call_1; a later bridged
// event of run B (another agent, another tool, a denial) that carries the
// same ID is a different call and is emitted, not dropped as a duplicate.
func TestToolCallIndexKeysOnTheWholeCall(t *testing.T) {
	b, p, mem := bridged(t, sampling.MustParse("all"))
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
// agent, run, tool, ID and decision (or the second asks for any decision) — whatever the strings (separators, lengths
// past the hashing bound) — and a bridge emits one span per distinct call.
func TestToolCallIndexNeverCollapsesDistinctCalls(t *testing.T) {
	part := rapid.OneOf(rapid.SampledFrom([]string{"", "a", "a:", "1:a", "call_1", "run", "bash"}),
		rapid.String(), rapid.StringN(250, 300, -1))
	key := rapid.Custom(func(t *rapid.T) ToolCallKey {
		return ToolCallKey{Agent: part.Draw(t, "agent"), RunID: part.Draw(t, "run"), Tool: part.Draw(t, "tool"), ID: part.Draw(t, "id"),
			Decision: part.Draw(t, "decision")}
	})
	rapid.Check(t, func(t *rapid.T) {
		k1 := key.Draw(t, "k1")
		k2 := key.Draw(t, "k2")
		// k2 differs from k1 in a chosen subset of fields, or not at all.
		if rapid.Bool().Draw(t, "derive") {
			k2 = k1
			switch rapid.IntRange(0, 4).Draw(t, "field") {
			case 0:
				k2.Agent += "x"
			case 1:
				k2.RunID = "x" + k2.RunID
			case 2:
				k2.Tool += ":"
			case 3:
				k2.ID += "1"
			case 4:
				k2.Decision += "x"
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
		// An empty Decision asks for the call under any decision.
		any1 := k1
		any1.Decision = ""
		if got, want := x.Has(k2), k1 == k2 || k2 == any1; got != want {
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
	b, p, mem := bridged(t, sampling.MustParse("all"))
	ctx := context.Background()
	var traced []executor.ToolCallTrace
	ex, err := executor.New(bashAndDeploy(t), executor.WithTracerProvider(p),
		executor.WithOnTrace(func(_ context.Context, tr executor.ToolCallTrace) error { traced = append(traced, tr); return nil }))
	require.NoError(t, err)
	ag, err := ex.Agent("coder", executor.AgentPresets(executor.PresetAll))
	require.NoError(t, err)
	run := ag.Run("runA")
	run.Execute(ctx, executor.ToolCall{ID: "call_1", Name: "nosuch", Input: json.RawMessage(`{}`)})
	run.End()
	require.Len(t, traced, 1)
	now := float64(time.Now().UnixMilli())
	ev := Event{Type: EventToolCall, RunID: "runB", Agent: "other", StartMs: now, EndMs: now + 5, Tool: "deploy", ToolCallID: "call_1",
		Gated: true, GateAction: "deny", GateReason: "framework policy", GateSource: "fw", GateStage: "gate", IsError: true}
	require.NoError(t, b.Handle(ctx, ev))
	// Run A's own report of its call, without its span's IDs: the same
	// call and decision as the executor's span.
	same := EventFromTrace(traced[0])
	same.TraceID, same.SpanID = "", ""
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
	b, p, mem := bridged(t, sampling.MustParse("all"))
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

// TestBridgeReusedCallIDKeepsTheDenial: the red team's reproduction. The
// model reuses call_1 in its run for an allowed `ls` and then for a denied
// `rm -rf ~` of the same tool; the executor's reports are forwarded
// through its trace hook as spans of their own (EventFromTrace with the
// span's IDs cleared, as its doc allows). Both calls get a span; a
// repeated delivery of either is still a duplicate.
func TestBridgeReusedCallIDKeepsTheDenial(t *testing.T) {
	b, p, mem := bridged(t, sampling.MustParse("all"))
	ctx := context.Background()
	bash, err := bashclassify.BashGate()
	require.NoError(t, err)
	var events []Event
	ex, err := executor.New(bashAndDeploy(t), executor.WithGates(bash),
		executor.WithOnTrace(func(ctx context.Context, tr executor.ToolCallTrace) error {
			ev := EventFromTrace(tr)
			ev.TraceID, ev.SpanID = "", ""
			events = append(events, ev)
			return b.Handle(ctx, ev)
		}))
	require.NoError(t, err)
	ag, err := ex.Agent("coder", executor.AgentPresets(executor.PresetAll))
	require.NoError(t, err)
	run := ag.Run("r1")
	for _, cmd := range []string{"ls", "rm -rf ~"} {
		in, err := json.Marshal(map[string]string{"command": cmd})
		require.NoError(t, err)
		run.Execute(ctx, executor.ToolCall{ID: "call_1", Name: "bash", Input: in})
	}
	run.End()
	require.Len(t, events, 2)
	for _, ev := range events {
		require.NoError(t, b.Handle(ctx, ev)) // delivered again
	}
	actions := map[string]int{}
	for _, s := range flushed(t, p, mem) {
		if s.Name == "execute_tool bash" {
			actions[attrMap(s.Attributes)[gate.AttrAction].AsString()]++
		}
	}
	assert.Equal(t, map[string]int{"allow": 1, "deny": 1}, actions, "one span per call: the denial is recorded")
	st := b.Stats()
	assert.Equal(t, int64(2), st.Spans)
	assert.Equal(t, int64(2), st.Duplicates, "only the repeated deliveries")
}

// TestBridgeNeverCollapsesDifferentDecisions: for any tool_call event and
// a second one of the same agent, run, tool and tool-call ID, the bridge
// emits the second exactly when it differs in its decision (action,
// stage, source, reason, rule, error kind, approval, the hash of the
// model's input, the number of calls): the same event twice is one span,
// two different decisions are two.
func TestBridgeNeverCollapsesDifferentDecisions(t *testing.T) {
	text := rapid.StringMatching(`[a-z ~/.-]{1,24}`)
	rapid.Check(t, func(rt *rapid.T) {
		b, p, mem := bridged(t, sampling.MustParse("all"))
		ctx := context.Background()
		first := Event{Type: EventToolCall, RunID: "r", Agent: "a", StartMs: t0, EndMs: t0 + 1, Tool: "bash", ToolCallID: "call_1",
			Gated: true, GateAction: rapid.SampledFrom([]string{"allow", "deny"}).Draw(rt, "action"),
			GateReason: text.Draw(rt, "reason"), GateSource: text.Draw(rt, "source"), GateRule: text.Draw(rt, "rule"),
			Rewritten: true, RewrittenBy: "norm", OriginalInputSha256: gate.InputHash([]byte(text.Draw(rt, "input")))}
		second := first
		second.StartMs, second.EndMs = t0+2, t0+3 // a later report
		differs := rapid.Bool().Draw(rt, "differs")
		if differs {
			switch rapid.IntRange(0, 7).Draw(rt, "field") {
			case 0:
				second.GateAction = map[string]string{"allow": "deny", "deny": "allow"}[first.GateAction]
			case 1:
				second.GateReason += "x"
			case 2:
				second.GateSource += "x"
			case 3:
				second.GateRule += "x"
			case 4:
				second.GateError = "classifier_error"
			case 5:
				second.OriginalInputSha256 = gate.InputHash([]byte(text.Draw(rt, "other input") + "x"))
			case 6:
				second.Calls = 2
			case 7:
				second.Gated, second.GateAction, second.GateStage = false, "deny", "input"
			}
		}
		require.NoError(rt, b.Handle(ctx, first))
		require.NoError(rt, b.Handle(ctx, second))
		want := 1
		if differs {
			want = 2
		}
		if got := len(flushed(t, p, mem)); got != want {
			rt.Fatalf("%d spans for %+v then %+v, want %d", got, first, second, want)
		}
		if got := b.Stats().Duplicates; got != int64(2-want) {
			rt.Fatalf("%d duplicates, want %d", got, 2-want)
		}
	})
}

func bashAndDeploy(t *testing.T) *executor.Registry {
	t.Helper()
	ok := func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil }
	reg, err := executor.NewRegistry(
		executor.Tool{Name: "bash", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`), Execute: ok},
		executor.Tool{Name: "deploy", Execute: ok})
	require.NoError(t, err)
	return reg
}
