package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// The approval faults reported against peer frameworks, each replayed here
// through the real executor and the real inbox file (one *inbox.DB per
// "process": every Open below could be another process).

// peerWorld is an executor whose "deploy" tool always asks and counts its
// runs, over the inbox at path.
type peerWorld struct {
	path string
	mu   sync.Mutex
	runs map[string]int
}

func newPeerWorld(t *testing.T) *peerWorld {
	w := &peerWorld{path: filepath.Join(t.TempDir(), "approvals.db"), runs: map[string]int{}}
	db := w.open(t)
	_, err := db.Add(context.Background(), "alice")
	require.NoError(t, err)
	return w
}

func (w *peerWorld) open(t *testing.T) *inbox.DB {
	db, err := inbox.Open(w.path, inbox.OpenConfig{})
	require.NoError(t, err)
	return db
}

// agent is a new agent process: a new DB handle, executor and run.
func (w *peerWorld) agent(t *testing.T, runID string) *executor.Run {
	db := w.open(t)
	ib := inbox.New(db, db, inbox.Config{})
	reg, err := executor.NewRegistry(executor.Tool{Name: "deploy",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`),
		Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.runs[string(in)]++
			return executor.Text("deployed"), nil
		}})
	require.NoError(t, err)
	ex, err := executor.New(reg, executor.WithGates(gate.AskTools("deploys need a person", "deploy")),
		executor.WithApprover(inbox.NewApprover(ib, inbox.ApproverConfig{Mode: inbox.Suspend})), executor.WithGrantStore(db))
	require.NoError(t, err)
	a, err := ex.Agent("ops", executor.AgentPresets(executor.PresetAll))
	require.NoError(t, err)
	return a.Run(runID)
}

func (w *peerWorld) answer(t *testing.T, id string, approve bool) {
	db := w.open(t) // the person's process
	_, err := inbox.New(db, db, inbox.Config{}).Answer(context.Background(), id, inbox.Answer{Approve: approve, Approver: "alice"})
	require.NoError(t, err)
}

func (w *peerWorld) ran() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.runs {
		out[k] = v
	}
	return out
}

func deploy(id, env string) executor.ToolCall {
	return executor.ToolCall{ID: id, Name: "deploy", Input: json.RawMessage(`{"env":"` + env + `"}`)}
}

func suspend(t *testing.T, w *peerWorld, runID string, c executor.ToolCall) string {
	res := w.agent(t, runID).Execute(context.Background(), c)
	require.ErrorIs(t, res.Err, executor.ErrApprovalPending, res.Content)
	require.NotEmpty(t, res.Gate.ApprovalID)
	return res.Gate.ApprovalID
}

func TestPeerApprovalFaults(t *testing.T) {
	ctx := context.Background()

	// langchain-ai/langchain#37093: a rejected tool call stayed in the
	// list of calls to run, and the tool node ran it anyway.
	t.Run("a declined call never runs", func(t *testing.T) {
		w := newPeerWorld(t)
		id := suspend(t, w, "r", deploy("c1", "prod"))
		w.answer(t, id, false)
		for range 3 { // however often the application resumes it
			res := w.agent(t, "r").Execute(gate.WithResume(ctx, id), deploy("c1", "prod"))
			require.ErrorIs(t, res.Err, executor.ErrDenied)
		}
		assert.Empty(t, w.ran())
	})

	// LibreChat-AI/agents#531: after a run was rebuilt, the approved
	// proposal and the arguments that ran could differ; the approval must
	// bind the exact call.
	t.Run("an approval never applies to another call", func(t *testing.T) {
		w := newPeerWorld(t)
		id := suspend(t, w, "r", deploy("c1", "staging"))
		w.answer(t, id, true)
		for _, c := range []struct {
			run  string
			call executor.ToolCall
		}{
			{"r", deploy("c1", "prod")},     // other input
			{"r", deploy("c2", "staging")},  // other call ID
			{"r2", deploy("c1", "staging")}, // other run
		} {
			res := w.agent(t, c.run).Execute(gate.WithResume(ctx, id), c.call)
			require.ErrorIs(t, res.Err, executor.ErrDenied)
			assert.Equal(t, gate.ApprovalInvalid, res.Gate.Approval)
		}
		// Another pending request's ID cannot carry this approval either.
		other := suspend(t, w, "r", deploy("c9", "prod"))
		res := w.agent(t, "r").Execute(gate.WithResume(ctx, other), deploy("c1", "staging"))
		require.ErrorIs(t, res.Err, executor.ErrDenied)
		assert.Empty(t, w.ran())
		// The call the person saw still runs.
		res = w.agent(t, "r").Execute(gate.WithResume(ctx, id), deploy("c1", "staging"))
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, map[string]int{`{"env":"staging"}`: 1}, w.ran())
	})

	// openai/openai-agents-python#4244: an approval recorded on a
	// reconstructed run state was not honoured on resume (the run asked
	// again). Here the approval lives in the inbox, not in the process.
	t.Run("an approval is not lost on resume in a new process", func(t *testing.T) {
		w := newPeerWorld(t)
		id := suspend(t, w, "r", deploy("c1", "prod"))
		w.answer(t, id, true)
		res := w.agent(t, "r").Execute(gate.WithResume(ctx, id), deploy("c1", "prod"))
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, "alice", res.Gate.Approver)
		assert.Equal(t, id, res.Gate.ApprovalID)
		assert.Equal(t, map[string]int{`{"env":"prod"}`: 1}, w.ran())
	})

	// strands-agents/harness-sdk#3615 (review): an approved tool ran twice
	// when a resume was replayed. Here an approval is used once, also when
	// several processes resume it at the same time.
	t.Run("an approval runs the call once, even under concurrent resumes", func(t *testing.T) {
		w := newPeerWorld(t)
		id := suspend(t, w, "r", deploy("c1", "prod"))
		w.answer(t, id, true)
		var wg sync.WaitGroup
		results := make([]executor.ToolResult, 8)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = w.agent(t, "r").Execute(gate.WithResume(ctx, id), deploy("c1", "prod"))
			}()
		}
		wg.Wait()
		ok := 0
		for _, r := range results {
			if !r.IsError {
				ok++
			} else if !errors.Is(r.Err, executor.ErrDenied) {
				t.Errorf("unexpected result: %v", r.Err)
			}
		}
		assert.Equal(t, 1, ok)
		assert.Equal(t, map[string]int{`{"env":"prod"}`: 1}, w.ran())
	})

	// "for the rest of this run" survives the restart: the grant is in the
	// inbox file, not in the process.
	t.Run("a for-run approval survives a restart", func(t *testing.T) {
		w := newPeerWorld(t)
		id := suspend(t, w, "r", deploy("c1", "prod"))
		db := w.open(t)
		_, err := inbox.New(db, db, inbox.Config{}).Answer(ctx, id, inbox.Answer{Approve: true, Approver: "alice", ForRun: true})
		require.NoError(t, err)
		res := w.agent(t, "r").Execute(gate.WithResume(ctx, id), deploy("c1", "prod"))
		require.False(t, res.IsError, res.Content)
		// A later process, same run, same command: granted without asking.
		res = w.agent(t, "r").Execute(ctx, deploy("c2", "prod"))
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, executor.ApproverGrant, res.Gate.Approver)
		// Another run is asked again.
		res = w.agent(t, "r2").Execute(ctx, deploy("c3", "prod"))
		require.ErrorIs(t, res.Err, executor.ErrApprovalPending)
	})
}

// TestBlockingAskExpiresWithItsCall: a blocking ask is stored to expire
// when its call stops waiting, so a process that exits (or is killed)
// before it can abandon the request leaves nothing a person could still
// approve.
func TestBlockingAskExpiresWithItsCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "approvals.db")
	db, err := inbox.Open(path, inbox.OpenConfig{})
	require.NoError(t, err)
	ib := inbox.New(db, db, inbox.Config{})
	deadline := time.Now().Add(150 * time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	req := gate.NewApprovalRequest(gate.ToolCallContext{ToolName: "deploy", RawInput: []byte(`{"env":"prod"}`), ToolCallID: "c1", AgentName: "a", RunID: "r"}, gate.Ask("why"), nil)
	_, err = inbox.NewApprover(ib, inbox.ApproverConfig{Mode: inbox.Block}).Approve(ctx, req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	rs, err := ib.List(context.Background(), inbox.Filter{})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.WithinDuration(t, deadline, rs[0].ExpiresAt, time.Millisecond, "stored expiry is the call's deadline")
	// A suspended ask keeps the inbox's TTL whatever the call's deadline.
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	res, err := inbox.NewApprover(ib, inbox.ApproverConfig{Mode: inbox.Suspend}).Approve(ctx2, req)
	require.NoError(t, err)
	r, err := ib.Get(context.Background(), res.RequestID)
	require.NoError(t, err)
	assert.True(t, r.ExpiresAt.After(time.Now().Add(time.Hour)))
}

// TestFloodOfAsksIsBounded: a model that keeps asking gets at most
// MaxPendingPerRun requests of its run into the inbox; further asks are
// denied (and recorded), other runs still ask, and an answer frees a slot.
func TestFloodOfAsksIsBounded(t *testing.T) {
	w := newPeerWorld(t)
	ctx := context.Background()
	var first string
	for i := range inbox.DefaultMaxPendingPerRun {
		id := suspend(t, w, "flood", deploy(fmt.Sprint("c", i), fmt.Sprint("e", i)))
		if first == "" {
			first = id
		}
	}
	res := w.agent(t, "flood").Execute(ctx, deploy("over", "x"))
	require.ErrorIs(t, res.Err, executor.ErrDenied)
	assert.Equal(t, gate.ApprovalInvalid, res.Gate.Approval)
	assert.Contains(t, res.Gate.Reason, "too many pending approval requests")
	suspend(t, w, "other-run", deploy("c0", "prod")) // another run still asks
	w.answer(t, first, false)
	suspend(t, w, "flood", deploy("next", "y")) // a slot is free again
	// An input too large to review is refused at the ask.
	big := `{"env":"` + strings.Repeat("a", inbox.MaxInputBytes) + `"}`
	res = w.agent(t, "big").Execute(ctx, executor.ToolCall{ID: "b", Name: "deploy", Input: json.RawMessage(big)})
	require.ErrorIs(t, res.Err, executor.ErrDenied)
	assert.Equal(t, gate.ApprovalInvalid, res.Gate.Approval)
}

// TestPersistedGrantsExpire: a for-run grant kept in the file ends after
// GrantTTL, so a later run that reuses the run ID is asked again.
func TestPersistedGrantsExpire(t *testing.T) {
	db, err := inbox.Open(filepath.Join(t.TempDir(), "approvals.db"), inbox.OpenConfig{GrantTTL: 100 * time.Millisecond})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, db.Grant(ctx, "run:nightly", "k"))
	ok, err := db.Granted(ctx, "run:nightly", "k")
	require.NoError(t, err)
	assert.True(t, ok)
	time.Sleep(150 * time.Millisecond)
	ok, err = db.Granted(ctx, "run:nightly", "k")
	require.NoError(t, err)
	assert.False(t, ok, "expired")
}
