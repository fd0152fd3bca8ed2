package chserve_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/ch-go/compress"
	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/internal/testenv"
)

// httpCall is one plain HTTP request, as curl would send it.
type httpCall struct {
	method  string
	query   url.Values
	body    string
	user    *testenv.ClickHouseUser
	headers map[string]string
}

type httpAnswer struct {
	status int
	code   string // X-ClickHouse-Exception-Code
	body   string
	header http.Header
}

func do(t *testing.T, ch *testenv.ClickHouse, c httpCall) httpAnswer {
	t.Helper()
	if c.method == "" {
		c.method = http.MethodPost
	}
	u := ch.URL + "/?" + c.query.Encode()
	req, err := http.NewRequest(c.method, u, strings.NewReader(c.body))
	require.NoError(t, err)
	if c.user != nil {
		req.SetBasicAuth(c.user.Name, c.user.Password)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return httpAnswer{status: resp.StatusCode, code: resp.Header.Get("X-ClickHouse-Exception-Code"), body: string(b), header: resp.Header}
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// TestHTTPInterface checks curl-style use: formats, inserts in the body,
// parameters, settings, errors with ClickHouse codes, and access control.
func TestHTTPInterface(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	w, r := &ch.Writer, &ch.Reader
	setup := do(t, ch, httpCall{user: w, body: "CREATE TABLE calls (id UInt32, tool String) ENGINE = MergeTree ORDER BY id"})
	require.Equal(t, http.StatusOK, setup.status, setup.body)

	tests := []struct {
		name       string
		call       httpCall
		wantStatus int
		wantCode   string
		wantBody   string // exact body, or a substring when wantCode is set
	}{
		{name: "ping", call: httpCall{method: http.MethodGet}, wantStatus: 200, wantBody: "Ok.\n"},
		{name: "GET query, TabSeparated by default", call: httpCall{method: http.MethodGet, user: r, query: q("query", "SELECT 1, 'a'")}, wantStatus: 200, wantBody: "1\ta\n"},
		{name: "POST body query", call: httpCall{user: r, body: "SELECT 2"}, wantStatus: 200, wantBody: "2\n"},
		{name: "query parameter plus body", call: httpCall{user: r, query: q("query", "SELECT"), body: "3"}, wantStatus: 200, wantBody: "3\n"},
		{name: "FORMAT clause", call: httpCall{user: r, body: "SELECT 1 AS x FORMAT JSONEachRow"}, wantStatus: 200, wantBody: "{\"x\":1}\n"},
		{name: "default_format", call: httpCall{user: r, query: q("default_format", "CSVWithNames"), body: "SELECT 1 AS x"}, wantStatus: 200, wantBody: "\"x\"\n1\n"},
		{name: "FORMAT clause beats default_format", call: httpCall{user: r, query: q("default_format", "CSV"), body: "SELECT 'y' FORMAT TSV"}, wantStatus: 200, wantBody: "y\n"},
		{name: "bound parameters", call: httpCall{user: r, query: q("param_n", "41", "param_s", "a\\tb"), body: "SELECT {n:UInt32} + 1, {s:String}"}, wantStatus: 200, wantBody: "42\ta\\tb\n"},
		{name: "URL settings apply", call: httpCall{user: r, query: q("max_threads", "1"), body: "SELECT getSetting('max_threads')"}, wantStatus: 200, wantBody: "1\n"},
		{name: "and do not leak into the next request", call: httpCall{user: r, body: "SELECT getSetting('max_threads') != 1"}, wantStatus: 200, wantBody: "1\n"},
		{name: "database parameter", call: httpCall{user: r, query: q("database", "system"), body: "SELECT currentDatabase()"}, wantStatus: 200, wantBody: "system\n"},
		{name: "credentials in headers", call: httpCall{headers: map[string]string{"X-ClickHouse-User": r.Name, "X-ClickHouse-Key": r.Password}, body: "SELECT 4"}, wantStatus: 200, wantBody: "4\n"},
		{name: "credentials in URL", call: httpCall{query: q("user", r.Name, "password", r.Password), body: "SELECT 5"}, wantStatus: 200, wantBody: "5\n"},

		{name: "syntax error", call: httpCall{user: w, body: "SELECT 1 +"}, wantStatus: 400, wantCode: "62", wantBody: "(SYNTAX_ERROR)"},
		{name: "unknown table", call: httpCall{user: r, body: "SELECT * FROM nope"}, wantStatus: 404, wantCode: "60", wantBody: "Code: 60. DB::Exception:"},
		{name: "unknown setting", call: httpCall{user: r, query: q("no_such_setting", "1"), body: "SELECT 1"}, wantStatus: 400, wantCode: "115", wantBody: "(UNKNOWN_SETTING)"},
		{name: "unknown database", call: httpCall{user: r, query: q("database", "nodb"), body: "SELECT 1"}, wantStatus: 404, wantCode: "81", wantBody: "nodb"},
		{name: "empty query", call: httpCall{user: r, body: " "}, wantStatus: 400, wantCode: "62", wantBody: "Empty query"},
		{name: "unknown statement is not run for a reader", call: httpCall{user: r, body: "SELEC 1"}, wantStatus: 403, wantCode: "164", wantBody: "read-only"},
		{name: "no credentials", call: httpCall{body: "SELECT 1"}, wantStatus: 401, wantCode: "194", wantBody: "--allow-anonymous"},
		{name: "wrong password", call: httpCall{user: &testenv.ClickHouseUser{Name: r.Name, Password: "x"}, body: "SELECT 1"}, wantStatus: 403, wantCode: "516", wantBody: "(AUTHENTICATION_FAILED)"},
		{name: "reader cannot drop", call: httpCall{user: r, body: "DROP TABLE calls"}, wantStatus: 403, wantCode: "164", wantBody: "read-only"},
		{name: "reader cannot insert", call: httpCall{user: r, body: "INSERT INTO calls VALUES (1, 'x')"}, wantStatus: 403, wantCode: "164", wantBody: "read-only"},
		{name: "reader cannot read files", call: httpCall{user: r, body: "SELECT * FROM file('/etc/passwd', 'LineAsString')"}, wantStatus: 403, wantCode: "164", wantBody: "readonly"},
		{name: "GET is read-only", call: httpCall{method: http.MethodGet, user: w, query: q("query", "DROP TABLE calls")}, wantStatus: 403, wantCode: "164", wantBody: "use POST"},
		{name: "readonly URL setting", call: httpCall{user: w, query: q("readonly", "1"), body: "DROP TABLE calls"}, wantStatus: 403, wantCode: "164", wantBody: "readonly"},
		{name: "SET is refused", call: httpCall{user: w, body: "SET max_threads = 1"}, wantStatus: 501, wantCode: "48", wantBody: "URL parameters"},
		{name: "USE is refused", call: httpCall{user: w, body: "USE system"}, wantStatus: 501, wantCode: "48", wantBody: "?database="},
		{name: "session_id is refused", call: httpCall{user: w, query: q("session_id", "s1"), body: "SELECT 1"}, wantStatus: 501, wantCode: "48", wantBody: "session_id"},
		{name: "multi-statements are refused", call: httpCall{user: w, body: "SELECT 1; DROP TABLE calls"}, wantStatus: 400, wantCode: "62", wantBody: "Multi-statements"},
		{name: "INTO OUTFILE is refused", call: httpCall{user: w, body: "SELECT 1 INTO OUTFILE '/tmp/x'"}, wantStatus: 403, wantCode: "497", wantBody: "OUTFILE"},
		{name: "FROM INFILE is refused", call: httpCall{user: w, body: "INSERT INTO calls FROM INFILE '/etc/passwd' FORMAT LineAsString"}, wantStatus: 403, wantCode: "497", wantBody: "INFILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := do(t, ch, tt.call)
			assert.Equal(t, tt.wantStatus, got.status, got.body)
			assert.Equal(t, tt.wantCode, got.code)
			if tt.wantCode != "" {
				assert.Contains(t, got.body, tt.wantBody)
				assert.Regexp(t, `^Code: `+tt.wantCode+`\. DB::Exception: .*\([A-Z_]+\)`, got.body)
			} else {
				assert.Equal(t, tt.wantBody, got.body)
			}
		})
	}

	t.Run("inserts", func(t *testing.T) {
		ins := []httpCall{
			{user: w, body: "INSERT INTO calls FORMAT JSONEachRow\n{\"id\":1,\"tool\":\"bash\"}\n{\"id\":2,\"tool\":\"read\"}\n"},
			{user: w, query: q("query", "INSERT INTO calls FORMAT CSV"), body: "3,write\n4,\"edit\"\n"},
			{user: w, query: q("query", "INSERT INTO calls VALUES"), body: "(5, 'grep')"},
			{user: w, body: "INSERT INTO calls (id, tool) VALUES (6, 'ls'), (7, {t:String})", query: q("param_t", "cat")},
		}
		for _, c := range ins {
			got := do(t, ch, c)
			require.Equal(t, 200, got.status, got.body)
			assert.Empty(t, got.body)
		}
		got := do(t, ch, httpCall{user: r, body: "SELECT id, tool FROM calls ORDER BY id FORMAT CSV"})
		assert.Equal(t, "1,\"bash\"\n2,\"read\"\n3,\"write\"\n4,\"edit\"\n5,\"grep\"\n6,\"ls\"\n7,\"cat\"\n", got.body)
		bad := do(t, ch, httpCall{user: w, body: "INSERT INTO calls FORMAT JSONEachRow\n{\"id\":\"not a number\"}\n"})
		assert.Equal(t, "27", bad.code, bad.body) // CANNOT_PARSE_INPUT_ASSERTION_FAILED
	})

	t.Run("gzip request and response", func(t *testing.T) {
		var buf bytes.Buffer
		zw := gzipWriter(&buf)
		_, _ = zw.Write([]byte("SELECT 'compressed'"))
		require.NoError(t, zw.Close())
		got := do(t, ch, httpCall{user: r, query: q("enable_http_compression", "1"), body: buf.String(),
			headers: map[string]string{"Content-Encoding": "gzip", "Accept-Encoding": "gzip"}})
		require.Equal(t, 200, got.status, got.body)
		// net/http decompresses transparently only when it asked itself;
		// here the raw gzip answer must decode to the result.
		assert.Equal(t, "gzip", got.header.Get("Content-Encoding"))
		assert.Equal(t, "compressed\n", gunzip(t, got.body))
	})
}

// TestAnonymous checks --allow-anonymous: reads, CREATE and INSERT work, and
// nothing can drop or alter a table without credentials.
func TestAnonymous(t *testing.T) {
	ch := testenv.StartClickHouse(t, testenv.WithClickHouseAnonymous())
	for _, ok := range []string{"CREATE TABLE a (x UInt8) ENGINE = MergeTree ORDER BY x", "INSERT INTO a VALUES (1)", "SELECT count() FROM a"} {
		got := do(t, ch, httpCall{body: ok})
		assert.Equal(t, 200, got.status, ok+": "+got.body)
	}
	for _, refused := range []string{"DROP TABLE a", "TRUNCATE TABLE a", "ALTER TABLE a DELETE WHERE 1", "RENAME TABLE a TO b", "DETACH TABLE a", "DROP DATABASE default"} {
		got := do(t, ch, httpCall{body: refused})
		assert.Equal(t, "497", got.code, refused+": "+got.body)
	}
	// clickhouse-go without credentials sends the password-less "default"
	// user, which is anonymous here as on a fresh ClickHouse server.
	ctx := context.Background()
	c := open(t, "http://"+ch.Addr+"/default?compress=lz4")
	require.NoError(t, c.Ping(ctx))
	require.NoError(t, c.Exec(ctx, "INSERT INTO a VALUES (2)"))
	var ex *clickhouse.Exception
	require.ErrorAs(t, c.Exec(ctx, "DROP TABLE a"), &ex)
	assert.Equal(t, int32(497), ex.Code)

	got := do(t, ch, httpCall{user: &ch.Writer, body: "DROP TABLE a"})
	assert.Equal(t, 200, got.status, "a rw user still can: "+got.body)
}

// TestBadQueryErrorCode checks that clickhouse-go surfaces the engine's
// error code and name for a bad query, an unknown table and a failed insert.
func TestBadQueryErrorCode(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	ctx := context.Background()
	for _, compression := range []string{"", "lz4", "gzip"} {
		t.Run("compress="+compression, func(t *testing.T) {
			c := open(t, ch.DSN(ch.Writer, "default", "compress="+compression))
			var ex *clickhouse.Exception
			err := c.Exec(ctx, "SELEC 1")
			require.ErrorAs(t, err, &ex)
			assert.Equal(t, int32(62), ex.Code)
			assert.Equal(t, "SYNTAX_ERROR", ex.CodeName)

			_, err = c.Query(ctx, "SELECT * FROM missing_table")
			require.ErrorAs(t, err, &ex)
			assert.Equal(t, int32(60), ex.Code)

			_, err = c.PrepareBatch(ctx, "INSERT INTO missing_table")
			require.ErrorAs(t, err, &ex)
			assert.Equal(t, int32(60), ex.Code)
		})
	}
}

// TestOversizedBody checks that a body over --max-body-bytes is refused
// with TOO_MANY_BYTES, as plain HTTP and through clickhouse-go, and that
// none of it is inserted.
func TestOversizedBody(t *testing.T) {
	ch := testenv.StartClickHouse(t, testenv.WithClickHouseArgs("--max-body-bytes=65536"))
	ctx := context.Background()
	w := open(t, ch.WriterDSN)
	require.NoError(t, w.Exec(ctx, "CREATE TABLE big (s String) ENGINE = MergeTree ORDER BY s"))

	row := "{\"s\":\"0123456789abcdef0123456789abcdef\"}\n"
	rows := strings.Repeat(row, 4000) // ~160 KB
	got := do(t, ch, httpCall{user: &ch.Writer, query: q("query", "INSERT INTO big FORMAT JSONEachRow"), body: rows})
	assert.Equal(t, http.StatusRequestEntityTooLarge, got.status)
	assert.Equal(t, "307", got.code)
	assert.Contains(t, got.body, "(TOO_MANY_BYTES)")

	for _, compression := range []string{"", "lz4"} { // the limit counts decompressed bytes
		c := open(t, ch.DSN(ch.Writer, "default", "compress="+compression))
		batch, err := c.PrepareBatch(ctx, "INSERT INTO big")
		require.NoError(t, err)
		for i := 0; i < 5000; i++ {
			require.NoError(t, batch.Append(strings.Repeat("x", 32)))
		}
		var ex *clickhouse.Exception
		require.ErrorAs(t, batch.Send(), &ex, compression)
		assert.Equal(t, int32(307), ex.Code)
	}
	var n uint64
	require.NoError(t, w.QueryRow(ctx, "SELECT count() FROM big").Scan(&n))
	assert.Zero(t, n, "nothing of a refused body is inserted")

	got = do(t, ch, httpCall{user: &ch.Writer, query: q("query", "INSERT INTO big FORMAT JSONEachRow"), body: strings.Repeat(row, 400)})
	assert.Equal(t, 200, got.status, "a body under the limit still goes in: "+got.body)
}

// TestPersistenceAcrossRestart checks that data written before a graceful
// restart is there after it.
func TestPersistenceAcrossRestart(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := open(t, ch.DSN(ch.Writer, "default", "compress=lz4"))
	require.NoError(t, w.Exec(ctx, "CREATE DATABASE audit"))
	require.NoError(t, w.Exec(ctx, "CREATE TABLE audit.kept (id UInt64, at DateTime64(9, 'UTC')) ENGINE = MergeTree ORDER BY id"))
	batch, err := w.PrepareBatch(ctx, "INSERT INTO audit.kept")
	require.NoError(t, err)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for i := 0; i < 1000; i++ {
		require.NoError(t, batch.Append(uint64(i), at))
	}
	require.NoError(t, batch.Send())
	require.NoError(t, w.Close())

	require.NoError(t, ch.Restart(ctx))

	r := open(t, ch.ReaderDSN)
	var n, sum uint64
	var maxAt time.Time
	require.NoError(t, r.QueryRow(ctx, "SELECT count(), sum(id), max(at) FROM audit.kept").Scan(&n, &sum, &maxAt))
	assert.Equal(t, uint64(1000), n)
	assert.Equal(t, uint64(999*1000/2), sum)
	assert.True(t, at.Equal(maxAt), "%v", maxAt)
}

// TestGoneClientNotExecuted checks that a request whose client went away
// while it waited for the engine is not executed.
func TestGoneClientNotExecuted(t *testing.T) {
	ch := testenv.StartClickHouse(t, testenv.WithClickHouseArgs("--sessions=1"))
	got := do(t, ch, httpCall{user: &ch.Writer, body: "CREATE TABLE gone (x UInt8) ENGINE = MergeTree ORDER BY x"})
	require.Equal(t, 200, got.status, got.body)

	post := func(ctx context.Context, query, body string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ch.URL+"/?query="+url.QueryEscape(query), strings.NewReader(body))
		if err != nil {
			return err
		}
		req.SetBasicAuth(ch.Writer.Name, ch.Writer.Password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // holds the only session for about three seconds
		defer wg.Done()
		_ = post(context.Background(), "SELECT sleepEachRow(1) FROM numbers(3) FORMAT Null", "")
	}()
	// Wait until the session is busy: a probe then times out in the queue.
	busy := false
	for i := 0; i < 100 && !busy; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		busy = errors.Is(post(ctx, "SELECT 1", ""), context.DeadlineExceeded)
		cancel()
	}
	require.True(t, busy, "the slow query never occupied the session")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := post(ctx, "INSERT INTO gone VALUES", "(1)")
	require.True(t, errors.Is(err, context.DeadlineExceeded), "the insert should still be waiting: %v", err)
	wg.Wait()

	got = do(t, ch, httpCall{user: &ch.Reader, body: "SELECT count() FROM gone"})
	assert.Equal(t, "0\n", got.body, "the abandoned insert must not run")
}

// TestEmptyResultColumns checks that an empty result still tells
// clickhouse-go its columns and types, as a server's header block does.
func TestEmptyResultColumns(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	ctx := new(audit.Params).Int64("n", 5).Context(context.Background())
	for _, compression := range []string{"", "lz4"} {
		c := open(t, ch.DSN(ch.Reader, "default", "compress="+compression))
		rows, err := c.Query(ctx, "SELECT number AS n, toString(number) AS s, map('k', 'v') AS m FROM numbers(10) WHERE number > {n:UInt64} * 100")
		require.NoError(t, err)
		assert.Equal(t, []string{"n", "s", "m"}, rows.Columns())
		types := rows.ColumnTypes()
		require.Len(t, types, 3)
		assert.Equal(t, "UInt64", types[0].DatabaseTypeName())
		assert.Equal(t, "Map(String, String)", types[2].DatabaseTypeName())
		assert.False(t, rows.Next())
		require.NoError(t, rows.Err())
		rows.Close()
	}
	got := do(t, ch, httpCall{user: &ch.Reader, body: "SELECT 1 WHERE 0"})
	assert.Equal(t, "", got.body, "TabSeparated stays empty")
}

// TestGracefulShutdown checks that SIGTERM lets a query in flight finish
// and answer before the server exits.
func TestGracefulShutdown(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	type answer struct {
		status int
		body   string
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, ch.URL+"/", strings.NewReader("SELECT sleepEachRow(1), number FROM numbers(2)"))
		req.SetBasicAuth(ch.Reader.Name, ch.Reader.Password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- answer{status: resp.StatusCode, body: string(b), err: err}
	}()
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, ch.Stop())
	got := <-done
	require.NoError(t, got.err)
	assert.Equal(t, 200, got.status)
	assert.Equal(t, "0\t0\n0\t1\n", got.body)
}

// TestCompressedBodyChecksum checks that a compressed-block body
// (decompress=1) with a damaged block is refused with ClickHouse's
// CHECKSUM_DOESNT_MATCH and inserts nothing, and that the intact body goes in.
func TestCompressedBodyChecksum(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	got := do(t, ch, httpCall{user: &ch.Writer, body: "CREATE TABLE sums (x UInt32) ENGINE = MergeTree ORDER BY x"})
	require.Equal(t, 200, got.status, got.body)
	for _, method := range []compress.Method{compress.LZ4, compress.ZSTD} {
		w := compress.NewWriter(compress.LevelZero, method)
		require.NoError(t, w.Compress([]byte("1\n2\n3\n")))
		damaged := bytes.Clone(w.Data)
		damaged[len(damaged)-1] ^= 0xff
		insert := q("query", "INSERT INTO sums FORMAT TSV", "decompress", "1")
		got = do(t, ch, httpCall{user: &ch.Writer, query: insert, body: string(damaged)})
		assert.Equal(t, "40", got.code, got.body)
		assert.Contains(t, got.body, "(CHECKSUM_DOESNT_MATCH)")
		got = do(t, ch, httpCall{user: &ch.Writer, query: insert, body: string(w.Data)})
		assert.Equal(t, 200, got.status, got.body)
	}
	got = do(t, ch, httpCall{user: &ch.Reader, body: "SELECT count(), sum(x) FROM sums"})
	assert.Equal(t, "6\t12\n", got.body)
}
