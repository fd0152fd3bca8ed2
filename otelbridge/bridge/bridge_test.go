package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// t0 is the run's start, in epoch ms.
const t0 = 1_764_000_000_000.0

func ptr[T any](v T) *T { return &v }

// runEvents is one task run by one agent, in completion order (as
// open-multi-agent's onTrace reports them): the calls, then the agent, then
// the task.
func runEvents(run string) []Event {
	return []Event{
		{Type: EventLLMCall, RunID: run, Agent: "planner", TaskID: "t1", StartMs: t0 + 10, EndMs: t0 + 900,
			Model: "claude-x", Turn: 1, Tokens: &TokenUsage{InputTokens: 1200, OutputTokens: 85}},
		{Type: EventToolCall, RunID: run, Agent: "planner", TaskID: "t1", StartMs: t0 + 910, EndMs: t0 + 950,
			Tool: "bash", ToolCallID: run + "-call-1", Gated: true, GateAction: "allow", GateSource: "classify.bash", RiskLevel: "safe"},
		{Type: EventToolCall, RunID: run, Agent: "planner", TaskID: "t1", StartMs: t0 + 960, EndMs: t0 + 961.5,
			Tool: "bash", ToolCallID: run + "-call-2", IsError: true, Gated: true, GateAction: "deny",
			GateReason: "rm -rf outside the workspace", GateSource: "classify.bash", RiskLevel: "high"},
		{Type: EventLLMCall, RunID: run, Agent: "planner", TaskID: "t1", StartMs: t0 + 970, EndMs: t0 + 1500,
			Model: "claude-x", Turn: 2, Tokens: &TokenUsage{InputTokens: 1400, OutputTokens: 40}},
		{Type: EventAgent, RunID: run, Agent: "planner", TaskID: "t1", StartMs: t0 + 5, EndMs: t0 + 1510,
			Turns: 2, ToolCalls: 2, Tokens: &TokenUsage{InputTokens: 2600, OutputTokens: 125}},
		{Type: EventTask, RunID: run, TaskID: "t1", TaskTitle: "clean up", StartMs: t0, EndMs: t0 + 1520,
			Success: ptr(true)},
	}
}

// testProvider is the tracer provider otelbridge.Setup builds, without
// the export part: the bridge's ID generator and tool-call index, then the
// sampling processor, recording into memory. Like *otelbridge.Provider it
// has a ToolCalls method, which New finds.
type testProvider struct {
	*sdktrace.TracerProvider
	index *ToolCallIndex
}

func (p *testProvider) ToolCalls() *ToolCallIndex { return p.index }

// bridged returns a bridge (configured by cfg) on a testProvider with
// sampling setting s, recording into memory.
func bridged(t *testing.T, s sampling.Setting, cfg ...Config) (*Bridge, *testProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	mem := tracetest.NewInMemoryExporter()
	sp, err := sampling.NewProcessor(sdktrace.NewSimpleSpanProcessor(mem), sampling.Config{Setting: s})
	require.NoError(t, err)
	index := NewToolCallIndex(0)
	p := &testProvider{index: index, TracerProvider: sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(NewIDGenerator()),
		sdktrace.WithSpanProcessor(index),
		sdktrace.WithSpanProcessor(sp),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
	)}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	var c Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	return New(p, c), p, mem
}

func flushed(t *testing.T, p *testProvider, mem *tracetest.InMemoryExporter) tracetest.SpanStubs {
	t.Helper()
	require.NoError(t, p.ForceFlush(context.Background()))
	return mem.GetSpans()
}

// tree maps each span name to its parent's name ("" for a root, "?" for a
// parent that was not emitted).
func tree(spans tracetest.SpanStubs) map[string]string {
	byID := map[trace.SpanID]string{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s.Name
	}
	out := map[string]string{}
	for _, s := range spans {
		switch {
		case !s.Parent.IsValid():
			out[s.Name] = ""
		case byID[s.Parent.SpanID()] != "":
			out[s.Name] = byID[s.Parent.SpanID()]
		default:
			out[s.Name] = "?"
		}
	}
	return out
}

func byName(spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	return tracetest.SpanStub{}
}

func attrMap(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestBridgeSpanShape(t *testing.T) {
	b, p, mem := bridged(t, sampling.MustParse("all"), Config{ProviderName: "anthropic"})
	for _, ev := range runEvents("r1") {
		require.NoError(t, b.Handle(context.Background(), ev))
	}
	spans := flushed(t, p, mem)
	require.Len(t, spans, 6)

	// The span names and parentage; two chat spans and two tool spans share
	// names, so check the parent of each by name first.
	for _, s := range spans {
		assert.Equal(t, spans[0].SpanContext.TraceID(), s.SpanContext.TraceID(), "one trace per run")
		assert.Equal(t, ScopeName, s.InstrumentationScope.Name)
	}
	assert.Equal(t, map[string]string{
		"task clean up":        "",
		"invoke_agent planner": "task clean up",
		"chat claude-x":        "invoke_agent planner",
		"execute_tool bash":    "invoke_agent planner",
	}, tree(spans))

	// Real start and end times, to the microsecond.
	for i, ev := range runEvents("r1") {
		s := spans[i] // the exporter keeps arrival order
		assert.Equal(t, ev.Start(), s.StartTime, s.Name)
		assert.Equal(t, ev.End(), s.EndTime, s.Name)
	}
	assert.Equal(t, 1500*time.Microsecond, spans[2].EndTime.Sub(spans[2].StartTime), "fractional milliseconds kept")

	chat := attrMap(spans[0].Attributes)
	assert.Equal(t, trace.SpanKindClient, spans[0].SpanKind)
	assert.Equal(t, "chat", chat[semconv.GenAIOperationNameKey].AsString())
	assert.Equal(t, "claude-x", chat[semconv.GenAIRequestModelKey].AsString())
	assert.Equal(t, "anthropic", chat[semconv.GenAIProviderNameKey].AsString())
	assert.Equal(t, int64(1200), chat[semconv.GenAIUsageInputTokensKey].AsInt64())
	assert.Equal(t, int64(85), chat[semconv.GenAIUsageOutputTokensKey].AsInt64())
	assert.Equal(t, "r1", chat[gate.AttrRunID].AsString())
	assert.Equal(t, "t1", chat[gate.AttrTaskID].AsString())

	allow := attrMap(spans[1].Attributes)
	assert.Equal(t, "execute_tool", allow[semconv.GenAIOperationNameKey].AsString())
	assert.Equal(t, "bash", allow[semconv.GenAIToolNameKey].AsString())
	assert.Equal(t, "r1-call-1", allow[semconv.GenAIToolCallIDKey].AsString())
	assert.True(t, allow[gate.AttrGated].AsBool())
	assert.Equal(t, "allow", allow[gate.AttrAction].AsString())
	assert.Equal(t, "safe", allow[gate.AttrRiskLevel].AsString())
	assert.Equal(t, codes.Unset, spans[1].Status.Code)
	_, hasPriority := allow[gate.AttrSamplingPriority]
	assert.False(t, hasPriority)

	deny := attrMap(spans[2].Attributes)
	assert.Equal(t, "deny", deny[gate.AttrAction].AsString())
	assert.Equal(t, "rm -rf outside the workspace", deny[gate.AttrReason].AsString())
	assert.Equal(t, int64(1), deny[gate.AttrSamplingPriority].AsInt64())
	assert.Equal(t, gate.ErrorTypeGateDenied, deny[semconv.ErrorTypeKey].AsString())
	assert.Equal(t, codes.Error, spans[2].Status.Code)

	agent := attrMap(spans[4].Attributes)
	assert.Equal(t, "invoke_agent", agent[semconv.GenAIOperationNameKey].AsString())
	assert.Equal(t, "planner", agent[semconv.GenAIAgentNameKey].AsString())
	assert.Equal(t, int64(2600), agent[semconv.GenAIUsageInputTokensKey].AsInt64())
	assert.Equal(t, trace.SpanKindInternal, spans[4].SpanKind)

	for _, s := range spans {
		assert.True(t, attrMap(s.Attributes)[AttrBridged].AsBool())
	}
	assert.Equal(t, Stats{Events: 6, Spans: 6}, b.Stats())
}

func TestBridgeParentageAnyOrder(t *testing.T) {
	want := map[string]string{
		"task clean up":        "",
		"invoke_agent planner": "task clean up",
		"chat claude-x":        "invoke_agent planner",
		"execute_tool bash":    "invoke_agent planner",
	}
	reversed := runEvents("r")
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	orders := map[string][]Event{"completion order": runEvents("r"), "parents first": reversed}
	for seed := range uint64(6) {
		evs := runEvents("r")
		rand.New(rand.NewPCG(seed, 7)).Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
		orders["shuffled "+string(rune('a'+seed))] = evs
	}
	for name, evs := range orders {
		t.Run(name, func(t *testing.T) {
			b, p, mem := bridged(t, sampling.MustParse("all"))
			for _, ev := range evs {
				require.NoError(t, b.Handle(context.Background(), ev))
			}
			spans := flushed(t, p, mem)
			require.Len(t, spans, 6)
			// Check every span, not only one per name.
			ids := map[trace.SpanID]string{}
			for _, s := range spans {
				ids[s.SpanContext.SpanID()] = s.Name
			}
			for _, s := range spans {
				if want[s.Name] == "" {
					assert.False(t, s.Parent.IsValid(), s.Name)
					continue
				}
				assert.Equal(t, want[s.Name], ids[s.Parent.SpanID()], "parent of %s", s.Name)
			}
			assert.Zero(t, b.Stats().Misparented)
		})
	}
}

func TestBridgeRetriesGetTheirOwnAgentSpan(t *testing.T) {
	// The same agent runs the same task twice (a retry). Children are
	// matched to the agent run that contains them, whether they arrive
	// before their agent event (completion order) or after it.
	inv := func(start float64, tool string) []Event {
		return []Event{
			{Type: EventToolCall, RunID: "r", Agent: "a", TaskID: "t", StartMs: start + 1, EndMs: start + 2, Tool: tool},
			{Type: EventAgent, RunID: "r", Agent: "a", TaskID: "t", StartMs: start, EndMs: start + 10},
		}
	}
	first, second := inv(t0, "first"), inv(t0+100, "second")
	orders := map[string][]Event{
		"completion order": append(append([]Event{}, first...), second...),
		"agents first":     {first[1], second[1], second[0], first[0]},
	}
	for name, evs := range orders {
		t.Run(name, func(t *testing.T) {
			b, p, mem := bridged(t, sampling.MustParse("all"))
			for _, ev := range evs {
				require.NoError(t, b.Handle(context.Background(), ev))
			}
			spans := flushed(t, p, mem)
			agents := map[trace.SpanID]time.Time{}
			for _, s := range spans {
				if s.Name == "invoke_agent a" {
					agents[s.SpanContext.SpanID()] = s.StartTime
				}
			}
			require.Len(t, agents, 2)
			for _, s := range spans {
				switch s.Name {
				case "execute_tool first":
					assert.Equal(t, first[1].Start(), agents[s.Parent.SpanID()])
				case "execute_tool second":
					assert.Equal(t, second[1].Start(), agents[s.Parent.SpanID()])
				}
			}
		})
	}
}

func TestBridgeNeverDuplicatesExecutorSpans(t *testing.T) {
	b, p, mem := bridged(t, sampling.MustParse("all"))
	ctx := context.Background()
	// The executor's live span for call-1, attributes at start and end as
	// in executor/execute.go; its ToolCallTrace event arrives afterwards.
	_, live := p.Tracer("github.com/toolgate/toolgate/executor").Start(ctx, "execute_tool bash",
		trace.WithAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName("bash"), semconv.GenAIToolCallID("call-1")))
	live.SetAttributes(semconv.GenAIAgentName("a"), gate.AttrRunID.String("r"))
	allowed := gate.Record{Gated: true, Action: gate.ActionAllow}
	live.SetAttributes(allowed.Attributes(nil, 0)...)
	live.End()

	call := func(id, spanID string) Event {
		return Event{Type: EventToolCall, RunID: "r", Agent: "a", StartMs: t0, EndMs: t0 + 1, Tool: "bash",
			ToolCallID: id, SpanID: spanID, Gated: true, GateAction: "allow"}
	}
	// The model reuses call-1 for another call, which the gate denied: a
	// different call, emitted.
	reused := call("call-1", "")
	reused.GateAction, reused.GateReason, reused.IsError = "deny", "rm -rf ~: deletes the home directory", true
	// A framework's report of call-1 without any decision: the call the
	// executor traced (it drops no decision).
	bare := Event{Type: EventToolCall, RunID: "r", Agent: "a", StartMs: t0, EndMs: t0 + 1, Tool: "bash", ToolCallID: "call-1"}
	tests := []struct {
		name string
		ev   Event
		emit bool
	}{
		{"same tool-call ID and decision as the live span", call("call-1", ""), false},
		{"same tool-call ID as the live span, another decision", reused, true},
		{"the reused ID's denial delivered again", reused, false},
		{"same tool-call ID, no decision", bare, false},
		{"event that carries its span", call("call-9", live.SpanContext().SpanID().String()), false},
		{"a call the executor did not run", call("call-2", ""), true},
		{"the same event delivered again", call("call-2", ""), false},
		{"a call without an ID", call("", ""), true},
	}
	want := 1 // the live span
	for _, tt := range tests {
		require.NoError(t, b.Handle(ctx, tt.ev), tt.name)
		if tt.emit {
			want++
		}
		assert.Len(t, flushed(t, p, mem), want, tt.name)
	}
	assert.Equal(t, int64(5), b.Stats().Duplicates)
	ids := map[string]int{}
	for _, s := range mem.GetSpans() {
		ids[attrMap(s.Attributes)[semconv.GenAIToolCallIDKey].AsString()]++
	}
	assert.Equal(t, map[string]int{"call-1": 2, "call-2": 1, "": 1}, ids, "one span per tool call")
}

func TestBridgeRunUnderCallerSpan(t *testing.T) {
	b, p, mem := bridged(t, sampling.MustParse("all"))
	ctx, parent := p.Tracer("app").Start(context.Background(), "POST /runs")
	for _, ev := range runEvents("r1") {
		require.NoError(t, b.Handle(ctx, ev))
	}
	parent.End()
	spans := flushed(t, p, mem)
	task := byName(spans, "task clean up")
	assert.Equal(t, parent.SpanContext().SpanID(), task.Parent.SpanID())
	for _, s := range spans {
		assert.Equal(t, parent.SpanContext().TraceID(), s.SpanContext.TraceID())
	}
}

func TestBridgeDenyOnlyKeepsAgentAndTask(t *testing.T) {
	// Through the sampling processor: the bridged agent and task spans end
	// after their calls, so deny-only keeps the denial with its context.
	b, p, mem := bridged(t, sampling.MustParse("deny-only"))
	for _, ev := range runEvents("r1") {
		require.NoError(t, b.Handle(context.Background(), ev))
	}
	// A second run without denials leaves nothing.
	for _, ev := range runEvents("r2") {
		if ev.GateAction == "deny" {
			ev.GateAction, ev.IsError = "allow", false
		}
		require.NoError(t, b.Handle(context.Background(), ev))
	}
	got := names(flushed(t, p, mem))
	assert.Equal(t, []string{"execute_tool bash", "invoke_agent planner", "task clean up"}, got)
	deny := byName(mem.GetSpans(), "execute_tool bash")
	assert.Equal(t, "deny", attrMap(deny.Attributes)[gate.AttrAction].AsString())
}

func TestBridgeRejectsInvalidEvents(t *testing.T) {
	ok := Event{Type: EventToolCall, RunID: "r", Agent: "a", StartMs: t0, EndMs: t0 + 1, Tool: "bash"}
	mut := func(f func(*Event)) Event { e := ok; f(&e); return e }
	tests := []struct {
		name string
		ev   Event
	}{
		{"unknown type", mut(func(e *Event) { e.Type = "handoff" })},
		{"no run", mut(func(e *Event) { e.RunID = "" })},
		{"no agent", mut(func(e *Event) { e.Agent = "" })},
		{"no tool", mut(func(e *Event) { e.Tool = "" })},
		{"ends before start", mut(func(e *Event) { e.EndMs = t0 - 1 })},
		{"zero time", mut(func(e *Event) { e.StartMs = 0 })},
		{"far future", mut(func(e *Event) { e.EndMs = 1e15 })},
		{"bad action", mut(func(e *Event) { e.GateAction = "maybe" })},
		{"gated without action", mut(func(e *Event) { e.Gated = true })},
		{"llm without model", mut(func(e *Event) { e.Type = EventLLMCall })},
		{"task without id", mut(func(e *Event) { e.Type = EventTask })},
		{"negative tokens", mut(func(e *Event) { e.Tokens = &TokenUsage{InputTokens: -1} })},
		{"negative calls", mut(func(e *Event) { e.Calls = -1 })},
	}
	b, p, mem := bridged(t, sampling.MustParse("all"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, b.Handle(context.Background(), tt.ev), ErrInvalidEvent)
		})
	}
	assert.Empty(t, flushed(t, p, mem), "an invalid event emits nothing")
	assert.Equal(t, int64(len(tests)), b.Stats().Invalid)
	require.NoError(t, b.Handle(context.Background(), ok))
}

func TestBridgeBoundsRuns(t *testing.T) {
	b, _, _ := bridged(t, sampling.MustParse("all"), Config{MaxRuns: 2})
	for _, run := range []string{"a", "b", "c", "a"} {
		require.NoError(t, b.Handle(context.Background(), runEvents(run)[0]))
	}
	assert.Equal(t, int64(2), b.Stats().RunsEvicted, "a is evicted by c, then b by a")
	b.EndRun("a")
	b.EndRun("missing")
	b.mu.Lock()
	assert.Len(t, b.runs, 1)
	b.mu.Unlock()
}

func TestBridgeCountsMisparentingWithoutIDGenerator(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem)) // the SDK's random IDs
	b := New(tp, Config{})
	for _, ev := range runEvents("r") {
		require.NoError(t, b.Handle(context.Background(), ev))
	}
	assert.Equal(t, int64(2), b.Stats().Misparented, "the agent and task spans could not take their preset IDs")
	assert.Contains(t, tree(mem.GetSpans()), "chat claude-x")
	assert.Equal(t, "?", tree(mem.GetSpans())["chat claude-x"])
}

func TestParseEventOpenMultiAgentJSON(t *testing.T) {
	// The shape of open-multi-agent's onTrace events (src/types.ts), with
	// the onToolCall proposal's gate fields.
	lines := []string{
		`{"runId":"run-1","type":"llm_call","startMs":1764000000000,"endMs":1764000000900,"durationMs":900,"agent":"coder","model":"gpt-4o","turn":1,"tokens":{"input_tokens":10,"output_tokens":5}}`,
		`{"runId":"run-1","type":"tool_call","startMs":1764000000910,"endMs":1764000000950,"durationMs":40,"agent":"coder","tool":"bash","isError":true,"gated":true,"gateAction":"deny","gateReason":"sudo"}`,
		`{"runId":"run-1","type":"agent","startMs":1764000000000,"endMs":1764000001000,"durationMs":1000,"agent":"coder","turns":1,"tokens":{"input_tokens":10,"output_tokens":5},"toolCalls":1}`,
		`{"runId":"run-1","type":"task","startMs":1764000000000,"endMs":1764000001000,"durationMs":1000,"agent":"coder","taskId":"t-1","taskTitle":"fix","success":false,"retries":2,"unknownField":1}`,
	}
	b, p, mem := bridged(t, sampling.MustParse("all"))
	for _, l := range lines {
		require.NoError(t, b.HandleJSON(context.Background(), []byte(l)))
	}
	spans := flushed(t, p, mem)
	require.Len(t, spans, 4)
	task := byName(spans, "task fix")
	assert.Equal(t, codes.Error, task.Status.Code)
	assert.Equal(t, int64(2), attrMap(task.Attributes)[AttrTaskRetries].AsInt64())
	assert.Equal(t, "deny", attrMap(byName(spans, "execute_tool bash").Attributes)[gate.AttrAction].AsString())

	for _, bad := range []string{``, `{`, `[]`, `{"type":"agent"}`, `{"runId":"r","type":"agent","agent":"a","startMs":"soon","endMs":1}`,
		`{"runId":"r","type":"agent","agent":"a","startMs":1764000000000,"endMs":1764000000001} {}`} {
		err := b.HandleJSON(context.Background(), []byte(bad))
		assert.ErrorIs(t, err, ErrInvalidEvent, bad)
	}
}

func FuzzParseEvent(f *testing.F) {
	for _, ev := range runEvents("fuzz") {
		data, err := json.Marshal(ev)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"runId":"r","type":"task","taskId":"t","startMs":1,"endMs":1e300}`))
	f.Add([]byte(`{"runId":"r","type":"tool_call","agent":"a","tool":"x","startMs":-1,"endMs":NaN}`))
	f.Add([]byte(`{"runId":"r","type":"tool_call","agent":"a","tool":"x","startMs":1.5,"endMs":2,"gateAction":"deny"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := ParseEvent(data)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidEvent)
			return
		}
		require.NoError(t, ev.Validate())
		require.False(t, ev.End().Before(ev.Start()))
		// A parsed event survives a JSON round trip unchanged.
		again, err := json.Marshal(ev)
		require.NoError(t, err)
		back, err := ParseEvent(again)
		require.NoError(t, err)
		require.Equal(t, ev, back)
	})
}

func TestBridgeConcurrentRuns(t *testing.T) {
	b, p, mem := bridged(t, sampling.MustParse("all"))
	const workers, runs = 8, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range runs {
				evs := runEvents(fmt.Sprintf("w%d-r%d", w, r))
				rand.New(rand.NewPCG(uint64(w), uint64(r))).Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
				for _, ev := range evs {
					if err := b.Handle(context.Background(), ev); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	spans := flushed(t, p, mem)
	require.Len(t, spans, workers*runs*6)
	ids := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID()] = s
	}
	for _, s := range spans {
		if !s.Parent.IsValid() {
			assert.Equal(t, "task clean up", s.Name)
			continue
		}
		parent, ok := ids[s.Parent.SpanID()]
		require.True(t, ok, "parent of %s emitted", s.Name)
		assert.Equal(t, s.SpanContext.TraceID(), parent.SpanContext.TraceID())
		assert.Equal(t, attrMap(s.Attributes)[gate.AttrRunID], attrMap(parent.Attributes)[gate.AttrRunID], "same run")
	}
	assert.Zero(t, b.Stats().Misparented)
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, 0, len(spans))
	for _, s := range spans {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}
