package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHookSpoolsWhileCollectorDown: with the collector down, the hook still
// decides at once (it probes the port and does not wait) and its decision
// spans stay in the durable spool (`toolgate flush` reports them unsent);
// once the collector is back, the next hook invocation uploads them with
// its own, and every decision is one row in ClickHouse.
func TestHookSpoolsWhileCollectorDown(t *testing.T) {
	s := startHookStack(t)
	bin := buildToolgate(t, "")
	dir := t.TempDir()
	env := []string{"TOOLGATE_OTLP_ENDPOINT=" + s.collector.GRPCEndpoint, "TOOLGATE_OTLP_TOKEN=" + s.collector.Token,
		"TOOLGATE_SPOOL_DIR=" + filepath.Join(dir, "spool"), "XDG_CONFIG_HOME=" + dir}
	// A wrong token: the decision stands, the span waits in the spool, and
	// stderr says why (the collector refused it).
	wrong := append(append([]string(nil), env...), "TOOLGATE_OTLP_TOKEN=not-the-token", "TOOLGATE_SPOOL_DIR="+filepath.Join(dir, "spool-wrong"))
	out, stderr, code, _ := runHookBinary(t, bin, wrong, claudeEvent("wrong-token", "w1", "ls"), "claude")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, `"permissionDecision":"allow"`)
	require.Contains(t, stderr, "decision spans wait in the spool")
	require.Contains(t, stderr, "Unauthenticated")

	require.NoError(t, s.collector.Stop())
	for i := 1; i <= 3; i++ {
		out, stderr, code, took := runHookBinary(t, bin, env, claudeEvent(fmt.Sprintf("spool-%d", i), fmt.Sprintf("c%d", i), "ls"), "claude")
		require.Contains(t, stderr, "did not accept a connection")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, `"permissionDecision":"allow"`)
		t.Logf("collector down: hook %d answered in %s", i, took.Round(time.Millisecond))
	}
	flush := exec.Command(bin, "flush", "--timeout", "1s")
	flush.Env = append(os.Environ(), env...)
	fout, err := flush.CombinedOutput()
	require.Error(t, err, "flush with the collector down leaves spans unsent: %s", fout)
	assert.Contains(t, string(fout), "spans still unsent")
	assert.Contains(t, string(fout), "slot-00")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.collector.Start(ctx))
	var took time.Duration
	out, stderr, code, took = runHookBinary(t, bin, env, claudeEvent("spool-4", "c4", "rm -r ~/canary"), "claude")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, `"permissionDecision":"deny"`)
	t.Logf("collector back: hook 4 answered and drained the spool in %s", took.Round(time.Millisecond))
	for i := 1; i <= 4; i++ {
		rows := s.waitDecisions(t, 1, "--run", fmt.Sprintf("spool-%d", i))
		if assert.Len(t, rows, 1, "spool-%d", i) {
			want := "allow"
			if i == 4 {
				want = "deny"
			}
			assert.Equal(t, want, rows[0].Action)
			assert.False(t, strings.Contains(rows[0].Reason, "interrupted"))
		}
	}
	flush = exec.Command(bin, "flush", "--timeout", "5s")
	flush.Env = append(os.Environ(), env...)
	fout, err = flush.CombinedOutput()
	require.NoError(t, err, "nothing left: %s", fout)
}

// TestConcurrentHooks: hooks running at once (an agent's parallel tool
// calls) each take a spool slot of their own; every decision is one row.
func TestConcurrentHooks(t *testing.T) {
	s := startHookStack(t)
	bin := buildToolgate(t, "")
	dir := t.TempDir()
	env := []string{"TOOLGATE_OTLP_ENDPOINT=" + s.collector.GRPCEndpoint, "TOOLGATE_OTLP_TOKEN=" + s.collector.Token,
		"TOOLGATE_SPOOL_DIR=" + filepath.Join(dir, "spool"), "XDG_CONFIG_HOME=" + dir}
	const n = 8
	type res struct {
		code   int
		stderr string
	}
	results := make(chan res, n)
	for i := range n {
		go func() {
			_, stderr, code, _ := runHookBinary(t, bin, env, claudeEvent("concurrent", fmt.Sprintf("call-%d", i), "ls"), "claude")
			results <- res{code, stderr}
		}()
	}
	for range n {
		r := <-results
		require.Equal(t, 0, r.code, r.stderr)
	}
	rows := s.waitDecisions(t, n, "--run", "concurrent")
	ids := map[string]bool{}
	for _, r := range rows {
		ids[r.ToolCallID] = true
	}
	require.Len(t, ids, n, "one row per call")
	slots, _ := filepath.Glob(filepath.Join(dir, "spool", "slot-*"))
	t.Logf("%d concurrent hooks used %d spool slots", n, len(slots))
}
