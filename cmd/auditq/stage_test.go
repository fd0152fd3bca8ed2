package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/audittest"
)

// Calls the executor refused before any gate are decisions auditq lists,
// filters (--stage) and groups (--by stage), and `auditq trace` shows
// them in their run with the stage they stopped at.
func TestStageFilterGroupAndTrace(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, append(audittest.Fixture(), audittest.PreGateFixture()...)))
	reader := []string{"--dsn", env.ReaderDSN, "--since", "2026-11-28T00:00:00Z", "--until", "2026-11-29T00:00:00Z", "--utc"}
	auditq := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		code, stderr := execAuditq(t, ctx, &out, append(args, reader...)...)
		require.Equal(t, 0, code, stderr)
		return out.String()
	}

	assert.Equal(t, "stage,count,denied\ngate,11,4\ninput,1,1\nreachability,1,1\nregistry,1,1\n", auditq("stats", "--by", "stage", "-o", "csv"))
	assert.Equal(t, "stage,tool_name,count,denied\nregistry,delete_everything,1,1\n",
		auditq("stats", "--by", "stage,tool", "--stage", "registry", "-o", "csv"))

	var rows []struct {
		Tool      string `json:"tool_name"`
		Stage     string `json:"stage"`
		Action    string `json:"action"`
		Gated     bool   `json:"gated"`
		Source    string `json:"source"`
		ErrorKind string `json:"error_kind"`
		Reason    string `json:"reason"`
	}
	require.NoError(t, json.Unmarshal([]byte(auditq("decisions", "--stage", "registry", "-o", "json")), &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, "delete_everything", rows[0].Tool)
	assert.Equal(t, "registry", rows[0].Stage)
	assert.Equal(t, "deny", rows[0].Action)
	assert.False(t, rows[0].Gated)
	assert.Equal(t, "executor", rows[0].Source)
	assert.Equal(t, "tool_not_found", rows[0].ErrorKind)
	assert.Contains(t, rows[0].Reason, "not registered")

	var out bytes.Buffer
	code, stderr := execAuditq(t, ctx, &out, "trace", audittest.TracePreGate, "--dsn", env.ReaderDSN, "--utc")
	require.Equal(t, 0, code, stderr)
	tree := out.String()
	lines := strings.Split(strings.TrimSpace(tree), "\n")
	require.Len(t, lines, 6, tree)
	assert.Contains(t, lines[0], "5 spans, 4 decisions, 3 denied")
	lines = lines[1:]
	assert.Contains(t, lines[0], "invoke_agent intruder")
	for i, want := range []string{
		"execute_tool [delete_everything]  deny  before the gate (registry)",
		"execute_tool deploy  deny  before the gate (reachability)",
		"execute_tool bash  deny  before the gate (input)",
		"execute_tool bash  allow",
	} {
		assert.Contains(t, lines[i+1], want)
	}
}
