package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// snapLog is a write-ahead log (executor.WithWriteAhead) that keeps the
// record each Commit received: the live span's attributes at that moment,
// by span ID — what the spool would have synced to disk.
type snapLog struct {
	mu        sync.Mutex
	committed map[trace.SpanID][]attribute.KeyValue
}

func (l *snapLog) Commit(_ context.Context, span trace.Span) error {
	attrs := span.(sdktrace.ReadOnlySpan).Attributes()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.committed == nil {
		l.committed = map[trace.SpanID][]attribute.KeyValue{}
	}
	l.committed[span.SpanContext().SpanID()] = attrs
	return nil
}

// storedForm reads attrs of span s as the store reads them into a row.
func storedForm(s tracetest.SpanStub, attrs []attribute.KeyValue) gate.StoredDecision {
	var d gate.StoredDecision
	d.TraceID, d.SpanID = s.SpanContext.TraceID().String(), s.SpanContext.SpanID().String()
	d.ReadAttributes(attrs)
	d.Defaults()
	return d
}

// hostileInput draws a call's raw arguments: JSON with hostile strings,
// or bytes that are not JSON at all (refused before the gate, recorded
// all the same).
func hostileInput(t *rapid.T, label string) json.RawMessage {
	s := rapid.OneOf(
		rapid.SampledFrom([]string{"", "rm -rf /", "ls", "\xff\xfe", "\x00\x01\x1b[31m", `"\'`, "|:1:", "\u2028", "é\u0301"}),
		rapid.String(),
		rapid.StringOf(rapid.SampledFrom([]rune{'|', '\\', '"', '\'', '\x00', '\n', ':', 'é', '\uFFFD', '['})),
		rapid.Map(rapid.IntRange(100, 6000), func(n int) string { return strings.Repeat("x\xff|", n/3) }),
	).Draw(t, label)
	if rapid.Bool().Draw(t, label+" raw") {
		return json.RawMessage(s) // not JSON: an input-stage refusal
	}
	b, _ := json.Marshal(map[string]string{"command": s})
	return b
}

// TestPropertyExecutorChainSurvivesTheStore: for any run — content
// recording on or off, strict mode (write-ahead) on or off, allowed,
// denied and refused calls with hostile argument bytes — the hash the
// executor gave each decision is the hash recomputed from the row the real
// ClickHouse engine stores, that row's Input is the recorded arguments
// ("" when recording is off), the chain verifies complete; and in strict
// mode the record committed before the tool ran already carries that
// position and hash, and hashes to it itself.
func TestPropertyExecutorChainSurvivesTheStore(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		record := rapid.Bool().Draw(rt, "recordContent")
		strict := rapid.Bool().Draw(rt, "strict")
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		defer func() { _ = tp.Shutdown(ctx) }()
		reg, err := executor.NewRegistry(executor.Tool{Name: "bash",
			Execute: func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil }})
		require.NoError(rt, err)
		deny := gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
			if cmd, _ := c.Input["command"].(string); strings.Contains(cmd, "rm") || strings.Contains(cmd, "\x00") {
				return gate.Decision{Action: gate.ActionDeny, Reason: "no: " + cmd}, nil
			}
			return gate.Decision{Action: gate.ActionAllow}, nil
		})
		log := &snapLog{}
		opts := []executor.Option{executor.WithTracerProvider(tp), executor.WithGates(gate.Named("policy", deny)),
			executor.WithRecordContent(record), executor.WithRefusalBudget(-1)}
		if strict {
			opts = append(opts, executor.WithWriteAhead(log))
		}
		ex, err := executor.New(reg, opts...)
		require.NoError(rt, err)
		a, err := ex.Agent("prop", executor.AgentAllow("bash"))
		require.NoError(rt, err)
		runID := fmt.Sprint("prop-run-", n)
		run := a.Run(runID)
		calls := rapid.IntRange(1, 6).Draw(rt, "calls")
		for i := range calls {
			name := rapid.SampledFrom([]string{"bash", "bash", "bash", "nosuch"}).Draw(rt, "tool")
			run.Execute(ctx, executor.ToolCall{ID: fmt.Sprint("c", i), Name: name, Input: hostileInput(rt, fmt.Sprint("input", i))})
		}
		run.End()
		spans := exp.GetSpans()
		storeSpans(t, ctx, env, spans)

		// The executor's side, by span ID.
		produced := map[string]gate.StoredDecision{}
		for _, s := range spans {
			d := storedForm(s, s.Attributes)
			if d.ChainHash == "" {
				continue
			}
			produced[d.SpanID] = d
			if !record {
				assert.Empty(rt, d.Input, "content not recorded: no arguments")
			}
			if c, ok := log.committed[s.SpanContext.SpanID()]; ok {
				cd := storedForm(s, c)
				assert.Equal(rt, d.ChainHash, cd.ChainHash, "the committed record holds the final position's hash")
				assert.Equal(rt, d.ChainSeq, cd.ChainSeq)
				assert.Equal(rt, cd.ChainHash, cd.Hash(), "the committed record hashes to its own hash (arguments included)")
				assert.Equal(rt, d.Input, cd.Input, "committed and final arguments")
			}
		}
		require.Len(rt, produced, calls, "every call is a decision")

		// The verifier's side.
		chains, err := env.Store.Chains(ctx, audit.ChainQuery{RunID: runID})
		require.NoError(rt, err)
		require.Len(rt, chains.Rows, calls)
		for _, row := range chains.Rows {
			p, ok := produced[row.SpanID]
			require.True(rt, ok, "row of span %s", row.SpanID)
			assert.Equal(rt, p.ChainHash, row.ChainHash, "stored hash")
			assert.Equal(rt, p.ChainHash, row.Hash(), "recomputed from the stored row")
			assert.Equal(rt, p.Input, row.Input, "the Input column is the recorded arguments")
		}
		reps := audit.Verify(chains)
		require.Len(rt, reps, 1)
		assert.Equal(rt, audit.StatusComplete, reps[0].Status, "%+v", reps[0].Problems)
	})
}

// TestVerifyFindsEditedInput: the recorded arguments are covered. A run
// with content recording on — in strict mode or not — stored in the real
// ClickHouse engine verifies complete; after the writer user rewrites a
// denied call's Input from `rm -rf /` to `ls`, verify names that row as
// edited (exit 3).
func TestVerifyFindsEditedInput(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprint("strict=", strict), func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			t.Cleanup(func() { _ = tp.Shutdown(ctx) })
			reg, err := executor.NewRegistry(executor.Tool{Name: "bash",
				Execute: func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil }})
			require.NoError(t, err)
			deny := gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
				if cmd, _ := c.Input["command"].(string); strings.HasPrefix(cmd, "rm") {
					return gate.Decision{Action: gate.ActionDeny, Reason: "removes files"}, nil
				}
				return gate.Decision{Action: gate.ActionAllow}, nil
			})
			opts := []executor.Option{executor.WithTracerProvider(tp), executor.WithGates(gate.Named("policy", deny)),
				executor.WithRecordContent(true)}
			if strict {
				opts = append(opts, executor.WithWriteAhead(&snapLog{}))
			}
			ex, err := executor.New(reg, opts...)
			require.NoError(t, err)
			a, err := ex.Agent("inputs", executor.AgentAllow("bash"))
			require.NoError(t, err)
			runID := fmt.Sprint("run-input-", strict)
			run := a.Run(runID)
			for i, cmd := range []string{"ls", "rm -rf /", "curl x | sh"} {
				b, _ := json.Marshal(map[string]string{"command": cmd})
				run.Execute(ctx, executor.ToolCall{ID: fmt.Sprint("c", i), Name: "bash", Input: b})
			}
			run.End()
			storeSpans(t, ctx, env, exp.GetSpans())

			code, res, out := verifyRun(t, ctx, env, runID)
			require.Equal(t, 0, code, out)
			require.True(t, res.Complete, out)

			chains, err := env.Store.Chains(ctx, audit.ChainQuery{RunID: runID})
			require.NoError(t, err)
			var target gate.StoredDecision
			for _, r := range chains.Rows {
				if strings.Contains(r.Input, "rm -rf /") {
					target = r
				}
			}
			require.NotEmpty(t, target.SpanID, "the denied call's arguments are recorded: %+v", chains.Rows)

			writer := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"mutations_sync": 1}))
			require.NoError(t, env.Writer.Exec(writer, "ALTER TABLE `"+env.Database+"`.gate_decisions UPDATE Input = {in:String} WHERE SpanId = {s:String}",
				clickhouse.Named("in", `{"command":"ls"}`), clickhouse.Named("s", target.SpanID)))
			code, res, out = verifyRun(t, ctx, env, runID)
			require.Equal(t, exitProblems, code, out)
			require.Len(t, res.Reports, 1, out)
			require.Len(t, res.Reports[0].Problems, 1, out)
			p := res.Reports[0].Problems[0]
			assert.Equal(t, audit.ProblemEdited, p.Kind)
			assert.Equal(t, target.SpanID, p.SpanID)
			assert.Equal(t, target.ChainSeq, p.Seq)
		})
	}
}

// TestVerifyRequireChained: decisions without a chain are counted; a run
// unchained by a store writer (its rows' ChainId cleared, its run span
// deleted) leaves no chain to report and verify exits 0 — but counts its
// rows as unchained, and with --require-chained exits 3. A bridged-style
// decision (no chain attributes) counts alike.
func TestVerifyRequireChained(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })
	reg, err := executor.NewRegistry(executor.Tool{Name: "bash",
		Execute: func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ok"), nil }})
	require.NoError(t, err)
	ex, err := executor.New(reg, executor.WithTracerProvider(tp), executor.WithGates(gate.DenyTools("policy", "nosuch")),
		executor.WithRecordContent(true))
	require.NoError(t, err)
	a, err := ex.Agent("unchained", executor.AgentAllow("bash"))
	require.NoError(t, err)
	const runID = "run-unchained"
	run := a.Run(runID)
	for i := range 3 {
		run.Execute(ctx, executor.ToolCall{ID: fmt.Sprint("u", i), Name: "bash", Input: json.RawMessage(`{"command":"rm -rf /"}`)})
	}
	run.End()
	storeSpans(t, ctx, env, exp.GetSpans())

	code, res, out := verifyRun(t, ctx, env, runID, "-o", "json", "--require-chained")
	require.Equal(t, 0, code, "every decision chained: %s", out)
	require.NoError(t, json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &res), out)
	assert.Zero(t, res.Unchained)
	assert.True(t, res.Complete)

	// The writer unchains the run.
	writer := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"mutations_sync": 1}))
	require.NoError(t, env.Writer.Exec(writer, "ALTER TABLE `"+env.Database+"`.gate_decisions UPDATE ChainId = '' WHERE RunId = {r:String}",
		clickhouse.Named("r", runID)))
	require.NoError(t, env.Writer.Exec(writer, "ALTER TABLE `"+env.Database+"`.otel_traces DELETE WHERE SpanAttributes['gate.chain.length'] != '' AND SpanAttributes['toolgate.run.id'] = {r:String}",
		clickhouse.Named("r", runID)))

	code, res, out = verifyRun(t, ctx, env, runID)
	require.Equal(t, 0, code, "by default unchained rows are counted, not a problem: %s", out)
	assert.Empty(t, res.Reports, out)
	assert.EqualValues(t, 3, res.Unchained, out)

	code, _, out = verifyRun(t, ctx, env, runID, "-o", "table")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "3 decisions in the window carry no chain")

	code, _, out = verifyRun(t, ctx, env, runID, "-o", "table", "--require-chained")
	assert.Equal(t, exitProblems, code, out)
	assert.Contains(t, out, "3 decisions in the window carry no chain (ChainId empty) and --require-chained was given")

	// A decision recorded without a chain (a bridged event) in another
	// run: counted in a window, a problem only with --require-chained.
	now := time.Now()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, []audittest.Span{{
		Timestamp: now, TraceID: strings.Repeat("ab", 16), SpanID: strings.Repeat("cd", 8), Name: "execute_tool bash",
		Service: "bridge", Status: "Unset",
		Attrs: audittest.SpanAttrs([]attribute.KeyValue{attribute.String("gen_ai.tool.name", "bash"),
			gate.AttrRunID.String("run-bridged"), gate.AttrGated.Bool(true), gate.AttrAction.String("allow")}),
	}}))
	code, res, out = verifyRun(t, ctx, env, "run-bridged")
	require.Equal(t, 0, code, out)
	assert.EqualValues(t, 1, res.Unchained, out)
	code, _, out = verifyRun(t, ctx, env, "run-bridged", "-o", "json", "--require-chained")
	assert.Equal(t, exitProblems, code, out)
}
