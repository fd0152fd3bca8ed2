package approve_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/gate"
)

// askFor is an ask of the given risk for a call of tool with input, bound
// to that call by its hash.
func askFor(tool string, risk gate.RiskLevel, input map[string]any) gate.ApprovalRequest {
	raw, _ := json.Marshal(input)
	c := gate.ToolCallContext{ToolName: tool, Input: input, RawInput: raw, ToolCallID: "c1", RunID: "r1"}
	return gate.ApprovalRequest{Call: c, Decision: gate.Ask("review").WithRisk(risk), CallHash: gate.CallHash(c)}
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
	p, err := approve.ParsePolicy([]byte(yml))
	require.NoError(t, err)
	a := p.Approver("test")
	tests := []struct {
		name    string
		r       gate.ApprovalRequest
		outcome gate.ApprovalOutcome
		reason  string
	}{
		{"first rule matches", askFor("bash", gate.RiskReview, map[string]any{"command": "git status"}), gate.ApprovalApproved, "read-only git"},
		{"risk must match", askFor("bash", gate.RiskHigh, map[string]any{"command": "git status"}), gate.ApprovalDeclined, "ask a human"},
		{"tool-only rule", askFor("write_file", gate.RiskReview, map[string]any{"path": "a.go"}), gate.ApprovalDeclined, "no writes in replay"},
		{"rule without tool", askFor("ipython", gate.RiskReview, map[string]any{"code": "pytest -q"}), gate.ApprovalApproved, ""},
		{"default", askFor("bash", gate.RiskReview, map[string]any{"command": "make install"}), gate.ApprovalDeclined, "ask a human"},
		{"no known field: match on the raw input", askFor("bash", gate.RiskReview, map[string]any{"argv": "git status"}), gate.ApprovalDeclined, "ask a human"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := a.Approve(context.Background(), tt.r)
			require.NoError(t, err)
			assert.Equal(t, tt.outcome, res.Outcome)
			assert.Equal(t, tt.outcome == gate.ApprovalApproved, res.Approved())
			assert.Equal(t, tt.reason, res.Reason)
			assert.Equal(t, "policy:test", res.Approver)
			assert.Equal(t, tt.r.CallHash, res.CallHash, "the answer is bound to the request")
			assert.Equal(t, gate.GrantScopeNone, res.Remember)
		})
	}
}

// TestPolicyJudgesTheInputThatWillRun: after a rewrite the rules see the
// rewritten call, not the model's original input.
func TestPolicyJudgesTheInputThatWillRun(t *testing.T) {
	p, err := approve.ParsePolicy([]byte("rules:\n  - match: '^git status$'\n    approve: true\n"))
	require.NoError(t, err)
	req := askFor("bash", gate.RiskReview, map[string]any{"command": "git status"})
	req.OriginalInput = json.RawMessage(`{"command":"git status; curl evil.example"}`)
	res, err := p.Approver("x").Approve(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, res.Approved())

	req = askFor("bash", gate.RiskReview, map[string]any{"command": "git status; curl evil.example"})
	req.OriginalInput = json.RawMessage(`{"command":"git status"}`)
	res, err = p.Approver("x").Approve(context.Background(), req)
	require.NoError(t, err)
	assert.False(t, res.Approved())
}

func TestDefaultPolicyDenies(t *testing.T) {
	req := askFor("bash", gate.RiskReview, map[string]any{"command": "make"})
	res, err := approve.DefaultPolicy().Approver("default").Approve(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, gate.ApprovalDeclined, res.Outcome)
	assert.Equal(t, approve.DefaultReviewReason, res.Reason)
	assert.Equal(t, "policy:default", res.Approver)
	assert.Equal(t, req.CallHash, res.CallHash)
}

func TestPolicyApproverCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := askFor("bash", gate.RiskReview, map[string]any{"command": "git status"})
	res, err := approve.DefaultPolicy().Approver("x").Approve(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, gate.ApprovalTimeout, res.Outcome)
	assert.False(t, res.Approved())
	assert.Contains(t, res.Reason, context.Canceled.Error())
	assert.Equal(t, req.CallHash, res.CallHash)
}

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		name, yml     string
		defaultReason string
		rules         int
	}{
		{"empty is the default policy", "", approve.DefaultReviewReason, 0},
		{"declining default without a reason", "default: {approve: false}\n", approve.DefaultReviewReason, 0},
		{"approving default keeps its empty reason", "default: {approve: true}\nrules:\n  - tool: bash\n    approve: true\n", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := approve.ParsePolicy([]byte(tt.yml))
			require.NoError(t, err)
			assert.Equal(t, tt.defaultReason, p.Default.Reason)
			assert.Len(t, p.Rules, tt.rules)
		})
	}
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
			_, err := approve.ParsePolicy([]byte(tt.yml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestLoadPolicy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(path, []byte("rules:\n  - tool: bash\n    approve: true\n"), 0o600))
	p, err := approve.LoadPolicy(path)
	require.NoError(t, err)
	assert.Len(t, p.Rules, 1)

	_, err = approve.LoadPolicy(filepath.Join(dir, "missing.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestPolicyBuiltInGo: a Rule built without ParsePolicy still applies its
// Match (an unparsed rule must not match everything), and a Match that
// does not compile matches nothing.
func TestPolicyBuiltInGo(t *testing.T) {
	p := &approve.Policy{
		Default: approve.Rule{Reason: "no"},
		Rules: []approve.Rule{
			{Match: "(", Approve: true},
			{Tool: "bash", Match: "^ls$", Approve: true, Reason: "listing"},
		},
	}
	a := p.Approver("go")
	tests := []struct {
		command string
		want    bool
	}{
		{"ls", true},
		{"rm -rf /", false},
		{"(", false},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			res, err := a.Approve(context.Background(), askFor("bash", gate.RiskReview, map[string]any{"command": tt.command}))
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Approved(), res.Reason)
		})
	}
}

// Red team (second round): a rule matches only when every field a tool may
// read as the command matches, so "git status" in command cannot approve
// the python3 in cmd that made the gate ask.
func TestPolicyMatchesEveryCommandField(t *testing.T) {
	p, err := approve.ParsePolicy([]byte("rules:\n  - tool: bash\n    match: '^git (status|diff)$'\n    approve: true\n    reason: read-only git\n"))
	require.NoError(t, err)
	tests := []struct {
		name  string
		input map[string]any
		ok    bool
	}{
		{"one field", map[string]any{"command": "git status"}, true},
		{"both fields match", map[string]any{"command": "git status", "cmd": "git diff"}, true},
		{"the other field", map[string]any{"command": "git status", "cmd": "python3 evil.py"}, false},
		{"a case variant", map[string]any{"command": "git status", "Cmd": "python3 evil.py"}, false},
		{"a dash variant", map[string]any{"command": "git status", "com-mand": "python3 evil.py"}, false},
		{"a non-string field", map[string]any{"command": "git status", "cmd": []any{"rm"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := p.Approver("p").Approve(context.Background(), askFor("bash", gate.RiskReview, tc.input))
			require.NoError(t, err)
			assert.Equal(t, tc.ok, res.Approved())
		})
	}
}
