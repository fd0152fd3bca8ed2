package executor_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// recordingApprover approves with the configured scope and records every
// request it saw.
type recordingApprover struct {
	mu       sync.Mutex
	reqs     []gate.ApprovalRequest
	remember gate.GrantScope
	approve  bool
}

func (r *recordingApprover) Approve(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	if !r.approve {
		return req.Decline("rec", ""), nil
	}
	res := req.Approve("rec", "")
	res.Remember = r.remember
	return res, nil
}

func TestApprovalBoundToExactCall(t *testing.T) {
	ask := gate.AskTools("confirm shell", "bash")
	ap := &recordingApprover{approve: true}
	h := newHarness(t, executor.WithGates(ask), executor.WithApprover(ap))
	run := h.agent(t).Run("r")
	res := run.Execute(context.Background(), call("c1", "bash", `{"command":"ls"}`))
	require.False(t, res.IsError, res.Content)
	// A second, identical command with another call ID is asked again: an
	// approval is used once.
	res = run.Execute(context.Background(), call("c2", "bash", `{"command":"ls"}`))
	require.False(t, res.IsError)
	require.Len(t, ap.reqs, 2)
	r1, r2 := ap.reqs[0], ap.reqs[1]
	assert.Equal(t, gate.RequestHash(gate.ToolCallContext{ToolName: "bash", RawInput: []byte(`{"command":"ls"}`), ToolCallID: "c1", AgentName: "tester", RunID: "r"}, r1.Nonce), r1.CallHash)
	assert.NotEqual(t, r1.CallHash, r2.CallHash)
	assert.Equal(t, "confirm shell", r1.Decision.Reason)
	assert.Equal(t, "c1", r1.Call.ToolCallID)
}

func TestRememberedGrantForRun(t *testing.T) {
	ask := gate.AskTools("confirm shell", "bash")
	ap := &recordingApprover{approve: true, remember: gate.GrantScopeRun}
	h := newHarness(t, executor.WithGates(ask), executor.WithApprover(ap))
	a := h.agent(t)
	run := a.Run("r")
	tests := []struct {
		name     string
		run      *executor.Run
		call     executor.ToolCall
		asked    int // approver requests so far
		approver string
	}{
		{"first ask goes to the approver", run, call("c1", "bash", `{"command":"make test"}`), 1, "rec"},
		{"same command in the run is granted", run, call("c2", "bash", `{"command":"make test"}`), 1, executor.ApproverGrant},
		{"same command in another task of the run is granted", run.Task("t2"), call("c3", "bash", `{"command":"make test"}`), 1, executor.ApproverGrant},
		{"another command is asked", run, call("c4", "bash", `{"command":"make deploy"}`), 2, "rec"},
		{"another run is asked", a.Run("r2"), call("c5", "bash", `{"command":"make test"}`), 3, "rec"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ap.remember = gate.GrantScopeNone
			if tc.approver == "rec" && tc.call.ID == "c1" {
				ap.remember = gate.GrantScopeRun
			}
			res := tc.run.Execute(context.Background(), tc.call)
			require.False(t, res.IsError, res.Content)
			assert.Equal(t, gate.ApprovalApproved, res.Gate.Approval)
			assert.Equal(t, tc.approver, res.Gate.Approver)
			assert.Len(t, ap.reqs, tc.asked)
			// The recorded reason says who approved it, so the audit
			// trail can tell an approval from an allow.
			assert.True(t, strings.HasPrefix(res.Gate.Reason, "confirm shell; approved by "), res.Gate.Reason)
		})
	}
	// A grant never overrides a deny.
	h2 := newHarness(t, executor.WithGates(gate.DenyTools("never", "bash")))
	run2 := h2.agent(t).Run("r")
	require.NoError(t, run2.Grant(context.Background(), "bash", []byte(`{"command":"ls"}`)))
	res := run2.Execute(context.Background(), call("c", "bash", `{"command":"ls"}`))
	assert.Equal(t, gate.ActionDeny, res.Gate.Action)
}

// channelUI is a test approver that publishes requests and lets the test
// answer them with any result (including forged ones).
type channelUI struct {
	reqs    chan gate.ApprovalRequest
	answers chan gate.ApprovalResult
}

func newChannelUI() *channelUI {
	return &channelUI{reqs: make(chan gate.ApprovalRequest, 8), answers: make(chan gate.ApprovalResult, 8)}
}

func (c *channelUI) Approve(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
	c.reqs <- req
	select {
	case a := <-c.answers:
		return a, nil
	case <-ctx.Done():
		return req.TimedOut("ui", ""), nil
	}
}

func TestCancelWhileWaitingForApproval(t *testing.T) {
	ui := newChannelUI()
	h := newHarness(t, executor.WithGates(gate.AskTools("confirm", "bash")), executor.WithApprover(ui))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-ui.reqs
		cancel()
	}()
	res := h.agent(t).Run("r").Execute(ctx, call("c1", "bash", `{"command":"ls"}`))
	assert.Equal(t, gate.ActionDeny, res.Gate.Action)
	assert.Equal(t, gate.ErrorKindCancelled, res.Gate.ErrorKind)
	assert.Equal(t, gate.ApprovalTimeout, res.Gate.Approval)
	assert.Zero(t, h.calls["bash"].Load())
}
