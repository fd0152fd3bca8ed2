package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runHookBinary runs the built hook with event on stdin and extra
// environment; it returns stdout, stderr, the exit code and the wall time.
func runHookBinary(t testing.TB, bin string, env []string, event string, args ...string) (string, string, int, time.Duration) {
	t.Helper()
	out, errs, code, took, _ := runHookBinaryCPU(t, bin, env, event, args...)
	return out, errs, code, took
}

// runHookBinaryCPU is runHookBinary that also returns the process's CPU
// time (user + system), which a loaded machine inflates less than wall time.
func runHookBinaryCPU(t testing.TB, bin string, env []string, event string, args ...string) (string, string, int, time.Duration, time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"hook"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewBufferString(event)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	return out.String(), errb.String(), code, took, cpu
}

func claudeEvent(session, id, command string) string {
	return fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":%q,"cwd":"/tmp"}`, session, command, id)
}

// TestHookFaultsThroughTheBinary: every fault of the built hook answers
// deny in the blocking form (exit 2, reason on stderr, block JSON) and is
// one decision row.
func TestHookFaultsThroughTheBinary(t *testing.T) {
	s := startHookStack(t)
	faulty := buildToolgate(t, "toolgatefaults")
	dir := t.TempDir()
	good := filepath.Join(dir, "toolgate.yaml")
	require.NoError(t, os.WriteFile(good, []byte("version: 1\n"), 0o600))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("version: 1\nprofle: strict\n"), 0o600))
	env := []string{"TOOLGATE_OTLP_ENDPOINT=" + s.collector.GRPCEndpoint, "TOOLGATE_OTLP_TOKEN=" + s.collector.Token,
		"TOOLGATE_SPOOL_DIR=" + filepath.Join(dir, "spool"), "TOOLGATE_HOOK_BUDGET=1s"}
	tests := []struct {
		name, fault, policy, event, want string
	}{
		{"panic", "panic@decide", good, claudeEvent("fault-panic", "c1", "ls"), "panic: injected fault at decide"},
		{"hang", "hang@decide", good, claudeEvent("fault-hang", "c2", "ls"), "no decision within the hook's budget of 1s"},
		{"panic before reading", "panic@start", good, claudeEvent("fault-start", "c3", "ls"), "panic: injected fault at start"},
		{"bad policy", "", bad, claudeEvent("fault-policy", "c4", "ls"), "bad.yaml:2: field profle not found"},
		{"malformed event", "", good, `{"session_id":"fault-json","hook_event_name":"PreToolUse",`, "not a JSON object"},
		{"wrong event", "", good, `{"session_id":"fault-event","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, `hook event "PostToolUse"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := env
			if tt.fault != "" {
				e = append(e, "TOOLGATE_HOOK_TEST_FAULT="+tt.fault)
			}
			out, stderr, code, took := runHookBinary(t, faulty, e, tt.event, "claude", "--policy", tt.policy)
			t.Logf("%s: exit %d in %s", tt.name, code, took.Round(time.Millisecond))
			assert.Equal(t, 2, code, "the blocking exit code")
			assert.Contains(t, stderr, tt.want)
			assert.Contains(t, out, `"permissionDecision":"deny"`)
			assert.Contains(t, out, `"decision":"block"`)
		})
	}
	// A panic before the event was read records the denial under no run,
	// for tool "unknown_tool"; the others under their session.
	rows := s.waitDecisions(t, 1, "--tool", "unknown_tool")
	assert.NotEmpty(t, rows, "the denial of the hook that panicked before reading its event")
	for _, session := range []string{"fault-panic", "fault-hang", "fault-policy", "fault-event"} {
		rows := s.waitDecisions(t, 1, "--run", session)
		if assert.Len(t, rows, 1, "run %s", session) {
			assert.Equal(t, "deny", rows[0].Action)
			assert.Equal(t, SourceHookFault, rows[0].Source)
			assert.Equal(t, "error", rows[0].ErrorKind)
		}
	}
}
