package otelbridge

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	bashclassify "github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge/bridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// hostileProvider is Setup exporting over real OTLP/gRPC to an in-process
// receiver, everything sampled, one batch for everything the test makes
// (batches are flushed by the test), export errors collected.
func hostileProvider(t *testing.T) (*Provider, *receiver, func() []error) {
	t.Helper()
	r := startReceiver(t)
	var mu sync.Mutex
	var errs []error
	p, err := Setup(context.Background(), Config{
		Endpoint: r.addr, Insecure: true, ServiceName: "hostile", Sampling: sampling.Config{Setting: sampling.MustParse("all")},
		Timeout: 10 * time.Second,
		Batch: BatchConfig{BatchTimeout: time.Hour, BatchSize: 512, ErrorHandler: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
		}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p, r, func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), errs...)
	}
}

// flushTo flushes p (bounded) and returns the spans the receiver got, by
// gen_ai.tool.call.id, and the number of export requests.
func flushTo(t *testing.T, p *Provider, r *receiver) (map[string]map[string]string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = p.ForceFlush(ctx) // a failed export shows in the counts below
	byID := map[string]map[string]string{}
	for _, s := range r.spans() {
		attrs := kvMap(s.span.GetAttributes())
		attrs["span.name"] = s.span.GetName()
		byID[attrs[string(semconv.GenAIToolCallIDKey)]] = attrs
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return byID, len(r.traces)
}

// TestHostileBytesSurviveOTLPExport is the fault of the old main, on the
// real OTLP path: the bash classifier's reason for `rm -rf ~/$'\xc3'`
// carried a raw 0xC3 byte, OTLP's protobuf encoding rejected it, and the
// whole batch — the denial and its neighbours — was lost (0 of 4 spans).
// Now all four calls of one batch arrive, and the reason shows the byte
// as \xc3.
func TestHostileBytesSurviveOTLPExport(t *testing.T) {
	ctx := context.Background()
	p, r, exportErrors := hostileProvider(t)
	bash, err := bashclassify.BashGate()
	require.NoError(t, err)
	schema := json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)
	reg, err := executor.NewRegistry(
		executor.Tool{Name: "bash", InputSchema: schema,
			Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
				return executor.Text("a.txt b.txt"), nil
			}},
		executor.Tool{Name: "read_blob", InputSchema: schema,
			Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
				return executor.Text("\xff\xfe\x00\x01PNG\x89"), nil
			}},
	)
	require.NoError(t, err)
	ex, err := executor.New(reg, executor.WithTracerProvider(p), executor.WithGates(bash), executor.WithRecordContent(true))
	require.NoError(t, err)
	a, err := ex.Agent("coder", executor.AgentPresets(executor.PresetAll))
	require.NoError(t, err)
	run := a.Run("run-hostile")

	calls := []struct {
		id, tool, input string
		check           func(t *testing.T, attrs map[string]string)
	}{
		{"c-rm", "bash", `{"command":"rm -rf ~/$'\\xc3'"}`, func(t *testing.T, attrs map[string]string) {
			assert.Equal(t, "deny", attrs[string(gate.AttrAction)])
			assert.Contains(t, attrs[string(gate.AttrReason)], `(~/\xc3)`, "the raw byte, escaped")
		}},
		{"c-blob", "read_blob", `{"command":"cat image.png"}`, func(t *testing.T, attrs map[string]string) {
			assert.Equal(t, "allow", attrs[string(gate.AttrAction)])
			assert.Equal(t, "\\xff\\xfe\x00\x01PNG\\x89", attrs[string(semconv.GenAIToolCallResultKey)])
		}},
		{"c-unknown", "\xc3\x28evil", `{}`, func(t *testing.T, attrs map[string]string) {
			assert.Equal(t, `\xc3(evil`, attrs[string(semconv.GenAIToolNameKey)])
			assert.Equal(t, executor.ErrorTypeToolNotFound, attrs[string(semconv.ErrorTypeKey)])
		}},
		{"c-ls", "bash", `{"command":"ls"}`, func(t *testing.T, attrs map[string]string) {
			assert.Equal(t, "allow", attrs[string(gate.AttrAction)])
			assert.Equal(t, "a.txt b.txt", attrs[string(semconv.GenAIToolCallResultKey)])
		}},
	}
	for _, c := range calls {
		run.Execute(ctx, executor.ToolCall{ID: c.id, Name: c.tool, Input: json.RawMessage(c.input)})
	}
	got, requests := flushTo(t, p, r)
	assert.Empty(t, exportErrors())
	st := p.Stats().Batch
	t.Logf("spans arrived %d/%d in %d export request(s); exported %d, export failed %d", len(got), len(calls), requests, st.Exported, st.ExportFailed)
	require.Len(t, got, len(calls), "every span of the batch arrives")
	assert.Equal(t, 1, requests, "one batch")
	assert.Zero(t, p.Stats().Lost())
	for _, c := range calls {
		t.Run(c.id, func(t *testing.T) {
			require.Contains(t, got, c.id)
			c.check(t, got[c.id])
		})
	}
}

// hostileEvent builds a bridged event from fuzzed strings: sel picks the
// type and the shape, and the strings are dealt to every string field
// (rotated by rot), so that each field meets each string.
func hostileEvent(sel uint16, rot uint8, strs []string) bridge.Event {
	ev := bridge.Event{RunID: "run", Agent: "agent", Model: "m", Tool: "bash", StartMs: t0, EndMs: t0 + 10, Tokens: &bridge.TokenUsage{InputTokens: 1, OutputTokens: 2}}
	ev.Type = []bridge.EventType{bridge.EventAgent, bridge.EventLLMCall, bridge.EventToolCall, bridge.EventTask}[sel&3]
	ev.GateAction = []string{"", "allow", "deny", strs[0]}[sel>>2&3]
	ev.Gated = sel>>4&1 == 1
	ev.IsError = sel>>5&1 == 1
	ev.Success = []*bool{nil, ptr(true), ptr(false), nil}[sel>>6&3]
	ev.Rewritten = sel>>8&1 == 1
	ev.Rounds = int(sel >> 9 & 3)
	for i := range int(sel >> 11 & 3) {
		ev.Verdicts = append(ev.Verdicts, gate.Verdict{Action: []gate.Action{gate.ActionAllow, gate.ActionDeny, gate.ActionAsk}[i%3], Rewrote: i == 1})
	}
	fields := []*string{&ev.RunID, &ev.Agent, &ev.TaskID, &ev.Model, &ev.Tool, &ev.ToolCallID, &ev.ErrorType,
		&ev.GateReason, &ev.GateSource, &ev.GateError, &ev.Approval, &ev.Approver, &ev.RiskLevel, &ev.GateRule,
		&ev.RewrittenBy, &ev.OriginalInputSha256, &ev.TaskTitle}
	for i := range ev.Verdicts {
		v := &ev.Verdicts[i]
		fields = append(fields, &v.Gate, (*string)(&v.Risk), &v.Rule, &v.Reason, &v.ErrorKind)
	}
	keepIDs := sel>>13&1 == 1 // identifying fields stay valid, so that more events pass Validate
	for i, p := range fields {
		if keepIDs && i < 6 && *p != "" {
			continue
		}
		*p = strs[(i+int(rot))%len(strs)]
	}
	if sel>>14&1 == 1 {
		ev.TaskID = ""
	}
	return ev
}

// hostileEventSeeds: invalid UTF-8 and oversized strings in each field,
// including gate.approval (recorded unescaped before, failing the batch).
func hostileEventSeeds() [][7]string {
	long := strings.Repeat("\xc3(", 3000)
	return [][7]string{
		{"", "\xc3", "\xff\xfe", "\xed\xa0\x80", "\xc0\xaf", long, "ok"},
		{"approved\xff", "bash\xc3", "id-\xfe", "deny \xc3", "src\xc0", "bot\xff", "high\xff"},
		{long, long, long, long, long, long, long},
		{"agent", "run", "task", "model", "tool", "call", "reason"},
	}
}

// FuzzBridgeSpanExports: whatever strings an after-the-fact event carries
// (run, agent, task, model, tool and call IDs, error type, every decision
// field, every verdict field, the task title), bridge.Bridge.Handle either
// rejects the event (bridge.ErrInvalidEvent, no span) or emits exactly one span
// that survives OTLP export: valid UTF-8 everywhere, bounded names, and
// the OTLP request passes proto.Marshal.
func FuzzBridgeSpanExports(f *testing.F) {
	for i, s := range hostileEventSeeds() {
		for _, sel := range []uint16{0, 1, 2, 3, 2 | 2<<2 | 1<<4 | 1<<5 | 3<<9 | 3<<11, 2 | 1<<2 | 1<<8 | 2<<11 | 1<<13, 3 | 2<<6 | 1<<13} {
			f.Add(sel, uint8(i), s[0], s[1], s[2], s[3], s[4], s[5], s[6])
		}
	}
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem), sdktrace.WithIDGenerator(bridge.NewIDGenerator()))
	f.Fuzz(func(t *testing.T, sel uint16, rot uint8, s0, s1, s2, s3, s4, s5, s6 string) {
		mem.Reset()
		b := bridge.New(tp, bridge.Config{ToolCalls: bridge.NewToolCallIndex(1)})
		ev := hostileEvent(sel, rot, []string{s0, s1, s2, s3, s4, s5, s6})
		err := b.Handle(context.Background(), ev)
		if ev.Validate() != nil {
			require.ErrorIs(t, err, bridge.ErrInvalidEvent)
			require.Empty(t, mem.GetSpans(), "an invalid event emits nothing")
			return
		}
		require.NoError(t, err)
		spans := mem.GetSpans()
		require.Len(t, spans, 1, "one span per event")
		checkBridgedSpan(t, spans[0])
	})
}

func checkBridgedSpan(t *testing.T, s tracetest.SpanStub) {
	t.Helper()
	if err := testenv.CheckExportable(context.Background(), s); err != nil {
		t.Fatalf("bridged span is not exportable: %.2000v", err)
	}
	if len(s.Name) > len("invoke_agent ")+gate.MaxNameBytes {
		t.Fatalf("span name of %d bytes", len(s.Name))
	}
	if len(s.Status.Description) > gate.MaxNameBytes {
		t.Fatalf("status description of %d bytes", len(s.Status.Description))
	}
	for _, kv := range s.Attributes {
		switch {
		case kv.Key == gate.AttrReason:
			if n := len(kv.Value.AsString()); n > gate.MaxTextBytes {
				t.Fatalf("%s: %d bytes", kv.Key, n)
			}
		case kv.Key == gate.AttrVerdicts:
			for _, v := range kv.Value.AsStringSlice() {
				if len(v) > 3*gate.MaxNameBytes+16 {
					t.Fatalf("verdict of %d bytes", len(v))
				}
			}
		default:
			if n := len(kv.Value.Emit()); n > gate.MaxNameBytes {
				t.Fatalf("%s: %d bytes, over %d", kv.Key, n, gate.MaxNameBytes)
			}
		}
	}
}

// TestHostileEventsSurviveOTLPExport sends bridged events with hostile
// bytes in every field, with a normal event in the same batch, over real
// OTLP/gRPC: every span arrives.
func TestHostileEventsSurviveOTLPExport(t *testing.T) {
	p, r, exportErrors := hostileProvider(t)
	b := bridge.New(p, bridge.Config{})
	events := []bridge.Event{
		{Type: bridge.EventToolCall, RunID: "run-h", Agent: "coder", StartMs: t0, EndMs: t0 + 5, Tool: "bash", ToolCallID: "e-approval",
			Gated: true, GateAction: "deny", GateReason: "declined", GateSource: "policy", Approval: "declined\xff", Approver: "bot\xc3"},
		{Type: bridge.EventToolCall, RunID: "run-h\xfe", Agent: "coder\xc3", TaskID: "t\xed\xa0\x80", StartMs: t0, EndMs: t0 + 5,
			Tool: "bash\xc3", ToolCallID: "e-ids", IsError: true, ErrorType: "tool\xff", Gated: true, GateAction: "allow",
			GateReason: "ok \xc3", GateSource: "s\xc0\xaf", RiskLevel: "high\xff", GateRule: "r\xfe",
			Rewritten: true, RewrittenBy: "rw\xff", OriginalInputSha256: "\xde\xad",
			Verdicts: []gate.Verdict{{Gate: "g\xff", Action: gate.ActionAsk, Risk: "r\xff", Rule: "x|\xc3"}, {Gate: "h", Action: gate.ActionAllow}}},
		{Type: bridge.EventToolCall, RunID: "run-h", Agent: "coder", StartMs: t0, EndMs: t0 + 5, Tool: "ls", ToolCallID: "e-normal",
			Gated: true, GateAction: "allow"},
		{Type: bridge.EventLLMCall, RunID: "run-h", Agent: "coder", StartMs: t0, EndMs: t0 + 5, Model: "m\xc3", ToolCallID: "e-llm"},
		{Type: bridge.EventTask, RunID: "run-h", TaskID: "t\xff", TaskTitle: "title \xc3", StartMs: t0, EndMs: t0 + 9, Success: ptr(false)},
		{Type: bridge.EventAgent, RunID: "run-h", Agent: "coder\xfe", StartMs: t0, EndMs: t0 + 9},
	}
	for _, ev := range events {
		require.NoError(t, b.Handle(context.Background(), ev))
	}
	_, requests := flushTo(t, p, r)
	spans := r.spans()
	assert.Empty(t, exportErrors())
	t.Logf("bridged spans arrived %d/%d in %d export request(s)", len(spans), len(events), requests)
	require.Len(t, spans, len(events), "every span of the batch arrives")
	assert.Zero(t, p.Stats().Lost())
	byName := map[string]map[string]string{}
	for _, s := range spans {
		byName[s.span.GetName()] = kvMap(s.span.GetAttributes())
	}
	approval := byName["execute_tool bash"]
	assert.Equal(t, `declined\xff`, approval[string(gate.AttrApproval)])
	assert.Equal(t, `bot\xc3`, approval[string(gate.AttrApprover)])
	ids := byName[`execute_tool bash\xc3`]
	require.NotNil(t, ids, "span names: %v", keys(byName))
	assert.Equal(t, `high\xff`, ids[string(gate.AttrRiskLevel)])
	assert.Equal(t, `run-h\xfe`, ids[string(gate.AttrRunID)])
	assert.Contains(t, byName, `task title \xc3`)
	assert.Contains(t, byName, `chat m\xc3`)
	assert.Contains(t, byName, `invoke_agent coder\xfe`)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestToolCallIndexBoundsHostileIDs: tool-call IDs are the model's, and an
// after-the-fact event may carry one of any length (bridge.Bridge.Handle takes no
// size limit, bridge.ParseEvent 1 MiB). The index keeps up to its capacity of
// them, so it must not keep their bytes: 64 IDs of 1 MiB each stay a few
// bytes each, and the index still tells each ID from one differing in a
// single byte.
func TestToolCallIndexBoundsHostileIDs(t *testing.T) {
	const n, size = 64, 1 << 20
	id := func(i int, mid byte) string {
		b := make([]byte, size)
		for j := range b {
			b[j] = byte('a' + (i+j)%26)
		}
		b[size/2] = mid
		copy(b, strconv.Itoa(i)+"-")
		return string(b)
	}
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	fill := func() *bridge.ToolCallIndex {
		x := bridge.NewToolCallIndex(0)
		for i := range n {
			x.Add(bridge.ToolCallKey{Agent: "a", RunID: "r", Tool: "bash", ID: id(i, 'x')})
		}
		return x
	}
	x := fill()
	with := heap()
	runtime.KeepAlive(x)
	x = nil
	without := heap()
	retained := with - without
	t.Logf("index of %d IDs of %d bytes retains %d bytes", n, size, retained)
	assert.Less(t, retained, int64(n*size/8), "the index keeps the IDs' bytes")
	x = fill()
	for i := range n {
		assert.True(t, x.Has(bridge.ToolCallKey{Agent: "a", RunID: "r", Tool: "bash", ID: id(i, 'x')}), "ID %d", i)
		assert.False(t, x.Has(bridge.ToolCallKey{Agent: "a", RunID: "r", Tool: "bash", ID: id(i, 'y')}), "ID %d with one byte changed", i)
	}
	short := bridge.ToolCallKey{Agent: "a", RunID: "r", Tool: "bash", ID: "call-1"}
	x.Add(short)
	assert.True(t, x.Has(short))
	runtime.KeepAlive(x)
}

// t0 is a fixed event time (epoch ms).
const t0 = 1_764_000_000_000.0

func ptr[T any](v T) *T { return &v }
