package audit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// TestMemoryBudget runs the embedded server with a 512 MiB budget
// (audittest.WithMemoryLimit, auditq serve --max-memory-bytes): the engine
// reports it as max_server_memory_usage; loading 100,000 decisions in
// batches of 25,000 through otel_traces and the view stays inside it; a
// query that needs more fails with MEMORY_LIMIT_EXCEEDED (code 241), named
// in the error, for the reader and the writer; and afterwards the server
// still answers and every decision loaded is there.
func TestMemoryBudget(t *testing.T) {
	const budget = 512 << 20
	env := audittest.Start(t, audittest.WithMemoryLimit(budget))
	ctx := context.Background()
	var limit uint64
	require.NoError(t, env.Writer.QueryRow(ctx, "SELECT toUInt64(value) FROM system.server_settings WHERE name = 'max_server_memory_usage'").Scan(&limit))
	require.EqualValues(t, budget, limit)

	require.NoError(t, audittest.LoadShaped(ctx, env.Writer, env.Database, 100000, time.Now(), audittest.ShapedOptions{Batch: 25000}))
	huge := "SELECT length(groupArray(toString(number))) FROM numbers(100000000)"
	for _, c := range []struct {
		who string
		run func() error
	}{
		{"reader", func() error { var n uint64; return env.Store.Conn().QueryRow(ctx, huge).Scan(&n) }},
		{"writer", func() error { var n uint64; return env.Writer.QueryRow(ctx, huge).Scan(&n) }},
	} {
		err := c.run()
		var ex *clickhouse.Exception
		require.True(t, errors.As(err, &ex), "%s: %v", c.who, err)
		assert.EqualValues(t, 241, ex.Code, c.who)
		assert.Contains(t, ex.Message, "memory limit exceeded", c.who)
	}
	st, err := env.Store.Stats(ctx, audit.StatsQuery{})
	require.NoError(t, err, "the server answers after refusing")
	assert.EqualValues(t, 100000, st.Total, "nothing loaded was lost")
}
