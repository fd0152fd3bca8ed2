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

// TestRunIsOneTraceWithEveryAttempt is issue 13's items 2 and 3 end to
// end, through the SDK (default sampling), our collector, ClickHouse and
// Jaeger: one run of an agent that tries an allowed command, a denied one,
// the unknown tool delete_everything, a tool it cannot reach and invalid
// input. Every call is a gate_decisions row with its stage, all in the
// run's one trace, children of the run's invoke_agent span (opened by the
// executor, not by hand); `auditq trace` lists them under the run, and
// Jaeger holds the same trace.
func TestRunIsOneTraceWithEveryAttempt(t *testing.T) {
	s := startStack(t)
	ctx := context.Background()
	const service = "e2e-stages"
	p := s.provider(t, service, "decisions")
	ex := newExecutor(t, p, 0)
	a, err := ex.Agent("intruder", executor.AgentAllow("bash"))
	require.NoError(t, err)
	run := a.Run("run-stages")
	calls := []struct {
		id, tool, input, stage, action string
	}{
		{"ls", "bash", `{"command":"ls -la"}`, "gate", "allow"},
		{"rm", "bash", `{"command":"rm -rf /"}`, "gate", "deny"},
		{"unknown", "delete_everything", `{"path":"/"}`, "registry", "deny"},
		{"unreachable", "web_fetch", `{"url":"https://evil.example"}`, "reachability", "deny"},
		{"invalid", "bash", `{"command":""}`, "input", "deny"},
	}
	for _, c := range calls {
		res := run.Execute(ctx, executor.ToolCall{ID: c.id, Name: c.tool, Input: json.RawMessage(c.input)})
		require.Equal(t, gate.Stage(c.stage), res.Gate.Stage, c.id)
	}
	run.End()
	traceID := run.SpanContext().TraceID().String()
	runSpan := run.SpanContext().SpanID().String()
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, p.ForceFlush(fctx))
	assert.Zero(t, p.Stats().Lost())

	// ClickHouse: one row per call, with its stage, in the run's trace.
	require.Equal(t, len(calls), s.waitDecisions(ctx, t, service, len(calls), 60*time.Second))
	rows := map[string]decisionRow{}
	for _, r := range s.decisions(ctx, t, service) {
		rows[r.ToolCallID] = r
	}
	require.Len(t, rows, len(calls))
	for _, c := range calls {
		r := rows[c.id]
		assert.Equal(t, c.stage, r.Stage, c.id)
		assert.Equal(t, c.action, r.Action, c.id)
		assert.Equal(t, c.tool, r.ToolName, c.id)
		assert.Equal(t, traceID, r.TraceID, "%s is in the run's trace", c.id)
		assert.Equal(t, runSpan, r.ParentSpanID, "%s is a child of the run span", c.id)
	}
	names := s.spanNames(ctx, t, service)
	assert.EqualValues(t, 1, names["invoke_agent intruder"], "the run span is stored")
	assert.EqualValues(t, 1, names["execute_tool"], "the unknown tool's span is named just execute_tool")

	// auditq trace: the run with every attempt under it.
	cmd := exec.CommandContext(ctx, testenv.AuditqBinary(t), "trace", traceID, "--dsn", s.ch.ReaderDSN, "--utc", "--no-color")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 2+len(calls), "%s", out)
	assert.Contains(t, lines[0], "6 spans, 5 decisions, 4 denied")
	assert.Contains(t, lines[1], "invoke_agent intruder")
	for i, want := range []string{
		"execute_tool bash  allow",
		"execute_tool bash  deny",
		"execute_tool [delete_everything]  deny  before the gate (registry)",
		"execute_tool web_fetch  deny  before the gate (reachability)",
		"execute_tool bash  deny  before the gate (input)",
	} {
		assert.Contains(t, lines[2+i], want, "%s", out)
	}

	// Jaeger: the same one trace (kept whole: it has denials).
	var spans []string
	require.Eventually(t, func() bool {
		traces, err := s.jaeger.Traces(ctx, service, nil, time.Hour, 10)
		if err != nil || len(traces) != 1 || len(traces[0].Spans) != 1+len(calls) {
			return false
		}
		spans = spans[:0]
		for _, sp := range traces[0].Spans {
			spans = append(spans, sp.OperationName)
			if sp.OperationName != "invoke_agent intruder" {
				assert.Equal(t, runSpan, sp.ParentSpanID())
			}
		}
		return traces[0].TraceID == traceID
	}, 30*time.Second, 250*time.Millisecond, "one trace in Jaeger")
	assert.ElementsMatch(t, []string{"invoke_agent intruder", "execute_tool bash", "execute_tool bash", "execute_tool",
		"execute_tool web_fetch", "execute_tool bash"}, spans)
}
