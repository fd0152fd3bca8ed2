package replay

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

func spanAttr(s sdktrace.ReadOnlySpan, k attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestReplayRealTranscript replays all 1,091 recorded calls and checks the
// replay's own invariants against the spans it produced: every call is
// gated and yields exactly one execute_tool span under its run's
// invoke_agent span; the summary's counts equal the spans' gate.action and
// gate.risk.level counts; and commands that must never pass do not.
func TestReplayRealTranscript(t *testing.T) {
	runs, err := ReadTranscriptFile("../testdata/real/trajectories.jsonl")
	require.NoError(t, err)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	r, err := New(WithTracerProvider(tp))
	require.NoError(t, err)
	s, err := r.Replay(context.Background(), runs)
	require.NoError(t, err)
	require.NoError(t, tp.ForceFlush(context.Background()))

	assert.Equal(t, 1091, s.Calls)
	assert.Equal(t, s.Calls, s.Gated, "every call reaches the gate; ungated: %v", s.Ungated)
	assert.Equal(t, s.Calls, s.Allowed+s.Denied)
	assert.Len(t, s.Runs, 38)

	spans := exp.GetSpans().Snapshots()
	agents := map[string]sdktrace.ReadOnlySpan{}
	var tools []sdktrace.ReadOnlySpan
	for _, sp := range spans {
		switch v, _ := spanAttr(sp, "gen_ai.operation.name"); v.AsString() {
		case "invoke_agent":
			agents[sp.SpanContext().SpanID().String()] = sp
		case "execute_tool":
			tools = append(tools, sp)
		}
	}
	assert.Len(t, agents, 38)
	require.Len(t, tools, 1091)
	actions := map[string]int{}
	risks := map[string]int{}
	for _, sp := range tools {
		parent, ok := agents[sp.Parent().SpanID().String()]
		require.True(t, ok, "execute_tool span %s has an invoke_agent parent", sp.Name())
		assert.Equal(t, parent.SpanContext().TraceID(), sp.SpanContext().TraceID())
		a, _ := spanAttr(sp, gate.AttrAction)
		actions[a.AsString()]++
		rl, _ := spanAttr(sp, gate.AttrRiskLevel)
		risks[rl.AsString()]++
	}
	assert.Equal(t, map[string]int{"allow": s.Allowed, "deny": s.Denied}, actions)
	// Each run is one hash chain, its positions 1…n in call order, and its
	// invoke_agent span records the chain's length and head at the run's
	// end: what `auditq verify` checks a run's tail against.
	type chain struct {
		id    string
		seqs  []int64
		head  string
		calls int
	}
	chains := map[string]*chain{}
	for _, sp := range tools {
		pid := sp.Parent().SpanID().String()
		c := chains[pid]
		if c == nil {
			c = &chain{}
			chains[pid] = c
		}
		id, _ := spanAttr(sp, gate.AttrChainID)
		seq, _ := spanAttr(sp, gate.AttrChainSeq)
		hash, _ := spanAttr(sp, gate.AttrChainHash)
		require.NotEmpty(t, id.AsString(), "call %s is chained", sp.Name())
		if c.id == "" {
			c.id = id.AsString()
		}
		assert.Equal(t, c.id, id.AsString(), "one chain per run")
		c.seqs = append(c.seqs, seq.AsInt64())
		c.head = hash.AsString()
		c.calls++
	}
	ids := map[string]bool{}
	for pid, c := range chains {
		assert.False(t, ids[c.id], "each run its own chain")
		ids[c.id] = true
		for i, seq := range c.seqs {
			require.Equal(t, int64(i+1), seq, "positions in call order")
		}
		agent := agents[pid]
		id, _ := spanAttr(agent, gate.AttrChainID)
		length, _ := spanAttr(agent, gate.AttrChainLength)
		head, _ := spanAttr(agent, gate.AttrChainHead)
		assert.Equal(t, c.id, id.AsString())
		assert.Equal(t, int64(c.calls), length.AsInt64(), "the run span records the chain's length")
		assert.Equal(t, c.head, head.AsString(), "and its head")
		model, _ := spanAttr(agent, "toolgate.replay.model")
		assert.NotEmpty(t, model.AsString(), "the run span carries the replay's attributes")
	}
	assert.Len(t, chains, 38)
	for lvl, n := range s.ByRisk {
		assert.Equal(t, n, risks[string(lvl)], "risk %q", lvl)
	}
	most := s.MostDenied()
	require.NotNil(t, most)
	assert.Positive(t, most.Denied)
	t.Logf("replayed %d calls: %d allowed, %d denied (%d approved, %d declined asks); by risk %v; %.0f calls/s",
		s.Calls, s.Allowed, s.Denied, s.Approved, s.Declined, s.ByRisk, s.CallsPerSecond())
	for i, rc := range s.DenyReasons {
		if i == 10 {
			break
		}
		t.Logf("deny %3d × %s", rc.Count, rc.Reason)
	}
	// The classifier's denials carry their rule (gate.rule), and their
	// reason names it in brackets. `auditq stats --by rule` and the demo's
	// summary group by it; the first bracketed word of the reason
	// (audit.RulePattern, the fallback for decisions without gate.rule)
	// can be the quoted command's own ("pip install -e .[dev]" → "dev").
	first := regexp.MustCompile(audit.RulePattern)
	var ruled, misread int
	for _, rc := range s.DenyReasons {
		if rc.Rule == "" {
			continue
		}
		ruled += rc.Count
		assert.Contains(t, rc.Reason, "["+rc.Rule+"]", "a reason names its rule")
		if m := first.FindStringSubmatch(rc.Reason); m == nil || m[1] != rc.Rule {
			misread += rc.Count
		}
	}
	assert.Positive(t, ruled, "the classifier's denials carry their rule")
	t.Logf("%d denials by rule, %d of them misread from the reason alone", ruled, misread)
}

// TestReplayRecordsEveryDeniedCall: a recorded run with more denied calls
// in a row than the executor's default refusal budget (which counts gate
// denials) is replayed call by call: each keeps its own gate decision,
// the run is not aborted and nothing is aggregated, even when
// WithExecutorOptions asks for a budget.
func TestReplayRecordsEveryDeniedCall(t *testing.T) {
	const n = 3 * executor.DefaultRefusalBudget
	run := Run{ID: "flood", Agent: "test"}
	for i := range n {
		run.Calls = append(run.Calls, Call{Run: "flood", Seq: i + 1, Tool: "bash", Input: json.RawMessage(`{"command":"rm -rf / --no-preserve-root"}`)})
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	r, err := New(WithTracerProvider(tp), WithExecutorOptions(executor.WithRefusalBudget(2)))
	require.NoError(t, err)
	s, err := r.Replay(context.Background(), []Run{run})
	require.NoError(t, err)
	assert.Equal(t, n, s.Calls)
	assert.Equal(t, n, s.Denied)
	tools := 0
	for _, sp := range exp.GetSpans().Snapshots() {
		if v, _ := spanAttr(sp, "gen_ai.operation.name"); v.AsString() != "execute_tool" {
			continue
		}
		tools++
		st, _ := spanAttr(sp, gate.AttrStage)
		assert.Equal(t, "gate", st.AsString())
		_, grouped := spanAttr(sp, gate.AttrCalls)
		assert.False(t, grouped)
	}
	assert.Equal(t, n, tools, "one span per recorded call")
}

// TestWithToolWrapper: the wrapper sees every call whose tool runs — the
// allowed ones — with the call in its context, and nothing else.
func TestWithToolWrapper(t *testing.T) {
	runs, err := ReadTranscriptFile("../testdata/real/trajectories.jsonl")
	require.NoError(t, err)
	var ran []string
	rp, err := New(WithToolWrapper(func(tool executor.Tool) executor.Tool {
		next := tool.Execute
		tool.Execute = func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
			c, ok := executor.CallFrom(ctx)
			require.True(t, ok)
			require.Equal(t, tool.Name, c.ToolName)
			ran = append(ran, c.ToolCallID)
			return next(ctx, in)
		}
		return tool
	}))
	require.NoError(t, err)
	s, err := rp.Replay(context.Background(), runs[:5])
	require.NoError(t, err)
	require.NotZero(t, s.Allowed)
	require.Len(t, ran, s.Allowed)
}

// TestReplayProfiles: the replay runs under every permission profile;
// workspace allows more than strict, read-only declines nothing by policy
// (it denies review-level calls itself) and allows what strict allows
// without approval.
func TestReplayProfiles(t *testing.T) {
	runs, err := ReadTranscriptFile("../testdata/real/trajectories.jsonl")
	require.NoError(t, err)
	got := map[string]*Summary{}
	for _, p := range []string{"read-only", "workspace", "strict"} {
		r, err := New(WithProfile(p))
		require.NoError(t, err)
		s, err := r.Replay(context.Background(), runs)
		require.NoError(t, err)
		assert.Equal(t, s.Calls, s.Allowed+s.Denied, p)
		got[p] = s
		t.Logf("profile %-9s: %d calls, %d allowed, %d denied (%d declined asks)", p, s.Calls, s.Allowed, s.Denied, s.Declined)
	}
	assert.Greater(t, got["workspace"].Allowed, got["strict"].Allowed)
	assert.Equal(t, got["strict"].Allowed, got["read-only"].Allowed)
	assert.Zero(t, got["read-only"].Declined, "read-only denies review-level calls without asking")
	_, err = New(WithProfile("yolo"))
	if err == nil {
		r, _ := New(WithProfile("yolo"))
		_, err = r.Replay(context.Background(), runs)
	}
	assert.Error(t, err, "an unknown profile fails")
}
