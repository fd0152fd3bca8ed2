package executor_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

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
	return gate.ApprovalResult{Approved: r.approve, Approver: "rec", Remember: r.remember}, nil
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
	assert.Equal(t, gate.CallHash("bash", map[string]any{"command": "ls"}, "c1"), r1.CallHash)
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
	run2.Grant("bash", map[string]any{"command": "ls"})
	res := run2.Execute(context.Background(), call("c", "bash", `{"command":"ls"}`))
	assert.Equal(t, gate.ActionDeny, res.Gate.Action)
}

func TestChannelApproverThroughExecutor(t *testing.T) {
	ch := gate.NewChannelApprover("ui", 0)
	h := newHarness(t, executor.WithGates(gate.AskTools("confirm", "bash", "deploy")), executor.WithApprover(ch),
		executor.WithApprovalTimeout(2*time.Second))
	run := h.agent(t).Run("r")
	go func() {
		for req := range ch.Requests() {
			// The UI approves bash and declines deploy; a replayed answer is
			// rejected.
			ok := req.Call.ToolName == "bash"
			_ = ch.Resolve(req.CallHash, gate.ApprovalResult{Approved: ok, Reason: "ui says so"})
			assert.ErrorIs(t, ch.Resolve(req.CallHash, gate.ApprovalResult{Approved: true}), gate.ErrApprovalUnknown)
		}
	}()
	res := run.ExecuteBatch(context.Background(), []executor.ToolCall{
		call("c1", "bash", `{"command":"ls"}`),
		call("c2", "deploy", `{}`),
		call("c3", "read", `{}`),
	})
	require.Len(t, res, 3)
	assert.Equal(t, gate.ActionAllow, res[0].Gate.Action)
	assert.Equal(t, "ui", res[0].Gate.Approver)
	assert.Equal(t, gate.ActionDeny, res[1].Gate.Action)
	assert.Equal(t, gate.ApprovalDeclined, res[1].Gate.Approval)
	assert.Contains(t, res[1].Content, "ui says so")
	assert.Equal(t, gate.ActionAllow, res[2].Gate.Action)
	assert.Empty(t, res[2].Gate.Approval)
	assert.Zero(t, h.calls["deploy"].Load())
}

func TestCancelWhileWaitingForApproval(t *testing.T) {
	ch := gate.NewChannelApprover("ui", 1)
	h := newHarness(t, executor.WithGates(gate.AskTools("confirm", "bash")), executor.WithApprover(ch))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-ch.Requests()
		cancel()
	}()
	res := h.agent(t).Run("r").Execute(ctx, call("c1", "bash", `{"command":"ls"}`))
	assert.Equal(t, gate.ActionDeny, res.Gate.Action)
	assert.Equal(t, gate.ErrorKindCancelled, res.Gate.ErrorKind)
	assert.Equal(t, gate.ApprovalTimeout, res.Gate.Approval)
	assert.Zero(t, h.calls["bash"].Load())
}
