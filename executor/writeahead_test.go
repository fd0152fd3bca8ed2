package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// walMode is how a test write-ahead log answers one call's Commit.
type walMode int

const (
	walOK      walMode = iota // records and returns nil
	walErr                    // returns an error
	walPanic                  // panics
	walHang                   // honours ctx: returns ctx's error when it ends
	walDeaf                   // ignores ctx: blocks until released, then returns nil
	walLateNil                // waits for ctx to end, then returns nil anyway
)

// memLog is a WriteAheadLog that snapshots the span's attributes at each
// Commit, keyed by gen_ai.tool.call.id, answering per call as mode says.
type memLog struct {
	mode    func(callID string) walMode
	err     error
	release chan struct{}

	mu        sync.Mutex
	committed map[string]map[attribute.Key]attribute.Value // returned nil
	calls     map[string]int                               // Commit calls
}

func newMemLog(mode func(string) walMode) *memLog {
	return &memLog{mode: mode, err: errors.New("disk full"), release: make(chan struct{}),
		committed: map[string]map[attribute.Key]attribute.Value{}, calls: map[string]int{}}
}

func (l *memLog) Commit(ctx context.Context, span trace.Span) error {
	ro := span.(sdktrace.ReadOnlySpan)
	attrs := attrMap(ro.Attributes())
	id := attrs[semconv.GenAIToolCallIDKey].AsString()
	l.mu.Lock()
	l.calls[id]++
	l.mu.Unlock()
	switch l.mode(id) {
	case walErr:
		return fmt.Errorf("spool: append: %w", l.err)
	case walPanic:
		panic("spool corrupted")
	case walHang:
		<-ctx.Done()
		return ctx.Err()
	case walDeaf:
		<-l.release
		return nil
	case walLateNil:
		<-ctx.Done()
	}
	l.mu.Lock()
	l.committed[id] = attrs
	l.mu.Unlock()
	return nil
}

func (l *memLog) snapshot(id string) (map[attribute.Key]attribute.Value, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.committed[id], l.calls[id]
}

// fataler is what testing.TB and *rapid.T share.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// outcomeKeys are the attributes only the tool's outcome sets, after the
// decision was committed.
var outcomeKeys = map[attribute.Key]bool{semconv.ErrorTypeKey: true, semconv.GenAIToolCallResultKey: true}

// afterCommit: the tool's outcome, and the decision's place in its run's
// hash chain (gate.chain.*), which is taken when the call's span ends.
func afterCommit(k attribute.Key) bool {
	return outcomeKeys[k] || strings.HasPrefix(string(k), "gate.chain.")
}

// assertCommittedIsFinal: the committed record carries exactly the final
// span's attributes, the tool's outcome aside.
func assertCommittedIsFinal(t fataler, committed map[attribute.Key]attribute.Value, final []attribute.KeyValue) {
	t.Helper()
	fin := attrMap(final)
	for k, v := range fin {
		if afterCommit(k) {
			continue
		}
		c, ok := committed[k]
		if !ok || c != v {
			t.Fatalf("final %s=%v, committed %v (present %v)", k, v.Emit(), c.Emit(), ok)
		}
	}
	for k := range committed {
		if _, ok := fin[k]; !ok {
			t.Fatalf("committed %s is not on the final span", k)
		}
	}
}

// assertCommittedHash: the committed record's chain hash is the hash of
// the committed record itself read as the store reads it (its recorded
// arguments included), and the final record keeps that position and hash
// and hashes to it too: what `auditq verify` recomputes from the row the
// store keeps, whether the process died while the tool ran or not.
func assertCommittedHash(t fataler, final tracetest.SpanStub, committed map[attribute.Key]attribute.Value) {
	t.Helper()
	read := func(attrs []attribute.KeyValue) gate.StoredDecision {
		var d gate.StoredDecision
		d.TraceID, d.SpanID = final.SpanContext.TraceID().String(), final.SpanContext.SpanID().String()
		d.ReadAttributes(attrs)
		d.Defaults()
		return d
	}
	kvs := make([]attribute.KeyValue, 0, len(committed))
	for k, v := range committed {
		kvs = append(kvs, attribute.KeyValue{Key: k, Value: v})
	}
	c, f := read(kvs), read(final.Attributes)
	if c.ChainHash == "" && f.ChainHash == "" && !c.Gated && !c.OptOut {
		return // no gate judged the call: not a decision, no position
	}
	if c.ChainHash == "" || c.Hash() != c.ChainHash {
		t.Fatalf("committed record hashes to %q, carries %q (input %q)", c.Hash(), c.ChainHash, c.Input)
	}
	if f.ChainHash != c.ChainHash || f.ChainSeq != c.ChainSeq || f.Hash() != f.ChainHash {
		t.Fatalf("final record: seq %d hash %q (recomputed %q), committed seq %d hash %q", f.ChainSeq, f.ChainHash, f.Hash(), c.ChainSeq, c.ChainHash)
	}
	if f.Input == "" || f.Input != c.Input {
		t.Fatalf("recorded arguments: final %q, committed %q", f.Input, c.Input)
	}
}

func spanOfCall(t fataler, spans *tracetest.InMemoryExporter, id string) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans.GetSpans() {
		if s.Name == "invoke_agent tester" || s.Name == "invoke_agent prop" {
			continue
		}
		if attrMap(s.Attributes)[semconv.GenAIToolCallIDKey].AsString() == id {
			return s
		}
	}
	t.Fatalf("no span for call %s", id)
	return tracetest.SpanStub{}
}

func auditUnavailableCount(t testing.TB, h *harness) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != executor.MetricAuditUnavailable {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := dp.Attributes.Value(semconv.ErrorTypeKey)
				out[v.AsString()] += dp.Value
			}
		}
	}
	return out
}

// TestWriteAhead: strict mode commits the final decision of every call
// whose tool is about to run — after the gates, the approval and any
// rewrite — and runs the tool only once Commit returned nil in time; a
// failing, panicking, hanging or late log denies the call
// (audit_unavailable), its tool never runs, the denial ends on the span
// and is counted; calls refused earlier are never committed.
func TestWriteAhead(t *testing.T) {
	rewrite := gate.Named("rewriter", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if c.String("command") == "rm -rf /" {
			return gate.Decision{Action: gate.ActionAllow, RewrittenInput: json.RawMessage(`{"command":"echo no"}`), Reason: "defused"}, nil
		}
		return gate.Allow(), nil
	}))
	asker := fixed("asker", gate.Decision{Action: gate.ActionAsk, Reason: "needs a human"})
	approve := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		if req.Call.String("command") == "ls" {
			return req.Approve("alice", "fine"), nil
		}
		return req.Decline("alice", "no"), nil
	})
	tests := []struct {
		name     string
		gates    []gate.Gate
		call     executor.ToolCall
		mode     walMode
		timeout  time.Duration
		ran      bool
		commits  int
		kind     string // MetricAuditUnavailable's error.type when denied for the log
		check    func(t *testing.T, rec gate.Record, final map[attribute.Key]attribute.Value)
		noRecord bool
	}{
		{name: "allowed", gates: []gate.Gate{fixed("ok", gate.Allow())}, call: call("c1", "bash", `{"command":"ls"}`),
			ran: true, commits: 1},
		{name: "ungated", call: call("c1", "bash", `{"command":"ls"}`), ran: true, commits: 1,
			check: func(t *testing.T, rec gate.Record, final map[attribute.Key]attribute.Value) {
				assert.False(t, final[gate.AttrGated].AsBool())
			}},
		{name: "denied by a gate: no commit", gates: []gate.Gate{fixed("no", gate.Deny("nope"))},
			call: call("c1", "bash", `{"command":"ls"}`), commits: 0},
		{name: "unknown tool: no commit", call: call("c1", "nuke", `{}`), commits: 0},
		{name: "invalid input: no commit", call: call("c1", "bash", `{"command":""}`), commits: 0},
		{name: "ask approved: the approval is committed", gates: []gate.Gate{asker}, call: call("c1", "bash", `{"command":"ls"}`),
			ran: true, commits: 1,
			check: func(t *testing.T, rec gate.Record, final map[attribute.Key]attribute.Value) {
				assert.Equal(t, string(gate.ApprovalApproved), final[gate.AttrApproval].AsString())
				assert.Equal(t, "alice", final[gate.AttrApprover].AsString())
			}},
		{name: "ask declined: no commit", gates: []gate.Gate{asker}, call: call("c1", "bash", `{"command":"pwd"}`), commits: 0},
		{name: "rewrite: the rewritten input is committed", gates: []gate.Gate{rewrite}, call: call("c1", "bash", `{"command":"rm -rf /"}`),
			ran: true, commits: 1,
			check: func(t *testing.T, rec gate.Record, final map[attribute.Key]attribute.Value) {
				assert.True(t, final[gate.AttrRewritten].AsBool())
				assert.Equal(t, `{"command":"echo no"}`, final[semconv.GenAIToolCallArgumentsKey].AsString())
			}},
		{name: "log error", gates: []gate.Gate{fixed("ok", gate.Decision{Action: gate.ActionAllow, Reason: "fine by me"})},
			call: call("c1", "bash", `{"command":"ls"}`), mode: walErr, commits: 1, kind: "error",
			check: func(t *testing.T, rec gate.Record, final map[attribute.Key]attribute.Value) {
				assert.Equal(t, "audit unavailable: spool: append: disk full; the gates had allowed the call: fine by me", rec.Reason)
				assert.True(t, rec.Gated)
				assert.Equal(t, gate.StageGate, rec.Stage)
				assert.NotEmpty(t, rec.Verdicts, "the gates' record is kept")
			}},
		{name: "log error, ungated", call: call("c1", "bash", `{"command":"ls"}`), mode: walErr, commits: 1, kind: "error",
			check: func(t *testing.T, rec gate.Record, final map[attribute.Key]attribute.Value) {
				assert.Equal(t, "audit unavailable: spool: append: disk full", rec.Reason)
				assert.Equal(t, gate.StageRun, rec.Stage)
				assert.False(t, rec.Gated)
			}},
		{name: "log panics", gates: []gate.Gate{fixed("ok", gate.Allow())}, call: call("c1", "bash", `{"command":"ls"}`),
			mode: walPanic, commits: 1, kind: "panic",
			check: func(t *testing.T, rec gate.Record, final map[attribute.Key]attribute.Value) {
				assert.Contains(t, rec.Reason, "audit unavailable: the write-ahead log panicked: spool corrupted")
			}},
		{name: "log hangs past the deadline", gates: []gate.Gate{fixed("ok", gate.Allow())}, call: call("c1", "bash", `{"command":"ls"}`),
			mode: walHang, timeout: 20 * time.Millisecond, commits: 1, kind: "timeout",
			check: func(t *testing.T, rec gate.Record, final map[attribute.Key]attribute.Value) {
				assert.Contains(t, rec.Reason, "context deadline exceeded")
			}},
		{name: "log ignores ctx", gates: []gate.Gate{fixed("ok", gate.Allow())}, call: call("c1", "bash", `{"command":"ls"}`),
			mode: walDeaf, timeout: 20 * time.Millisecond, commits: 1, kind: "timeout",
			check: func(t *testing.T, rec gate.Record, final map[attribute.Key]attribute.Value) {
				assert.Contains(t, rec.Reason, "audit unavailable: the write-ahead log did not record the decision before the call's context ended")
			}},
		{name: "log answers nil after the deadline", gates: []gate.Gate{fixed("ok", gate.Allow())}, call: call("c1", "bash", `{"command":"ls"}`),
			mode: walLateNil, timeout: 20 * time.Millisecond, commits: 1, kind: "timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := newMemLog(func(string) walMode { return tc.mode })
			defer close(log.release)
			h := newHarness(t, executor.WithWriteAhead(log), executor.WithGates(tc.gates...), executor.WithApprover(approve),
				executor.WithRecordContent(true))
			ag := h.agent(t)
			run := ag.Run("run-1")
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			bash := h.calls["bash"]
			res := run.Execute(ctx, tc.call)
			run.End()
			snap, n := log.snapshot(tc.call.ID)
			assert.Equal(t, tc.commits, n, "Commit calls")
			assert.Equal(t, tc.ran, bash.Load() == 1, "the tool ran")
			final := spanOfCall(t, h.spans, tc.call.ID)
			fa := attrMap(final.Attributes)
			counts := auditUnavailableCount(t, h)
			if tc.ran {
				require.NotNil(t, snap, "the tool ran without its decision committed")
				assertCommittedIsFinal(t, snap, final.Attributes)
				assert.NotEqual(t, gate.ActionDeny, res.Gate.Action)
				assert.Empty(t, counts)
			}
			if tc.kind != "" {
				assert.True(t, res.IsError)
				assert.ErrorIs(t, res.Err, executor.ErrAuditUnavailable)
				assert.Equal(t, executor.ErrorTypeAuditUnavailable, res.ErrorType)
				assert.Equal(t, gate.ActionDeny, res.Gate.Action)
				assert.Equal(t, gate.SourceExecutor, res.Gate.Source)
				assert.Equal(t, executor.ErrorTypeAuditUnavailable, res.Gate.ErrorKind)
				assert.True(t, strings.HasPrefix(res.Gate.Reason, "audit unavailable: "), res.Gate.Reason)
				assert.Contains(t, res.Content, "could not be recorded in the audit trail")
				// The denial ends on the span.
				assert.Equal(t, "deny", fa[gate.AttrAction].AsString())
				assert.Equal(t, executor.ErrorTypeAuditUnavailable, fa[gate.AttrError].AsString())
				assert.Equal(t, executor.ErrorTypeAuditUnavailable, fa[semconv.ErrorTypeKey].AsString())
				assert.Equal(t, res.Gate.Reason, fa[gate.AttrReason].AsString())
				assert.Equal(t, map[string]int64{tc.kind: 1}, counts)
			}
			if tc.check != nil {
				tc.check(t, res.Gate, fa)
			}
		})
	}
}

// TestWriteAheadReasonRedactedAndBounded: the log's error is model- and
// auditor-facing text: redacted and bounded like every reason.
func TestWriteAheadReasonRedactedAndBounded(t *testing.T) {
	log := newMemLog(func(string) walMode { return walErr })
	log.err = errors.New("push to https://x?token=ghp_abcdefghijklmnopqrstuvwxyz0123 failed " + strings.Repeat("x", 10000))
	h := newHarness(t, executor.WithWriteAhead(log), executor.WithRecordLimit(256))
	res := h.agent(t).Run("r").Execute(context.Background(), call("c1", "bash", `{"command":"ls"}`))
	assert.Equal(t, executor.ErrorTypeAuditUnavailable, res.ErrorType)
	assert.NotContains(t, res.Gate.Reason, "ghp_abcdefghijklmnopqrstuvwxyz0123")
	assert.NotContains(t, res.Content, "ghp_abcdefghijklmnopqrstuvwxyz0123")
	assert.Contains(t, res.Gate.Reason, "[REDACTED]")
	assert.LessOrEqual(t, len(res.Gate.Reason), 256*3/2)
	assert.Zero(t, h.calls["bash"].Load())
}

// TestPropertyWriteAhead: over random gate chains (allow, deny, ask,
// rewrite), random approvals, and a log that per call succeeds, fails,
// panics, hangs or answers late, with calls running concurrently: a
// call's tool runs iff Commit returned nil in time for that call, it runs
// only after that Commit, the committed record is the final decision of
// the call, and every call denied for the log says audit_unavailable and
// is counted.
func TestPropertyWriteAhead(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nGates := rapid.IntRange(0, 3).Draw(t, "gates")
		var gates []gate.Gate
		for i := range nGates {
			gates = append(gates, drawGate(t, fmt.Sprintf("g%d", i)))
		}
		approves := map[string]bool{}
		for _, c := range propCommands {
			approves[c] = rapid.Bool().Draw(t, "approve["+c+"]")
		}
		approver := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
			if approves[req.Call.String("command")] {
				return req.Approve("prop", ""), nil
			}
			return req.Decline("prop", ""), nil
		})
		n := rapid.IntRange(1, 12).Draw(t, "calls")
		modes := map[string]walMode{}
		calls := make([]executor.ToolCall, n)
		for i := range n {
			id := fmt.Sprintf("call-%d", i)
			modes[id] = rapid.SampledFrom([]walMode{walOK, walOK, walOK, walErr, walPanic, walHang, walDeaf, walLateNil}).Draw(t, "mode["+id+"]")
			cmd := rapid.SampledFrom(propCommands[:len(propCommands)-1]).Draw(t, "command["+id+"]")
			calls[i] = call(id, "bash", `{"command":"`+cmd+`"}`)
		}
		log := newMemLog(func(id string) walMode { return modes[id] })
		defer close(log.release)
		var (
			mu          sync.Mutex
			ran         = map[string]int{}
			uncommitted []string
		)
		reg, err := executor.NewRegistry(executor.Tool{Name: "bash", InputSchema: json.RawMessage(bashSchema),
			Execute: func(ctx context.Context, _ json.RawMessage) (executor.Result, error) {
				c, _ := executor.CallFrom(ctx)
				id := c.ToolCallID
				snap, _ := log.snapshot(id)
				mu.Lock()
				ran[id]++
				if snap == nil {
					uncommitted = append(uncommitted, id)
				}
				mu.Unlock()
				return executor.Text("ok"), nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		h := &harness{spans: tracetest.NewInMemoryExporter()}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(h.spans))
		ex, err := executor.New(reg, executor.WithTracerProvider(tp), executor.WithGates(gates...), executor.WithApprover(approver),
			executor.WithWriteAhead(log), executor.WithRecordContent(true), executor.WithConcurrency(rapid.IntRange(1, 8).Draw(t, "concurrency")),
			executor.WithRefusalBudget(-1))
		if err != nil {
			t.Fatal(err)
		}
		ag, err := ex.Agent("prop", executor.AgentAllow("bash"))
		if err != nil {
			t.Fatal(err)
		}
		// A call whose log hangs gets a deadline; the others a context
		// that can end but does not (Commit runs on its own goroutine).
		live, cancel := context.WithCancel(context.Background())
		defer cancel()
		hangs := func(m walMode) bool { return m == walHang || m == walDeaf || m == walLateNil }
		var results []executor.ToolResult
		if rapid.Bool().Draw(t, "one batch") {
			for id, m := range modes {
				if hangs(m) {
					modes[id] = walErr
				}
			}
			results = ag.Run("r").ExecuteBatch(live, calls)
		} else {
			results = make([]executor.ToolResult, n)
			var wg sync.WaitGroup
			run := ag.Run("r")
			for i, c := range calls {
				wg.Go(func() {
					cctx := live
					if hangs(modes[c.ID]) {
						var cancel context.CancelFunc
						cctx, cancel = context.WithTimeout(live, 5*time.Millisecond)
						defer cancel()
					}
					results[i] = run.Execute(cctx, c)
				})
			}
			wg.Wait()
		}
		mu.Lock()
		defer mu.Unlock()
		if len(uncommitted) > 0 {
			t.Fatalf("tools ran before their decision was committed: %v", uncommitted)
		}
		for i, res := range results {
			id := calls[i].ID
			snap, commits := log.snapshot(id)
			okCommit := snap != nil && modes[id] != walLateNil
			if ran[id] > 1 {
				t.Fatalf("%s ran %d times", id, ran[id])
			}
			if (ran[id] == 1) != okCommit {
				t.Fatalf("%s: ran %d, committed %v (mode %d, result %+v)", id, ran[id], okCommit, modes[id], res)
			}
			gated := res.Gate.Action == gate.ActionAllow || !res.Gate.Gated
			if res.ErrorType == executor.ErrorTypeAuditUnavailable {
				// A call whose context ends first is denied without waiting
				// for Commit, which runs on its own goroutine and may not
				// have been entered yet (seen under -race on a loaded CI
				// machine): zero commits is then correct.
				wantCommits := commits == 1 || commits == 0 && hangs(modes[id])
				if !wantCommits || modes[id] == walOK || res.Gate.ErrorKind != executor.ErrorTypeAuditUnavailable ||
					!strings.HasPrefix(res.Gate.Reason, "audit unavailable: ") {
					t.Fatalf("%s: audit denial %+v after %d commits in mode %d", id, res.Gate, commits, modes[id])
				}
			} else if commits != 0 && !(okCommit && gated) {
				t.Fatalf("%s: committed %d times but %+v", id, commits, res)
			}
			final := spanOfCall(t, h.spans, id)
			fa := attrMap(final.Attributes)
			if ran[id] == 1 {
				assertCommittedIsFinal(t, snap, final.Attributes)
				assertCommittedHash(t, final, snap)
				// The span (and so the committed record) carries the call's
				// decision record as the executor returned it.
				for _, kv := range res.Gate.Attributes(nil, 1<<20) {
					if fa[kv.Key] != kv.Value {
						t.Fatalf("%s ran but its span records %s=%v, its decision %v", id, kv.Key, fa[kv.Key].Emit(), kv.Value.Emit())
					}
				}
				if res.Gate.Gated && res.Gate.Action != gate.ActionAllow || fa[semconv.GenAIToolCallArgumentsKey].AsString() == "" {
					t.Fatalf("%s ran with decision %+v, span %v", id, res.Gate, final.Attributes)
				}
			} else if res.ErrorType == executor.ErrorTypeAuditUnavailable && fa[gate.AttrError].AsString() != executor.ErrorTypeAuditUnavailable {
				t.Fatalf("%s: denial not on the span: %v", id, final.Attributes)
			}
		}
	})
}
