package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// storeSpans inserts the spans an SDK exporter received into otel_traces
// with the clickhouse exporter's string forms (audittest.SpanAttrs).
func storeSpans(t *testing.T, ctx context.Context, env *audittest.Env, spans tracetest.SpanStubs) {
	t.Helper()
	rows := make([]audittest.Span, 0, len(spans))
	for _, s := range spans {
		parent := ""
		if s.Parent.HasSpanID() {
			parent = s.Parent.SpanID().String()
		}
		rows = append(rows, audittest.Span{Timestamp: s.StartTime, TraceID: s.SpanContext.TraceID().String(),
			SpanID: s.SpanContext.SpanID().String(), ParentSpanID: parent, Name: s.Name, Service: "verify-test",
			Attrs: audittest.SpanAttrs(s.Attributes), Duration: s.EndTime.Sub(s.StartTime), Status: s.Status.Code.String()})
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, rows))
}

// verifyRun runs `auditq verify --run id -o json` and returns its exit
// code and report.
func verifyRun(t *testing.T, ctx context.Context, env *audittest.Env, runID string, args ...string) (int, verifyResult, string) {
	t.Helper()
	var out bytes.Buffer
	asJSON := len(args) == 0
	if asJSON {
		args = []string{"-o", "json"}
	}
	code, stderr := execAuditq(t, ctx, &out, append([]string{"verify", "--dsn", env.ReaderDSN, "--run", runID}, args...)...)
	var res verifyResult
	if code == 0 || code == exitProblems {
		if asJSON {
			require.NoError(t, json.Unmarshal(out.Bytes(), &res), out.String())
		}
	}
	return code, res, out.String() + stderr
}

// TestVerifyFindsDeletedAndEditedDecisions: a real executor run (allowed,
// denied, refused before the gate, hostile strings) stored in the real
// ClickHouse engine verifies complete (exit 0); after one row is deleted
// as the writer user, verify names the missing position (exit 3); after
// another row's Reason is altered, it names that row as edited — in json
// and in the table.
func TestVerifyFindsDeletedAndEditedDecisions(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })
	reg, err := executor.NewRegistry(executor.Tool{Name: "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
		Execute:     func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil }})
	require.NoError(t, err)
	deny := gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		cmd, _ := c.Input["command"].(string)
		if strings.Contains(cmd, "rm") {
			return gate.Decision{Action: gate.ActionDeny, Reason: "removes files: " + cmd, Rule: "rm|rule\x1b"}, nil
		}
		return gate.Decision{Action: gate.ActionAllow}, nil
	})
	ex, err := executor.New(reg, executor.WithTracerProvider(tp), executor.WithGates(gate.Named("policy|\xff", deny)))
	require.NoError(t, err)
	a, err := ex.Agent("verifier\x00agent", executor.AgentAllow("bash"))
	require.NoError(t, err)
	const runID = "run|chain\xfe"
	run := a.Run(runID, executor.WithTask("t\u2028"))
	calls := []executor.ToolCall{
		{ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)},
		{ID: "c2|x", Name: "bash", Input: json.RawMessage(`{"command":"rm -rf / \u001b[31m` + strings.Repeat("A|\\u00ff", 2000) + `"}`)},
		{ID: "c3\xff", Name: "nosuch", Input: json.RawMessage(`{}`)},
		{ID: "c4", Name: "bash", Input: json.RawMessage(`{"command":1}`)},
		{ID: "", Name: "bash", Input: json.RawMessage(`{"command":"echo rm"}`)},
		{ID: "c6", Name: "bash", Input: json.RawMessage(`{"command":"pwd"}`)},
	}
	for _, c := range calls {
		run.Execute(ctx, c)
	}
	run.ExecuteBatch(ctx, []executor.ToolCall{{ID: "b1", Name: "bash", Input: json.RawMessage(`{"command":"a"}`)},
		{ID: "b2", Name: "bash", Input: json.RawMessage(`{"command":"rm b"}`)}})
	run.End()
	spans := exp.GetSpans()
	require.Len(t, spans, 9, "8 calls and the run span")
	storeSpans(t, ctx, env, spans)

	code, res, out := verifyRun(t, ctx, env, gate.SafeText(runID, gate.MaxNameBytes))
	require.Equal(t, 0, code, out)
	require.True(t, res.Complete, out)
	require.Len(t, res.Reports, 1, out)
	rep := res.Reports[0]
	assert.EqualValues(t, 8, rep.Rows)
	assert.True(t, rep.RunSpan, "the run span recorded the chain's length")
	assert.EqualValues(t, 8, rep.Length)
	assert.Equal(t, gate.SafeText("verifier\x00agent", gate.MaxNameBytes), rep.Agent)
	assert.Empty(t, rep.Problems)

	// The span IDs by position, from the store.
	chains, err := env.Store.Chains(ctx, audit.ChainQuery{RunID: gate.SafeText(runID, gate.MaxNameBytes)})
	require.NoError(t, err)
	bySeq := map[uint64]string{}
	for _, r := range chains.Rows {
		bySeq[r.ChainSeq] = r.SpanID
	}
	require.Len(t, bySeq, 8)
	writer := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"mutations_sync": 2}))

	// Delete position 3 (the unknown tool's refusal).
	require.NoError(t, env.Writer.Exec(writer, "ALTER TABLE otel.gate_decisions DELETE WHERE SpanId = {s:String}",
		clickhouse.Named("s", bySeq[3])))
	code, res, out = verifyRun(t, ctx, env, gate.SafeText(runID, gate.MaxNameBytes))
	require.Equal(t, exitProblems, code, out)
	assert.False(t, res.Complete)
	require.Len(t, res.Reports, 1)
	assert.Equal(t, []audit.ChainProblem{{Kind: audit.ProblemMissing, Seq: 3, Last: 3,
		Detail: "position 3 is not stored (decisions lost or deleted)"}}, res.Reports[0].Problems)

	// Alter position 2's reason (the denial).
	require.NoError(t, env.Writer.Exec(writer, "ALTER TABLE otel.gate_decisions UPDATE Reason = 'looked fine' WHERE SpanId = {s:String}",
		clickhouse.Named("s", bySeq[2])))
	code, res, out = verifyRun(t, ctx, env, gate.SafeText(runID, gate.MaxNameBytes))
	require.Equal(t, exitProblems, code, out)
	kinds := map[string]audit.ChainProblem{}
	for _, p := range res.Reports[0].Problems {
		kinds[p.Kind] = p
	}
	require.Len(t, kinds, 2, "%+v", res.Reports[0].Problems)
	assert.EqualValues(t, 3, kinds[audit.ProblemMissing].Seq)
	assert.EqualValues(t, 2, kinds[audit.ProblemEdited].Seq)
	assert.Equal(t, bySeq[2], kinds[audit.ProblemEdited].SpanID)

	// The table names them too; the summary goes to stderr.
	code, _, out = verifyRun(t, ctx, env, gate.SafeText(runID, gate.MaxNameBytes), "-o", "table")
	assert.Equal(t, exitProblems, code)
	assert.Contains(t, out, "2 problems")
	assert.Contains(t, out, "missing")
	assert.Contains(t, out, "edited")
	assert.Contains(t, out, bySeq[2])
	assert.Contains(t, out, "0 of 1 chains complete")

	// Another run's window holds no chain: exit 0, nothing to verify.
	code, res, out = verifyRun(t, ctx, env, "no-such-run")
	assert.Equal(t, 0, code, out)
	assert.Empty(t, res.Reports)
}

// verify needs a selection; bad flags are usage errors (exit 2).
func TestVerifyUsage(t *testing.T) {
	for _, args := range [][]string{
		{"verify"},
		{"verify", "--since", "soon"},
		{"verify", "--since", "1h", "--until", "2h"},
		{"verify", "--run", "r", "-o", "csv"},
	} {
		var out bytes.Buffer
		code, stderr := execAuditq(t, context.Background(), &out, args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
	}
}

// A keyed chain (executor.WithChainKey) stored in the real engine:
// without --chain-key-file verify cannot check its hashes (key_needed,
// exit 3); with the key it is complete (exit 0); after a row is edited it
// names the edit.
func TestVerifyKeyedChain(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	key := "the auditor's key"
	keyFile := t.TempDir() + "/chain.key"
	require.NoError(t, os.WriteFile(keyFile, []byte(key+"\n"), 0o600))

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })
	reg, err := executor.NewRegistry(executor.Tool{Name: "bash",
		Execute: func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil }})
	require.NoError(t, err)
	ex, err := executor.New(reg, executor.WithTracerProvider(tp), executor.WithGates(gate.DenyTools("policy", "nosuch")),
		executor.WithChainKey([]byte(key)))
	require.NoError(t, err)
	a, err := ex.Agent("keyed", executor.AgentAllow("bash"))
	require.NoError(t, err)
	run := a.Run("run-keyed")
	for i := range 4 {
		run.Execute(ctx, executor.ToolCall{ID: fmt.Sprint("k", i), Name: "bash", Input: json.RawMessage(`{}`)})
	}
	run.End()
	storeSpans(t, ctx, env, exp.GetSpans())

	code, res, out := verifyRun(t, ctx, env, "run-keyed")
	require.Equal(t, exitProblems, code, out)
	require.Len(t, res.Reports, 1)
	require.Len(t, res.Reports[0].Problems, 1)
	assert.Equal(t, audit.ProblemUnverified, res.Reports[0].Problems[0].Kind)

	code, res, out = verifyRun(t, ctx, env, "run-keyed", "-o", "json", "--chain-key-file", keyFile)
	require.Equal(t, 0, code, out)

	writer := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"mutations_sync": 2}))
	require.NoError(t, env.Writer.Exec(writer, "ALTER TABLE otel.gate_decisions UPDATE Source = 'forged' WHERE ChainSeq = 2 AND RunId = 'run-keyed'"))
	code, _, out = verifyRun(t, ctx, env, "run-keyed", "-o", "json", "--chain-key-file", keyFile)
	require.Equal(t, exitProblems, code, out)
	assert.Contains(t, out, `"kind": "edited"`)
	assert.Contains(t, out, `"seq": 2`)
}

// TestVerifyOpenRun: a run whose agent was killed before End — its calls
// stored, its invoke_agent span never exported — is reported open, not
// complete: verified up to its last stored position, its tail unchecked.
// It is no problem (exit 0) unless --require-end (exit 3); once its run
// span is stored the same chain is complete, and a decision of its tail
// lost with the kill is then a missing position.
func TestVerifyOpenRun(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })
	reg, err := executor.NewRegistry(executor.Tool{Name: "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
		Execute:     func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil }})
	require.NoError(t, err)
	ex, err := executor.New(reg, executor.WithTracerProvider(tp), executor.WithGates(gate.Named("allow", gate.Func(
		func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
			return gate.Decision{Action: gate.ActionAllow}, nil
		}))))
	require.NoError(t, err)
	a, err := ex.Agent("killed", executor.AgentAllow("bash"))
	require.NoError(t, err)
	run := a.Run("run-killed")
	for i := range 5 {
		run.Execute(ctx, executor.ToolCall{ID: fmt.Sprint("c", i), Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)})
	}
	// The kill: the fifth decision's span and the run span never reach
	// the store.
	calls := exp.GetSpans()
	require.Len(t, calls, 5)
	storeSpans(t, ctx, env, calls[:4])

	code, res, out := verifyRun(t, ctx, env, "run-killed")
	require.Equal(t, 0, code, "an open chain is not a problem: %s", out)
	require.Len(t, res.Reports, 1, out)
	rep := res.Reports[0]
	assert.Equal(t, audit.StatusOpen, rep.Status)
	assert.False(t, rep.RunSpan)
	assert.EqualValues(t, 4, rep.Last)
	assert.Empty(t, rep.Problems)
	assert.False(t, res.Complete, "an open chain is not complete")
	assert.Equal(t, []int{1, 0, 0}, []int{res.OpenChains, res.CompleteChains, res.ProblemChains})

	code, _, out = verifyRun(t, ctx, env, "run-killed", "-o", "table")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "open: run not ended, verified to 4")
	assert.Contains(t, out, "0 of 1 chains complete; 1 open (no run end stored")
	assert.NotContains(t, out, " complete\n", "the chain's status is not complete")

	code, _, out = verifyRun(t, ctx, env, "run-killed", "--require-end", "-o", "json")
	assert.Equal(t, exitProblems, code, "--require-end: an open chain fails: %s", out)

	// Had the run ended (its span stored), the lost fifth decision is a
	// missing position.
	run.End()
	spans := exp.GetSpans()
	require.Len(t, spans, 6)
	storeSpans(t, ctx, env, spans[5:])
	code, res, out = verifyRun(t, ctx, env, "run-killed")
	require.Equal(t, exitProblems, code, out)
	require.Len(t, res.Reports, 1, out)
	assert.Equal(t, audit.StatusProblems, res.Reports[0].Status)
	assert.Equal(t, []audit.ChainProblem{{Kind: audit.ProblemMissing, Seq: 5, Last: 5,
		Detail: "position 5 is not stored (decisions lost or deleted)"}}, res.Reports[0].Problems)
	storeSpans(t, ctx, env, spans[4:5])
	code, res, out = verifyRun(t, ctx, env, "run-killed")
	require.Equal(t, 0, code, out)
	assert.Equal(t, audit.StatusComplete, res.Reports[0].Status)
	assert.True(t, res.Complete)
}
