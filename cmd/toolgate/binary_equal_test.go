package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
)

// verdictOf reads the verdict from the hook's stdout in agent's format.
func verdictOf(t *testing.T, agent, stdout string) verdict {
	t.Helper()
	stdout = strings.TrimSpace(stdout)
	if stdout == "" {
		require.Equal(t, "codex", agent, "only Codex's allow is silent")
		return verdictAllow
	}
	var m struct {
		Decision string `json:"decision"`
		HSO      struct {
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &m), stdout)
	d := m.Decision
	if agent == "claude" || d == "block" {
		d = m.HSO.PermissionDecision
	}
	switch d {
	case "allow":
		return verdictAllow
	case "ask":
		return verdictAsk
	case "deny":
		return verdictDeny
	}
	t.Fatalf("%s: no verdict in %s", agent, stdout)
	return verdictDeny
}

// TestHookBinaryEqualsReplay: a handful of recorded calls per agent — the
// first two of every (tool, decision) pair — through the built binary (its
// stdin, its stdout in the agent's format) get the replay's decision, as
// TestHookEqualsReplay holds in process for all of them.
func TestHookBinaryEqualsReplay(t *testing.T) {
	if os.Getenv("TOOLGATE_INTEGRATION") != "1" {
		t.Skip("integration test: set TOOLGATE_INTEGRATION=1 (it builds the binary)")
	}
	bin := buildToolgate(t, "")
	dir := t.TempDir()
	env := []string{"TOOLGATE_OTLP_ENDPOINT=127.0.0.1:1", "TOOLGATE_SPOOL_DIR=" + filepath.Join(dir, "spool"), "XDG_CONFIG_HOME=" + dir}
	for _, agent := range []string{"claude", "codex", "gemini"} {
		calls, _ := recordedCalls(t, agent, classify.ProfileStrict)
		seen := map[string]int{}
		n := 0
		for _, rc := range calls {
			want := expectVerdict(agent, rc.want)
			key := fmt.Sprintf("%s/%d", rc.tool, want)
			if seen[key] >= 2 {
				continue
			}
			seen[key]++
			out, stderr, code, _ := runHookBinary(t, bin, env, string(rc.event), agent)
			require.Equal(t, 0, code, "%s %s: %s", agent, rc.event, stderr)
			require.Equal(t, want, verdictOf(t, agent, out), "%s %s#%d %s: %s", agent, rc.run.ID, rc.call.Seq, rc.event, out)
			n++
		}
		t.Logf("%s: %d recorded calls through the binary equal the replay (%v)", agent, n, seen)
		require.GreaterOrEqual(t, n, 4)
	}
}
