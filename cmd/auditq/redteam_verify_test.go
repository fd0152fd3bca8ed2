package main

import (
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

// TestRedTeamVerifyStoreWriter (red team): a store writer with ordinary
// statements against keyed runs of a real executor in the real ClickHouse
// engine, verified with the key through the CLI. Each attack must exit 3.
//
//   - downgrade: rename a keyed chain (drop its hmac- prefix), edit a row,
//     recompute every hash with the public unkeyed encoding;
//   - unchain: clear a run's ChainId (its rows become "unchained",
//     counted but not verified), keeping its run span;
//   - delete every row of a run, keeping its run span.
func TestRedTeamVerifyStoreWriter(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	key := "the auditor's key"
	keyFile := t.TempDir() + "/chain.key"
	require.NoError(t, os.WriteFile(keyFile, []byte(key), 0o600))

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
	runs := []string{"rt-downgrade", "rt-unchain", "rt-delete", "rt-intact"}
	for _, id := range runs {
		run := a.Run(id)
		for i := range 4 {
			run.Execute(ctx, executor.ToolCall{ID: fmt.Sprint(id, i), Name: "bash", Input: json.RawMessage(`{}`)})
		}
		run.End()
	}
	storeSpans(t, ctx, env, exp.GetSpans())
	for _, id := range runs {
		code, _, out := verifyRun(t, ctx, env, id, "-o", "json", "--chain-key-file", keyFile)
		require.Equal(t, 0, code, "%s before the attack: %s", id, out)
	}
	writer := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"mutations_sync": 2}))

	// Downgrade: the writer reads the keyed rows, renames the chain,
	// edits position 2 and re-chains with the unkeyed hash.
	chains, err := env.Store.Chains(ctx, audit.ChainQuery{RunID: "rt-downgrade"})
	require.NoError(t, err)
	require.Len(t, chains.Rows, 4)
	prev := ""
	for i := range chains.Rows {
		d := &chains.Rows[i]
		require.True(t, gate.KeyedChain(d.ChainID))
		d.ChainID = strings.TrimPrefix(d.ChainID, gate.KeyedChainPrefix)
		if d.ChainSeq == 2 {
			d.Reason = "nothing to see"
		}
		d.ChainPrev = prev
		d.ChainHash = d.Hash()
		prev = d.ChainHash
		require.NoError(t, env.Writer.Exec(writer, "ALTER TABLE otel.gate_decisions UPDATE ChainId = {c:String}, ChainPrev = {p:String},"+
			" ChainHash = {h:String}, Reason = {r:String} WHERE SpanId = {s:String}",
			clickhouse.Named("c", d.ChainID), clickhouse.Named("p", d.ChainPrev), clickhouse.Named("h", d.ChainHash),
			clickhouse.Named("r", d.Reason), clickhouse.Named("s", d.SpanID)))
	}
	code, _, out := verifyRun(t, ctx, env, "rt-downgrade", "-o", "json", "--chain-key-file", keyFile)
	assert.Equal(t, exitProblems, code, "downgrade: %s", out)
	assert.Contains(t, out, audit.ProblemNotKeyed)

	require.NoError(t, env.Writer.Exec(writer, "ALTER TABLE otel.gate_decisions UPDATE ChainId = '', ChainSeq = 0, ChainPrev = '', ChainHash = '' WHERE RunId = 'rt-unchain'"))
	code, _, out = verifyRun(t, ctx, env, "rt-unchain", "-o", "json", "--chain-key-file", keyFile)
	assert.Equal(t, exitProblems, code, "unchain: %s", out)
	assert.Contains(t, out, `"kind": "missing"`)

	require.NoError(t, env.Writer.Exec(writer, "ALTER TABLE otel.gate_decisions DELETE WHERE RunId = 'rt-delete'"))
	code, _, out = verifyRun(t, ctx, env, "rt-delete", "-o", "json", "--chain-key-file", keyFile)
	assert.Equal(t, exitProblems, code, "delete: %s", out)
	assert.Contains(t, out, `"kind": "missing"`)

	code, _, out = verifyRun(t, ctx, env, "rt-intact", "-o", "json", "--chain-key-file", keyFile)
	assert.Equal(t, 0, code, "the untouched run stays complete: %s", out)
	// Over the window (no --run): every attacked run is found.
	var buf strings.Builder
	code, stderr := execAuditqW(t, ctx, &buf, "verify", "--dsn", env.ReaderDSN, "--since", "1h", "--chain-key-file", keyFile, "-o", "json")
	assert.Equal(t, exitProblems, code, buf.String()+stderr)
	var res verifyResult
	require.NoError(t, json.Unmarshal([]byte(buf.String()), &res))
	bad := map[string]bool{}
	for _, r := range res.Reports {
		if !r.Complete {
			bad[r.RunID] = true
		}
	}
	assert.Equal(t, map[string]bool{"rt-downgrade": true, "rt-unchain": true, "rt-delete": true}, bad)
}
