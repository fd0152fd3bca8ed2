package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// TestRedTeamOversizedDecisionThroughCollector (red team): a
// prompt-injected model sends a 5 MiB argument to an agent that records
// content with a raised record limit (strict mode, spool on). The span is
// larger than our collector's gRPC receive limit (4 MiB): before the fix
// the collector refused it on every attempt and the spool's drainer
// retried it forever, so no later decision of the process ever reached
// ClickHouse. Now the executor records at most executor.MaxRecordLimit
// bytes of a value (the chain covers the recorded input, so the export
// path must not cut it), and the spool cuts what other instrumentations
// make too large; every decision is stored and the run's chain verifies
// complete.
func TestRedTeamOversizedDecisionThroughCollector(t *testing.T) {
	t.Parallel()
	s := startStack(t, withoutJaeger())
	service := "e2e-redteam-oversized"
	p := s.providerCfg(t, otelbridge.Config{ServiceName: service, Sampling: sampling.Config{Setting: sampling.MustParse("all")},
		Spool: spool.Config{Dir: t.TempDir()}})
	ex := newExecutor(t, p, 1, executor.WithWriteAhead(p), executor.WithRecordContent(true), executor.WithRecordLimit(16<<20))
	a, err := ex.Agent("coder", executor.AgentAllow("bash"))
	require.NoError(t, err)
	run := a.Run("run-oversized")
	var ids []string
	call := func(id, cmd string) {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		res := run.Execute(context.Background(), executor.ToolCall{ID: id, Name: "bash", Input: in})
		require.NotEqual(t, executor.ErrorTypeAuditUnavailable, res.ErrorType, "%v", res.Err)
		ids = append(ids, id)
	}
	call("before", "ls")
	call("huge", "echo "+strings.Repeat("A", 5<<20))
	for i := range 20 {
		call(fmt.Sprint("after-", i), "ls")
	}
	run.End()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = p.ForceFlush(ctx)
	missing := s.waitStored(t, service, ids, time.Minute)
	assert.Empty(t, missing, "decisions never stored")
	chains, err := s.store.Chains(context.Background(), audit.ChainQuery{RunID: "run-oversized"})
	require.NoError(t, err)
	reps := audit.Verify(chains)
	require.Len(t, reps, 1)
	assert.True(t, reps[0].Complete, "%+v", reps[0].Problems)
	st := p.Stats().Spool
	assert.Zero(t, st.Dropped+st.Refused)
}
