package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
)

// TestAgentUsage: the load mode's flags are checked before anything runs.
func TestAgentUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--calls", "5", "--strict"}, "--strict needs --spool"},
		{[]string{"--calls", "5", "--rate", "fast"}, "--rate"},
		{[]string{"--calls", "5", "--rate", "-3/s"}, "--rate"},
	}
	for _, tt := range tests {
		var out, errw bytes.Buffer
		assert.Equal(t, 2, run(context.Background(), tt.args, &out, &errw), "%v", tt.args)
		assert.Contains(t, errw.String(), tt.want)
	}
	// The spool's policies come from the standard variables; a bad one is
	// an error that names it.
	t.Setenv("TOOLGATE_SPOOL_FULL", "panic")
	var out, errw bytes.Buffer
	assert.Equal(t, 1, run(context.Background(), []string{"--transcript", "../../testdata/real/trajectories.jsonl",
		"--otlp-endpoint", "http://127.0.0.1:1", "--calls", "5", "--spool", t.TempDir()}, &out, &errw))
	assert.Contains(t, errw.String(), "TOOLGATE_SPOOL_FULL")
}

// TestAgentStrictOffline: with the collector unreachable, strict mode
// still runs the allowed calls — their decisions are in the spool — and
// every call whose tool ran is in --ran; the spans stay in the spool for
// the next start, which finds them.
func TestAgentStrictOffline(t *testing.T) {
	dir := t.TempDir()
	spoolDir, ran := filepath.Join(dir, "spool"), filepath.Join(dir, "ran")
	common := []string{"--transcript", "../../testdata/real/trajectories.jsonl", "--otlp-endpoint", "http://127.0.0.1:1",
		"--spool", spoolDir, "--flush-timeout", "200ms"}
	var out, errw bytes.Buffer
	code := run(context.Background(), append(common, "--calls", "40", "--strict", "--ran", ran, "--tag", "t1"), &out, &errw)
	require.Equal(t, 0, code, errw.String())
	var st agentStats
	require.NoError(t, json.Unmarshal(out.Bytes(), &st))
	assert.Equal(t, 40, st.Calls)
	assert.Positive(t, st.Ran)
	assert.Equal(t, 40, st.Ran+st.Denied)
	assert.Zero(t, st.AuditUnavailable)
	assert.Equal(t, int64(st.Ran), st.Spool.Committed, "every call that ran was committed first")
	assert.Positive(t, st.Spool.Unsent, "nothing could be sent")
	b, err := os.ReadFile(ran)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	assert.Len(t, lines, st.Ran)
	assert.Contains(t, lines[0], "@t1.0#", "call IDs carry the tag and the pass")

	out.Reset()
	errw.Reset()
	code = run(context.Background(), append(common, "--calls", "0"), &out, &errw)
	require.Equal(t, 0, code, errw.String())
	var again agentStats
	require.NoError(t, json.Unmarshal(out.Bytes(), &again))
	assert.Zero(t, again.Calls)
	assert.Equal(t, st.Spool.Unsent, again.Spool.Unsent, "the next start holds what was not sent")
}

// TestDemoStrict is the demo in strict mode through the spool: every
// allowed call's decision is committed before its (dry-run) tool runs,
// and the demo's own verification finds every decision in ClickHouse and
// the most-denied run in Jaeger.
func TestDemoStrict(t *testing.T) {
	ch, jaeger, col := startStack(t)
	var out, errw bytes.Buffer
	code := run(context.Background(), []string{
		"--transcript", "../../testdata/real/trajectories.jsonl",
		"--otlp-endpoint", "http://" + col.GRPCEndpoint,
		"--dsn", ch.ReaderDSN,
		"--jaeger-url", jaeger.QueryURL,
		"--spool", t.TempDir(), "--strict",
		"--wait", "90s",
	}, &out, &errw)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errw.String())
	assert.Contains(t, out.String(), "ClickHouse: 1091 decisions in otel.gate_decisions")
	assert.Contains(t, errw.String(), "demo: spool:")
	assert.Contains(t, out.String(), "Verifiable trail: 38 of 38 runs' hash chains complete (1091 decisions",
		"strict mode: each decision keeps the position it took before its tool ran")
	rd, err := audit.Open(context.Background(), ch.ReaderDSN)
	require.NoError(t, err)
	defer rd.Close()
	var allowed, unaudited uint64
	require.NoError(t, rd.Conn().QueryRow(context.Background(),
		"SELECT countIf(Action = 'allow'), countIf(ErrorKind = 'audit_unavailable') FROM otel.gate_decisions FINAL").Scan(&allowed, &unaudited))
	assert.Positive(t, allowed, "allowed calls ran in strict mode")
	assert.Zero(t, unaudited, "a healthy spool denies nothing for the audit")
}
