package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/internal/testenv"
)

// The approval flow with real processes: the agent (examples/unattended)
// asks and is killed; a person answers with the auditq binary from another
// process; the agent, started again, resumes the call; every decision
// lands in ClickHouse through our collector.

// unattendedOutcome is the agent's --json line.
type unattendedOutcome struct {
	Status     string `json:"status"`
	ApprovalID string `json:"approvalId"`
	Approval   string `json:"approval"`
	Approver   string `json:"approver"`
	Content    string `json:"content"`
}

// approvalWorld is one inbox, one state file and the stack.
type approvalWorld struct {
	s      *stack
	dir    string
	inbox  string
	agent  string // the examples/unattended binary
	auditq string
}

func newApprovalWorld(t *testing.T) *approvalWorld {
	t.Helper()
	w := &approvalWorld{s: startStack(t, withoutJaeger()), dir: t.TempDir(),
		agent: testenv.GoBinary(t, "./examples/unattended"), auditq: testenv.AuditqBinary(t)}
	w.inbox = filepath.Join(w.dir, "approvals.db")
	w.cli(t, 0, "approvals", "approvers", "add", "alice")
	return w
}

// cli runs auditq with the inbox and requires exit code want.
func (w *approvalWorld) cli(t *testing.T, want int, args ...string) string {
	t.Helper()
	cmd := exec.Command(w.auditq, append(args, "--inbox", w.inbox)...)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	require.Equal(t, want, code, "auditq %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// start starts the agent with args; it exports to the stack's collector.
func (w *approvalWorld) start(t *testing.T, state string, args ...string) (*exec.Cmd, *testenv.SyncBuffer) {
	t.Helper()
	all := append([]string{"--inbox", w.inbox, "--state", state, "--ran", filepath.Join(w.dir, "ran.log"), "--json"}, args...)
	cmd := exec.Command(w.agent, all...)
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+w.s.collector.GRPCEndpoint, w.s.collector.HeadersEnv(),
		"OTEL_BSP_SCHEDULE_DELAY=100")
	var out testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	return cmd, &out
}

// run runs the agent to its end and returns its outcome and exit code.
func (w *approvalWorld) run(t *testing.T, state string, args ...string) (unattendedOutcome, int) {
	t.Helper()
	cmd, out := w.start(t, state, args...)
	err := cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	var oc unattendedOutcome
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "{") {
			require.NoError(t, json.Unmarshal([]byte(line), &oc), out.String())
		}
	}
	require.NotEmpty(t, oc.Status, "agent output:\n%s", out.String())
	return oc, code
}

// ran returns the commands the tool ran, in order.
func (w *approvalWorld) ran(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join(w.dir, "ran.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
}

// ask starts the agent for command in run, waits until it has suspended
// the call (its state file names the request), kills it and returns the
// request ID.
func (w *approvalWorld) askAndKill(t *testing.T, state, run, command string, extra ...string) string {
	t.Helper()
	cmd, out := w.start(t, state, append([]string{"--run", run, "--command", command, "--linger", "1m"}, extra...)...)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), `"status":"pending"`) {
		require.True(t, time.Now().Before(deadline), "the agent did not suspend the call:\n%s", out.String())
		time.Sleep(50 * time.Millisecond)
	}
	// The process lingers; a crash now must lose nothing: the request is
	// stored and the state file written before the line is printed.
	time.Sleep(300 * time.Millisecond) // its pending decision is exported meanwhile (100 ms batches)
	require.NoError(t, cmd.Process.Kill())
	_, _ = cmd.Process.Wait()
	var st struct {
		ApprovalID string `json:"approvalId"`
	}
	b, err := os.ReadFile(state)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &st))
	require.True(t, strings.HasPrefix(st.ApprovalID, "apr_"), string(b))
	return st.ApprovalID
}

func (w *approvalWorld) request(t *testing.T, id string) inbox.Request {
	t.Helper()
	var reqs []inbox.Request
	require.NoError(t, json.Unmarshal([]byte(w.cli(t, 0, "approvals", "--status", "all", "--format", "json")), &reqs))
	for _, r := range reqs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("request %s not listed", id)
	return inbox.Request{}
}

type approvalRow struct {
	RunID, CallID, Action, Approval, Approver, ApprovalID string
	WaitMs                                                uint64
}

// rows waits for want decisions of the agent and returns them by run.
func (w *approvalWorld) rows(t *testing.T, want int) map[string][]approvalRow {
	t.Helper()
	ctx := context.Background()
	require.Equal(t, want, w.s.waitDecisions(ctx, t, "unattended", want, 60*time.Second))
	r, err := w.s.store.Conn().Query(ctx, "SELECT RunId, ToolCallId, Action, Approval, Approver, ApprovalId, ApprovalWaitMs FROM otel.gate_decisions FINAL WHERE ServiceName = 'unattended' ORDER BY Timestamp")
	require.NoError(t, err)
	defer r.Close()
	out := map[string][]approvalRow{}
	for r.Next() {
		var a approvalRow
		require.NoError(t, r.Scan(&a.RunID, &a.CallID, &a.Action, &a.Approval, &a.Approver, &a.ApprovalID, &a.WaitMs))
		out[a.RunID] = append(out[a.RunID], a)
	}
	require.NoError(t, r.Err())
	return out
}

// TestApprovalOutlivesTheProcess is issue 15's end-to-end test: ask, kill,
// answer from another process, restart, resume — the tool runs once; a
// decline, an expiry and a tampered resume each end in a recorded deny.
func TestApprovalOutlivesTheProcess(t *testing.T) {
	w := newApprovalWorld(t)

	// Approved: the call runs once, after a restart.
	st1 := filepath.Join(w.dir, "approved.json")
	id1 := w.askAndKill(t, st1, "run-approved", "pip install requests")
	r := w.request(t, id1)
	assert.Equal(t, inbox.StatusPending, r.Status)
	assert.Equal(t, "bash", r.Tool)
	assert.JSONEq(t, `{"command":"pip install requests"}`, string(r.Input))
	assert.Equal(t, "unattended", r.Agent)
	assert.Equal(t, "run-approved", r.RunID)
	assert.NotEmpty(t, r.TraceID)
	time.Sleep(20 * time.Millisecond) // a measurable wait
	w.cli(t, 0, "approve", id1, "--as", "alice", "--yes", "--reason", "known package")
	oc, code := w.run(t, st1, "--resume")
	require.Equal(t, 0, code, "%+v", oc)
	assert.Equal(t, "ran", oc.Status, oc.Content)
	assert.Equal(t, "alice", oc.Approver)
	assert.Equal(t, []string{"pip_install_requests"}, w.ran(t))
	// Resumed again (a replayed state file): the approval was used.
	oc, code = w.run(t, st1, "--resume")
	assert.Equal(t, 3, code)
	assert.Equal(t, "denied", oc.Status)
	assert.Equal(t, "invalid", oc.Approval)
	assert.Equal(t, []string{"pip_install_requests"}, w.ran(t), "the tool ran once")
	assert.Equal(t, inbox.StatusUsed, w.request(t, id1).Status)

	// Declined: the resumed call is denied and does not run.
	st2 := filepath.Join(w.dir, "declined.json")
	id2 := w.askAndKill(t, st2, "run-declined", "pip install left-pad")
	w.cli(t, 0, "decline", id2, "--as", "alice", "--yes", "--reason", "not this one")
	oc, code = w.run(t, st2, "--resume")
	assert.Equal(t, 3, code)
	assert.Equal(t, "declined", oc.Approval)

	// Unknown approver and an answer to an answered request are refused.
	w.cli(t, 1, "approve", id2, "--as", "mallory", "--yes")
	w.cli(t, 1, "approve", id2, "--as", "alice", "--yes")

	// Expired: no answer within the request's TTL.
	st3 := filepath.Join(w.dir, "expired.json")
	id3 := w.askAndKill(t, st3, "run-expired", "pip install six", "--ttl", "1s")
	time.Sleep(1500 * time.Millisecond)
	w.cli(t, 1, "approve", id3, "--as", "alice", "--yes") // too late
	oc, code = w.run(t, st3, "--resume")
	assert.Equal(t, 3, code)
	assert.Equal(t, "timeout", oc.Approval)

	// Tampered: the persisted call is edited before the resume (another
	// command under the approved request).
	st4 := filepath.Join(w.dir, "tampered.json")
	id4 := w.askAndKill(t, st4, "run-tampered", "pip install attrs")
	w.cli(t, 0, "approve", id4, "--as", "alice", "--yes")
	b, err := os.ReadFile(st4)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(st4, []byte(strings.Replace(string(b), "pip install attrs", "pip install evil", 1)), 0o600))
	oc, code = w.run(t, st4, "--resume")
	assert.Equal(t, 3, code)
	assert.Equal(t, "invalid", oc.Approval)
	assert.Equal(t, []string{"pip_install_requests"}, w.ran(t), "neither the declined, expired nor tampered call ran")
	// The untampered call still resumes: the tampered attempt did not use it up.
	require.NoError(t, os.WriteFile(st4, b, 0o600))
	oc, code = w.run(t, st4, "--resume")
	assert.Equal(t, 0, code, oc.Content)
	assert.Equal(t, []string{"pip_install_requests", "pip_install_attrs"}, w.ran(t))

	// The trail: every ask, answer and resume is a decision row.
	rows := w.rows(t, 10)
	want := map[string][]string{ // action/approval per decision, in order
		"run-approved": {"deny/pending", "allow/approved", "deny/invalid"},
		"run-declined": {"deny/pending", "deny/declined"},
		"run-expired":  {"deny/pending", "deny/timeout"},
		"run-tampered": {"deny/pending", "deny/invalid", "allow/approved"},
	}
	for run, acts := range want {
		var got []string
		for _, r := range rows[run] {
			got = append(got, r.Action+"/"+r.Approval)
		}
		assert.Equal(t, acts, got, run)
	}
	ok := rows["run-approved"][1]
	assert.Equal(t, "alice", ok.Approver)
	assert.Equal(t, id1, ok.ApprovalID)
	assert.Equal(t, id1, rows["run-approved"][0].ApprovalID, "the ask and the answer carry one request ID")
	assert.Positive(t, ok.WaitMs, "the time from ask to answer is recorded")
	assert.Equal(t, "alice", rows["run-declined"][1].Approver)
	for run, rs := range rows { // every ask, answer and refused resume names its request
		for _, r := range rs {
			assert.True(t, strings.HasPrefix(r.ApprovalID, "apr_"), "%s: %+v", run, r)
		}
	}

	// auditq shows who let what through.
	out := w.cliStore(t, "decisions", "--approval", "approved", "--since", "1h", "-o", "json")
	var approved []struct {
		Approver   string `json:"approver"`
		ApprovalID string `json:"approval_id"`
		WaitMs     uint64 `json:"approval_wait_ms"`
		Action     string `json:"action"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &approved), out)
	require.Len(t, approved, 2, out)
	for _, d := range approved {
		assert.Equal(t, "alice", d.Approver)
		assert.Equal(t, "allow", d.Action)
		assert.Contains(t, []string{id1, id4}, d.ApprovalID)
		assert.Positive(t, d.WaitMs)
	}
	out = w.cliStore(t, "stats", "--by", "approver", "--since", "1h")
	assert.Contains(t, out, "alice")
}

// cliStore runs auditq against the stack's store.
func (w *approvalWorld) cliStore(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(w.auditq, append(args, "--dsn", w.s.ch.ReaderDSN)...).CombinedOutput()
	require.NoError(t, err, "auditq %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// TestApprovalBlocking: an agent that waits (--wait) runs the call once a
// person approves it from another process, and denies it when nobody
// answers in time.
func TestApprovalBlocking(t *testing.T) {
	w := newApprovalWorld(t)
	st := filepath.Join(w.dir, "block.json")
	cmd, out := w.start(t, st, "--run", "run-block", "--command", "pip install pyyaml", "--wait", "60s")
	var id string
	deadline := time.Now().Add(60 * time.Second)
	for id == "" {
		require.True(t, time.Now().Before(deadline), "no pending request:\n%s", out.String())
		var reqs []inbox.Request
		require.NoError(t, json.Unmarshal([]byte(w.cli(t, 0, "approvals", "--format", "json")), &reqs))
		if len(reqs) == 1 {
			id = reqs[0].ID
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.cli(t, 0, "approve", id, "--as", "alice", "--yes")
	require.NoError(t, cmd.Wait(), out.String())
	assert.Contains(t, out.String(), `"status":"ran"`)
	assert.Equal(t, []string{"pip_install_pyyaml"}, w.ran(t))

	oc, code := w.run(t, filepath.Join(w.dir, "block2.json"), "--run", "run-block-2", "--command", "pip install toml", "--wait", "1s")
	assert.Equal(t, 3, code)
	assert.Equal(t, "timeout", oc.Approval)
	assert.Len(t, w.ran(t), 1)
	// The request the agent stopped waiting for cannot be approved any more.
	var reqs []inbox.Request
	require.NoError(t, json.Unmarshal([]byte(w.cli(t, 0, "approvals", "--status", "expired", "--format", "json")), &reqs))
	require.Len(t, reqs, 1)
	w.cli(t, 1, "approve", reqs[0].ID, "--as", "alice", "--yes")
}
