package chserve_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestNativeTypes reads every column type the audit schema and the
// exporter use through the Native re-encoding, including results made of
// several blocks, blocks without rows (FINAL over parts, LIMIT) and empty
// results.
func TestNativeTypes(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	ctx := context.Background()
	w := open(t, ch.WriterDSN)
	require.NoError(t, w.Exec(ctx, `CREATE TABLE typed (
		id UInt64, ts DateTime64(9), d DateTime, lc LowCardinality(String), nlc LowCardinality(Nullable(String)),
		n Nullable(String), b Bool, m Map(LowCardinality(String), String), a Array(LowCardinality(String)),
		tup Tuple(String, UInt8), e Enum8('allow' = 1, 'deny' = 2), f Float64, u UUID, dec Decimal(18, 4),
		ev Nested(Name LowCardinality(String), At DateTime64(9))
	) ENGINE = ReplacingMergeTree ORDER BY id PARTITION BY id % 4`))
	for part := 0; part < 4; part++ { // several parts: FINAL reads them as separate blocks
		require.NoError(t, w.Exec(ctx, `INSERT INTO typed SELECT number, now64(9), now(), 'tool-' || toString(number % 3),
			if(number % 2 = 0, NULL, 'x'), if(number % 2 = 0, NULL, 'y'), number % 2 = 0, map('k', toString(number)), ['a', 'b'],
			('t', 7), if(number % 2 = 0, 'allow', 'deny'), number / 3, generateUUIDv4(), number / 7,
			['gate.decision'], [now64(9)] FROM numbers(`+string(rune('0'+part))+`000, 1000)`))
	}
	for _, compression := range []string{"", "lz4"} {
		r := open(t, ch.DSN(ch.Reader, "default", "compress="+compression))
		for _, tc := range []struct {
			name, sql string
			rows      int
		}{
			{"all", "SELECT * FROM typed FINAL ORDER BY id", 4000},
			{"final with filter", "SELECT * FROM typed FINAL WHERE id % 1000 = 1 SETTINGS do_not_merge_across_partitions_select_final = 1", 4},
			{"empty", "SELECT * FROM typed FINAL WHERE id > 1000000", 0},
			{"limit", "SELECT lc, m, a FROM typed FINAL ORDER BY id DESC LIMIT 3", 3},
		} {
			rows, err := r.Query(ctx, tc.sql)
			require.NoError(t, err, tc.name)
			assert.Len(t, rows.Columns(), len(rows.ColumnTypes()), tc.name)
			if tc.name != "limit" {
				assert.Len(t, rows.Columns(), 16, tc.name)
			}
			n := 0
			for rows.Next() {
				n++
			}
			require.NoError(t, rows.Err(), tc.name)
			rows.Close()
			assert.Equal(t, tc.rows, n, tc.name)
		}
		var (
			lc  string
			nlc *string
			m   map[string]string
			ev  []string
			at  []time.Time
		)
		require.NoError(t, r.QueryRow(new(audit.Params).Int64("id", 3).Context(ctx),
			"SELECT lc, nlc, m, ev.Name, ev.At FROM typed WHERE id = {id:UInt64}").Scan(&lc, &nlc, &m, &ev, &at))
		assert.Equal(t, "tool-0", lc)
		require.NotNil(t, nlc)
		assert.Equal(t, "x", *nlc)
		assert.Equal(t, map[string]string{"k": "3"}, m)
		assert.Equal(t, []string{"gate.decision"}, ev)
		assert.Len(t, at, 1)
	}
}
