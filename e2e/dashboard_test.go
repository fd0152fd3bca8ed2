package e2e_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/deploy/grafana"
	"github.com/toolgate/toolgate/gate"
)

// query runs sql with the reader's connection (clickhouse-go over HTTP, as
// Grafana's plugin does) and returns the rows as column name → value.
func (s *stack) query(ctx context.Context, t *testing.T, sql string) []map[string]any {
	t.Helper()
	rows, err := s.store.Conn().Query(ctx, sql)
	require.NoError(t, err, sql)
	defer rows.Close()
	cols := rows.ColumnTypes()
	var out []map[string]any
	for rows.Next() {
		dest := make([]any, len(cols))
		for i, c := range cols {
			dest[i] = reflect.New(c.ScanType()).Interface()
		}
		require.NoError(t, rows.Scan(dest...))
		row := map[string]any{}
		for i, c := range cols {
			row[c.Name()] = reflect.ValueOf(dest[i]).Elem().Interface()
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Err())
	return out
}

func num(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case uint64:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	}
	t.Fatalf("not a number: %T %v", v, v)
	return 0
}

// TestDashboardQueries fills the embedded ClickHouse with real decisions
// (executor → collector → ClickHouse) and runs every panel's SQL of the
// Grafana dashboard with its macros expanded, for "All" and for one agent,
// checking the numbers against what the executor decided.
func TestDashboardQueries(t *testing.T) {
	s := startStack(t, withoutJaeger())
	ctx := context.Background()
	service := "e2e-dashboard"
	p := s.provider(t, service, "decisions")
	o := workload(t, p, service, 6, 20)
	total := len(o.calls)
	require.Equal(t, total, s.waitDecisions(ctx, t, service, total, 60*time.Second))

	d, err := grafana.GateDecisions()
	require.NoError(t, err)
	queries := grafana.PanelQueries(d)
	require.Len(t, queries, 11)

	perAgent := map[string][2]int{} // agent → [decisions, denied] of bash calls
	for id, a := range o.calls {
		if strings.HasSuffix(id, "-unreachable") {
			continue // web_fetch, refused before the gate
		}
		agent := fmt.Sprintf("agent-%d", (mustRunIndex(t, id))%2)
		c := perAgent[agent]
		c[0]++
		if a == gate.ActionDeny {
			c[1]++
		}
		perAgent[agent] = c
	}
	cases := []struct {
		name            string
		vars            map[string][]string
		decisions, deny int
	}{
		{"all agents", nil, total, o.count(gate.ActionDeny)},
		{"agent-0", map[string][]string{"agent": {"agent-0"}, "tool": {"bash"}}, perAgent["agent-0"][0], perAgent["agent-0"][1]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := grafana.MacroEnv{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Minute), Interval: 10 * time.Second, Vars: tc.vars}
			for _, q := range queries {
				sql, err := grafana.ExpandMacros(q.SQL, env)
				require.NoError(t, err, q.Title)
				rows := s.query(ctx, t, sql)
				switch q.Title {
				case "variable agent":
					require.Len(t, rows, 2, q.Title)
					assert.Equal(t, "agent-0", rows[0]["Agent"])
				case "variable tool":
					// web_fetch: each run's call refused before the gate.
					require.Len(t, rows, 2, q.Title)
					assert.Equal(t, "bash", rows[0]["ToolName"])
					assert.Equal(t, "web_fetch", rows[1]["ToolName"])
				case "Decisions":
					assert.Equal(t, float64(tc.decisions), num(t, rows[0]["decisions"]), q.Title)
				case "Denied":
					assert.Equal(t, float64(tc.deny), num(t, rows[0]["denied"]), q.Title)
				case "Deny rate":
					assert.InDelta(t, float64(tc.deny)/float64(tc.decisions), num(t, rows[0]["deny_rate"]), 1e-9, q.Title)
				case "Agents":
					want := 2.0
					if tc.vars != nil {
						want = 1
					}
					assert.Equal(t, want, num(t, rows[0]["agents"]), q.Title)
				case "Decisions over time by action":
					sum := 0.0
					for _, r := range rows {
						assert.Contains(t, []string{"allow", "deny"}, r["action"])
						assert.IsType(t, time.Time{}, r["time"])
						sum += num(t, r["decisions"])
					}
					assert.Equal(t, float64(tc.decisions), sum, q.Title)
				case "Top deny reasons":
					sum := 0.0
					for _, r := range rows {
						reason := fmt.Sprint(r["reason"])
						assert.True(t, strings.Contains(reason, "command uses") || strings.Contains(reason, "not reachable"), "%s: %s", q.Title, reason)
						sum += num(t, r["denials"])
					}
					assert.Equal(t, float64(tc.deny), sum, q.Title)
				case "Decisions by tool and agent":
					sum, denied := 0.0, 0.0
					for _, r := range rows {
						if tc.vars != nil {
							assert.Equal(t, "bash", r["tool"])
						} else {
							assert.Contains(t, []any{"bash", "web_fetch"}, r["tool"])
						}
						sum += num(t, r["decisions"])
						denied += num(t, r["denied"])
					}
					assert.Equal(t, float64(tc.decisions), sum, q.Title)
					assert.Equal(t, float64(tc.deny), denied, q.Title)
				case "Approvals by approver":
					assert.Empty(t, rows, "%s: the workload asks nobody", q.Title)
				case "Denied calls":
					assert.Len(t, rows, min(tc.deny, 200), q.Title)
					for _, r := range rows {
						id := fmt.Sprint(r["tool_call_id"])
						assert.Equal(t, gate.ActionDeny, o.calls[id], id)
						assert.Equal(t, o.traceOf[id], r["trace_id"], "trace link target for %s", id)
					}
				default:
					t.Errorf("panel %q has no check", q.Title)
				}
			}
		})
	}
}

// mustRunIndex returns the run number r of a tool call ID "<service>-run<r>-c<i>".
func mustRunIndex(t *testing.T, id string) int {
	t.Helper()
	var r, i int
	k := strings.LastIndex(id, "-run")
	if k < 0 {
		t.Fatalf("tool call id %q has no run number", id)
	}
	if _, err := fmt.Sscanf(id[k:], "-run%d-c%d", &r, &i); err != nil {
		t.Fatalf("tool call id %q: %v", id, err)
	}
	return r
}
