package executor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// chainOf checks the chain the decision spans of one run form and returns
// its ID and the spans by position: every decision span (gate.action, or
// gate.gated/gate.opt_out true) has a position; the positions are 1..n,
// each once; each links to the hash of the one before; and each hash is
// LinkHash over the digest of the span's own attributes read as the store
// reads them — what `auditq verify` recomputes from the row.
func chainOf(t *testing.T, spans tracetest.SpanStubs) (string, map[int64]tracetest.SpanStub) {
	t.Helper()
	bySeq := map[int64]tracetest.SpanStub{}
	id := ""
	for _, s := range spans {
		m := attrMap(s.Attributes)
		_, decided := m[gate.AttrAction]
		if !decided && !m[gate.AttrGated].AsBool() && !m[gate.AttrOptOut].AsBool() {
			assert.NotContains(t, m, gate.AttrChainSeq, "%s: not a decision, no position", s.Name)
			continue
		}
		seq := m[gate.AttrChainSeq].AsInt64()
		require.Positive(t, seq, "every decision has a position: %v", m)
		_, dup := bySeq[seq]
		require.False(t, dup, "position %d given twice", seq)
		bySeq[seq] = s
		if id == "" {
			id = m[gate.AttrChainID].AsString()
		}
		assert.Equal(t, id, m[gate.AttrChainID].AsString(), "one chain per run")
		var d gate.StoredDecision
		d.TraceID, d.SpanID = s.SpanContext.TraceID().String(), s.SpanContext.SpanID().String()
		d.ReadAttributes(s.Attributes)
		d.Defaults()
		assert.Equal(t, d.ChainHash, d.Hash(), "position %d hashes to its attribute", seq)
	}
	for seq := int64(1); seq <= int64(len(bySeq)); seq++ {
		s, ok := bySeq[seq]
		require.True(t, ok, "positions are contiguous: %d missing of %d", seq, len(bySeq))
		prev := ""
		if seq > 1 {
			prev = attrMap(bySeq[seq-1].Attributes)[gate.AttrChainHash].AsString()
		}
		assert.Equal(t, prev, attrMap(s.Attributes)[gate.AttrChainPrev].AsString(), "position %d links to %d", seq, seq-1)
	}
	return id, bySeq
}

// Concurrent calls of a run — allowed, denied, refused before the gate,
// of a Task view — get distinct, contiguous positions of one chain, each
// linked to the one before; the run span records its length and head;
// each result carries its call's link.
func TestChainOfConcurrentCalls(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness(t, executor.WithGates(gate.DenyTools("policy", "deploy")), executor.WithRefusalBudget(-1))
		a := h.agent(t, executor.AgentAllow("bash", "deploy"))
		run := a.Run("run-c")
		n := rapid.IntRange(1, 40).Draw(rt, "calls")
		kinds := rapid.SliceOfN(rapid.SampledFrom([]string{"bash", "deploy", "nosuch", "read", "badinput"}), n, n).Draw(rt, "kinds")
		results := make([]executor.ToolResult, n)
		var wg sync.WaitGroup
		for i, k := range kinds {
			wg.Go(func() {
				r := run
				if i%3 == 0 {
					r = run.Task("other")
				}
				c := call(fmt.Sprint("c", i), k, `{"command":"x"}`)
				if k == "badinput" {
					c = call(fmt.Sprint("c", i), "bash", `{"command":1}`)
				}
				results[i] = r.Execute(context.Background(), c)
			})
		}
		wg.Wait()
		run.End()
		runs, calls := spansByName(h.spans.GetSpans())
		require.Len(rt, runs, 1)
		id, bySeq := chainOf(t, calls)
		require.Len(rt, bySeq, n, "every call is a decision here")
		rm := attrMap(runs[0].Attributes)
		assert.Equal(rt, id, rm[gate.AttrChainID].AsString())
		assert.EqualValues(rt, n, rm[gate.AttrChainLength].AsInt64())
		assert.Equal(rt, attrMap(bySeq[int64(n)].Attributes)[gate.AttrChainHash].AsString(), rm[gate.AttrChainHead].AsString())
		for _, res := range results {
			s := bySeq[res.Gate.Chain.Seq]
			assert.Equal(rt, s.SpanContext.SpanID(), res.SpanID, "the result's link is its span's")
			assert.Equal(rt, attrMap(s.Attributes)[gate.AttrChainHash].AsString(), res.Gate.Chain.Hash)
		}
	})
}

// The refusal budget's grouped spans are positions too; calls folded
// into them are not (they have no span).
func TestChainHoldsGroupedRefusals(t *testing.T) {
	h := newHarness(t, executor.WithRefusalBudget(3))
	a := h.agent(t, executor.AgentAllow("bash"))
	run := a.Run("flood")
	for i := range 200 {
		run.Execute(context.Background(), call(fmt.Sprint("c", i), fmt.Sprint("nosuch_", i%20), `{}`))
	}
	run.End()
	_, calls := spansByName(h.spans.GetSpans())
	_, bySeq := chainOf(t, calls)
	var sum int64
	for _, s := range bySeq {
		c := attrMap(s.Attributes)[gate.AttrCalls].AsInt64()
		sum += max(c, 1)
	}
	assert.EqualValues(t, 200, sum, "the positions record every call")
	assert.Less(t, len(bySeq), 200, "grouped")
}

// Calls no gate judges (and the store does not keep) take no position; an
// opted-out agent's calls do. Each Run value has its own chain; a Task
// view shares its run's.
func TestChainScope(t *testing.T) {
	h := newHarness(t, executor.WithOptOut("free"))
	ungated := h.agent(t, executor.AgentAllow("bash"))
	r1 := ungated.Run("r")
	r1.Execute(context.Background(), call("u1", "bash", `{"command":"x"}`))
	for _, s := range h.spans.GetSpans() {
		assert.NotContains(t, attrMap(s.Attributes), gate.AttrChainSeq, s.Name)
	}
	h2 := newHarness(t, executor.WithOptOut("free"), executor.WithGates(gate.AllowAll()))
	fa, err := h2.ex.Agent("free", executor.AgentAllow("bash"))
	require.NoError(t, err)
	ra, rb := fa.Run("same-id"), fa.Run("same-id")
	resA := ra.Execute(context.Background(), call("a", "bash", `{"command":"x"}`))
	resT := ra.Task("t").Execute(context.Background(), call("t", "bash", `{"command":"x"}`))
	resB := rb.Execute(context.Background(), call("b", "bash", `{"command":"x"}`))
	assert.True(t, resA.Gate.OptOut)
	assert.EqualValues(t, 1, resA.Gate.Chain.Seq)
	assert.EqualValues(t, 2, resT.Gate.Chain.Seq, "a Task view continues its run's chain")
	assert.Equal(t, resA.Gate.Chain.ID, resT.Gate.Chain.ID)
	assert.EqualValues(t, 1, resB.Gate.Chain.Seq)
	assert.NotEqual(t, resA.Gate.Chain.ID, resB.Gate.Chain.ID, "another Run value, another chain")
	assert.Len(t, resA.Gate.Chain.ID, 32)
}

// With WithChainKey the run's chain is keyed: its ID says so and each
// hash is HMAC-SHA256 under the key over the same stored form — not the
// public SHA-256 a store writer could recompute.
func TestChainKeyed(t *testing.T) {
	key := []byte("k3y")
	h := newHarness(t, executor.WithGates(gate.DenyTools("policy", "deploy")), executor.WithChainKey(key))
	a := h.agent(t, executor.AgentAllow("bash", "deploy"))
	run := a.Run("keyed")
	for i, tool := range []string{"bash", "deploy", "nosuch"} {
		run.Execute(context.Background(), call(fmt.Sprint("k", i), tool, `{"command":"x"}`))
	}
	run.End()
	_, calls := spansByName(h.spans.GetSpans())
	require.Len(t, calls, 3)
	prev := ""
	for i, s := range calls {
		var d gate.StoredDecision
		d.TraceID, d.SpanID = s.SpanContext.TraceID().String(), s.SpanContext.SpanID().String()
		d.ReadAttributes(s.Attributes)
		d.Defaults()
		assert.True(t, gate.KeyedChain(d.ChainID), d.ChainID)
		assert.EqualValues(t, i+1, d.ChainSeq)
		assert.Equal(t, prev, d.ChainPrev)
		assert.Equal(t, d.HashKeyed(key), d.ChainHash)
		assert.NotEqual(t, d.Hash(), d.ChainHash, "not the unkeyed hash")
		prev = d.ChainHash
	}
}
