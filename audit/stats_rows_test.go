package audit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// An answer of many rows (more than one of the chunks Stats gathers rows
// in) is every group of the trail once, in the documented order, with the
// counts the trail gives: read from the roll-ups, checked against a query
// of gate_decisions written here.
func TestStatsManyRowsMatchTheTrail(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	end := time.Now().UTC().Truncate(time.Hour).Add(-90 * time.Minute)
	require.NoError(t, audittest.LoadShaped(ctx, env.Writer, env.Database, 30000, end, audittest.ShapedOptions{Batch: 10000}))
	require.NoError(t, audit.Roll(ctx, env.Writer, audit.WithRollupDelay(0)))
	since := end.Add(-audittest.ShapedWindow - time.Hour).Add(17 * time.Minute) // partial first hour
	got, err := env.Store.Stats(ctx, audit.StatsQuery{
		Filter: audit.Filter{Since: since},
		By:     []audit.Dimension{audit.ByAgent, audit.ByRule, audit.ByTool},
		Every:  time.Hour,
	})
	require.NoError(t, err)
	require.Greater(t, len(got.Rows), 3*4096, "the answer spans several chunks")

	rows, err := env.Writer.Query(ctx, fmt.Sprintf(`SELECT toInt64(toUnixTimestamp(toStartOfHour(Timestamp, 'UTC'))) AS b, Agent,
    if(Rule != '', Rule, extract(Reason, '%s')) AS r, ToolName, sum(Calls) AS c, sumIf(Calls, Action = 'deny')
FROM %s.gate_decisions FINAL
WHERE Timestamp >= fromUnixTimestamp64Nano(%d)
GROUP BY b, Agent, r, ToolName
ORDER BY b, c DESC, Agent, r, ToolName`, strings.ReplaceAll(audit.RulePattern, `\`, `\\`), env.Database, since.UnixNano()))
	require.NoError(t, err)
	defer rows.Close()
	i := 0
	var total uint64
	for rows.Next() {
		var b int64
		var agent, rule, tool string
		var c, d uint64
		require.NoError(t, rows.Scan(&b, &agent, &rule, &tool, &c, &d))
		require.Less(t, i, len(got.Rows), "Stats has fewer rows than the trail")
		r := got.Rows[i]
		want := audit.StatsRow{Bucket: time.Unix(b, 0).UTC(), Keys: []string{agent, rule, tool}, Count: c, Denied: d}
		require.Equal(t, want, audit.StatsRow{Bucket: r.Bucket, Keys: r.Keys, Count: r.Count, Denied: r.Denied}, "row %d", i)
		require.Equal(t, 3, cap(r.Keys), "row %d's keys are its own", i)
		total += c
		i++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, len(got.Rows), i, "Stats has more rows than the trail")
	require.Equal(t, total, got.Total)
	require.Equal(t, cap(got.Rows), len(got.Rows), "Rows is built once, at its size")
}
