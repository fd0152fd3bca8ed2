package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
)

// FuzzExecuteInput: whatever the model sends, the executor returns exactly
// one result for the call, never panics, and runs the tool only on input
// that is a JSON object matching the schema.
func FuzzExecuteInput(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `{}`, ``, `null`, `[]`, `{"command":1}`, `{"command":"a","x":1}`, `{"command":"\u0000"}`, `{`, `"str"`} {
		f.Add("bash", s)
	}
	f.Add("nope", `{}`)
	h := newHarness(f, executor.WithGates(gate.AllowAll()), executor.WithMaxOutputBytes(64), executor.WithRecordContent(true))
	run := h.agent(f).Run("fuzz")
	f.Fuzz(func(t *testing.T, name, input string) {
		before := h.calls["bash"].Load()
		res := run.Execute(context.Background(), executor.ToolCall{ID: "c", Name: name, Input: json.RawMessage(input)})
		if res.ToolCallID != "c" || res.ToolName != name {
			t.Fatalf("result for another call: %+v", res)
		}
		ran := h.calls["bash"].Load() - before
		if name != "bash" {
			if ran != 0 || !res.IsError {
				t.Fatalf("unknown tool %q ran or succeeded", name)
			}
			return
		}
		var m map[string]any
		var cmd string
		valid := json.Unmarshal([]byte(input), &m) == nil
		if valid {
			cmd, valid = m["command"].(string)
		}
		valid = valid && len(m) == 1 && cmd != "" && topLevelKeys(input) == 1 && utf8.ValidString(input)
		if valid != (ran == 1) {
			t.Fatalf("input %q: valid=%v but ran=%d (%s)", input, valid, ran, res.Content)
		}
		if ran == 1 && len(res.Content) > 64 { // the cap applies to tool output
			t.Fatalf("content over the cap: %d", len(res.Content))
		}
	})
}

// topLevelKeys counts the keys of a JSON object's top level, duplicates
// included.
func topLevelKeys(s string) int {
	dec := json.NewDecoder(strings.NewReader(s))
	depth, n, key := 0, 0, false
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				if depth == 1 {
					key = true
				}
				depth++
				if depth == 1 {
					key = true
				}
			} else {
				depth--
			}
		default:
			if depth == 1 {
				if _, ok := t.(string); ok && key {
					n++
					key = false
					continue
				}
				key = true
			}
		}
	}
}

// hostile is one call's worth of model-controlled strings, handed to the
// tool, the gate and the approver of hostileWorld through the call's
// context.
type hostile struct {
	sel                                    uint16 // see the hostile* bits
	name, id, input                        string
	output, reason, source, rule, approver string
	agent, run, task                       string
}

// Bits of hostile.sel.
const (
	hostileAction   = 0  // 2 bits: the fuzz gate allows, denies, asks, rewrites
	hostileRisk     = 2  // 2 bits: none, safe, review, high
	hostileGateMode = 4  // 2 bits: a decision, an error, a panic, a decision
	hostileToolMode = 6  // 2 bits: Content, error, IsError Content, panic
	hostileApprove  = 8  // 2 bits: approve, decline, error, answer for another call
	hostileInput    = 10 // 2 bits: raw input, {"command":"<raw>"}, rm of $'\xNN' bytes, JSON-encoded command
	hostileName     = 12 // 1 bit: the fuzzed name instead of "bash"
	hostileBashGate = 13 // 1 bit: classify.BashGate before the fuzz gate
	hostileLimit    = 14 // 1 bit: record limit 64 instead of the default
	hostileSource   = 15 // 1 bit: the decision names its source itself
)

func (h *hostile) bits(at, n uint) int { return int(h.sel>>at) & (1<<n - 1) }

type hostileKey struct{}

func hostileOf(ctx context.Context) *hostile {
	h, _ := ctx.Value(hostileKey{}).(*hostile)
	if h == nil {
		return &hostile{}
	}
	return h
}

// callInput is the call's raw input as the model sent it.
func (h *hostile) callInput() json.RawMessage {
	switch h.bits(hostileInput, 2) {
	case 1:
		return json.RawMessage(`{"command":"` + h.input + `"}`)
	case 2:
		// Valid JSON whose command the classifier decodes into the raw
		// bytes (bash ANSI-C quoting): the original fault.
		var b strings.Builder
		b.WriteString(`rm -rf ~/$'`)
		for i := 0; i < len(h.input); i++ {
			fmt.Fprintf(&b, `\x%02x`, h.input[i])
		}
		b.WriteString(`'`)
		raw, _ := json.Marshal(map[string]string{"command": b.String()})
		return raw
	case 3:
		raw, _ := json.Marshal(map[string]string{"command": h.input})
		return raw
	}
	return json.RawMessage(h.input)
}

func (h *hostile) toolName() string {
	if h.bits(hostileName, 1) == 1 {
		return h.name
	}
	return "bash"
}

// hostileGate answers with the call's hostile reason, source and rule.
func hostileGate(ctx context.Context, _ gate.ToolCallContext) (gate.Decision, error) {
	h := hostileOf(ctx)
	switch h.bits(hostileGateMode, 2) {
	case 1:
		return gate.Decision{}, errors.New(h.reason)
	case 2:
		panic(h.reason)
	}
	d := gate.Decision{Reason: h.reason, Rule: h.rule}
	switch h.bits(hostileAction, 2) {
	case 0:
		d.Action = gate.ActionAllow
	case 1:
		d.Action = gate.ActionDeny
	case 2:
		d.Action = gate.ActionAsk
	case 3:
		d.Action = gate.ActionAllow
		d.RewrittenInput = json.RawMessage(`{"command":"` + h.reason + `"}`)
	}
	d.Risk = []gate.RiskLevel{gate.RiskNone, gate.RiskSafe, gate.RiskReview, gate.RiskHigh}[h.bits(hostileRisk, 2)]
	if h.bits(hostileSource, 1) == 1 {
		d.Source = h.source
	}
	return d, nil
}

// hostileApprover answers asks with the call's hostile approver name and
// reason.
func hostileApprover(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
	h := hostileOf(ctx)
	switch h.bits(hostileApprove, 2) {
	case 1:
		return req.Decline(h.approver, h.reason), nil
	case 2:
		return gate.ApprovalResult{Approver: h.approver}, errors.New(h.reason)
	case 3:
		res := req.Approve(h.approver, h.reason)
		res.CallHash = h.reason
		return res, nil
	}
	return req.Approve(h.approver, h.reason), nil
}

// hostileTool returns the call's hostile output.
func hostileTool(ctx context.Context, _ json.RawMessage) (executor.Result, error) {
	h := hostileOf(ctx)
	switch h.bits(hostileToolMode, 2) {
	case 1:
		return executor.Result{}, errors.New(h.output)
	case 2:
		return executor.Result{Content: h.output, IsError: true}, nil
	case 3:
		panic(h.output)
	}
	return executor.Text(h.output), nil
}

// hostileWorld is two executors (default record limit and 64 bytes)
// recording content, with a bash tool and a schemaless tool that both
// return the hostile output, and an approver that answers with hostile
// strings.
type hostileWorld struct {
	ex    [2]*executor.Executor
	spans [2]*tracetest.InMemoryExporter
	bash  gate.Gate
}

func newHostileWorld(t testing.TB) *hostileWorld {
	t.Helper()
	w := &hostileWorld{}
	var err error
	w.bash, err = classify.BashGate()
	require.NoError(t, err)
	for i, limit := range []int{0, 64} {
		reg, err := executor.NewRegistry(
			executor.Tool{Name: "bash", InputSchema: json.RawMessage(bashSchema), Execute: hostileTool},
			executor.Tool{Name: "any", Execute: hostileTool})
		require.NoError(t, err)
		w.spans[i] = tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(w.spans[i]))
		w.ex[i], err = executor.New(reg, executor.WithTracerProvider(tp), executor.WithRecordContent(true),
			executor.WithRecordLimit(limit), executor.WithApprover(gate.ApproverFunc(hostileApprover)),
			executor.WithMeterProvider(sdkmetric.NewMeterProvider()))
		require.NoError(t, err)
	}
	return w
}

// call runs h's call and returns its result and its one span.
func (w *hostileWorld) call(t testing.TB, h hostile) (executor.ToolResult, tracetest.SpanStub, int) {
	t.Helper()
	i := h.bits(hostileLimit, 1)
	limit := []int{gate.MaxTextBytes, 64}[i]
	var gates []gate.Gate
	if h.bits(hostileBashGate, 1) == 1 {
		gates = append(gates, w.bash)
	}
	gates = append(gates, gate.Named(h.source, gate.Func(hostileGate)))
	agent := h.agent
	if agent == "" {
		agent = "agent" // the owner names agents; "" is refused at configuration
	}
	a, err := w.ex[i].Agent(agent, executor.AgentPresets(executor.PresetAll), executor.AgentGates(gates...))
	require.NoError(t, err)
	run := a.Run(h.run, executor.WithTask(h.task))
	w.spans[i].Reset()
	ctx := context.WithValue(context.Background(), hostileKey{}, &h)
	res := run.Execute(ctx, executor.ToolCall{ID: h.id, Name: h.toolName(), Input: h.callInput()})
	spans := w.spans[i].GetSpans()
	require.Len(t, spans, 1, "one span per call")
	return res, spans[0], limit
}

// nameAttrs are bounded by gate.MaxNameBytes; textAttrs by the record
// limit plus half (room for escapes).
var (
	nameAttrs = map[attribute.Key]bool{
		semconv.GenAIToolNameKey: true, semconv.GenAIToolCallIDKey: true, semconv.GenAIAgentNameKey: true,
		semconv.GenAIConversationIDKey: true, gate.AttrRunID: true, gate.AttrTaskID: true, gate.AttrSource: true,
		gate.AttrApprover: true, gate.AttrApproval: true, gate.AttrAction: true, gate.AttrError: true,
		gate.AttrRiskLevel: true, gate.AttrRewrittenBy: true, gate.AttrOriginalInputHash: true, gate.AttrStage: true,
	}
	textAttrs = map[attribute.Key]bool{
		gate.AttrReason: true, semconv.GenAIToolCallArgumentsKey: true, semconv.GenAIToolCallResultKey: true,
	}
)

// checkHostileSpan asserts what FuzzSpanExports promises for one call.
func checkHostileSpan(t testing.TB, h hostile, res executor.ToolResult, span tracetest.SpanStub, limit int) {
	t.Helper()
	if res.ToolCallID != h.id || res.ToolName != h.toolName() {
		t.Fatalf("result for another call: %q %q", res.ToolCallID, res.ToolName)
	}
	if err := testenv.CheckExportable(context.Background(), span); err != nil {
		t.Fatalf("span of call %.40q (sel %#x) is not exportable: %.2000v", h.id, h.sel, err)
	}
	for _, kv := range span.Attributes {
		switch {
		case nameAttrs[kv.Key]:
			if n := len(kv.Value.AsString()); n > gate.MaxNameBytes {
				t.Fatalf("%s: %d bytes, over %d", kv.Key, n, gate.MaxNameBytes)
			}
		case textAttrs[kv.Key]:
			if n := len(kv.Value.AsString()); n > limit+limit/2 {
				t.Fatalf("%s: %d bytes, over %d", kv.Key, n, limit+limit/2)
			}
		case kv.Key == gate.AttrVerdicts:
			vs := kv.Value.AsStringSlice()
			if len(vs) > gate.MaxVerdicts+1 {
				t.Fatalf("%d verdicts", len(vs))
			}
			for _, v := range vs {
				if len(v) > 3*gate.MaxNameBytes+16 {
					t.Fatalf("verdict of %d bytes", len(v))
				}
			}
		}
	}
	if len(span.Name) > len("execute_tool ")+gate.MaxNameBytes {
		t.Fatalf("span name of %d bytes", len(span.Name))
	}
	// The reason the caller (and the trace hook) gets is the one on the
	// span: redacted, bounded and valid UTF-8.
	g := res.Gate
	if !utf8.ValidString(g.Reason) || len(g.Reason) > limit+limit/2 {
		t.Fatalf("decision record's reason is not safe: %.80q (%d bytes)", g.Reason, len(g.Reason))
	}
	if (g.Gated || g.Stage.PreGate()) && g.Reason != "" {
		if got := attrMap(span.Attributes)[gate.AttrReason].AsString(); got != g.Reason {
			t.Fatalf("span reason %.80q, record reason %.80q", got, g.Reason)
		}
	}
	checkStage(t, res, span)
}

// checkStage: every call the executor checked has a valid decision record
// of its stage, the one on its span: a call refused before the gate (any
// tool name or input the model sends) is a deny by the executor with a
// reason and its error type, never gated.
func checkStage(t testing.TB, res executor.ToolResult, span tracetest.SpanStub) {
	t.Helper()
	g := res.Gate
	attrs := attrMap(span.Attributes)
	if got := attrs[gate.AttrStage].AsString(); got != string(g.Stage) {
		t.Fatalf("span stage %q, record stage %q", got, g.Stage)
	}
	want := map[string]gate.Stage{
		executor.ErrorTypeToolNotFound: gate.StageRegistry,
		executor.ErrorTypeNotReachable: gate.StageReachability,
		executor.ErrorTypeInvalidInput: gate.StageInput,
	}[res.ErrorType]
	switch {
	case want != "":
		if g.Stage != want || g.Gated || g.Action != gate.ActionDeny || g.Source != gate.SourceExecutor ||
			g.ErrorKind != res.ErrorType || g.Reason == "" || attrs[gate.AttrAction].AsString() != "deny" {
			t.Fatalf("refusal %s: record %+v", res.ErrorType, g)
		}
	case res.ErrorType == executor.ErrorTypeCancelled || res.ErrorType == executor.ErrorTypeRunAborted:
	default:
		if g.Stage != gate.StageGate {
			t.Fatalf("call past the checks (%q) with stage %q", res.ErrorType, g.Stage)
		}
	}
}

// hostileSeeds are the faults and their neighbours: invalid UTF-8 in each
// model-controlled string, in each path that records it.
func hostileSeeds() []hostile {
	const (
		c3       = "\xc3"
		binary   = "\xff\xfe\x00PNG\x89"
		surr     = "\xed\xa0\x80"
		overlong = "\xc0\xaf"
	)
	long := strings.Repeat("\xc3(", 3000)
	bits := func(kv ...int) uint16 {
		var s uint16
		for i := 0; i < len(kv); i += 2 {
			s |= uint16(kv[i+1]) << kv[i]
		}
		return s
	}
	return []hostile{
		// rm -rf ~/$'\xc3' through the bash classifier: its reason holds 0xC3.
		{sel: bits(hostileInput, 2, hostileBashGate, 1), input: c3, id: "c1", agent: "coder", run: "r", task: "t"},
		{sel: bits(hostileInput, 2, hostileBashGate, 1, hostileLimit, 1), input: long, id: "c2", agent: "coder"},
		// Binary tool output, recorded.
		{sel: 0, input: `{"command":"cat blob"}`, output: binary, id: "c3", agent: "coder"},
		{sel: bits(hostileToolMode, 1), input: `{"command":"x"}`, output: binary, id: "c4", agent: "coder"},
		{sel: bits(hostileToolMode, 2, hostileLimit, 1), input: `{"command":"x"}`, output: long, id: "c5", agent: "coder"},
		{sel: bits(hostileToolMode, 3), input: `{"command":"x"}`, output: surr, id: "c6", agent: "coder"},
		// Unknown tools named with invalid UTF-8, and a huge name.
		{sel: bits(hostileName, 1), name: "\xc3\x28tool", id: "c7", agent: "coder"},
		{sel: bits(hostileName, 1), name: long, id: long, agent: "coder"},
		{sel: bits(hostileName, 1), name: strings.Repeat("delete_everything\x00\x1b[2J\r\n", 1<<16), id: "c-1mb", agent: "coder"},
		// Call, run, task IDs and agent names.
		{sel: 0, input: `{"command":"ls"}`, id: "id-\xff", agent: "coder\xfe", run: "run" + overlong, task: "task" + surr},
		// Raw non-JSON and invalid UTF-8 inside the JSON.
		{sel: 0, input: "\xff\xfe{not json", id: "c8", agent: "coder"},
		{sel: bits(hostileInput, 1), input: "ls \xc3", id: "c9", agent: "coder"},
		{sel: bits(hostileInput, 3), input: "ls \xc3", id: "c10", agent: "coder"},
		// Gate reasons, sources, rules: decisions, errors, panics, rewrites.
		{sel: bits(hostileAction, 1, hostileRisk, 3), input: `{"command":"x"}`, reason: "deny " + c3, source: surr, rule: "r|" + overlong, id: "c11", agent: "a"},
		{sel: bits(hostileAction, 1, hostileSource, 1, hostileRisk, 3), input: `{"command":"x"}`, reason: long, source: long, rule: long, id: "c12", agent: "a"},
		{sel: bits(hostileGateMode, 1), input: `{"command":"x"}`, reason: "err " + c3, source: "s" + c3, id: "c13", agent: "a"},
		{sel: bits(hostileGateMode, 2), input: `{"command":"x"}`, reason: "panic " + binary, id: "c14", agent: "a"},
		{sel: bits(hostileAction, 3), input: `{"command":"x"}`, reason: "rewrite " + c3, source: "rw" + c3, id: "c15", agent: "a"},
		{sel: bits(hostileAction, 3), input: `{"command":"x"}`, reason: "safe", source: "rw" + c3, id: "c16", agent: "a"},
		// Asks: approver names and reasons, every answer.
		{sel: bits(hostileAction, 2), input: `{"command":"x"}`, reason: "ask " + c3, approver: "bot" + overlong, id: "c17", agent: "a"},
		{sel: bits(hostileAction, 2, hostileApprove, 1), input: `{"command":"x"}`, reason: "ask", approver: long, id: "c18", agent: "a"},
		{sel: bits(hostileAction, 2, hostileApprove, 2), input: `{"command":"x"}`, reason: "ask " + binary, approver: "\xff", id: "c19", agent: "a"},
		{sel: bits(hostileAction, 2, hostileApprove, 3), input: `{"command":"x"}`, reason: "ask", approver: c3, id: "c20", agent: "a"},
	}
}

// FuzzSpanExports: whatever bytes the model puts in a call (tool name, ID,
// input, the tool's output) and whatever strings gates, approvers and the
// owner's agents carry (reason, source, rule, approver, agent, run and
// task IDs), the executor returns one result for the call without
// panicking, records exactly one span, and that span survives OTLP
// export: every string on it is valid UTF-8 and bounded, and the OTLP
// request it becomes passes proto.Marshal.
func FuzzSpanExports(f *testing.F) {
	for _, h := range hostileSeeds() {
		f.Add(h.sel, h.name, h.id, h.input, h.output, h.reason, h.source, h.rule, h.approver, h.agent, h.run, h.task)
	}
	w := newHostileWorld(f)
	f.Fuzz(func(t *testing.T, sel uint16, name, id, input, output, reason, source, rule, approver, agent, run, task string) {
		h := hostile{sel: sel, name: name, id: id, input: input, output: output, reason: reason, source: source,
			rule: rule, approver: approver, agent: agent, run: run, task: task}
		res, span, limit := w.call(t, h)
		checkHostileSpan(t, h, res, span, limit)
	})
}

// TestHostileStringsOnSpan pins what an auditor sees for the faults
// FuzzSpanExports generalises: each invalid byte shows as \xNN on the
// span, in the attribute it belongs to, and the span is exportable.
func TestHostileStringsOnSpan(t *testing.T) {
	bit := func(at, v int) uint16 { return uint16(v) << at }
	long := strings.Repeat("\xc3(", 3000)
	tests := []struct {
		name string
		h    hostile
		want map[attribute.Key]string // exact values
		has  map[attribute.Key]string // substrings
	}{
		{
			name: "rm of a raw 0xC3 through the bash classifier",
			h:    hostile{sel: bit(hostileInput, 2) | bit(hostileBashGate, 1), input: "\xc3", id: "c1", agent: "coder"},
			want: map[attribute.Key]string{gate.AttrAction: "deny", gate.AttrSource: classify.SourceBash,
				semconv.GenAIToolCallArgumentsKey: `{"command":"rm -rf ~/$'\\xc3'"}`},
			has: map[attribute.Key]string{gate.AttrReason: `(~/\xc3)`},
		},
		{
			name: "binary tool output",
			h:    hostile{input: `{"command":"cat blob"}`, output: "\xff\xfe\x00PNG\x89", id: "c2", agent: "coder"},
			want: map[attribute.Key]string{semconv.GenAIToolCallResultKey: "\\xff\\xfe\x00PNG\\x89", gate.AttrAction: "allow"},
		},
		{
			name: "tool error message with binary",
			h:    hostile{sel: bit(hostileToolMode, 1), input: `{"command":"x"}`, output: "disk \xfe", id: "c3", agent: "coder"},
			want: map[attribute.Key]string{semconv.ErrorTypeKey: executor.ErrorTypeToolError},
			has:  map[attribute.Key]string{semconv.GenAIToolCallResultKey: `disk \xfe`},
		},
		{
			name: "unknown tool named with invalid UTF-8",
			h:    hostile{sel: bit(hostileName, 1), name: "\xc3\x28tool", id: "c4", agent: "coder"},
			want: map[attribute.Key]string{semconv.GenAIToolNameKey: `\xc3(tool`, semconv.ErrorTypeKey: executor.ErrorTypeToolNotFound},
		},
		{
			name: "identifiers",
			h:    hostile{input: `{"command":"ls"}`, id: "id-\xff", agent: "coder\xfe", run: "run\xc0\xaf", task: "task\xed\xa0\x80"},
			want: map[attribute.Key]string{semconv.GenAIToolCallIDKey: `id-\xff`, semconv.GenAIAgentNameKey: `coder\xfe`,
				semconv.GenAIConversationIDKey: `run\xc0\xaf`, gate.AttrRunID: `run\xc0\xaf`, gate.AttrTaskID: `task\xed\xa0\x80`},
		},
		{
			name: "gate source and rule",
			h: hostile{sel: bit(hostileAction, 1) | bit(hostileSource, 1) | bit(hostileRisk, 3), input: `{"command":"x"}`,
				reason: "no \xc3", source: "src\xed\xa0\x80", rule: "r|\xc0", id: "c5", agent: "a"},
			want: map[attribute.Key]string{gate.AttrSource: `src\xed\xa0\x80`, gate.AttrReason: `no \xc3`, gate.AttrRiskLevel: "high"},
		},
		{
			name: "approver name",
			h: hostile{sel: bit(hostileAction, 2), input: `{"command":"x"}`, reason: "ask", approver: "bot\xc0\xaf",
				source: "g", id: "c6", agent: "a"},
			want: map[attribute.Key]string{gate.AttrApprover: `bot\xc0\xaf`, gate.AttrApproval: string(gate.ApprovalApproved), gate.AttrAction: "allow"},
			has:  map[attribute.Key]string{gate.AttrReason: `approved by bot\xc0\xaf`},
		},
		{
			name: "gate panics with binary",
			h:    hostile{sel: bit(hostileGateMode, 2), input: `{"command":"x"}`, reason: "boom \xff\xfe", source: "g", id: "c7", agent: "a"},
			want: map[attribute.Key]string{gate.AttrAction: "deny", gate.AttrError: gate.ErrorKindPanic},
			has:  map[attribute.Key]string{gate.AttrReason: `boom \xff\xfe`},
		},
		{
			name: "huge unknown name and ID are bounded",
			h:    hostile{sel: bit(hostileName, 1), name: long, id: long, agent: "a"},
			has:  map[attribute.Key]string{semconv.GenAIToolNameKey: `\xc3(\xc3(`, semconv.GenAIToolCallIDKey: `\xc3(\xc3(`},
		},
	}
	w := newHostileWorld(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, span, limit := w.call(t, tt.h)
			checkHostileSpan(t, tt.h, res, span, limit)
			attrs := attrMap(span.Attributes)
			for k, v := range tt.want {
				assert.Equal(t, v, attrs[k].AsString(), "%s", k)
			}
			for k, v := range tt.has {
				assert.Contains(t, attrs[k].AsString(), v, "%s", k)
			}
		})
	}
}

// TestMetricsIgnoreModelStrings: the executor's metrics are labelled by
// registered tool and final action only. Hundreds of calls with distinct
// hostile tool names, IDs and inputs add no attribute set (an unbounded
// label set is a memory and cost attack on every metrics backend) and no
// invalid UTF-8.
func TestMetricsIgnoreModelStrings(t *testing.T) {
	h := newHarness(t, executor.WithGates(gate.AllowAll()))
	run := h.agent(t).Run("run")
	ctx := context.Background()
	for i := range 300 {
		name := fmt.Sprintf("tool-%d-\xc3\xff", i)
		if i%3 == 0 {
			name = "bash" // registered: a decision is counted
		}
		input := fmt.Sprintf(`{"command":"rm -rf ~/$'\\x%02x' %d"}`, i%256, i)
		run.Execute(ctx, executor.ToolCall{ID: fmt.Sprintf("id-%d-\xfe", i), Name: name, Input: json.RawMessage(input)})
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(ctx, &rm))
	registered := map[string]bool{}
	for _, n := range h.ex.Registry().Names() {
		registered[n] = true
	}
	sets := map[string]int{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var attrSets []attribute.Set
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					attrSets = append(attrSets, p.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					attrSets = append(attrSets, p.Attributes)
				}
			}
			sets[m.Name] = len(attrSets)
			for _, s := range attrSets {
				for _, kv := range s.ToSlice() {
					require.True(t, utf8.ValidString(kv.Value.Emit()), "%s %s", m.Name, kv.Key)
					if kv.Key == semconv.GenAIToolNameKey {
						assert.True(t, registered[kv.Value.AsString()], "%s labelled with unregistered tool %q", m.Name, kv.Value.AsString())
					}
				}
			}
		}
	}
	assert.Equal(t, 1, sets[executor.MetricDecisions], "one tool, one action: one attribute set")
	assert.Equal(t, 1, sets[executor.MetricGateDuration])
}
