package e2e_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestFloodStatsCountEveryCall: a hostile model floods 1,000 calls to
// tools that do not exist, between real calls, through the SDK, our
// collector and ClickHouse. Past the refusal budget the executor groups
// the refused calls (one span per up to 64, gate.calls); the audit store
// keeps the count (Calls), so `auditq stats` totals exactly the calls the
// model made — the flood included — and `auditq decisions` shows each
// grouped row's count. Before, stats counted a grouped span as one call.
func TestFloodStatsCountEveryCall(t *testing.T) {
	s := startStack(t, withoutJaeger())
	ctx := context.Background()
	const service, flood = "e2e-flood-calls", 1000
	p := s.provider(t, service, "decisions")
	ex := newExecutor(t, p, 0)
	a, err := ex.Agent("flooder", executor.AgentAllow("bash"))
	require.NoError(t, err)
	run := a.Run("run-flood")
	made := 0
	exec1 := func(id, tool, input string) executor.ToolResult {
		made++
		return run.Execute(ctx, executor.ToolCall{ID: id, Name: tool, Input: json.RawMessage(input)})
	}
	require.Equal(t, gate.ActionAllow, exec1("ls", "bash", `{"command":"ls -la"}`).Gate.Action)
	require.Equal(t, gate.ActionDeny, exec1("rm", "bash", `{"command":"rm -rf /"}`).Gate.Action)
	for i := range flood {
		res := exec1(fmt.Sprintf("bogus-%d", i), fmt.Sprintf("nosuch_%d", i), `{}`)
		require.True(t, res.IsError)
	}
	last := exec1("after", "bash", `{"command":"ls"}`)
	assert.Equal(t, gate.StageRun, last.Gate.Stage, "the run was aborted by its refusal budget")
	run.End()
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, p.ForceFlush(fctx))
	assert.Zero(t, p.Stats().Lost())
	require.Equal(t, flood+3, made)

	// The store counts calls: wait until every call is in.
	f := audit.Filter{Service: service}
	var st audit.Stats
	require.Eventually(t, func() bool {
		st, err = s.store.Stats(ctx, audit.StatsQuery{Filter: f})
		return err == nil && st.Total >= uint64(made)
	}, 60*time.Second, 250*time.Millisecond, "stats total reaches the calls made (last %d, %v)", st.Total, err)
	assert.EqualValues(t, made, st.Total, "every call once")
	assert.EqualValues(t, made-1, st.TotalDenied, "all but ls were denied")

	page, err := s.store.Decisions(ctx, f, audit.Page{Limit: audit.MaxLimit})
	require.NoError(t, err)
	rows := len(page.Decisions)
	t.Logf("%d calls made, %d decision rows", made, rows)
	assert.Less(t, rows, made/10, "the flood is grouped: %d rows for %d calls", rows, made)
	var sum uint64
	grouped := 0
	for _, d := range page.Decisions {
		sum += d.Calls
		require.GreaterOrEqual(t, d.Calls, uint64(1), d.SpanID)
		if d.Calls > 1 {
			grouped++
			assert.LessOrEqual(t, d.Calls, uint64(executor.AggregateRefusals), d.SpanID)
			assert.Equal(t, string(gate.StageRun), d.Stage, d.SpanID)
			assert.Equal(t, executor.ErrorTypeRunAborted, d.ErrorKind, d.SpanID)
		}
	}
	assert.EqualValues(t, made, sum, "the rows' calls add up to the calls made")
	assert.GreaterOrEqual(t, grouped, (flood-executor.DefaultRefusalBudget)/executor.AggregateRefusals-1)

	// auditq, as an auditor asks: stats by stage, and the decisions' calls.
	bin := testenv.AuditqBinary(t)
	window := []string{"--dsn", s.ch.ReaderDSN, "--service", service, "--since", "1h"}
	out, err := exec.CommandContext(ctx, bin, append([]string{"stats", "--by", "stage", "-o", "csv"}, window...)...).Output()
	require.NoError(t, err)
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"stage", "count", "denied"}, recs[0])
	byStage := map[string]int{}
	total := 0
	for _, r := range recs[1:] {
		n, err := strconv.Atoi(r[1])
		require.NoError(t, err)
		byStage[r[0]] = n
		total += n
	}
	assert.Equal(t, made, total, "auditq stats: %s", out)
	// The rm denial is the first of the budget's calls that did not run.
	assert.Equal(t, executor.DefaultRefusalBudget-1, byStage["registry"], "the budget's refusals, one span each")
	assert.Equal(t, 2, byStage["gate"])
	assert.Equal(t, made-2-(executor.DefaultRefusalBudget-1), byStage["run"], "the abort and every call after it")

	out, err = exec.CommandContext(ctx, bin, append([]string{"decisions", "-o", "json", "-n", "1000"}, window...)...).Output()
	require.NoError(t, err)
	var ds []struct {
		Stage string `json:"stage"`
		Calls uint64 `json:"calls"`
	}
	require.NoError(t, json.Unmarshal(out, &ds))
	require.Len(t, ds, rows)
	sum = 0
	for _, d := range ds {
		sum += d.Calls
	}
	assert.EqualValues(t, made, sum, "auditq decisions' calls add up to the calls made")
	out, err = exec.CommandContext(ctx, bin, append([]string{"decisions", "--no-color", "-n", "1000", "--stage", "run"}, window...)...).Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), fmt.Sprintf("×%d", executor.AggregateRefusals), "the table marks grouped rows")
}
