package replay

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/gate"
)

func req(tool string, risk gate.RiskLevel, input map[string]any) gate.ApprovalRequest {
	raw, _ := json.Marshal(input)
	return gate.ApprovalRequest{
		Call:     gate.ToolCallContext{ToolName: tool, Input: input, RawInput: raw},
		Decision: gate.Ask("review").WithRisk(risk),
	}
}

func TestPolicyApprover(t *testing.T) {
	const yml = `
default: {approve: false, reason: "ask a human"}
rules:
  - tool: bash
    risk: review
    match: '^git (status|diff)'
    approve: true
    reason: read-only git
  - tool: write_file
    approve: false
    reason: no writes in replay
  - risk: review
    match: '^pytest'
    approve: true
`
	p, err := ParsePolicy([]byte(yml))
	require.NoError(t, err)
	a := p.Approver("test")
	tests := []struct {
		name    string
		r       gate.ApprovalRequest
		want    bool
		outcome string
		reason  string
	}{
		{"first rule matches", req("bash", gate.RiskReview, map[string]any{"command": "git status"}), true, gate.ApprovalApproved, "read-only git"},
		{"risk must match", req("bash", gate.RiskHigh, map[string]any{"command": "git status"}), false, gate.ApprovalDeclined, "ask a human"},
		{"tool-only rule", req("write_file", gate.RiskReview, map[string]any{"path": "a.go"}), false, gate.ApprovalDeclined, "no writes in replay"},
		{"rule without tool", req("ipython", gate.RiskReview, map[string]any{"code": "pytest -q"}), true, gate.ApprovalApproved, ""},
		{"default", req("bash", gate.RiskReview, map[string]any{"command": "make install"}), false, gate.ApprovalDeclined, "ask a human"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := a.Approve(context.Background(), tt.r)
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Approved)
			assert.Equal(t, tt.outcome, res.Outcome)
			assert.Equal(t, tt.reason, res.Reason)
			assert.Equal(t, "policy:test", res.Approver)
		})
	}
}

func TestDefaultPolicyDenies(t *testing.T) {
	res, err := DefaultPolicy().Approver("default").Approve(context.Background(), req("bash", gate.RiskReview, map[string]any{"command": "make"}))
	require.NoError(t, err)
	assert.False(t, res.Approved)
	assert.Equal(t, DefaultReviewReason, res.Reason)
}

func TestPolicyApproverCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := DefaultPolicy().Approver("x").Approve(ctx, req("bash", gate.RiskReview, nil))
	require.Error(t, err)
	assert.Equal(t, gate.ApprovalTimeout, res.Outcome)
	assert.False(t, res.Approved)
}

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct{ name, yml, want string }{
		{"unknown field", "rules:\n  - tol: bash\n    approve: true\n", "field tol not found"},
		{"bad risk", "rules:\n  - risk: medium\n    approve: true\n", "rule 1"},
		{"bad regexp", "rules:\n  - match: '('\n    approve: true\n", "match"},
		{"declining rule without reason", "rules:\n  - tool: bash\n    approve: false\n", "needs a reason"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(tt.yml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
