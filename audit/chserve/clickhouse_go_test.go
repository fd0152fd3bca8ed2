package chserve_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/internal/testenv"
)

// open connects clickhouse-go/v2 to the server with dsn.
func open(t *testing.T, dsn string) driver.Conn {
	t.Helper()
	opts, err := clickhouse.ParseDSN(dsn)
	require.NoError(t, err)
	conn, err := clickhouse.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestClickHouseGo drives the server with clickhouse-go/v2 over HTTP with
// each compression method: dial, ping, DDL, a batch insert with Map,
// DateTime64, LowCardinality and Array columns, and queries with bound
// parameters.
func TestClickHouseGo(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i, compression := range []string{"", "lz4", "zstd", "gzip", "deflate", "br"} {
		t.Run("compress="+compression, func(t *testing.T) {
			q := ""
			if compression != "" {
				q = "compress=" + compression
			}
			w := open(t, ch.DSN(ch.Writer, "default", q))
			r := open(t, ch.DSN(ch.Reader, "default", q))
			require.NoError(t, w.Ping(ctx))
			v, err := w.ServerVersion()
			require.NoError(t, err)
			assert.Equal(t, uint64(26), v.Version.Major)

			table := fmt.Sprintf("cg_%d", i)
			require.NoError(t, w.Exec(ctx, `CREATE TABLE `+table+` (
				ts DateTime64(9, 'UTC'), name LowCardinality(String), n UInt64,
				attrs Map(LowCardinality(String), String), tags Array(String), f Float64
			) ENGINE = MergeTree ORDER BY (name, ts)`))

			const rows = 20000 // several blocks, well above chDB's inline-insert limit
			batch, err := w.PrepareBatch(ctx, "INSERT INTO "+table)
			require.NoError(t, err)
			base := time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC)
			for j := 0; j < rows; j++ {
				require.NoError(t, batch.Append(base.Add(time.Duration(j)*time.Millisecond), fmt.Sprintf("tool-%d", j%7), uint64(j),
					map[string]string{"gen_ai.tool.name": fmt.Sprintf("tool-%d", j%7), "k": "v"}, []string{"a", "b"}, float64(j)/2))
			}
			require.NoError(t, batch.Send())

			var count uint64
			require.NoError(t, r.QueryRow(ctx, "SELECT count() FROM "+table).Scan(&count))
			assert.Equal(t, uint64(rows), count)

			var (
				ts    time.Time
				name  string
				attrs map[string]string
				tags  []string
			)
			require.NoError(t, r.QueryRow(new(audit.Params).Int64("n", 4242).Context(ctx),
				"SELECT ts, name, attrs, tags FROM "+table+" WHERE n = {n:UInt64}").Scan(&ts, &name, &attrs, &tags))
			assert.True(t, base.Add(4242*time.Millisecond).Equal(ts), "ts %v", ts)
			assert.Equal(t, "tool-0", name)
			assert.Equal(t, map[string]string{"gen_ai.tool.name": "tool-0", "k": "v"}, attrs)
			assert.Equal(t, []string{"a", "b"}, tags)

			// A large result crosses several compressed blocks.
			rs, err := r.Query(ctx, "SELECT n, attrs['gen_ai.tool.name'] FROM "+table+" ORDER BY n")
			require.NoError(t, err)
			var got uint64
			for rs.Next() {
				var n uint64
				var tool string
				require.NoError(t, rs.Scan(&n, &tool))
				require.Equal(t, got, n)
				got++
			}
			require.NoError(t, rs.Err())
			assert.Equal(t, uint64(rows), got)

			// The reader can read but not write.
			err = r.Exec(ctx, "DROP TABLE "+table)
			var ex *clickhouse.Exception
			require.ErrorAs(t, err, &ex)
			assert.Equal(t, int32(164), ex.Code, "READONLY")
			require.NoError(t, w.Exec(ctx, "DROP TABLE "+table))
		})
	}
}
