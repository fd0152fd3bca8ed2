package e2e_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestCustomGateRuleInStatsByRule: a custom gate that names its rule
// (Decision.Rule, docs/gates.md) and writes no "[rule]" into its reason is
// counted under that rule by `auditq stats --by rule`, through the SDK, our
// collector and ClickHouse.
func TestCustomGateRuleInStatsByRule(t *testing.T) {
	s := startStack(t, withoutJaeger())
	ctx := context.Background()
	const service = "e2e-rules"
	p := s.provider(t, service, "decisions")
	noProd := gate.Named("no-prod", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		cmd, _ := c.Input["command"].(string)
		if strings.Contains(cmd, "prod") {
			d := gate.Deny("writes to the production database")
			d.Rule = "prod.write"
			return d, nil
		}
		return gate.Allow(), nil
	}))
	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","minLength":1}},"required":["command"]}`),
		Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
			return executor.Text(string(in)), nil
		},
	})
	require.NoError(t, err)
	ex, err := executor.New(reg, executor.WithTracerProvider(p), executor.WithGates(noProd))
	require.NoError(t, err)
	a, err := ex.Agent("dba", executor.AgentAllow("bash"))
	require.NoError(t, err)
	run := a.Run("run-rules")
	for i, cmd := range []string{"psql prod -c 'drop table users'", "ls", "psql prod -c 'delete from orders'"} {
		res := run.Execute(ctx, executor.ToolCall{ID: "c" + string(rune('0'+i)), Name: "bash", Input: json.RawMessage(`{"command":` + quote(cmd) + `}`)})
		if strings.Contains(cmd, "prod") {
			require.Equal(t, "prod.write", res.Gate.Rule, cmd)
		}
	}
	run.End()
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, p.ForceFlush(fctx))
	require.Equal(t, 3, s.waitDecisions(ctx, t, service, 3, 60*time.Second))

	out, err := exec.CommandContext(ctx, testenv.AuditqBinary(t), "stats", "--by", "rule", "--service", service, "-o", "csv",
		"--dsn", s.ch.ReaderDSN).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "rule,count,denied\nprod.write,2,2\n,1,0\n", string(out))
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
