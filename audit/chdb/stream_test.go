package chdb_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit/chdb"
)

// readStream reads s to its end and returns the concatenated chunks and
// their count.
func readStream(s *chdb.Stream) ([]byte, int, error) {
	var all bytes.Buffer
	chunks := 0
	for {
		b, err := s.Next()
		if errors.Is(err, io.EOF) {
			return all.Bytes(), chunks, nil
		}
		if err != nil {
			return all.Bytes(), chunks, err
		}
		chunks++
		all.Write(b)
	}
}

// TestStream: a streamed result is byte for byte the buffered one, in
// several chunks when large; errors at the start and while running are
// the engine's; a stream closed early leaves the connection usable.
func TestStream(t *testing.T) {
	lib, err := chdb.Open(libPath(t))
	require.NoError(t, err)
	require.True(t, lib.CanStream(), "the shipped libchdb exports chdb_stream_query_with_params_n")
	conn, err := lib.Connect("--path=" + t.TempDir())
	require.NoError(t, err)
	defer conn.Close()

	t.Run("equals the buffered result", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			n := rapid.IntRange(0, 300000).Draw(rt, "rows")
			// Formats without a prefix or suffix: each chunk is written by
			// a fresh output format, so CSVWithNames would repeat its header.
			format := rapid.SampledFrom([]string{"TabSeparated", "CSV", "JSONEachRow", "Native", "RowBinary"}).Draw(rt, "format")
			q := []byte("SELECT number, toString(number * {k:UInt64}) AS s, [number, 1] AS a FROM numbers({n:UInt64}) ORDER BY number DESC")
			params := map[string]string{"n": fmt.Sprint(n), "k": "7"}
			want, err := conn.QueryWithParams(q, format, params)
			require.NoError(rt, err)
			s, err := conn.Stream(q, format, params)
			require.NoError(rt, err)
			got, chunks, err := readStream(s)
			require.NoError(rt, s.Close())
			require.NoError(rt, err)
			require.True(rt, bytes.Equal(want.Data, got), "streamed %d bytes in %d chunks, buffered %d", len(got), chunks, len(want.Data))
			if n >= 200000 {
				require.Greater(rt, chunks, 1, "a large result arrives in chunks")
			}
		})
	})

	t.Run("error at the start", func(t *testing.T) {
		// The engine reports it from Stream or from the first Next.
		s, err := conn.Stream([]byte("SELECT * FROM nope"), "CSV", nil)
		if err == nil {
			_, err = s.Next()
			require.NoError(t, s.Close())
		}
		var ce *chdb.Error
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, 60, ce.Code)
	})

	t.Run("error while running", func(t *testing.T) {
		s, err := conn.Stream([]byte("SELECT throwIf(number = 900000, 'boom') FROM numbers(1000000) SETTINGS max_block_size = 1000"), "TabSeparated", nil)
		if err == nil {
			_, _, err = readStream(s)
			require.NoError(t, s.Close())
		}
		var ce *chdb.Error
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, 395, ce.Code, ce.Message) // FUNCTION_THROW_IF_VALUE_IS_NON_ZERO
	})

	t.Run("closed early", func(t *testing.T) {
		s, err := conn.Stream([]byte("SELECT number FROM numbers(10000000)"), "TabSeparated", nil)
		require.NoError(t, err)
		b, err := s.Next()
		require.NoError(t, err)
		require.NotEmpty(t, b)
		require.NoError(t, s.Close())
		require.NoError(t, s.Close())
		_, err = s.Next()
		require.ErrorIs(t, err, io.EOF)
		res, err := conn.Query([]byte("SELECT 42"), "CSV")
		require.NoError(t, err)
		assert.Equal(t, "42\n", string(res.Data))
	})
}
