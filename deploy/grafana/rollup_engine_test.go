package grafana_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/deploy/grafana"
)

// referenceSQL is each roll-up panel's question asked of gate_decisions
// alone (FINAL), as the dashboard asked it before the roll-up: what the
// roll-up panels must answer exactly.
var referenceSQL = map[string]string{
	"Decisions": "SELECT sum(Calls) AS decisions",
	"Denied":    "SELECT sumIf(Calls, Action = 'deny') AS denied",
	"Deny rate": "SELECT if(sum(Calls) = 0, 0, sumIf(Calls, Action = 'deny') / sum(Calls)) AS deny_rate",
	"Agents":    "SELECT uniqExact(Agent) AS agents",
	"Decisions by tool and agent": "SELECT Agent AS agent, ToolName AS tool, sum(Calls) AS decisions,\n" +
		"  sumIf(Calls, Action = 'allow') AS allowed, sumIf(Calls, Action = 'deny') AS denied,\n  round(denied / decisions, 3) AS deny_rate\nFROM\nWHERE\n" +
		"GROUP BY agent, tool\nORDER BY denied DESC, decisions DESC, agent, tool",
	"Approvals by approver": "SELECT Approver AS approver, Approval AS outcome, sum(Calls) AS asks,\n  countIf(ApprovalWaitMs > 0) AS waited,\n" +
		"  if(waited = 0, 0, round(sumIf(ApprovalWaitMs, ApprovalWaitMs > 0) / waited / 1000, 1)) AS avg_wait_s,\n" +
		"  round(max(ApprovalWaitMs) / 1000, 1) AS max_wait_s\nFROM\nWHERE\n  AND Approval != ''\nGROUP BY approver, outcome\nORDER BY asks DESC, approver, outcome",
}

func reference(title string) string {
	from := "FROM otel.gate_decisions FINAL"
	where := "WHERE $__timeFilter(Timestamp)\n  AND $__conditionalAll(Agent IN (${agent:singlequote}), $agent)\n  AND $__conditionalAll(ToolName IN (${tool:singlequote}), $tool)"
	s := referenceSQL[title]
	if !strings.Contains(s, "\nFROM\n") {
		return s + "\n" + from + "\n" + where
	}
	return strings.Replace(strings.Replace(s, "\nFROM\n", "\n"+from+"\n", 1), "\nWHERE\n", "\n"+where+"\n", 1)
}

// rowsOf runs sql and renders its rows as text, in order.
func rowsOf(t *testing.T, ctx context.Context, env *audittest.Env, sql string) []string {
	t.Helper()
	rows, err := env.Store.Conn().Query(ctx, sql)
	require.NoError(t, err, sql)
	defer rows.Close()
	cols := rows.ColumnTypes()
	var out []string
	for rows.Next() {
		dest := make([]any, len(cols))
		for i, c := range cols {
			dest[i] = reflect.New(c.ScanType()).Interface()
		}
		require.NoError(t, rows.Scan(dest...))
		var cells []string
		for i := range cols {
			cells = append(cells, fmt.Sprint(reflect.ValueOf(dest[i]).Elem().Interface()))
		}
		out = append(out, strings.Join(cells, "\t"))
	}
	require.NoError(t, rows.Err())
	return out
}

// TestRollupPanelsOnTheEngine runs the dashboard's roll-up panels against
// the embedded ClickHouse filled with audittest.LoadShaped decisions
// (50,000; $TOOLGATE_PANEL_DECISIONS sets another size, make bench-store
// uses 1,000,000) through otel_traces and the view, with merges stopped,
// 5 % of them inserted again (retried exports), rolled up, and then late
// decisions inserted into old hours after the roll-up (so that some hours
// must be read from gate_decisions). For time ranges whose ends are not on
// the hour and for the agent and tool variables set or All, every panel's
// rows equal those of the same question asked of gate_decisions alone.
func TestRollupPanelsOnTheEngine(t *testing.T) {
	n := 50000
	if v := os.Getenv("TOOLGATE_PANEL_DECISIONS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	env := audittest.Start(t)
	ctx := context.Background()
	w := env.Writer
	require.NoError(t, w.Exec(ctx, "SYSTEM STOP MERGES otel.gate_decisions"))
	require.NoError(t, w.Exec(ctx, "SYSTEM STOP VIEW otel.gate_decisions_hourly_mv"))
	end := time.Now().Truncate(time.Second)
	require.NoError(t, audittest.LoadShaped(ctx, w, "otel", n, end, audittest.ShapedOptions{Batch: max(n/20, 1000)}))
	require.NoError(t, audittest.LoadShaped(ctx, w, "otel", n/20, end, audittest.ShapedOptions{Offset: n / 3, Total: n}))
	require.NoError(t, audit.Roll(ctx, w, audit.WithRollupDelay(0)))
	// Late arrivals: spans of the last days, loaded as a trail of the same
	// size with other IDs would be — the same time grid, shifted by half a
	// step, so they land in hours the roll-up has already counted.
	require.NoError(t, audittest.LoadShaped(ctx, w, "otel", 500, end.Add(-time.Minute), audittest.ShapedOptions{Offset: n + 7, Total: n + 7 + 500*40}))
	var rows, spans uint64
	require.NoError(t, w.QueryRow(ctx, "SELECT count(), uniqExact(SpanId) FROM otel.gate_decisions").Scan(&rows, &spans))
	require.Greater(t, rows, spans, "duplicates are unmerged")

	d, err := grafana.GateDecisions()
	require.NoError(t, err)
	panels := map[string]string{}
	for _, q := range grafana.PanelQueries(d) {
		if _, ok := referenceSQL[q.Title]; ok {
			require.Contains(t, q.SQL, audit.HourlyTable, "%s reads the roll-up", q.Title)
			panels[q.Title] = q.SQL
		}
	}
	require.Len(t, panels, len(referenceSQL))
	ranges := []struct {
		name     string
		from, to time.Time
	}{
		{"last 7 days, ends off the hour", end.Add(-7*24*time.Hour - 17*time.Minute - 3*time.Second), end.Add(-3 * time.Minute)},
		{"whole window", end.Add(-31 * 24 * time.Hour), end.Add(time.Minute)},
		{"two days in the past, mid-hour", end.Add(-20*24*time.Hour + 29*time.Minute), end.Add(-18*24*time.Hour - 11*time.Minute)},
		{"under an hour", end.Add(-10*24*time.Hour + 5*time.Minute), end.Add(-10*24*time.Hour + 50*time.Minute)},
	}
	vars := []map[string][]string{nil, {"agent": {"agent-07", "agent-11"}}, {"agent": {"agent-07"}, "tool": {"tool-035", "tool-040", "tool-041"}}}
	titles := make([]string, 0, len(panels))
	for k := range panels {
		titles = append(titles, k)
	}
	sort.Strings(titles)
	for _, r := range ranges {
		for i, v := range vars {
			t.Run(fmt.Sprintf("%s/vars-%d", r.name, i), func(t *testing.T) {
				me := grafana.MacroEnv{From: r.from, To: r.to, Interval: time.Minute, Vars: v}
				for _, title := range titles {
					got, err := grafana.ExpandMacros(panels[title], me)
					require.NoError(t, err)
					want, err := grafana.ExpandMacros(reference(title), me)
					require.NoError(t, err)
					wantRows := rowsOf(t, ctx, env, want)
					assert.Equal(t, wantRows, rowsOf(t, ctx, env, got), title)
				}
			})
		}
	}
}
