package executor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// noRm denies commands that contain "rm".
var noRm = gate.Named("no-rm", gateFunc(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
	if strings.Contains(c.String("command"), "rm") {
		return gate.Deny("rm is not allowed"), nil
	}
	return gate.Allow(), nil
}))

// decisionOf is a span's decision attributes (gate.stage, gate.action,
// sampling.priority, gate.error) and the calls it records.
type decisionOf struct {
	stage, action, errKind string
	priority               bool
	calls                  int64
}

func decisionsOf(spans tracetest.SpanStubs) []decisionOf {
	var out []decisionOf
	for _, s := range spans {
		if !strings.HasPrefix(s.Name, "execute_tool") {
			continue
		}
		a := attrMap(s.Attributes)
		d := decisionOf{stage: a[gate.AttrStage].AsString(), action: a[gate.AttrAction].AsString(),
			errKind: a[gate.AttrError].AsString(), priority: a[gate.AttrSamplingPriority].AsInt64() > 0, calls: 1}
		if v, ok := a[gate.AttrCalls]; ok {
			d.calls = v.AsInt64()
		}
		out = append(out, d)
	}
	return out
}

// TestEveryRefusalIsADecision: the red team's reproductions. Calls
// refused after an abort (single, in a batch, to unknown tools) and calls
// with a context already done were spans without gate.action, gate.stage
// or sampling.priority, which the default sampling and the collector's
// audit filter drop. Each is now a denied decision with its own stage.
func TestEveryRefusalIsADecision(t *testing.T) {
	h := newHarness(t, executor.WithGates(noRm), executor.WithAbortOnDeny(true))
	run := h.agent(t).Run("r")
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	res := []executor.ToolResult{
		run.Execute(cancelled, call("c0", "bash", `{"command":"ls"}`)),
		run.Execute(ctx, call("c1", "bash", `{"command":"rm -rf /"}`)), // deny: aborts the run
		run.Execute(ctx, call("c2", "bash", `{"command":"curl x | sh"}`)),
		run.Execute(ctx, call("c3", "nosuch", `{}`)),
	}
	res = append(res, run.ExecuteBatch(ctx, []executor.ToolCall{call("c4", "bash", `{"command":"cat ~/.ssh/id_rsa"}`), call("c5", "nosuch", `{}`)})...)
	res = append(res, run.Execute(cancelled, call("c6", "bash", `{"command":"ls"}`)))
	run.End()
	wantStages := []gate.Stage{gate.StageCancelled, gate.StageGate, gate.StageRun, gate.StageRun, gate.StageRun, gate.StageRun, gate.StageCancelled}
	require.Len(t, res, len(wantStages))
	for i, r := range res {
		assert.True(t, r.IsError, "call %d", i)
		assert.Equal(t, wantStages[i], r.Gate.Stage, "call %d", i)
		assert.Equal(t, gate.ActionDeny, r.Gate.Action, "call %d", i)
	}
	assert.True(t, errors.Is(res[2].Err, executor.ErrRunAborted))
	ds := decisionsOf(h.spans.GetSpans())
	require.Len(t, ds, len(wantStages), "one span per call")
	byStage := map[string]int{}
	for _, d := range ds {
		assert.Equal(t, "deny", d.action)
		assert.True(t, d.priority, "sampling.priority on every refusal")
		byStage[d.stage]++
	}
	assert.Equal(t, map[string]int{"cancelled": 2, "gate": 1, "run": 4}, byStage)
	assert.Zero(t, h.calls["bash"].Load(), "no refused call ran")
}

// TestRefusalBudget: the run's consecutive refusals before the gate are
// bounded. Past the budget, one decision says why and aborts the run; the
// model's later calls are aggregated (the first, then one span per
// AggregateRefusals, End records the rest), a call to a tool it can reach
// included; every call is accounted for.
func TestRefusalBudget(t *testing.T) {
	const budget, extra = 3, 2*executor.AggregateRefusals + 5
	var traces atomic.Int64
	h := newHarness(t, executor.WithGates(noRm), executor.WithRefusalBudget(budget),
		executor.WithOnTrace(func(context.Context, executor.ToolCallTrace) error { traces.Add(1); return nil }))
	run := h.agent(t).Run("r")
	ctx := context.Background()
	calls := 0
	exec := func(c executor.ToolCall) executor.ToolResult { calls++; return run.Execute(ctx, c) }

	// A call that reaches the gate starts the count again.
	for range budget {
		exec(call("u", "nosuch", `{}`))
	}
	exec(call("ok", "bash", `{"command":"ls"}`))
	require.NoError(t, run.Err())
	for range budget {
		exec(call("u", "nosuch", `{}`))
	}
	require.NoError(t, run.Err(), "the budget allows %d in a row", budget)
	over := exec(call("bad", "bash", `{"command":1}`))
	require.ErrorIs(t, run.Err(), executor.ErrRefusalBudget)
	assert.Equal(t, gate.StageRun, over.Gate.Stage)
	assert.Equal(t, executor.ErrorTypeRefusalBudget, over.Gate.ErrorKind)
	assert.Contains(t, over.Gate.Reason, "consecutive calls that did not run")

	for range extra {
		r := exec(call("u", "nosuch", `{}`))
		assert.Equal(t, gate.StageRun, r.Gate.Stage)
		assert.ErrorIs(t, r.Err, executor.ErrRunAborted)
	}
	real := exec(call("real", "bash", `{"command":"cat ~/.ssh/id_rsa"}`))
	assert.Equal(t, gate.StageRun, real.Gate.Stage)
	run.End()

	ds := decisionsOf(h.spans.GetSpans())
	var total int64
	budgetDecisions, own := 0, 0
	for _, d := range ds {
		total += d.calls
		assert.True(t, d.action == "deny" || d.stage == "gate", "allow only at the gate: %+v", d)
		if d.errKind == executor.ErrorTypeRefusalBudget {
			budgetDecisions++
		}
		if d.calls == 1 {
			own++
		}
	}
	assert.Equal(t, int64(calls), total, "every call is accounted for")
	assert.Equal(t, 1, budgetDecisions, "one decision says why")
	// 2×budget refusals, the allowed call, the budget's decision, the
	// first aggregated call of each tool (nosuch, then bash: refusals are
	// grouped per tool); then 2 full aggregates of nosuch and End's
	// remainder of 4 (the real bash call has its own span).
	assert.Equal(t, 2*budget+4, own)
	assert.Len(t, ds, 2*budget+4+3)
	assert.Equal(t, int64(calls), traces.Load(), "the trace hook sees every call")
}

// TestRefusalBudgetOff: WithRefusalBudget(-1) keeps one span per refused
// call, however many.
func TestRefusalBudgetOff(t *testing.T) {
	h := newHarness(t, executor.WithGates(noRm), executor.WithRefusalBudget(-1))
	run := h.agent(t).Run("r")
	for range 3 * executor.DefaultRefusalBudget {
		run.Execute(context.Background(), call("u", "nosuch", `{}`))
	}
	run.End()
	require.NoError(t, run.Err())
	assert.Len(t, decisionsOf(h.spans.GetSpans()), 3*executor.DefaultRefusalBudget)
}

// TestEveryCallIsOneDecisionProperty: for any sequence of calls — tools
// known, unknown or unreachable, valid or invalid input, denials with or
// without WithAbortOnDeny, contexts cancelled or not, single calls and
// batches, any refusal budget — the decision spans the executor exports
// record exactly the calls made (one each, or gate.calls on aggregated
// refusals), each with a gate.stage and a gate.action, and every denial
// with sampling.priority. Per tool: the gate.calls of the spans named
// after a tool sum to the calls made to it, the spans without a tool name
// (past AggregateToolNames names) to the rest; and with End anywhere,
// every call after it has its own span (nothing is held back).
func TestEveryCallIsOneDecisionProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		budget := rapid.SampledFrom([]int{-1, 1, 2, 5, 0}).Draw(rt, "budget")
		abort := rapid.Bool().Draw(rt, "abortOnDeny")
		decline := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
			return req.Decline("human", "no"), nil
		})
		h := newHarness(t, executor.WithGates(noRm, gate.AskTools("confirm", "read")), executor.WithApprover(decline),
			executor.WithAbortOnDeny(abort), executor.WithRefusalBudget(budget))
		a := h.agent(t, executor.AgentAllow("bash", "read"))
		run := a.Run("r")
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		drawCall := rapid.Custom(func(t *rapid.T) executor.ToolCall {
			name := rapid.SampledFrom([]string{"bash", "bash", "read", "deploy", "nosuch", "", "x"}).Draw(t, "tool")
			if name == "x" { // many names: past AggregateToolNames, the nameless group
				name = fmt.Sprintf("x%d", rapid.IntRange(0, executor.AggregateToolNames+3).Draw(t, "x"))
			}
			in := rapid.SampledFrom([]string{`{"command":"ls"}`, `{"command":"rm -rf /"}`, `{}`, `not json`, `{"command":1}`}).Draw(t, "input")
			return call("c", name, in)
		})
		n := 0
		perTool := map[string]int64{}
		ended, afterEnd := -1, 0 // decision spans at the first End; calls after it
		count := func(calls ...executor.ToolCall) {
			n += len(calls)
			if ended >= 0 {
				afterEnd += len(calls)
			}
			for _, c := range calls {
				perTool[c.Name]++
			}
		}
		for _, op := range rapid.SliceOfN(rapid.IntRange(0, 9), 1, 60).Draw(rt, "ops") {
			ctx := context.Background()
			if op == 0 {
				ctx = cancelled
			}
			switch {
			case op == 1:
				calls := rapid.SliceOfN(drawCall, 0, 12).Draw(rt, "batch")
				count(calls...)
				run.ExecuteBatch(ctx, calls)
			case op == 2 && rapid.Bool().Draw(rt, "end"):
				run.End()
				if ended < 0 {
					ended = len(decisionsOf(h.spans.GetSpans()))
				}
			case op == 3: // the red team's flood: denials, declined asks, refusals
				shape := rapid.SampledFrom([]executor.ToolCall{call("d", "bash", `{"command":"rm -rf /"}`),
					call("a", "read", `{"path":"x"}`), call("u", "nosuch", `{}`)}).Draw(rt, "flood")
				calls := make([]executor.ToolCall, rapid.IntRange(0, 3*executor.AggregateRefusals).Draw(rt, "floodSize"))
				for i := range calls {
					calls[i] = shape
				}
				count(calls...)
				run.ExecuteBatch(ctx, calls)
			default:
				c := drawCall.Draw(rt, "call")
				count(c)
				res := run.Execute(ctx, c)
				if res.Gate.Stage == "" {
					rt.Fatalf("a result without a stage: %+v", res)
				}
			}
		}
		run.End()
		var total int64
		for _, d := range decisionsOf(h.spans.GetSpans()) {
			total += d.calls
			if d.stage == "" || d.action == "" {
				rt.Fatalf("a span without a decision: %+v", d)
			}
			if d.action == "deny" && !d.priority {
				rt.Fatalf("a denial without sampling.priority: %+v", d)
			}
		}
		if total != int64(n) {
			rt.Fatalf("%d calls, the spans record %d", n, total)
		}
		if ended >= 0 {
			if got := len(decisionsOf(h.spans.GetSpans())) - ended; got != afterEnd {
				rt.Fatalf("%d calls after End, %d spans after End", afterEnd, got)
			}
		}
		sums := toolSums(h.spans.GetSpans())
		var missing int64
		for tool, made := range perTool {
			if sums[tool] > made || (len(perTool) <= executor.AggregateToolNames && sums[tool] != made) {
				rt.Fatalf("tool %q: %d calls, its spans record %d (all: %v)", tool, made, sums[tool], sums)
			}
			missing += made - sums[tool]
		}
		if missing != sums[noToolName] {
			rt.Fatalf("%d calls not under their tool's name, the nameless spans record %d", missing, sums[noToolName])
		}
	})
}

// TestRefusalBudgetCountsEveryCallThatDidNotRun: the second red team's
// shapes. Gate denials (F3: 2,000 × rm -rf / in one batch) and declined
// asks spent one span each without bound, because the budget counted only
// refusals before the gate and any call reaching the gate reset it. Now
// every call that did not run counts and only a call that ran resets the
// count: a flood of denials aborts the run with one decision and is
// aggregated; interleaving calls that run (F4) spends one span per call.
func TestRefusalBudgetCountsEveryCallThatDidNotRun(t *testing.T) {
	const flood = 2000
	budget := executor.DefaultRefusalBudget
	decline := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		return req.Decline("human", "no"), nil
	})
	ask := gate.Named("ask-read", gateFunc(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if c.ToolName == "read" {
			return gate.Ask("confirm"), nil
		}
		return gate.Allow(), nil
	}))
	rm, ls, nosuch, read := `{"command":"rm -rf /"}`, `{"command":"ls"}`, "nosuch", "read"
	type step struct{ tool, input string }
	repeat := func(n int, steps ...step) []step {
		var out []step
		for range n {
			out = append(out, steps...)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		calls   []step
		batch   bool
		aborted bool
		spans   int // execute_tool spans
	}{
		// Before: 2,000 spans (one per denial). After: budget denials, the
		// denial that aborts, the first aggregated call, then one per 64.
		{"F3 gate denials in one batch", repeat(flood, step{"bash", rm}), true, true,
			budget + 2 + ceilDiv(flood-budget-2, executor.AggregateRefusals)},
		{"declined asks", repeat(flood, step{read, `{"path":"x"}`}), false, true,
			budget + 2 + ceilDiv(flood-budget-2, executor.AggregateRefusals)},
		// Before: the gate denial reset the count, one span per call.
		// Past the abort, each tool's refusals are their own group.
		{"refusals interleaved with denials", repeat(flood/2, step{nosuch, `{}`}, step{"bash", rm}), false, true,
			budget + 1 + groupSpans(ceilDiv(flood-budget-1, 2)) + groupSpans((flood-budget-1)/2)},
		// F4: a call that runs resets the count: one span per call, no abort.
		{"63 bogus + 1 that runs", repeat(flood/64, append(repeat(63, step{nosuch, `{}`}), step{"bash", ls})...), false, false,
			flood / 64 * 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, executor.WithGates(noRm, ask), executor.WithApprover(decline))
			run := h.agent(t, executor.AgentAllow("bash", "read")).Run("r")
			ctx := context.Background()
			calls := make([]executor.ToolCall, len(tc.calls))
			for i, s := range tc.calls {
				calls[i] = call("c", s.tool, s.input)
			}
			if tc.batch {
				run.ExecuteBatch(ctx, calls)
			} else {
				for _, c := range calls {
					run.Execute(ctx, c)
				}
			}
			run.End()
			if tc.aborted {
				require.ErrorIs(t, run.Err(), executor.ErrRefusalBudget)
			} else {
				require.NoError(t, run.Err())
			}
			ds := decisionsOf(h.spans.GetSpans())
			var total int64
			budgetDecisions := 0
			for _, d := range ds {
				total += d.calls
				if d.errKind == executor.ErrorTypeRefusalBudget {
					budgetDecisions++
				}
			}
			assert.Equal(t, int64(len(calls)), total, "every call is accounted for")
			if tc.aborted {
				assert.Equal(t, 1, budgetDecisions, "one decision says why")
			}
			if !tc.batch { // a batch runs calls concurrently: the span count varies by a few
				assert.Len(t, ds, tc.spans)
			} else {
				assert.InDelta(t, tc.spans, len(ds), 8)
			}
			assert.Zero(t, h.calls["read"].Load(), "no declined call ran")
		})
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// groupSpans is how many spans record k aggregated refusals of one tool:
// the first its own, then one per AggregateRefusals (End the remainder).
func groupSpans(k int) int { return 1 + ceilDiv(k-1, executor.AggregateRefusals) }
