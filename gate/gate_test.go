package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/gate"
)

func fixed(name string, d gate.Decision) gate.Gate {
	return gate.Named(name, gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) { return d, nil }))
}

func counting(name string, d gate.Decision, n *atomic.Int64) gate.Gate {
	return gate.Named(name, gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		n.Add(1)
		return d, nil
	}))
}

var bash = gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"command": "ls"}, RawInput: json.RawMessage(`{"command":"ls"}`), ToolCallID: "c1"}

func TestDecisionValidate(t *testing.T) {
	tests := []struct {
		name string
		d    gate.Decision
		ok   bool
	}{
		{"allow", gate.Allow(), true},
		{"deny", gate.Deny("r"), true},
		{"ask", gate.Ask("r"), true},
		{"rewrite", gate.AllowRewritten(json.RawMessage(`{}`), ""), true},
		{"ask with rewrite", gate.Decision{Action: gate.ActionAsk, Reason: "r", RewrittenInput: json.RawMessage(`{}`)}, true},
		{"deny without reason", gate.Deny(""), false},
		{"ask without reason", gate.Ask(""), false},
		{"deny with rewrite", gate.Decision{Action: gate.ActionDeny, Reason: "r", RewrittenInput: json.RawMessage(`{}`)}, false},
		{"zero value", gate.Decision{}, false},
		{"unknown action", gate.Decision{Action: "maybe"}, false},
		{"unknown risk", gate.Allow().WithRisk("meh"), false},
		{"error kind on deny", gate.Decision{Action: gate.ActionDeny, Reason: "r", ErrorKind: gate.ErrorKindPanic}, true},
		{"error kind on allow", gate.Decision{Action: gate.ActionAllow, ErrorKind: gate.ErrorKindPanic}, false},
		{"unknown error kind", gate.Decision{Action: gate.ActionDeny, Reason: "r", ErrorKind: "oops"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.d.Validate()
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, gate.ErrInvalidDecision)
			}
		})
	}
}

func TestEvaluateFailsClosed(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		g      gate.Gate
		action gate.Action
		kind   string
		source string
		reason string
	}{
		{"allow keeps own source", context.Background(), fixed("p", gate.Allow().WithSource("own")), gate.ActionAllow, "", "own", ""},
		{"source filled", context.Background(), gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) { return gate.Allow(), nil }), gate.ActionAllow, "", "fallback", ""},
		{"error", context.Background(), gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
			return gate.Allow(), errors.New("backend down")
		}), gate.ActionDeny, gate.ErrorKindError, "fallback", "backend down"},
		{"panic", context.Background(), gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) { panic("boom") }),
			gate.ActionDeny, gate.ErrorKindPanic, "fallback", "boom"},
		{"invalid", context.Background(), fixed("p", gate.Deny("")), gate.ActionDeny, gate.ErrorKindInvalid, "fallback", "without a reason"},
		{"cancelled", cancelled, gate.Func(func(ctx context.Context, _ gate.ToolCallContext) (gate.Decision, error) {
			return gate.Decision{}, ctx.Err()
		}),
			gate.ActionDeny, gate.ErrorKindCancelled, "fallback", "canceled"},
		{"nil gate", context.Background(), nil, gate.ActionDeny, gate.ErrorKindInvalid, "fallback", "nil gate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := gate.Evaluate(tc.ctx, tc.g, bash, "fallback")
			require.NoError(t, d.Validate())
			assert.Equal(t, tc.action, d.Action)
			assert.Equal(t, tc.kind, d.ErrorKind)
			assert.Equal(t, tc.source, d.Source)
			assert.Contains(t, d.Reason, tc.reason)
		})
	}
}

func TestWithTimeout(t *testing.T) {
	slow := gate.Named("slow", gate.Func(func(ctx context.Context, _ gate.ToolCallContext) (gate.Decision, error) {
		select {
		case <-ctx.Done():
			return gate.Decision{}, ctx.Err()
		case <-time.After(5 * time.Second):
			return gate.Allow(), nil
		}
	}))
	stubborn := gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		time.Sleep(200 * time.Millisecond) // ignores ctx
		return gate.Allow(), nil
	})
	panicky := gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) { panic("in goroutine") })
	fast := fixed("fast", gate.Allow())
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		g      gate.Gate
		action gate.Action
		kind   string
	}{
		{"fast gate unaffected", context.Background(), gate.WithTimeout(fast, time.Second), gate.ActionAllow, ""},
		{"slow gate times out", context.Background(), gate.WithTimeout(slow, 10*time.Millisecond), gate.ActionDeny, gate.ErrorKindTimeout},
		{"gate ignoring ctx times out", context.Background(), gate.WithTimeout(stubborn, 10*time.Millisecond), gate.ActionDeny, gate.ErrorKindTimeout},
		{"panic in the goroutine", context.Background(), gate.WithTimeout(panicky, time.Second), gate.ActionDeny, gate.ErrorKindPanic},
		{"caller cancelled is not a timeout", cancelled, gate.WithTimeout(slow, time.Second), gate.ActionDeny, gate.ErrorKindCancelled},
		{"zero timeout is no wrapper", context.Background(), gate.WithTimeout(fast, 0), gate.ActionAllow, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := gate.Evaluate(tc.ctx, tc.g, bash, "g")
			assert.Equal(t, tc.action, d.Action, d.Reason)
			assert.Equal(t, tc.kind, d.ErrorKind, d.Reason)
		})
	}
	assert.Equal(t, "slow", gate.NameOf(gate.WithTimeout(slow, time.Second), ""), "the wrapper keeps the name")
}

func TestChain(t *testing.T) {
	var later atomic.Int64
	rewriteA := gate.AllowRewritten(json.RawMessage(`{"command":"ls -a"}`), "add -a")
	tests := []struct {
		name      string
		gates     []gate.Gate
		action    gate.Action
		source    string
		reason    string
		risk      gate.RiskLevel
		kind      string
		rewritten string
		laterRuns int64
	}{
		{"empty allows", nil, gate.ActionAllow, "chain", "", "", "", "", 0},
		{"all allow: first source", []gate.Gate{fixed("a", gate.Allow()), fixed("b", gate.Allow())}, gate.ActionAllow, "a", "", "", "", "", 0},
		{"first deny wins and stops", []gate.Gate{fixed("a", gate.Allow()), fixed("b", gate.Deny("b says no")), counting("c", gate.Deny("c says no"), &later)},
			gate.ActionDeny, "b", "b says no", "", "", "", 0},
		{"ask then deny: deny", []gate.Gate{fixed("a", gate.Ask("confirm")), fixed("b", gate.Deny("no"))}, gate.ActionDeny, "b", "no", "", "", "", 0},
		{"deny then ask: deny", []gate.Gate{fixed("a", gate.Deny("no")), counting("b", gate.Ask("confirm"), &later)}, gate.ActionDeny, "a", "no", "", "", "", 0},
		{"ask survives allows; later gates run", []gate.Gate{fixed("a", gate.Ask("confirm")), counting("b", gate.Allow(), &later)},
			gate.ActionAsk, "a", "confirm", "", "", "", 1},
		{"first ask wins over later ask", []gate.Gate{fixed("a", gate.Ask("first")), fixed("b", gate.Ask("second"))}, gate.ActionAsk, "a", "first", "", "", "", 0},
		{"highest risk carried and credited", []gate.Gate{fixed("a", gate.Allow().WithRisk(gate.RiskReview)), fixed("b", gate.Allow().WithRisk(gate.RiskSafe))},
			gate.ActionAllow, "a", "", gate.RiskReview, "", "", 0},
		{"allow credited to the gate that judged the risk", []gate.Gate{fixed("hosts", gate.Allow()), fixed("classify", gate.Allow().WithRisk(gate.RiskSafe)), fixed("c", gate.Allow())},
			gate.ActionAllow, "classify", "", gate.RiskSafe, "", "", 0},
		{"risk carried onto deny", []gate.Gate{fixed("a", gate.Allow().WithRisk(gate.RiskHigh)), fixed("b", gate.Deny("no"))},
			gate.ActionDeny, "b", "no", gate.RiskHigh, "", "", 0},
		{"rewrite ends the round", []gate.Gate{fixed("a", rewriteA), counting("b", gate.Allow(), &later)}, gate.ActionAllow, "a", "add -a", "", "", `{"command":"ls -a"}`, 0},
		{"deny before a rewrite wins", []gate.Gate{fixed("a", gate.Deny("no")), fixed("b", rewriteA)}, gate.ActionDeny, "a", "no", "", "", "", 0},
		{"rewrite after an ask ends the round with the rewrite", []gate.Gate{fixed("a", gate.Ask("confirm")), fixed("b", rewriteA)}, gate.ActionAllow, "b", "add -a", "", "", `{"command":"ls -a"}`, 0},
		{"rewrite to the same input is none", []gate.Gate{fixed("a", gate.AllowRewritten(json.RawMessage(` { "command" : "ls" } `), "")), counting("b", gate.Deny("no"), &later)},
			gate.ActionDeny, "b", "no", "", "", "", 1},
		{"rewrite is not validated by the chain", []gate.Gate{fixed("a", gate.AllowRewritten(json.RawMessage(`[1]`), "")), counting("b", gate.Allow(), &later)},
			gate.ActionAllow, "a", "", "", "", "[1]", 0},
		{"nil member is invalid", []gate.Gate{fixed("a", gate.Allow()), nil}, gate.ActionDeny, "chain[1]", "nil gate", "", gate.ErrorKindInvalid, "", 0},
		{"named nil member is invalid", []gate.Gate{gate.Named("n", nil)}, gate.ActionDeny, "n", "nil gate", "", gate.ErrorKindInvalid, "", 0},
		{"member failure attributed", []gate.Gate{fixed("a", gate.Allow()), gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) { panic("x") })},
			gate.ActionDeny, "chain[1]", "x", "", gate.ErrorKindPanic, "", 0},
		{"nested chain", []gate.Gate{gate.Chain(fixed("inner", gate.Deny("inner no"))), counting("outer", gate.Allow(), &later)},
			gate.ActionDeny, "inner", "inner no", "", "", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			later.Store(0)
			d, err := gate.Chain(tc.gates...).Decide(context.Background(), bash)
			require.NoError(t, err)
			require.NoError(t, d.Validate())
			assert.Equal(t, tc.action, d.Action)
			assert.Equal(t, tc.source, d.Source)
			assert.Contains(t, d.Reason, tc.reason)
			assert.Equal(t, tc.risk, d.Risk)
			assert.Equal(t, tc.kind, d.ErrorKind)
			assert.Equal(t, tc.rewritten, string(d.RewrittenInput))
			assert.Equal(t, tc.laterRuns, later.Load())
		})
	}
}

func TestJudgeRecordsEveryVerdict(t *testing.T) {
	g := gate.Chain(
		fixed("hosts", gate.Allow()),
		gate.Chain(fixed("inner", gate.Allow().WithRisk(gate.RiskSafe)), fixed("ask", gate.Ask("confirm"))),
		fixed("rules", gate.Decision{Action: gate.ActionAllow, Rule: "r1", Risk: gate.RiskReview}),
	)
	d, vs := gate.Judge(context.Background(), g, bash, "chain", nil)
	assert.Equal(t, gate.ActionAsk, d.Action)
	assert.Equal(t, gate.RiskReview, d.Risk)
	require.Len(t, vs, 4)
	var got []string
	for _, v := range vs {
		got = append(got, v.Gate+":"+string(v.Action)+":"+string(v.Risk)+":"+v.Rule)
	}
	assert.Equal(t, []string{"hosts:allow::", "inner:allow:safe:", "ask:ask::", "rules:allow:review:r1"}, got)
	assert.Equal(t, []string{"hosts|allow||", "inner|allow|safe|", "ask|ask||", "rules|allow|review|r1"}, gate.EncodeVerdicts(vs))

	d, vs = gate.Judge(context.Background(), fixed("rw", gate.AllowRewritten(json.RawMessage(`{"command":"ls -a"}`), "")), bash, "x", nil)
	assert.NotNil(t, d.RewrittenInput)
	require.Len(t, vs, 1)
	assert.True(t, vs[0].Rewrote)
	assert.Equal(t, []string{"rw|rewrite||"}, gate.EncodeVerdicts(vs))
}

func TestChainStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var later atomic.Int64
	canceller := gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		cancel()
		return gate.Allow(), nil
	})
	d, _ := gate.Chain(canceller, counting("b", gate.Allow(), &later)).Decide(ctx, bash)
	assert.Equal(t, gate.ActionDeny, d.Action)
	assert.Equal(t, gate.ErrorKindCancelled, d.ErrorKind)
	assert.Zero(t, later.Load())
}

func TestPolicies(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name   string
		g      gate.Gate
		call   gate.ToolCallContext
		action gate.Action
		source string
	}{
		{"allow-all", gate.AllowAll(), bash, gate.ActionAllow, "allow-all"},
		{"deny-tools hit", gate.DenyTools("no shell", "bash"), bash, gate.ActionDeny, "deny-tools"},
		{"deny-tools miss", gate.DenyTools("no shell", "sh"), bash, gate.ActionAllow, "deny-tools"},
		{"ask-tools hit", gate.AskTools("confirm", "bash"), bash, gate.ActionAsk, "ask-tools"},
		{"consequential asks", gate.AskConsequential(), gate.ToolCallContext{ToolName: "pay", Consequential: true}, gate.ActionAsk, "consequential"},
		{"not consequential allows", gate.AskConsequential(), bash, gate.ActionAllow, "consequential"},
		{"destructive by MCP default", gate.AskDestructive(), gate.ToolCallContext{ToolName: "x"}, gate.ActionAsk, "destructive"},
		{"explicitly destructive", gate.AskDestructive(), gate.ToolCallContext{ToolName: "x", Annotations: gate.Annotations{DestructiveHint: &yes}}, gate.ActionAsk, "destructive"},
		{"read-only", gate.AskDestructive(), gate.ToolCallContext{ToolName: "x", Annotations: gate.Annotations{ReadOnlyHint: true}}, gate.ActionAllow, "destructive"},
		{"explicitly not destructive", gate.AskDestructive(), gate.ToolCallContext{ToolName: "x", Annotations: gate.Annotations{DestructiveHint: &no}}, gate.ActionAllow, "destructive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := gate.Evaluate(context.Background(), tc.g, tc.call, "x")
			assert.Equal(t, tc.action, d.Action)
			assert.Equal(t, tc.source, d.Source)
		})
	}
}

func TestCallHash(t *testing.T) {
	in := map[string]any{"command": "ls", "n": 1.0}
	call := gate.ToolCallContext{ToolName: "bash", Input: in, ToolCallID: "c1", AgentName: "coder", RunID: "r1"}
	with := func(f func(*gate.ToolCallContext)) string {
		c := call
		f(&c)
		return gate.CallHash(c)
	}
	h := gate.CallHash(call)
	assert.Len(t, h, 64)
	tests := []struct {
		name string
		h    string
		same bool
	}{
		{"same call, keys in another order", with(func(c *gate.ToolCallContext) { c.Input = map[string]any{"n": 1.0, "command": "ls"} }), true},
		{"raw input is hashed when present", with(func(c *gate.ToolCallContext) { c.RawInput = []byte(`{"n":1,"command":"ls"}`) }), false},
		{"other call ID", with(func(c *gate.ToolCallContext) { c.ToolCallID = "c2" }), false},
		{"other tool", with(func(c *gate.ToolCallContext) { c.ToolName = "sh" }), false},
		{"other input", with(func(c *gate.ToolCallContext) { c.Input = map[string]any{"command": "ls -a", "n": 1.0} }), false},
		{"other agent", with(func(c *gate.ToolCallContext) { c.AgentName = "reviewer" }), false},
		{"other run", with(func(c *gate.ToolCallContext) { c.RunID = "r2" }), false},
		{"field boundaries", with(func(c *gate.ToolCallContext) { c.ToolName, c.ToolCallID = "bas", "hc1" }), false},
		{"field boundaries between agent and run", with(func(c *gate.ToolCallContext) { c.AgentName, c.RunID = "coderr", "1" }), false},
		{"another working directory", with(func(c *gate.ToolCallContext) { c.WorkingDir = "/srv/other" }), false},
		{"a run ID that spells a working directory", with(func(c *gate.ToolCallContext) { c.RunID = "r1" + "\x00cwd:/srv" }), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.same, tc.h == h)
		})
	}
	key := gate.GrantKey("coder", "bash", []byte(`{"command":"ls","n":1}`))
	assert.Equal(t, key, gate.GrantKey("coder", "bash", []byte(` { "command" : "ls", "n" : 1 } `)), "whitespace is not part of the command")
	for _, other := range []string{
		gate.GrantKey("coder", "bash", []byte(`{"command":"ls","n":1.0}`)),
		gate.GrantKey("coder", "bash", []byte(`{"n":1,"command":"ls"}`)),
		gate.GrantKey("coder", "bash", []byte(`{"command":"rm","n":1}`)),
		gate.GrantKey("deployer", "bash", []byte(`{"command":"ls","n":1}`)),
		gate.GrantKey("coder", "sh", []byte(`{"command":"ls","n":1}`)),
		gate.GrantKey("coder", "bash", []byte(`{"command":"ls","n":9007199254740993}`)),
	} {
		assert.NotEqual(t, key, other)
	}
	assert.NotEqual(t, gate.GrantKey("c", "bash", []byte(`{"id":9007199254740993}`)), gate.GrantKey("c", "bash", []byte(`{"id":9007199254740992}`)))
	// A request hash differs from the call's and between requests for the
	// same call.
	r1, r2 := gate.NewApprovalRequest(call, gate.Ask("r"), nil), gate.NewApprovalRequest(call, gate.Ask("r"), nil)
	assert.NotEqual(t, r1.CallHash, r2.CallHash)
	assert.NotEqual(t, h, r1.CallHash)
	assert.Equal(t, gate.RequestHash(call, r1.Nonce), r1.CallHash)
}
