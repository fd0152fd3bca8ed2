package chdb_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/chdb"
)

// libPath is $TOOLGATE_LIBCHDB or the repository's .cache/chdb/libchdb.so.
// Missing, it fails the test under TOOLGATE_INTEGRATION=1 and skips it
// otherwise.
func libPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("TOOLGATE_LIBCHDB")
	if p == "" {
		_, file, _, _ := runtime.Caller(0)
		p = filepath.Join(filepath.Dir(file), "..", "..", ".cache", "chdb", "libchdb.so")
	}
	if _, err := os.Stat(p); err != nil {
		msg := "libchdb.so not found at " + p + " (make deps)"
		if os.Getenv("TOOLGATE_INTEGRATION") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

func TestOpenMissingLibrary(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "libchdb.so")} {
		lib, err := chdb.Open(path)
		assert.Nil(t, lib)
		require.ErrorIs(t, err, chdb.ErrLibraryNotFound)
		assert.Contains(t, err.Error(), "make deps")
		assert.Contains(t, err.Error(), "scripts/install-libchdb.sh")
	}
}

func TestOpenNotALibrary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "libchdb.so")
	require.NoError(t, os.WriteFile(p, []byte("not an ELF file"), 0o644))
	_, err := chdb.Open(p)
	require.Error(t, err)
	assert.False(t, errors.Is(err, chdb.ErrLibraryNotFound))
	assert.Contains(t, err.Error(), p)
}

// TestConn runs the engine in-process: queries in several formats, bound
// parameters, binary-safe query text, error codes, and session state.
func TestConn(t *testing.T) {
	lib, err := chdb.Open(libPath(t))
	require.NoError(t, err)
	conn, err := lib.Connect("--path=" + t.TempDir())
	require.NoError(t, err)
	defer conn.Close()

	tests := []struct {
		name, sql, format string
		params            map[string]string
		want              string
		wantCode          int
		wantName          string
	}{
		{name: "tsv", sql: "SELECT 1, 'a'", format: "TabSeparated", want: "1\ta\n"},
		{name: "format clause wins", sql: "SELECT 1 AS x FORMAT JSONEachRow", format: "CSV", want: "{\"x\":1}\n"},
		{name: "native", sql: "SELECT toUInt8(7) AS v", format: "Native", want: "\x01\x01\x01v\x05UInt8\x07"},
		{name: "params", sql: "SELECT {a:UInt32} * 2, {s:String}", format: "CSV", params: map[string]string{"a": "21", "s": "x'y"}, want: "42,\"x'y\"\n"},
		{name: "NUL inside the query text", sql: "SELECT length('a\x00b')", format: "CSV", want: "3\n"},
		{name: "syntax error", sql: "SELECT 1 +", format: "CSV", wantCode: 62, wantName: "SYNTAX_ERROR"},
		{name: "unknown table", sql: "SELECT * FROM nope", format: "CSV", wantCode: 60, wantName: "UNKNOWN_TABLE"},
		{name: "empty", sql: "", format: "CSV", wantCode: 62, wantName: "SYNTAX_ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := conn.QueryWithParams([]byte(tt.sql), tt.format, tt.params)
			if tt.wantCode != 0 {
				var ce *chdb.Error
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tt.wantCode, ce.Code)
				assert.Equal(t, tt.wantName, ce.Name)
				assert.True(t, strings.HasPrefix(ce.Error(), "Code: "), ce.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(res.Data))
		})
	}

	_, err = conn.Query([]byte("CREATE TABLE t (a UInt64) ENGINE = MergeTree ORDER BY a"), "CSV")
	require.NoError(t, err)
	res, err := conn.Query([]byte("INSERT INTO t SELECT number FROM numbers(1000)"), "CSV")
	require.NoError(t, err)
	assert.Equal(t, uint64(1000), res.RowsWritten)
	res, err = conn.Query([]byte("SELECT sum(a) FROM t"), "CSV")
	require.NoError(t, err)
	assert.Equal(t, "499500\n", string(res.Data))
	assert.Equal(t, uint64(1), res.RowsRead)

	// A connection is a session: SET persists until reset.
	_, err = conn.Query([]byte("SET max_threads = 1"), "CSV")
	require.NoError(t, err)
	res, err = conn.Query([]byte("SELECT getSetting('max_threads')"), "CSV")
	require.NoError(t, err)
	assert.Equal(t, "1\n", string(res.Data))

	require.NoError(t, conn.Close())
	_, err = conn.Query([]byte("SELECT 1"), "CSV")
	assert.ErrorIs(t, err, chdb.ErrClosed)
}
