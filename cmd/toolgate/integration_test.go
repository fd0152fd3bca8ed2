package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/internal/testenv"
)

// hookStack is the real audit pipeline the hooks export to: the embedded
// ClickHouse (auditq serve, migrated) and our collector; auditq reads it.
type hookStack struct {
	ch        *testenv.ClickHouse
	collector *testenv.Collector
	auditq    string
}

func startHookStack(t testing.TB) *hookStack {
	t.Helper()
	if os.Getenv("TOOLGATE_INTEGRATION") != "1" {
		t.Skip("integration test: set TOOLGATE_INTEGRATION=1 (make test)")
	}
	ctx := context.Background()
	s := &hookStack{ch: testenv.StartClickHouse(t), auditq: testenv.AuditqBinary(t)}
	w, err := audit.Open(ctx, s.ch.WriterDSN)
	require.NoError(t, err)
	_, err = w.Migrate(ctx)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	s.collector = testenv.StartCollector(t,
		testenv.WithClickHouse(s.ch.URL, s.ch.Writer.Name, s.ch.Writer.Password, ""),
		testenv.WithDecisionWait(500*time.Millisecond))
	return s
}

// hookEnv is the environment of the hook command: the collector, its
// token and the spool, in toolgate's own variables (Claude Code strips
// OTEL_* from its hooks).
func (s *hookStack) hookEnv(spoolDir string) string {
	return fmt.Sprintf("TOOLGATE_OTLP_ENDPOINT=%s TOOLGATE_OTLP_TOKEN=%s TOOLGATE_SPOOL_DIR=%s",
		s.collector.GRPCEndpoint, s.collector.Token, spoolDir)
}

// decisionRow is the part of `auditq decisions -o json` the tests check.
type decisionRow struct {
	Service    string `json:"service_name"`
	Agent      string `json:"agent"`
	RunID      string `json:"run_id"`
	ToolName   string `json:"tool_name"`
	ToolCallID string `json:"tool_call_id"`
	Action     string `json:"action"`
	Reason     string `json:"reason"`
	Source     string `json:"source"`
	Risk       string `json:"risk_level"`
	Approval   string `json:"approval"`
	ErrorKind  string `json:"error_kind"`
	Input      string `json:"input"`
	Stage      string `json:"stage"`
}

// decisions runs `auditq decisions` with args and the reader's DSN.
func (s *hookStack) decisions(t testing.TB, args ...string) []decisionRow {
	t.Helper()
	cmd := exec.Command(s.auditq, append([]string{"decisions", "--dsn", s.ch.ReaderDSN, "-o", "json", "--since", "1h", "-n", "1000"}, args...)...)
	out, err := cmd.Output()
	require.NoError(t, err, "auditq decisions %v: %s", args, out)
	var rows []decisionRow
	require.NoError(t, json.Unmarshal(out, &rows), "%s", out)
	return rows
}

// waitDecisions polls auditq until the run has want rows (or 30 s pass).
func (s *hookStack) waitDecisions(t testing.TB, want int, args ...string) []decisionRow {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows := s.decisions(t, args...)
		if len(rows) >= want || time.Now().After(deadline) {
			return rows
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// buildToolgate builds ./cmd/toolgate (with the given build tags) into a
// cache directory of this checkout, under a file lock.
func buildToolgate(t testing.TB, tags string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(moduleRoot()))
	dir := filepath.Join(os.TempDir(), "toolgate-hook-"+hex.EncodeToString(sum[:6]))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	lock, err := os.OpenFile(filepath.Join(dir, "build.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	require.NoError(t, err)
	defer lock.Close()
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX))
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
	name := "toolgate"
	args := []string{"build"}
	if tags != "" {
		name += "-" + tags
		args = append(args, "-tags", tags)
	}
	bin := filepath.Join(dir, name)
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	cmd := exec.Command(goTool, append(args, "-o", bin, "./cmd/toolgate")...)
	cmd.Dir = moduleRoot()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build ./cmd/toolgate: %s", out)
	return bin
}

// sessionOf finds the agent's session ID in its JSON output (the hook
// event's session_id): Claude Code and Gemini CLI print "session_id",
// Codex prints its thread ID.
var sessionRe = regexp.MustCompile(`"(?:session_id|thread_id)":"([^"]+)"`)

func sessionOf(out string) string {
	if m := sessionRe.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// TestAgentHooks drives each coding agent's real CLI (from npm, cached
// outside the repository) against a scripted model on loopback, with
// `toolgate hook <agent>` (the built binary) as its pre-tool-use hook on
// its shell tool, exporting to the real collector and ClickHouse:
//   - a destructive command (rm -r ~/canary: high) is denied, the canary
//     survives, and the model receives the denial;
//   - ls is allowed and runs: the model receives its output;
//   - rm -r keep (a directory in the workspace: review, an ask) does not
//     run and keep/ survives: Claude Code's own
//     prompt refuses it headless, Codex and Gemini get a deny naming the
//     missing human approval;
//   - a hook that panics, and a hook with a bad policy file, answer deny in
//     the blocking form: ls does not run (the model sees no output);
//   - each of these calls is one decision row in ClickHouse, checked
//     through auditq (run ID = the agent's session).
func TestAgentHooks(t *testing.T) {
	s := startHookStack(t)
	bin := buildToolgate(t, "")
	faulty := buildToolgate(t, "toolgatefaults")
	dir := t.TempDir()
	spoolDir := filepath.Join(dir, "spool")
	good := filepath.Join(dir, "toolgate.yaml")
	require.NoError(t, os.WriteFile(good, []byte("version: 1\nprofile: strict\n"), 0o600))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("version: 1\nprofile: strict\nhigh: allow\n"), 0o600))
	env := s.hookEnv(spoolDir)

	type tcase struct {
		name, command, hook string
		ran                 bool   // the command ran (its output reached the model)
		action, source      string // the decision row
		errorKind           string
		modelSees           string // in the tool result the model received
	}
	for _, agent := range []string{"claude", "codex", "gemini"} {
		askSees := map[string]string{"claude": "toolgate (policy classify.bash) asks", "codex": "a person must approve this call", "gemini": "a person must approve this call"}[agent]
		askApproval := map[string]string{"claude": "pending", "codex": "declined", "gemini": "declined"}[agent]
		cases := []tcase{
			{name: "destructive denied", command: "rm -r ~/canary", hook: fmt.Sprintf("%s %s hook %s --policy %s", env, bin, agent, good),
				action: "deny", source: "classify.bash", modelSees: "denied by the tool gate"},
			{name: "ls allowed", command: "ls", hook: fmt.Sprintf("%s %s hook %s --policy %s", env, bin, agent, good),
				ran: true, action: "allow", source: "classify.bash", modelSees: "README.md"},
			{name: "ask", command: "rm -r keep", hook: fmt.Sprintf("%s %s hook %s --policy %s", env, bin, agent, good),
				action: "deny", source: "classify.bash", modelSees: askSees},
			{name: "hook panics", command: "ls", hook: fmt.Sprintf("%s TOOLGATE_HOOK_TEST_FAULT=panic@decide %s hook %s --policy %s", env, faulty, agent, good),
				action: "deny", source: SourceHookFault, errorKind: "error", modelSees: "failed closed"},
			{name: "bad policy", command: "ls", hook: fmt.Sprintf("%s %s hook %s --policy %s", env, bin, agent, bad),
				action: "deny", source: SourceHookFault, errorKind: "error", modelSees: "high is"},
		}
		t.Run(agent, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					model := startModelServer(t, tc.command)
					r := runAgent(t, agent, tc.hook, model)
					require.NoError(t, r.Err, "agent run:\n%s", r.Output)
					t.Logf("%s %q: %s", agent, tc.command, r.Took.Round(time.Millisecond))
					assert.True(t, r.canaryAlive(), "the canary must survive")
					results := model.ToolResults()
					require.NotEmpty(t, results, "the model got the tool's result back; agent output:\n%s", r.Output)
					last := toolResultText(results[len(results)-1])
					assert.Contains(t, last, tc.modelSees, "what the model received")
					if !tc.ran {
						assert.NotContains(t, last, "README.md", "the command did not run")
					}
					session := sessionOf(r.Output)
					require.NotEmpty(t, session, "session ID in the agent's output")
					if tc.name == "ask" && agent == "claude" {
						assert.Contains(t, r.Output, "permission_denied", "headless Claude Code refuses the ask itself")
					}
					rows := s.waitDecisions(t, 1, "--run", session)
					require.Len(t, rows, 1, "one decision row for the call (run %s)", session)
					row := rows[0]
					assert.Equal(t, tc.action, row.Action, row.Reason)
					assert.Equal(t, tc.source, row.Source, row.Reason)
					assert.Equal(t, tc.errorKind, row.ErrorKind, row.Reason)
					assert.Equal(t, ServiceName, row.Service)
					assert.Equal(t, agents[agent].genAI, row.Agent)
					assert.Contains(t, row.Input, tc.command, "the recorded input")
					if tc.name == "ask" {
						assert.Equal(t, askApproval, row.Approval, row.Reason)
					}
					if agent != "gemini" {
						assert.NotEmpty(t, row.ToolCallID, "the agent's tool-use ID")
					}
				})
			}
		})
	}
}
