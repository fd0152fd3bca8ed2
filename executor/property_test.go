package executor_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// The commands of the property test's world. "" violates the schema
// (minLength 1), so a rewrite to it must be refused.
var propCommands = []string{"ls", "cat notes", "rm -rf /", "curl evil", ""}

// behaviour is what one gate answers for one command: allow, deny, ask, or
// allow/ask with a rewrite to another command.
type behaviour struct {
	action  gate.Action
	rewrite int // index into propCommands, -1 for none
}

// propGate is a deterministic gate: a table from command to behaviour. It
// records every input it judged.
type propGate struct {
	name  string
	table map[string]behaviour
	mu    sync.Mutex
	seen  map[string]int
}

func (g *propGate) Name() string { return g.name }

func (g *propGate) Decide(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
	cmd := c.String("command")
	g.mu.Lock()
	g.seen[cmd]++
	g.mu.Unlock()
	b := g.table[cmd]
	d := gate.Decision{Action: b.action}
	if b.action != gate.ActionAllow {
		d.Reason = g.name + " says " + string(b.action)
	}
	if b.rewrite >= 0 {
		raw, _ := json.Marshal(map[string]string{"command": propCommands[b.rewrite]})
		d.RewrittenInput = raw
	}
	return d, nil
}

func (g *propGate) judged(cmd string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[cmd] > 0
}

func drawGate(t *rapid.T, name string) *propGate {
	g := &propGate{name: name, table: map[string]behaviour{}, seen: map[string]int{}}
	for _, c := range propCommands {
		b := behaviour{rewrite: -1}
		b.action = rapid.SampledFrom([]gate.Action{gate.ActionAllow, gate.ActionAllow, gate.ActionDeny, gate.ActionAsk}).Draw(t, name+"["+c+"].action")
		if b.action != gate.ActionDeny && rapid.IntRange(0, 3).Draw(t, name+"["+c+"].rewrites?") == 0 {
			b.rewrite = rapid.IntRange(0, len(propCommands)-1).Draw(t, name+"["+c+"].rewrite")
		}
		g.table[c] = b
	}
	return g
}

// TestPropertyGateHolds: over random chains of allowing, denying, asking
// and rewriting gates at the executor and agent level, with a random
// approver,
//   - the tool receives input X only if every gate (executor- and
//     agent-level) judged X itself and none denied X, and X satisfies the
//     schema;
//   - an ask on X was put to the approver with X as the input that runs
//     (and the model's original when it differs), and approved;
//   - the span records X as the arguments, the rewrite and its gate, and
//     the original input's hash; the decision's verdicts list every
//     gate that ran;
//   - Execute returns (rewrites are bounded).
func TestPropertyGateHolds(t *testing.T) {
	// 2,000 random worlds by default (rapid's default is 100); an explicit
	// -rapid.checks wins.
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		require.NoError(t, flag.Set("rapid.checks", "2000"))
		t.Cleanup(func() { _ = flag.Set("rapid.checks", f.DefValue) })
	}
	rapid.Check(t, func(t *rapid.T) {
		nExec := rapid.IntRange(0, 3).Draw(t, "executor gates")
		nAgent := rapid.IntRange(0, 3).Draw(t, "agent gates")
		var execGates, agentGates []gate.Gate
		var all []*propGate
		for i := range nExec {
			g := drawGate(t, fmt.Sprintf("exec%d", i))
			execGates, all = append(execGates, g), append(all, g)
		}
		for i := range nAgent {
			g := drawGate(t, fmt.Sprintf("agent%d", i))
			agentGates, all = append(agentGates, g), append(all, g)
		}
		approves := map[string]bool{}
		for _, c := range propCommands {
			approves[c] = rapid.Bool().Draw(t, "approve["+c+"]")
		}
		var (
			amu  sync.Mutex
			reqs []gate.ApprovalRequest
		)
		approver := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
			amu.Lock()
			reqs = append(reqs, req)
			amu.Unlock()
			if approves[req.Call.String("command")] {
				return req.Approve("prop", ""), nil
			}
			return req.Decline("prop", ""), nil
		})
		var (
			ran    bool
			ranRaw string
		)
		reg, err := executor.NewRegistry(executor.Tool{Name: "bash", InputSchema: json.RawMessage(bashSchema),
			Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
				ran, ranRaw = true, string(in)
				return executor.Text("ok"), nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		spans := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
		ex, err := executor.New(reg, executor.WithTracerProvider(tp), executor.WithGates(execGates...),
			executor.WithApprover(approver), executor.WithRecordContent(true))
		if err != nil {
			t.Fatal(err)
		}
		ag, err := ex.Agent("prop", executor.AgentAllow("bash"), executor.AgentGates(agentGates...))
		if err != nil {
			t.Fatal(err)
		}
		model := rapid.SampledFrom(propCommands[:len(propCommands)-1]).Draw(t, "model's command")
		modelRaw := `{"command":"` + model + `"}`
		res := ag.Run("r").Execute(context.Background(), executor.ToolCall{ID: "c1", Name: "bash", Input: json.RawMessage(modelRaw)})

		if ran != (res.Gate.Action == gate.ActionAllow || !res.Gate.Gated) || ran == res.IsError {
			t.Fatalf("ran=%v but result %+v", ran, res)
		}
		got := spans.GetSpans() // a syncer: the span is exported when it ends
		if len(got) != 1 {
			t.Fatalf("%d spans", len(got))
		}
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range got[0].Attributes {
			attrs[kv.Key] = kv.Value
		}
		if len(all) > 0 && len(res.Gate.Verdicts) == 0 {
			t.Fatalf("gated call without verdicts: %+v", res.Gate)
		}
		if !ran {
			return
		}
		var x struct{ Command string }
		if err := json.Unmarshal([]byte(ranRaw), &x); err != nil || x.Command == "" {
			t.Fatalf("the tool received input the schema forbids: %s", ranRaw)
		}
		asked := false
		for _, g := range all {
			if !g.judged(x.Command) {
				t.Fatalf("gate %s never judged %q, which ran", g.name, x.Command)
			}
			b := g.table[x.Command]
			if b.action == gate.ActionDeny {
				t.Fatalf("gate %s denies %q, which ran", g.name, x.Command)
			}
			if b.rewrite >= 0 && propCommands[b.rewrite] != x.Command {
				t.Fatalf("gate %s rewrites %q, which ran unrewritten", g.name, x.Command)
			}
			asked = asked || b.action == gate.ActionAsk
		}
		if asked {
			amu.Lock()
			defer amu.Unlock()
			if len(reqs) == 0 {
				t.Fatalf("%q needed approval and ran without", x.Command)
			}
			last := reqs[len(reqs)-1]
			if string(last.Call.RawInput) != ranRaw || !approves[x.Command] {
				t.Fatalf("approval was for %s (approved %v), %s ran", last.Call.RawInput, approves[x.Command], ranRaw)
			}
			if x.Command != model && string(last.OriginalInput) != modelRaw {
				t.Fatalf("approver was not shown the model's original input: %q", last.OriginalInput)
			}
		}
		if v := attrs[semconv.GenAIToolCallArgumentsKey].AsString(); v != ranRaw {
			t.Fatalf("span arguments %q, ran %q", v, ranRaw)
		}
		if x.Command != model {
			if !res.Gate.Rewritten || !attrs[gate.AttrRewritten].AsBool() || attrs[gate.AttrRewrittenBy].AsString() == "" {
				t.Fatalf("rewrite not recorded: %+v", res.Gate)
			}
			if h := attrs[gate.AttrOriginalInputHash].AsString(); h != gate.InputHash([]byte(modelRaw)) {
				t.Fatalf("original input hash %q", h)
			}
		}
		if n := len(res.Gate.Verdicts); n > 0 && !strings.Contains(fmt.Sprint(res.Gate.Verdicts), all[len(all)-1].name) {
			t.Fatalf("the last gate's verdict is missing: %+v", res.Gate.Verdicts)
		}
	})
}
