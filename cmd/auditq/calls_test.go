package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// A flood the executor grouped (gate.calls) is counted by its calls:
// `auditq stats` totals the calls made (100 over 7 rows), by any
// dimension; `auditq decisions` carries each row's calls in json and csv
// ("calls") and marks a grouped row's tool "×n" in the table.
func TestGroupedRefusalsCountTheirCalls(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, append(audittest.Fixture(), audittest.CallsFixture()...)))
	window := []string{"--dsn", env.ReaderDSN, "--since", "2026-11-28T00:00:00Z", "--until", "2026-11-29T00:00:00Z"}
	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		code, stderr := execAuditq(t, ctx, &out, append(args, window...)...)
		require.Equal(t, 0, code, stderr)
		return out.String()
	}

	assert.Equal(t, "action,count,denied\ndeny,100,100\n", run("stats", "--agent", "flooder", "-o", "csv"), "default --by action")
	assert.Equal(t, "stage,count,denied\nrun,98,98\nregistry,2,2\n", run("stats", "--agent", "flooder", "--by", "stage", "-o", "csv"))
	table := run("stats", "--agent", "flooder")
	assert.Contains(t, table, "100", "the table's total is the calls")

	var ds []struct {
		SpanID   string `json:"span_id"`
		ToolName string `json:"tool_name"`
		Calls    uint64 `json:"calls"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("decisions", "--agent", "flooder", "-o", "json")), &ds))
	calls := map[string]uint64{}
	var sum uint64
	for _, d := range ds {
		calls[d.ToolName] = d.Calls
		sum += d.Calls
	}
	assert.Len(t, ds, 7)
	assert.EqualValues(t, audittest.CallsFixtureCalls, sum)
	assert.Equal(t, map[string]uint64{"nosuch_0": 1, "nosuch_1": 1, "nosuch_2": 1, "nosuch_3": 1, "nosuch_4": 64, "nosuch_68": 31, "bash": 1}, calls)

	csv := run("decisions", "--agent", "flooder", "-o", "csv")
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	require.Len(t, lines, 8)
	assert.True(t, strings.HasSuffix(lines[0], ",calls,interrupted,approval_id,approval_wait_ms"), lines[0])
	for _, l := range lines[1:] {
		want := ",1,false,,0"
		switch {
		case strings.Contains(l, "nosuch_4,"):
			want = ",64,false,,0"
		case strings.Contains(l, "nosuch_68,"):
			want = ",31,false,,0"
		}
		assert.True(t, strings.HasSuffix(l, want), l)
	}

	table = run("decisions", "--agent", "flooder")
	assert.Contains(t, table, "nosuch_4 ×64")
	assert.Contains(t, table, "nosuch_68 ×31")
	assert.Equal(t, 2, strings.Count(table, "×"), "only the grouped rows:\n%s", table)
}

// TestToolCellCannotBeForged: the count marker is ours, the name the
// model's; a name that imitates the marker (or hides in invisible runes) is
// quoted, so no single call reads like grouped calls of a real tool.
func TestToolCellCannotBeForged(t *testing.T) {
	tests := []struct {
		name  string
		calls uint64
		want  string
	}{
		{"bash", 1, "bash"},
		{"bash", 64, "bash ×64"},
		{"fs.read_file", 0, "fs.read_file"},
		{"server__tool-2", 1, "server__tool-2"},
		{"bash ×5000", 1, `"bash ×5000"`},
		{"bash ×5000", 3, `"bash ×5000" ×3`},
		{"bash\u200b", 1, `"bash\u200b"`},
		{"", 1, `""`},
		{"a\"b", 1, `"a\"b"`},
	}
	for _, tt := range tests {
		got := toolCell(audit.Decision{ToolName: tt.name, Calls: tt.calls})
		assert.Equal(t, tt.want, got, "%q ×%d", tt.name, tt.calls)
	}
}
