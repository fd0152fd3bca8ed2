package chserve_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/audittest"
)

// TestStreamedResults: reads are streamed from the engine (chdb.Stream)
// and still arrive whole and in order through clickhouse-go, with and
// without compressed blocks; an empty result still names its columns; a
// statement the engine does not stream (EXPLAIN) is answered buffered; a
// query that fails after its first rows went out is an error for the
// client, never a result that looks complete.
func TestStreamedResults(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	const rows = 1500000 // many engine chunks
	for _, q := range []string{"", "compress=lz4"} {
		t.Run("whole and in order "+q, func(t *testing.T) {
			dsn := env.ReaderDSN
			if q != "" {
				dsn += "&" + q
				if !strings.Contains(env.ReaderDSN, "?") {
					dsn = env.ReaderDSN + "?" + q
				}
			}
			c := open(t, dsn)
			rs, err := c.Query(ctx, "SELECT number, toString(number) AS s FROM numbers(1500000) ORDER BY number")
			require.NoError(t, err)
			var got uint64
			for rs.Next() {
				var n uint64
				var s string
				require.NoError(t, rs.Scan(&n, &s))
				require.Equal(t, got, n)
				got++
			}
			require.NoError(t, rs.Err())
			assert.EqualValues(t, rows, got)
		})
	}

	t.Run("empty result names its columns", func(t *testing.T) {
		rs, err := env.Writer.Query(ctx, "SELECT number AS n, toString(number) AS s FROM numbers(10) WHERE number > 100")
		require.NoError(t, err)
		assert.Equal(t, []string{"n", "s"}, rs.Columns())
		assert.False(t, rs.Next())
		require.NoError(t, rs.Err())
	})

	t.Run("explain is answered buffered", func(t *testing.T) {
		rs, err := env.Writer.Query(ctx, "EXPLAIN SELECT 1")
		require.NoError(t, err)
		n := 0
		for rs.Next() {
			n++
		}
		require.NoError(t, rs.Err())
		assert.Positive(t, n)
	})

	failing := "SELECT number, throwIf(number = 1200000, 'boom') FROM numbers(1300000) SETTINGS max_block_size = 1000"
	t.Run("failure at the start has the exception status", func(t *testing.T) {
		_, err := env.Writer.Query(ctx, "SELECT * FROM no_such_table")
		var ex *clickhouse.Exception
		require.ErrorAs(t, err, &ex)
		assert.EqualValues(t, 60, ex.Code)
	})

	t.Run("failure mid-stream is an error through clickhouse-go", func(t *testing.T) {
		rs, err := env.Writer.Query(ctx, failing)
		if err == nil {
			var got int
			for rs.Next() {
				got++
			}
			err = rs.Err()
			assert.Less(t, got, 1300000)
		}
		require.Error(t, err, "a result cut short must not look complete")
	})

	t.Run("failure mid-stream cuts the HTTP body", func(t *testing.T) {
		u, err := url.Parse(env.WriterDSN)
		require.NoError(t, err)
		pw, _ := u.User.Password()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.URL+"/?default_format=TabSeparated", strings.NewReader(failing))
		require.NoError(t, err)
		req.SetBasicAuth(u.User.Username(), pw)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "the first rows went out before the failure")
		_, err = io.Copy(io.Discard, resp.Body)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "the body ends without its terminating chunk")
	})
}
