package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

func TestExecuteRules(t *testing.T) {
	allow := fixed("allow-policy", gate.Allow())
	deny := fixed("deny-policy", gate.Deny("no shell today"))
	ask := fixed("ask-policy", gate.Ask("please confirm"))
	approve := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		return req.Approve("bot", ""), nil
	})
	decline := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		return req.Decline("bot", "not now"), nil
	})
	slowApprover := gate.ApproverFunc(func(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		<-ctx.Done()
		return req.TimedOut("slow", ""), ctx.Err()
	})
	// lateApprover ignores its context and approves after 300 ms.
	lateApprover := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		time.Sleep(300 * time.Millisecond)
		return req.Approve("late", ""), nil
	})
	wrongHash := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		res := req.Approve("bot", "")
		res.CallHash = "deadbeef"
		return res, nil
	})
	// noHash answers without binding the answer to the request, as an
	// approver caching answers by call ID would.
	noHash := gate.ApproverFunc(func(context.Context, gate.ApprovalRequest) (gate.ApprovalResult, error) {
		return gate.ApprovalResult{Outcome: gate.ApprovalApproved, Approver: "bot"}, nil
	})
	panicApprover := gate.ApproverFunc(func(context.Context, gate.ApprovalRequest) (gate.ApprovalResult, error) {
		panic("approver bug")
	})
	errApprover := gate.ApproverFunc(func(context.Context, gate.ApprovalRequest) (gate.ApprovalResult, error) {
		return gate.ApprovalResult{Approver: "bot"}, errors.New("ui offline")
	})
	unknownOutcome := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		res := req.Approve("bot", "")
		res.Outcome = "yes please"
		return res, nil
	})
	errGate := gate.Named("err-policy", gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		return gate.Decision{}, errors.New("policy store unreachable")
	}))
	panicGate := gate.Named("panic-policy", gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		panic("nil map")
	}))
	slowGate := gate.Named("slow-policy", gate.Func(func(ctx context.Context, _ gate.ToolCallContext) (gate.Decision, error) {
		select {
		case <-ctx.Done():
			return gate.Decision{}, ctx.Err()
		case <-time.After(5 * time.Second):
			return gate.Allow(), nil
		}
	}))
	invalidGate := fixed("invalid-policy", gate.Decision{Action: gate.ActionDeny}) // deny without reason
	unknownAction := fixed("odd-policy", gate.Decision{Action: "maybe"})
	rewrite := fixed("rewrite-policy", gate.AllowRewritten(json.RawMessage(`{"command":"ls -la --color=never"}`), "normalised"))
	badRewrite := fixed("rewrite-policy", gate.AllowRewritten(json.RawMessage(`{"command":42}`), "broken"))
	var cancelGateCancel context.CancelFunc
	cancelling := gate.Named("cancel-policy", gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		cancelGateCancel()
		return gate.Allow(), nil
	}))

	type want struct {
		isError   bool
		errIs     error
		errorType string
		gated     bool
		action    gate.Action
		source    string
		errorKind string
		approval  gate.ApprovalOutcome
		approver  string
		ran       int64 // executions of the called tool
		content   []string
		optOut    bool
	}
	tests := []struct {
		name     string
		opts     []executor.Option
		agent    []executor.AgentOption
		call     executor.ToolCall
		cancelly bool // ctx is cancelled before the call
		cancelIn bool // ctx is cancelled by the gate
		want     want
	}{
		{name: "no gate runs the tool", call: call("c1", "bash", `{"command":"ls"}`),
			want: want{ran: 1, content: []string{"ran: ls"}}},
		{name: "unknown tool", opts: []executor.Option{executor.WithGates(allow)}, call: call("c1", "nope", `{}`),
			want: want{isError: true, errIs: executor.ErrUnknownTool, errorType: executor.ErrorTypeToolNotFound, action: gate.ActionDeny, source: gate.SourceExecutor, errorKind: executor.ErrorTypeToolNotFound, content: []string{`"nope" is not registered`}}},
		{name: "denylisted tool never reaches the gate", opts: []executor.Option{executor.WithGates(deny)},
			agent: []executor.AgentOption{executor.AgentPresets(executor.PresetAll), executor.AgentDeny("bash")},
			call:  call("c1", "bash", `{"command":"ls"}`),
			want:  want{isError: true, errIs: executor.ErrNotReachable, errorType: executor.ErrorTypeNotReachable, action: gate.ActionDeny, source: gate.SourceExecutor, errorKind: executor.ErrorTypeNotReachable, content: []string{`"bash" is not available`}}},
		{name: "executor denylist", opts: []executor.Option{executor.WithDeniedTools("bash")},
			call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrNotReachable, errorType: executor.ErrorTypeNotReachable, action: gate.ActionDeny, source: gate.SourceExecutor, errorKind: executor.ErrorTypeNotReachable}},
		{name: "no preset and no allowlist reaches nothing", agent: []executor.AgentOption{executor.AgentDeny("x")},
			call: call("c1", "read", `{}`),
			want: want{isError: true, errIs: executor.ErrNotReachable, errorType: executor.ErrorTypeNotReachable, action: gate.ActionDeny, source: gate.SourceExecutor, errorKind: executor.ErrorTypeNotReachable}},
		{name: "allowlist reaches", agent: []executor.AgentOption{executor.AgentAllow("read")},
			call: call("c1", "read", `{}`), want: want{ran: 1, content: []string{"contents"}}},
		{name: "preset reaches", opts: []executor.Option{executor.WithPreset("readonly", "read")},
			agent: []executor.AgentOption{executor.AgentPresets("readonly")},
			call:  call("c1", "read", `{}`), want: want{ran: 1}},
		{name: "preset does not reach others", opts: []executor.Option{executor.WithPreset("readonly", "read")},
			agent: []executor.AgentOption{executor.AgentPresets("readonly")},
			call:  call("c1", "bash", `{"command":"ls"}`), want: want{isError: true, errIs: executor.ErrNotReachable, errorType: executor.ErrorTypeNotReachable, action: gate.ActionDeny, source: gate.SourceExecutor, errorKind: executor.ErrorTypeNotReachable}},
		{name: "invalid input never reaches the gate", opts: []executor.Option{executor.WithGates(deny)},
			call: call("c1", "bash", `{"command":""}`),
			want: want{isError: true, errIs: executor.ErrInvalidInput, errorType: executor.ErrorTypeInvalidInput, action: gate.ActionDeny, source: gate.SourceExecutor, errorKind: executor.ErrorTypeInvalidInput, content: []string{`Invalid input for tool "bash"`}}},
		{name: "duplicate keys are rejected before the gate", opts: []executor.Option{executor.WithGates(allow)},
			call: call("c1", "bash", `{"command":"ls","command":"rm -rf /"}`),
			want: want{isError: true, errIs: executor.ErrInvalidInput, errorType: executor.ErrorTypeInvalidInput, action: gate.ActionDeny, source: gate.SourceExecutor, errorKind: executor.ErrorTypeInvalidInput, content: []string{`key "command" more than once`}}},
		{name: "invalid UTF-8 is rejected", call: call("c1", "bash", "{\"command\":\"ls \xff\"}"),
			want: want{isError: true, errIs: executor.ErrInvalidInput, errorType: executor.ErrorTypeInvalidInput, action: gate.ActionDeny, source: gate.SourceExecutor, errorKind: executor.ErrorTypeInvalidInput, content: []string{"UTF-8"}}},
		{name: "non-object input", call: call("c1", "bash", `["ls"]`),
			want: want{isError: true, errIs: executor.ErrInvalidInput, errorType: executor.ErrorTypeInvalidInput, action: gate.ActionDeny, source: gate.SourceExecutor, errorKind: executor.ErrorTypeInvalidInput}},
		{name: "empty input means {}", call: call("c1", "read", ``), want: want{ran: 1}},
		{name: "allow", opts: []executor.Option{executor.WithGates(allow)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{gated: true, action: gate.ActionAllow, source: "allow-policy", ran: 1}},
		{name: "deny is data", opts: []executor.Option{executor.WithGates(deny)}, call: call("c1", "bash", `{"command":"rm -rf /"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "deny-policy",
				content: []string{`Tool "bash"`, "no shell today", "Do not retry the same call", `"deny-policy"`}}},
		{name: "chain: first deny wins", opts: []executor.Option{executor.WithGates(allow, deny, fixed("later", gate.Deny("later reason")))},
			call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "deny-policy", content: []string{"no shell today"}}},
		{name: "agent gates add to executor gates", opts: []executor.Option{executor.WithGates(allow)},
			agent: []executor.AgentOption{executor.AgentPresets(executor.PresetAll), executor.AgentGates(deny)},
			call:  call("c1", "bash", `{"command":"ls"}`),
			want:  want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "deny-policy"}},
		{name: "opt-out skips executor gates, keeps agent gates, is recorded", opts: []executor.Option{executor.WithGates(deny), executor.WithOptOut("tester")},
			agent: []executor.AgentOption{executor.AgentPresets(executor.PresetAll), executor.AgentGates(allow)},
			call:  call("c1", "bash", `{"command":"ls"}`),
			want:  want{gated: true, action: gate.ActionAllow, source: "allow-policy", ran: 1, optOut: true}},
		{name: "opt-out without agent gates is ungated but recorded", opts: []executor.Option{executor.WithGates(deny), executor.WithOptOut("tester")},
			call: call("c1", "bash", `{"command":"ls"}`), want: want{ran: 1, optOut: true}},
		{name: "gate error fails closed", opts: []executor.Option{executor.WithGates(errGate)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "err-policy", errorKind: gate.ErrorKindError, content: []string{"policy store unreachable"}}},
		{name: "gate panic fails closed", opts: []executor.Option{executor.WithGates(panicGate)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "panic-policy", errorKind: gate.ErrorKindPanic, content: []string{"nil map"}}},
		{name: "per-gate timeout fails closed", opts: []executor.Option{executor.WithGates(gate.WithTimeout(slowGate, 20*time.Millisecond))},
			call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "slow-policy", errorKind: gate.ErrorKindTimeout}},
		{name: "executor gate timeout fails closed", opts: []executor.Option{executor.WithGates(allow, slowGate), executor.WithGateTimeout(20 * time.Millisecond)},
			call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "slow-policy", errorKind: gate.ErrorKindTimeout}},
		{name: "invalid decision fails closed", opts: []executor.Option{executor.WithGates(invalidGate)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "invalid-policy", errorKind: gate.ErrorKindInvalid}},
		{name: "unknown action fails closed", opts: []executor.Option{executor.WithGates(unknownAction)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "odd-policy", errorKind: gate.ErrorKindInvalid}},
		{name: "valid rewrite runs the rewritten input", opts: []executor.Option{executor.WithGates(rewrite)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{gated: true, action: gate.ActionAllow, source: "rewrite-policy", ran: 1, content: []string{"ran: ls -la --color=never"}}},
		{name: "invalid rewrite denies", opts: []executor.Option{executor.WithGates(badRewrite)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "rewrite-policy", errorKind: gate.ErrorKindInvalid}},
		{name: "ask approved", opts: []executor.Option{executor.WithGates(ask), executor.WithApprover(approve)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{gated: true, action: gate.ActionAllow, source: "ask-policy", approval: gate.ApprovalApproved, approver: "bot", ran: 1}},
		{name: "ask declined", opts: []executor.Option{executor.WithGates(ask), executor.WithApprover(decline)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "ask-policy", approval: gate.ApprovalDeclined, approver: "bot", content: []string{"please confirm", "not now"}}},
		{name: "ask timeout", opts: []executor.Option{executor.WithGates(ask), executor.WithApprover(slowApprover), executor.WithApprovalTimeout(20 * time.Millisecond)},
			call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "ask-policy", approval: gate.ApprovalTimeout, approver: "approver"}},
		{name: "late approval is discarded: the call is denied on time", opts: []executor.Option{executor.WithGates(ask), executor.WithApprover(lateApprover), executor.WithApprovalTimeout(50 * time.Millisecond)},
			call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "ask-policy", approval: gate.ApprovalTimeout, approver: "approver"}},
		{name: "answer without call hash denies", opts: []executor.Option{executor.WithGates(ask), executor.WithApprover(noHash)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "ask-policy", approval: gate.ApprovalInvalid, approver: "bot", errorKind: gate.ErrorKindInvalid}},
		{name: "ask without approver denies", opts: []executor.Option{executor.WithGates(ask)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "ask-policy", approval: gate.ApprovalDeclined, approver: executor.ApproverNone}},
		{name: "approval for another call denies", opts: []executor.Option{executor.WithGates(ask), executor.WithApprover(wrongHash)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "ask-policy", approval: gate.ApprovalInvalid, approver: "bot", errorKind: gate.ErrorKindInvalid}},
		{name: "approver panic denies", opts: []executor.Option{executor.WithGates(ask), executor.WithApprover(panicApprover)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "ask-policy", approval: gate.ApprovalInvalid, approver: "approver", errorKind: gate.ErrorKindPanic, content: []string{"approver bug"}}},
		{name: "approver error denies", opts: []executor.Option{executor.WithGates(ask), executor.WithApprover(errApprover)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "ask-policy", approval: gate.ApprovalInvalid, approver: "bot", errorKind: gate.ErrorKindError, content: []string{"ui offline"}}},
		{name: "unknown outcome denies", opts: []executor.Option{executor.WithGates(ask), executor.WithApprover(unknownOutcome)}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "ask-policy", approval: gate.ApprovalInvalid, approver: "bot", errorKind: gate.ErrorKindInvalid}},
		{name: "tool's own error result", call: call("c1", "soft", `{}`),
			want: want{isError: true, errorType: executor.ErrorTypeToolError, ran: 1, content: []string{"quota exceeded"}}},
		{name: "ask then deny: deny wins, nobody asked", opts: []executor.Option{executor.WithGates(ask, deny), executor.WithApprover(gate.ApproverFunc(func(context.Context, gate.ApprovalRequest) (gate.ApprovalResult, error) {
			panic("approver must not be asked")
		}))}, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "deny-policy"}},
		{name: "cancelled before the call", opts: []executor.Option{executor.WithGates(allow)}, cancelly: true, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrCancelled, errorType: executor.ErrorTypeCancelled, action: gate.ActionDeny, source: gate.SourceExecutor, errorKind: executor.ErrorTypeCancelled}},
		{name: "cancelled while the gate decides never executes", opts: []executor.Option{executor.WithGates(cancelling)}, cancelIn: true, call: call("c1", "bash", `{"command":"ls"}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "cancel-policy", errorKind: gate.ErrorKindCancelled}},
		{name: "tool error", call: call("c1", "fail", `{}`),
			want: want{isError: true, errIs: executor.ErrToolFailed, errorType: executor.ErrorTypeToolError, ran: 1, content: []string{`Tool "fail" failed: disk full`}}},
		{name: "tool panic", call: call("c1", "boom", `{}`),
			want: want{isError: true, errIs: executor.ErrToolPanicked, errorType: executor.ErrorTypeToolPanic, ran: 1, content: []string{"kaboom"}}},
		{name: "valid output", call: call("c1", "typed", `{"out":"{\"n\":3}"}`), want: want{ran: 1}},
		{name: "invalid output", call: call("c1", "typed", `{"out":"{\"n\":\"three\"}"}`),
			want: want{isError: true, errIs: executor.ErrInvalidOutput, errorType: executor.ErrorTypeInvalidOutput, ran: 1, content: []string{`Invalid output from tool "typed"`}}},
		{name: "consequential policy asks", opts: []executor.Option{executor.WithGates(gate.AskConsequential()), executor.WithApprover(decline)}, call: call("c1", "deploy", `{}`),
			want: want{isError: true, errIs: executor.ErrDenied, errorType: gate.ErrorTypeGateDenied, gated: true, action: gate.ActionDeny, source: "consequential", approval: gate.ApprovalDeclined, approver: "bot"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts...)
			a := h.agent(t, tc.agent...)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelly {
				cancel()
			}
			cancelGateCancel = cancel
			res := a.Run("run-1").Execute(ctx, tc.call)
			w := tc.want
			assert.Equal(t, w.isError, res.IsError, "IsError; content %q", res.Content)
			if w.errIs != nil {
				assert.ErrorIs(t, res.Err, w.errIs)
			} else {
				assert.NoError(t, res.Err)
			}
			assert.Equal(t, w.errorType, res.ErrorType)
			assert.Equal(t, tc.call.ID, res.ToolCallID)
			assert.Equal(t, tc.call.Name, res.ToolName)
			g := res.Gate
			assert.Equal(t, w.gated, g.Gated, "gated")
			assert.Equal(t, w.action, g.Action, "action")
			assert.Equal(t, w.source, g.Source, "source")
			assert.Equal(t, w.errorKind, g.ErrorKind, "error kind; reason %q", g.Reason)
			assert.Equal(t, w.approval, g.Approval, "approval")
			assert.Equal(t, w.approver, g.Approver, "approver")
			assert.Equal(t, w.optOut, g.OptOut, "opt-out")
			if g.Action == gate.ActionDeny {
				assert.NotEmpty(t, g.Reason)
			}
			if c, ok := h.calls[tc.call.Name]; ok {
				assert.Equal(t, w.ran, c.Load(), "executions of %s", tc.call.Name)
			}
			for _, s := range w.content {
				assert.Contains(t, res.Content, s)
			}
			// Exactly one span per call, whatever happened.
			assert.Len(t, h.spans.GetSpans(), 1)
		})
	}
}

func TestAbortOnDeny(t *testing.T) {
	denyBash := gate.DenyTools("no shell", "bash")
	for _, abort := range []bool{false, true} {
		t.Run(map[bool]string{false: "off by default", true: "on"}[abort], func(t *testing.T) {
			opts := []executor.Option{executor.WithGates(denyBash)}
			if abort {
				opts = append(opts, executor.WithAbortOnDeny(true))
			}
			h := newHarness(t, opts...)
			run := h.agent(t).Run("r")
			first := run.Execute(context.Background(), call("c1", "bash", `{"command":"ls"}`))
			require.ErrorIs(t, first.Err, executor.ErrDenied)
			second := run.Execute(context.Background(), call("c2", "read", `{}`))
			if abort {
				assert.ErrorIs(t, run.Err(), executor.ErrRunAborted)
				assert.ErrorIs(t, second.Err, executor.ErrRunAborted)
				assert.Equal(t, executor.ErrorTypeRunAborted, second.ErrorType)
				assert.Zero(t, h.calls["read"].Load())
				// Other runs are not affected.
				other := h.agent(t).Run("r2").Execute(context.Background(), call("c3", "read", `{}`))
				assert.False(t, other.IsError)
			} else {
				assert.NoError(t, run.Err())
				assert.False(t, second.IsError)
				assert.EqualValues(t, 1, h.calls["read"].Load())
			}
		})
	}
}

func TestAgentConfigErrors(t *testing.T) {
	h := newHarness(t)
	_, err := h.ex.Agent("")
	assert.ErrorIs(t, err, executor.ErrInvalidAgent)
	_, err = h.ex.Agent("a", executor.AgentPresets("nope"))
	assert.ErrorIs(t, err, executor.ErrInvalidAgent)
	_, err = executor.New(nil)
	assert.Error(t, err)
}

func TestRegistryErrors(t *testing.T) {
	ok := func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text(""), nil }
	tests := []struct {
		name string
		tool executor.Tool
		err  error
	}{
		{"empty name", executor.Tool{Execute: ok}, executor.ErrInvalidTool},
		{"bad name", executor.Tool{Name: "rm -rf", Execute: ok}, executor.ErrInvalidTool},
		{"no execute", executor.Tool{Name: "x"}, executor.ErrInvalidTool},
		{"bad type", executor.Tool{Name: "x", Type: "gadget", Execute: ok}, executor.ErrInvalidTool},
		{"schema not JSON", executor.Tool{Name: "x", InputSchema: json.RawMessage(`{`), Execute: ok}, executor.ErrInvalidTool},
		{"schema invalid", executor.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"objekt"}`), Execute: ok}, executor.ErrInvalidTool},
		{"schema not an object", executor.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"string"}`), Execute: ok}, executor.ErrInvalidTool},
		{"external ref not loaded", executor.Tool{Name: "x", InputSchema: json.RawMessage(`{"$ref":"file:///etc/passwd"}`), Execute: ok}, executor.ErrInvalidTool},
		{"bad output schema", executor.Tool{Name: "x", OutputSchema: json.RawMessage(`{"type":1}`), Execute: ok}, executor.ErrInvalidTool},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := executor.NewRegistry(tc.tool)
			assert.ErrorIs(t, err, tc.err)
		})
	}
	reg, err := executor.NewRegistry(executor.Tool{Name: "x", Execute: ok})
	require.NoError(t, err)
	assert.ErrorIs(t, reg.Register(executor.Tool{Name: "x", Execute: ok}), executor.ErrDuplicateTool)
	assert.ErrorIs(t, reg.Register(executor.Tool{Name: "y", Execute: ok}, executor.Tool{Name: "y", Execute: ok}), executor.ErrDuplicateTool)
	assert.Equal(t, []string{"x"}, reg.Names(), "a failed Register adds nothing")
}

func TestToolSeesCallAndRewrittenInput(t *testing.T) {
	var seen gate.ToolCallContext
	var got string
	reg, err := executor.NewRegistry(executor.Tool{Name: "echo", InputSchema: json.RawMessage(bashSchema),
		Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
			seen, _ = executor.CallFrom(ctx)
			got = string(in)
			return executor.Text("ok"), nil
		}})
	require.NoError(t, err)
	ex, err := executor.New(reg, executor.WithGates(fixed("rw", gate.AllowRewritten(json.RawMessage(`{"command":"safe"}`), ""))))
	require.NoError(t, err)
	a, err := ex.Agent("ag", executor.AgentAllow("echo"))
	require.NoError(t, err)
	res := a.Run("r", executor.WithTask("t")).Execute(context.Background(), call("id1", "echo", `{"command":"unsafe"}`))
	require.False(t, res.IsError, res.Content)
	assert.True(t, res.Gate.Rewritten)
	assert.Equal(t, `{"command":"safe"}`, got)
	assert.Equal(t, "safe", seen.String("command"))
	assert.Equal(t, `{"command":"safe"}`, string(seen.RawInput), "RawInput is what the tool receives")
	assert.Equal(t, `{"command":"unsafe"}`, string(seen.OriginalInput))
	assert.Equal(t, "rw", res.Gate.RewrittenBy)
	assert.Equal(t, gate.InputHash([]byte(`{"command":"unsafe"}`)), res.Gate.OriginalInputHash)
	assert.Equal(t, "id1", seen.ToolCallID)
	assert.Equal(t, "ag", seen.AgentName)
	assert.Equal(t, "r", seen.RunID)
	assert.Equal(t, "t", seen.TaskID)
	_, ok := executor.CallFrom(context.Background())
	assert.False(t, ok)
}

func TestGateSeesContext(t *testing.T) {
	var seen gate.ToolCallContext
	spy := gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		seen = c
		return gate.Allow(), nil
	})
	h := newHarness(t, executor.WithGates(spy))
	res := h.agent(t).Run("run-9").Task("task-3").Execute(context.Background(), call("c7", "deploy", `{"env":"prod"}`))
	require.False(t, res.IsError)
	assert.Equal(t, "deploy", seen.ToolName)
	assert.Equal(t, map[string]any{"env": "prod"}, seen.Input)
	assert.JSONEq(t, `{"env":"prod"}`, string(seen.RawInput))
	assert.Equal(t, "c7", seen.ToolCallID)
	assert.Equal(t, "tester", seen.AgentName)
	assert.Equal(t, "run-9", seen.RunID)
	assert.Equal(t, "task-3", seen.TaskID)
	assert.True(t, seen.Consequential)
	assert.Equal(t, "gate[0]", res.Gate.Source, "an unnamed gate is named by position")
}

func TestTruncation(t *testing.T) {
	h := newHarness(t, executor.WithMaxOutputBytes(50))
	a := h.agent(t)
	res := a.Run("r").Execute(context.Background(), call("c", "big", `{}`))
	require.False(t, res.IsError)
	assert.LessOrEqual(t, len(res.Content), 200, "tool maximum wins over the executor default")
	assert.True(t, strings.HasPrefix(res.Content, "HEAD"))
	assert.True(t, strings.HasSuffix(res.Content, "TAIL"))
	assert.Contains(t, res.Content, "truncated")
	assert.Equal(t, 10000-(len(res.Content)-len(markerOf(res.Content))), res.TruncatedBytes)
	assert.Contains(t, res.Content, "truncated "+itoa(res.TruncatedBytes)+" bytes")

	// The executor default applies to tools without their own maximum.
	res = a.Run("r").Execute(context.Background(), call("c", "bash", `{"command":"`+strings.Repeat("y", 300)+`"}`))
	assert.LessOrEqual(t, len(res.Content), 50)
	assert.Positive(t, res.TruncatedBytes)
}

func markerOf(s string) string {
	i := strings.Index(s, "\n[... truncated")
	j := strings.Index(s, "...]\n")
	return s[i : j+5]
}

var _ atomic.Int64

func TestExecutorMessagesAreBounded(t *testing.T) {
	h := newHarness(t)
	var b strings.Builder
	b.WriteString(`{"command":"ls"`)
	for i := range 5000 {
		b.WriteString(`,"extra` + itoa(i) + `":1`)
	}
	b.WriteString("}")
	res := h.agent(t).Run("r").Execute(context.Background(), call("c", "bash", b.String()))
	require.ErrorIs(t, res.Err, executor.ErrInvalidInput)
	assert.LessOrEqual(t, len(res.Content), 4096)
	assert.True(t, strings.HasPrefix(res.Content, `Invalid input for tool "bash"`))
}
