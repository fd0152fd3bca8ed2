package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// memInbox is a durable approver in miniature (the real one is
// approve/inbox): a first ask is stored and suspended; a resume is
// answered from the stored request, only for the same call, once.
type memInbox struct {
	mu    sync.Mutex
	next  int
	reqs  map[string]*memReq
	asked int
}

type memReq struct {
	callHash string // gate.CallHash of the call asked about
	answer   *bool  // nil: pending
	used     bool
	traceID  string
	spanID   string
	askedAt  time.Time
}

func newMemInbox() *memInbox { return &memInbox{reqs: map[string]*memReq{}} }

var errChanged = errors.New("the resumed call is not the call the request was made for")

func (m *memInbox) Approve(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked++
	if req.ResumeID == "" {
		m.next++
		id := fmt.Sprintf("apr_%d", m.next)
		sc := spanContextOf(ctx)
		m.reqs[id] = &memReq{callHash: gate.CallHash(req.Call), traceID: sc[0], spanID: sc[1], askedAt: time.Now().Add(-time.Minute)}
		return req.Pending("mem", id, m.reqs[id].askedAt), nil
	}
	r, ok := m.reqs[req.ResumeID]
	switch {
	case !ok:
		return gate.ApprovalResult{}, errors.New("no such request")
	case r.callHash != gate.CallHash(req.Call):
		return gate.ApprovalResult{}, errChanged
	case r.answer == nil:
		return req.Pending("mem", req.ResumeID, r.askedAt), nil
	case r.used:
		return gate.ApprovalResult{}, errors.New("already used")
	}
	r.used = true
	var res gate.ApprovalResult
	if *r.answer {
		res = req.Approve("alice", "looked fine")
	} else {
		res = req.Decline("alice", "no")
	}
	res.RequestID, res.AskedAt, res.AnsweredAt = req.ResumeID, r.askedAt, r.askedAt.Add(90*time.Second)
	res.AskTraceID, res.AskSpanID = r.traceID, r.spanID
	return res, nil
}

func (m *memInbox) answer(id string, approve bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs[id].answer = &approve
}

func spanContextOf(ctx context.Context) [2]string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return [2]string{}
	}
	return [2]string{sc.TraceID().String(), sc.SpanID().String()}
}

// resumeWorld is an executor with an asking gate on "deploy" and an
// allowing gate elsewhere, the memInbox, and a tool that counts its runs.
type resumeWorld struct {
	ex   *executor.Executor
	in   *memInbox
	rec  *tracetest.SpanRecorder
	mu   sync.Mutex
	runs map[string]int // input → times the tool ran
}

func newResumeWorld(t testing.TB) *resumeWorld {
	w := &resumeWorld{in: newMemInbox(), rec: tracetest.NewSpanRecorder(), runs: map[string]int{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(w.rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	reg, err := executor.NewRegistry(
		executor.Tool{Name: "deploy", InputSchema: []byte(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`),
			Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
				w.mu.Lock()
				defer w.mu.Unlock()
				w.runs[string(in)]++
				return executor.Text("deployed"), nil
			}},
	)
	require.NoError(t, err)
	// Ask for every env except "dev", which the gate allows outright.
	g := gate.Named("deploy-policy", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if c.Input["env"] == "dev" {
			return gate.Allow(), nil
		}
		if c.Input["env"] == "forbidden" {
			return gate.Deny("never"), nil
		}
		return gate.Ask("deploys need a person"), nil
	}))
	w.ex, err = executor.New(reg, executor.WithGates(g), executor.WithApprover(w.in), executor.WithTracerProvider(tp))
	require.NoError(t, err)
	return w
}

func (w *resumeWorld) run(t testing.TB, runID string) *executor.Run {
	a, err := w.ex.Agent("ops", executor.AgentPresets(executor.PresetAll))
	require.NoError(t, err)
	return a.Run(runID)
}

func (w *resumeWorld) ran(in string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runs[in]
}

func TestSuspendAndResume(t *testing.T) {
	w := newResumeWorld(t)
	c := call("c1", "deploy", `{"env":"prod"}`)
	res := w.run(t, "r1").Execute(context.Background(), c)
	require.True(t, res.IsError)
	require.ErrorIs(t, res.Err, executor.ErrApprovalPending)
	assert.Equal(t, executor.ErrorTypeApprovalPending, res.ErrorType)
	assert.Equal(t, gate.ActionDeny, res.Gate.Action)
	assert.Equal(t, gate.ApprovalPending, res.Gate.Approval)
	id := res.Gate.ApprovalID
	require.Equal(t, "apr_1", id)
	assert.Contains(t, res.Content, "waiting for a person's approval (request apr_1")
	assert.Zero(t, w.ran(`{"env":"prod"}`))
	askSpan := res.SpanID

	// Resumed before the answer: still pending, still not run.
	ctx := gate.WithResume(context.Background(), id)
	res = w.run(t, "r1").Execute(ctx, c)
	require.ErrorIs(t, res.Err, executor.ErrApprovalPending)
	assert.Zero(t, w.ran(`{"env":"prod"}`))

	// Answered: the resumed call (a new Run value, as after a restart) runs once.
	w.in.answer(id, true)
	res = w.run(t, "r1").Execute(ctx, c)
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, 1, w.ran(`{"env":"prod"}`))
	assert.Equal(t, gate.ApprovalApproved, res.Gate.Approval)
	assert.Equal(t, "alice", res.Gate.Approver)
	assert.Equal(t, id, res.Gate.ApprovalID)
	assert.Equal(t, 90*time.Second, res.Gate.ApprovalWait)
	// The resumed call's span links to the asking call's span.
	var linked bool
	for _, s := range w.rec.Ended() {
		if s.SpanContext().SpanID() != res.SpanID {
			continue
		}
		for _, l := range s.Links() {
			if l.SpanContext.SpanID() == askSpan {
				linked = true
				assert.Contains(t, l.Attributes, attribute.String("gate.link", "approval_ask"))
			}
		}
	}
	assert.True(t, linked, "the resumed call's span links to the ask")

	// Resumed again: the answer was used; denied, not run a second time.
	res = w.run(t, "r1").Execute(ctx, c)
	require.ErrorIs(t, res.Err, executor.ErrDenied)
	assert.Equal(t, gate.ApprovalInvalid, res.Gate.Approval)
	assert.Equal(t, 1, w.ran(`{"env":"prod"}`))
}

// TestResumeNeverWidens: every way of resuming something other than the
// call that was approved is denied and recorded, and runs nothing.
func TestResumeNeverWidens(t *testing.T) {
	tests := []struct {
		name   string
		runID  string
		call   executor.ToolCall
		answer bool
		want   gate.ApprovalOutcome
	}{
		{"different input", "r1", call("c1", "deploy", `{"env":"staging"}`), true, gate.ApprovalInvalid},
		{"different call ID", "r1", call("c2", "deploy", `{"env":"prod"}`), true, gate.ApprovalInvalid},
		{"different run", "r2", call("c1", "deploy", `{"env":"prod"}`), true, gate.ApprovalInvalid},
		{"an input the gate allows outright", "r1", call("c1", "deploy", `{"env":"dev"}`), true, gate.ApprovalInvalid},
		{"declined", "r1", call("c1", "deploy", `{"env":"prod"}`), false, gate.ApprovalDeclined},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newResumeWorld(t)
			res := w.run(t, "r1").Execute(context.Background(), call("c1", "deploy", `{"env":"prod"}`))
			require.ErrorIs(t, res.Err, executor.ErrApprovalPending)
			id := res.Gate.ApprovalID
			w.in.answer(id, tc.answer)
			res = w.run(t, tc.runID).Execute(gate.WithResume(context.Background(), id), tc.call)
			assert.Equal(t, id, res.Gate.ApprovalID, "a refused resume names its request")
			require.True(t, res.IsError)
			require.ErrorIs(t, res.Err, executor.ErrDenied)
			assert.Equal(t, tc.want, res.Gate.Approval)
			assert.Equal(t, gate.ActionDeny, res.Gate.Action)
			for in, n := range w.runs {
				t.Errorf("tool ran %d times with %s", n, in)
			}
		})
	}
	t.Run("a gate that now denies still denies", func(t *testing.T) {
		w := newResumeWorld(t)
		res := w.run(t, "r1").Execute(context.Background(), call("c1", "deploy", `{"env":"forbidden"}`))
		require.ErrorIs(t, res.Err, executor.ErrDenied) // never even asked
		assert.Zero(t, w.in.asked)
	})
}

// TestPropertyResumeRunsOnlyTheApprovedCallOnce: across random sequences of
// asks, answers and resumes (matching or tampered), a tool runs only for a
// call whose request was approved and resumed with exactly that call, and
// at most once per request.
func TestPropertyResumeRunsOnlyTheApprovedCallOnce(t *testing.T) {
	envs := []string{"prod", "staging", "dev", "qa"}
	rapid.Check(t, func(rt *rapid.T) {
		w := newResumeWorld(t)
		type asked struct {
			id, env, callID string
			approved        *bool
		}
		var reqs []*asked
		allowed := map[string]int{} // input → runs we allow
		n := rapid.IntRange(1, 30).Draw(rt, "steps")
		for i := 0; i < n; i++ {
			switch {
			case len(reqs) == 0 || rapid.Bool().Draw(rt, "ask"):
				env := rapid.SampledFrom(envs[:2]).Draw(rt, "env")
				id := fmt.Sprintf("c%d", i)
				res := w.run(t, "r").Execute(context.Background(), call(id, "deploy", `{"env":"`+env+`"}`))
				if !errors.Is(res.Err, executor.ErrApprovalPending) {
					rt.Fatalf("ask not suspended: %v", res.Err)
				}
				reqs = append(reqs, &asked{id: res.Gate.ApprovalID, env: env, callID: id})
			case rapid.Bool().Draw(rt, "answer"):
				q := rapid.SampledFrom(reqs).Draw(rt, "q")
				if q.approved == nil {
					ok := rapid.Bool().Draw(rt, "approve")
					q.approved = &ok
					w.in.answer(q.id, ok)
				}
			default:
				q := rapid.SampledFrom(reqs).Draw(rt, "q")
				env, callID, runID := q.env, q.callID, "r"
				if rapid.Bool().Draw(rt, "tamper") {
					switch rapid.IntRange(0, 2).Draw(rt, "how") {
					case 0:
						env = rapid.SampledFrom(envs).Draw(rt, "env2")
					case 1:
						callID = rapid.SampledFrom([]string{"x", q.callID}).Draw(rt, "cid")
					case 2:
						runID = rapid.SampledFrom([]string{"r", "other"}).Draw(rt, "rid")
					}
				}
				in := `{"env":"` + env + `"}`
				before := w.ran(in)
				res := w.run(t, runID).Execute(gate.WithResume(context.Background(), q.id), call(callID, "deploy", in))
				same := env == q.env && callID == q.callID && runID == "r"
				if !res.IsError {
					if !same || q.approved == nil || !*q.approved {
						rt.Fatalf("ran a call that was not approved as it is: %+v %s %s %s", q, env, callID, runID)
					}
					allowed[in]++
				}
				if w.ran(in)-before > 1 {
					rt.Fatalf("ran twice")
				}
			}
		}
		// Each approved request ran at most once.
		runs := map[string]int{}
		for _, q := range reqs {
			if q.approved != nil && *q.approved {
				runs[`{"env":"`+q.env+`"}`]++
			}
		}
		for in, n := range allowed {
			if n > runs[in] {
				rt.Fatalf("%s ran %d times for %d approvals", in, n, runs[in])
			}
			if w.ran(in) != n {
				rt.Fatalf("tool count %d != results %d", w.ran(in), n)
			}
		}
	})
}

// TestAnonymousRunGrantsStayInTheirRun: a grant "for the rest of this run"
// given to a run without an ID never approves a call of another anonymous
// run, even of another executor (another process) sharing a persistent
// GrantStore.
func TestAnonymousRunGrantsStayInTheirRun(t *testing.T) {
	shared := gate.NewMemoryGrants(0) // stands for a store that outlives the process
	ask := gate.AskTools("confirm", "bash")
	newRun := func() (*executor.Run, *recordingApprover) {
		ap := &recordingApprover{approve: true, remember: gate.GrantScopeRun}
		h := newHarness(t, executor.WithGates(ask), executor.WithApprover(ap), executor.WithGrantStore(shared))
		return h.agent(t).Run(""), ap
	}
	r1, ap1 := newRun()
	require.False(t, r1.Execute(context.Background(), call("c1", "bash", `{"command":"make"}`)).IsError)
	res := r1.Execute(context.Background(), call("c2", "bash", `{"command":"make"}`))
	assert.Equal(t, executor.ApproverGrant, res.Gate.Approver, "granted within its own run")
	assert.Len(t, ap1.reqs, 1)
	r2, ap2 := newRun() // another process's first anonymous run
	res = r2.Execute(context.Background(), call("c1", "bash", `{"command":"make"}`))
	assert.Equal(t, "rec", res.Gate.Approver, "asked again, not granted")
	assert.Len(t, ap2.reqs, 1)
}
