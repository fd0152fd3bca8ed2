package chserve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/chdb"
)

// clientRevision is the revision clickhouse-go v2.51.0 asks for over HTTP
// (client_protocol_version, conn_http.go).
const clientRevision = proto.DBMS_TCP_PROTOCOL_VERSION

// transcodeRevisions are the revisions that change the output: BlockInfo
// from 1 on, the custom-serialization flag from
// DBMS_MIN_REVISION_WITH_CUSTOM_SERIALIZATION (54454) on.
var transcodeRevisions = []uint64{1, proto.DBMS_MIN_REVISION_WITH_CUSTOM_SERIALIZATION - 1,
	proto.DBMS_MIN_REVISION_WITH_CUSTOM_SERIALIZATION, clientRevision}

// openTestEngine opens chDB in-process, in memory, for the test; nil when
// libchdb.so is missing ($TOOLGATE_LIBCHDB, default .cache/chdb/libchdb.so),
// which fails the test under TOOLGATE_INTEGRATION=1.
func openTestEngine(tb testing.TB) *chdb.Conn {
	tb.Helper()
	p := os.Getenv("TOOLGATE_LIBCHDB")
	if p == "" {
		_, file, _, _ := runtime.Caller(0)
		p = filepath.Join(filepath.Dir(file), "..", "..", ".cache", "chdb", "libchdb.so")
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("TOOLGATE_INTEGRATION") == "1" {
			tb.Fatalf("libchdb.so not found at %s (make deps)", p)
		}
		return nil
	}
	lib, err := chdb.Open(p)
	require.NoError(tb, err)
	conn, err := lib.Connect()
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = conn.Close() })
	return conn
}

// testEngine is openTestEngine that skips the test without libchdb.so.
func testEngine(tb testing.TB) *chdb.Conn {
	tb.Helper()
	conn := openTestEngine(tb)
	if conn == nil {
		tb.Skip("libchdb.so not found (make deps, or set TOOLGATE_LIBCHDB)")
	}
	return conn
}

// engineNative returns the engine's Native output (revision 0) for sql.
func engineNative(tb testing.TB, conn *chdb.Conn, sql string) []byte {
	tb.Helper()
	res, err := conn.Query([]byte(sql), "Native")
	require.NoError(tb, err, sql)
	return res.Data
}

// assertSameAsReencode checks transcodeNative against reencodeNative at
// every revision that matters: handled or not as handled says and, when
// handled, the same bytes (also through nativeForClient).
func assertSameAsReencode(t *testing.T, data []byte, handled bool, msg string) {
	t.Helper()
	for _, rev := range transcodeRevisions {
		got, err := transcodeNative(data, rev)
		if !handled {
			require.Error(t, err, "%s: revision %d", msg, rev)
			require.ErrorIs(t, err, errNotHandled, msg)
			continue
		}
		require.NoError(t, err, "%s: revision %d", msg, rev)
		want, err := reencodeNative(data, rev)
		require.NoError(t, err, "%s: revision %d", msg, rev)
		requireSameBytes(t, want, got, "%s: revision %d", msg, rev)
		fb, err := nativeForClient(data, rev)
		require.NoError(t, err, msg)
		requireSameBytes(t, want, fb, "%s: nativeForClient at revision %d", msg, rev)
	}
}

// requireSameBytes fails with the first differing offset rather than two
// hex dumps.
func requireSameBytes(t require.TestingT, want, got []byte, msgAndArgs ...any) {
	if bytes.Equal(want, got) {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	window := func(b []byte) []byte { return b[max(i-16, 0):min(i+16, len(b))] }
	require.Fail(t, fmt.Sprintf("bytes differ at offset %d (lengths want %d, got %d)\nwant …% x…\ngot  …% x…",
		i, len(want), len(got), window(want), window(got)), msgAndArgs...)
}

// TestParseNativeType checks the type parser on the spellings the engine
// writes and on the ones it must leave to reencodeNative.
func TestParseNativeType(t *testing.T) {
	for _, tc := range []struct {
		typ      string
		width    uint64 // kindFixed
		kind     nativeKind
		prefixes int
	}{
		{typ: "UInt8", width: 1}, {typ: "Bool", width: 1}, {typ: "BFloat16", width: 2}, {typ: "Date32", width: 4},
		{typ: "Int256", width: 32}, {typ: "UUID", width: 16}, {typ: "IPv6", width: 16},
		{typ: "DateTime", width: 4}, {typ: "DateTime('Asia/Kolkata')", width: 4},
		{typ: "DateTime64(9)", width: 8}, {typ: "DateTime64(0, 'UTC')", width: 8},
		{typ: "Decimal(9, 2)", width: 4}, {typ: "Decimal(10, 0)", width: 8}, {typ: "Decimal(38, 38)", width: 16}, {typ: "Decimal(76, 3)", width: 32},
		{typ: "Decimal32(3)", width: 4}, {typ: "Decimal256(76)", width: 32},
		{typ: "Enum8('a' = 1, 'b,c' = -2, 'it\\'s (x)' = 127)", width: 1}, {typ: "Enum16('x' = -32768, 'y' = 32767)", width: 2},
		{typ: "FixedString(1)", width: 1}, {typ: "FixedString(16)", width: 16},
		{typ: "String", kind: kindString},
		{typ: "Nullable(String)", kind: kindNullable}, {typ: "Nullable(Decimal(9, 2))", kind: kindNullable},
		{typ: "Array(Array(String))", kind: kindArray},
		{typ: "Array(LowCardinality(String))", kind: kindArray, prefixes: 1},
		{typ: "LowCardinality(Nullable(String))", kind: kindLowCardinality, prefixes: 1},
		{typ: "Map(LowCardinality(String), Array(LowCardinality(Nullable(FixedString(2)))))", kind: kindMap, prefixes: 2},
		{typ: "Tuple(a String, `from` LowCardinality(String), `x, y` Map(String, LowCardinality(UInt64)))", kind: kindTuple, prefixes: 2},
		{typ: "Tuple(Enum8('a b' = 1), DateTime64(3, 'UTC'))", kind: kindTuple},
	} {
		nt, err := parseNativeType(tc.typ, 0)
		require.NoError(t, err, tc.typ)
		assert.Equal(t, tc.kind, nt.kind, tc.typ)
		assert.Equal(t, tc.width, nt.width, tc.typ)
		assert.Equal(t, tc.prefixes, nt.prefixes, tc.typ)
	}
	for _, typ := range []string{
		"", "Boolean", "Nothing", "Nullable(Nothing)", "Variant(String, UInt64)", "Dynamic", "JSON", "Object('json')",
		"AggregateFunction(sum, UInt64)", "SimpleAggregateFunction(sum, UInt64)", "Nested(a String)", "Time", "Time64(3)",
		"IntervalDay", "Point", "Ring", "Tuple()", "Array()", "Map(String)", "Nullable(Array(String))", "LowCardinality(Array(String))",
		"Nullable(LowCardinality(String))", "FixedString(0)", "FixedString(016)", "FixedString(x)", "Decimal(0, 0)", "Decimal(9, 10)",
		"Decimal(77, 1)", "Decimal(9,2)", "Decimal( 9, 2)", "Decimal(9, 2 )", "Decimal(9,  2)", "DateTime64(10)", "DateTime64(-1)",
		"DateTime(UTC)", "DateTime('UTC', 'x')", "Enum8('a' = 128)", "Enum8('a' = -129)", "Enum8('a'=1)", "Enum8(a = 1)", "Enum8('a = 1)",
		"Enum8()", "String(1)", "UInt8()", "Array(String", "Array(String))", "Array(String)x", "(String)", "Array(String)(x)",
		"Map(String, UInt64))(", "Tuple(a String, b)", strings.Repeat("Array(", 40) + "UInt8" + strings.Repeat(")", 40),
	} {
		_, err := parseNativeType(typ, 0)
		assert.Error(t, err, "%q", typ)
	}
}

// TestTranscodeLayouts runs the layouts the random property test reaches
// rarely or not at all through the real engine: every LowCardinality key
// width it can make, LowCardinality and Map data for no elements, long
// strings (two- and three-byte lengths), several state prefixes in one
// column, Nested and named tuples, several blocks; and types that must be
// left to reencodeNative.
func TestTranscodeLayouts(t *testing.T) {
	conn := testEngine(t)
	for _, tc := range []struct {
		name, sql string
		handled   bool
	}{
		{"LowCardinality UInt8 keys", "SELECT toLowCardinality(toString(number % 200)) AS c FROM numbers(1000)", true},
		{"LowCardinality UInt16 keys", "SELECT toLowCardinality(toString(number)) AS c FROM numbers(1000)", true},
		{"LowCardinality UInt32 keys", "SELECT toLowCardinality(toString(number)) AS c FROM numbers(70000) SETTINGS max_block_size = 100000", true},
		{"LowCardinality(Nullable) all NULL", "SELECT CAST(NULL AS LowCardinality(Nullable(String))) AS c FROM numbers(5)", true},
		{"LowCardinality(Nullable) mixed", "SELECT CAST(if(number % 3 = 0, NULL, toString(number % 5)) AS LowCardinality(Nullable(String))) AS c FROM numbers(50)", true},
		{"LowCardinality of numbers", "SELECT CAST(number % 7 AS LowCardinality(UInt64)) AS a, CAST(number AS LowCardinality(Nullable(Int128))) AS b FROM numbers(300) SETTINGS allow_suspicious_low_cardinality_types = 1", true},
		{"empty arrays of LowCardinality", "SELECT CAST([] AS Array(LowCardinality(String))) AS c FROM numbers(3)", true},
		{"empty maps of LowCardinality", "SELECT CAST(map() AS Map(LowCardinality(String), LowCardinality(String))) AS c FROM numbers(3)", true},
		{"maps of LowCardinality", "SELECT CAST(map('k' || toString(number % 3), toString(number)) AS Map(LowCardinality(String), LowCardinality(String))) AS c FROM numbers(100)", true},
		{"several prefixes in one column", "SELECT CAST((toString(number), [toString(number % 2)], map(toString(number % 3), [toString(number)])) AS " +
			"Tuple(a LowCardinality(String), b Array(LowCardinality(String)), c Map(LowCardinality(String), Array(LowCardinality(Nullable(String)))))) AS c FROM numbers(20)", true},
		{"long strings", "SELECT repeat('x', number * 97) AS s, toFixedString('ab', 2) AS f FROM numbers(200)", true},
		{"three-byte lengths", "SELECT repeat('y', 20000 + number) AS s FROM numbers(3)", true},
		{"nested, flattened", "SELECT ev.n, ev.v FROM (SELECT CAST([('a', 1), ('b', 2)] AS Nested(n String, v UInt8)) AS ev FROM numbers(3))", true},
		{"named tuples, reserved names", "SELECT CAST(('a', 1) AS Tuple(`values` String, `from` UInt8)) AS c", true},
		{"several blocks", "SELECT number AS n, toString(number) AS s, [number] AS a FROM numbers(100) SETTINGS max_block_size = 7", true},
		{"the audit schema's types", "SELECT toUInt64(1) AS id, now64(9) AS ts, now() AS d, toLowCardinality('tool') AS lc, CAST(NULL AS Nullable(String)) AS n, true AS b, " +
			"CAST(map('k', 'v') AS Map(LowCardinality(String), String)) AS m, CAST(('t', 7) AS Tuple(String, UInt8)) AS tup, " +
			"CAST('deny' AS Enum8('allow' = 1, 'deny' = 2)) AS e, 1.5 AS f, generateUUIDv4() AS u, toDecimal64(3.25, 4) AS dec", true},

		{"no rows: no output", "SELECT toString(number) AS s FROM numbers(10) WHERE number > 100", true},

		{"Nested", "SELECT CAST([('a', 1), ('b', 2)] AS Nested(n String, v UInt8)) AS ev FROM numbers(3)", false},
		{"Nullable(Nothing)", "SELECT NULL AS c", false},
		{"Variant", "SELECT CAST(number AS Variant(String, UInt64)) AS c FROM numbers(3)", false},
		{"Dynamic", "SELECT CAST(number AS Dynamic) AS c FROM numbers(3)", false},
		{"JSON", `SELECT '{"a":1}'::JSON AS c`, false},
		{"AggregateFunction", "SELECT sumState(number) AS c FROM numbers(3)", false},
		{"SimpleAggregateFunction", "SELECT CAST(number AS SimpleAggregateFunction(sum, UInt64)) AS c FROM numbers(3)", false},
		{"Interval", "SELECT toIntervalDay(number) AS c FROM numbers(3)", false},
		{"Time", "SELECT CAST(number AS Time) AS c FROM numbers(3)", false},
		{"Point", "SELECT (1.5, 2.5)::Point AS c", false},
		{"an unsupported column after supported ones", "SELECT number AS a, toString(number) AS b, toIntervalDay(number) AS c FROM numbers(3)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := engineNative(t, conn, tc.sql)
			assertSameAsReencode(t, data, tc.handled, tc.name)
		})
	}
}

// TestTranscodeBlockWithoutRows: a block without rows, as chDB writes
// one (for an empty result's header, emptyNativeHeader, and some reads
// over several parts), carries state prefixes that reencodeNative drops;
// transcodeNative leaves it, and so the whole result, to reencodeNative.
func TestTranscodeBlockWithoutRows(t *testing.T) {
	rows := clickhouseGoSeeds(t)[1]
	empty := []byte{1, 0, 1, 'x'}
	empty = append(empty, byte(len("Array(LowCardinality(String))")))
	empty = append(empty, "Array(LowCardinality(String))"...)
	empty = append(empty, 1, 0, 0, 0, 0, 0, 0, 0) // the key version
	for _, data := range [][]byte{empty, append(bytes.Clone(rows), empty...)} {
		fast, err := transcodeNative(data, clientRevision)
		require.NoError(t, err)
		want, err := reencodeNative(data, clientRevision)
		require.NoError(t, err)
		requireSameBytes(t, want, fast)
		got, err := nativeForClient(data, clientRevision)
		require.NoError(t, err)
		requireSameBytes(t, want, got)
	}
}

// TestTranscodeBeyondReencode: types clickhouse-go's decoder refuses but
// whose layout is one transcodeNative knows (Map keys that are not Go map
// keys; tuple element names with spaces, which clickhouse-go splits at the
// space) are now sent, BlockInfo and flag inserted and the rest copied,
// instead of being refused; clients other than clickhouse-go can read them.
func TestTranscodeBeyondReencode(t *testing.T) {
	conn := testEngine(t)
	for _, sql := range []string{
		"SELECT map(toIPv4('1.2.3.4'), 'a') AS m",
		"SELECT map(toIPv6('::1'), 'a') AS m",
		"SELECT map([1], 'a') AS m",
		"SELECT map((1, 'x'), 'a') AS m",
		"SELECT CAST(('a', 1) AS Tuple(`x y` String, b UInt8)) AS c",
	} {
		data := engineNative(t, conn, sql)
		_, err := reencodeNative(data, clientRevision)
		require.Error(t, err, "clickhouse-go now reads %s: move it to TestTranscodeLayouts", sql)
		got, err := transcodeNative(data, clientRevision)
		require.NoError(t, err, sql)
		// One block, one column: BlockInfo, the header, name and type, the
		// flag, the data.
		tr := transcoder{src: data}
		for _, read := range []func() error{
			func() error { _, err := tr.uvarint(); return err }, func() error { _, err := tr.uvarint(); return err },
			func() error { _, err := tr.str(); return err }, func() error { _, err := tr.str(); return err },
		} {
			require.NoError(t, read())
		}
		want := slices.Concat(blockInfo, data[:tr.pos], []byte{0}, data[tr.pos:])
		requireSameBytes(t, want, got, sql)
	}
}

// TestTranscodeKeyWidths checks the LowCardinality key widths the engine
// made in TestTranscodeLayouts, so that a change of its choice does not
// silently leave a width untested.
func TestTranscodeKeyWidths(t *testing.T) {
	conn := testEngine(t)
	for _, tc := range []struct {
		distinct int
		want     uint64
	}{{200, 0}, {1000, 1}, {70000, 2}} {
		data := engineNative(t, conn, fmt.Sprintf("SELECT toLowCardinality(toString(number %% %d)) AS c FROM numbers(%d) SETTINGS max_block_size = 100000", tc.distinct, tc.distinct))
		// cols, rows (3 bytes for 70000), name, type, prefix, then the word.
		tr := transcoder{src: data}
		_, err := tr.uvarint()
		require.NoError(t, err)
		_, err = tr.uvarint()
		require.NoError(t, err)
		for range 2 {
			_, err = tr.str()
			require.NoError(t, err)
		}
		require.NoError(t, tr.statePrefixes(1))
		st, err := tr.readUInt64()
		require.NoError(t, err)
		assert.Equal(t, uint64(lcNativeFlags)|tc.want, st, "%d distinct values", tc.distinct)
	}
}

// TestTranscodeMalformed: every truncation of engine-shaped data, and
// bytes flipped in it, are either transcoded like reencodeNative does or
// not handled, and never panic; revision 0 and empty data pass unchanged.
func TestTranscodeMalformed(t *testing.T) {
	data := clickhouseGoSeeds(t)[0]
	out, err := transcodeNative(data, 0)
	require.NoError(t, err)
	assert.Equal(t, data, out)
	out, err = transcodeNative(nil, clientRevision)
	require.NoError(t, err)
	assert.Empty(t, out)
	for i := 1; i < len(data); i++ {
		_, err := transcodeNative(data[:i], clientRevision)
		require.ErrorIs(t, err, errNotHandled, "cut at %d of %d", i, len(data))
	}
	for i := range data {
		for _, b := range []byte{0, 1, 0x7f, 0x80, 0xff} {
			mut := bytes.Clone(data)
			mut[i] = b
			compareWithReencode(t, mut, clientRevision)
		}
	}
}

// compareWithReencode is the fuzz target's check: transcodeNative either
// does not handle data or gives reencodeNative's bytes, when that succeeds.
func compareWithReencode(t *testing.T, data []byte, revision uint64) {
	t.Helper()
	got, err := transcodeNative(data, revision)
	if err != nil {
		require.ErrorIs(t, err, errNotHandled)
		return
	}
	// Only now is reencodeNative run: transcodeNative checked every
	// length against the data, so what the old path allocates is bounded.
	want, err := func() (b []byte, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("reencodeNative panicked: %v", r)
			}
		}()
		return reencodeNative(data, revision)
	}()
	if err != nil {
		// The old path refuses something the new one copies (e.g. a time
		// zone Go cannot load): nothing to compare.
		t.Logf("reencodeNative: %v", err)
		return
	}
	requireSameBytes(t, want, got, "revision %d, input % x", revision, data)
}

// clickhouseGoSeeds are revision-0 Native results built with clickhouse-go's
// encoder (the same layout as chDB's), for tests that run without the
// engine: one block of most supported types, and two one-column blocks.
func clickhouseGoSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	sc := &column.ServerContext{Timezone: time.UTC}
	build := func(cols []struct{ name, typ string }, rows ...[]any) []byte {
		block := proto.Block{ServerContext: sc}
		for _, c := range cols {
			require.NoError(tb, block.AddColumn(c.name, column.Type(c.typ)))
		}
		for _, r := range rows {
			require.NoError(tb, block.Append(r...))
		}
		var buf chproto.Buffer
		require.NoError(tb, block.Encode(&buf, 0))
		return buf.Buf
	}
	ts := time.Date(2026, 11, 29, 1, 2, 3, 4, time.UTC)
	s := "x"
	wide := build([]struct{ name, typ string }{
		{"s", "String"}, {"lc", "LowCardinality(String)"}, {"nlc", "LowCardinality(Nullable(String))"},
		{"ts", "DateTime64(9, 'UTC')"}, {"u", "UInt64"}, {"a", "Array(String)"},
		{"m", "Map(LowCardinality(String), String)"}, {"n", "Nullable(Int32)"}, {"t", "Tuple(a String, b UInt8)"},
		{"e", "Enum8('allow' = 1, 'deny' = 2)"}, {"f", "FixedString(2)"}, {"d", "Decimal(18, 4)"},
	},
		[]any{"hello", "bash", &s, ts, uint64(1), []string{"a", "b"}, map[string]string{"k": "v"}, int32(-1), []any{"t", uint8(7)}, "allow", "ab", "1.5"},
		[]any{strings.Repeat("z", 200), "grep", nil, ts, uint64(1 << 40), []string{}, map[string]string{}, nil, []any{"", uint8(0)}, "deny", "cd", "-2"},
	)
	narrow := build([]struct{ name, typ string }{{"x", "Array(LowCardinality(String))"}}, []any{[]string{"p", "q"}})
	return [][]byte{wide, append(bytes.Clone(narrow), narrow...)}
}

// fuzzQueries are the engine results FuzzTranscodeNative starts from.
var fuzzQueries = []string{
	"SELECT toString(number) AS s, toLowCardinality(toString(number % 3)) AS lc, now64(9) AS ts, number AS u, [toString(number)] AS a, " +
		"CAST(map('k', 'v') AS Map(LowCardinality(String), String)) AS m FROM numbers(5) SETTINGS max_block_size = 2",
	"SELECT CAST(if(number % 2 = 0, NULL, 'x') AS LowCardinality(Nullable(String))) AS a, CAST(number AS Nullable(UInt8)) AS b, " +
		"CAST((toString(number), number) AS Tuple(a String, b UInt64)) AS t FROM numbers(3)",
	"SELECT CAST('b' AS Enum8('a' = 1, 'b' = 2)) AS e, toFixedString('ab', 2) AS f, toDecimal32(1.5, 2) AS d, toDate(0) AS dt, " +
		"toUUID('00000000-0000-0000-0000-000000000001') AS u, toIPv4('1.2.3.4') AS ip, toInt256(-1) AS i, true AS b, toBFloat16(1.5) AS bf",
	"SELECT [[toLowCardinality('a')], []] AS aa, CAST(map(1, [toString(1)]) AS Map(UInt8, Array(String))) AS m",
	"SELECT CAST(number AS Variant(String, UInt64)) AS v FROM numbers(2)",
}

// FuzzTranscodeNative: on any input transcodeNative never panics, and
// whenever it and reencodeNative both succeed they give the same bytes.
// Seeds: clickhouse-go-built blocks, and with the engine its own outputs.
func FuzzTranscodeNative(f *testing.F) {
	seeds := clickhouseGoSeeds(f)
	if conn := openTestEngine(f); conn != nil {
		for _, q := range fuzzQueries {
			seeds = append(seeds, engineNative(f, conn, q))
		}
	}
	for _, s := range seeds {
		f.Add(s, uint64(clientRevision))
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, revision uint64) {
		compareWithReencode(t, data, revision)
	})
}

// benchQuery is an export-shaped result: ids, a low-cardinality dimension,
// nanosecond timestamps, a number, tags and an attribute map.
const benchQuery = `SELECT
	concat('trace-', hex(cityHash64(number))) AS TraceId,
	toLowCardinality(concat('tool-', toString(number % 7))) AS Tool,
	toDateTime64('2026-11-29 00:00:00', 9) + toIntervalMicrosecond(number) AS Timestamp,
	number * 7 AS Duration,
	arrayMap(i -> concat('tag-', toString((number + i) % 13)), range(number % 4)) AS Tags,
	CAST(map('gen_ai.tool.name', concat('tool-', toString(number % 7)), 'gate.action', if(number % 5 = 0, 'deny', 'allow'),
		'gate.reason', concat('policy matched rule ', toString(number % 97))) AS Map(LowCardinality(String), String)) AS Attributes
FROM numbers(20000)`

// BenchmarkReencodeNative compares the full decode and encode
// (reencodeNative) with the byte copy (transcodeNative) on a 20,000-row
// result from the engine, at clickhouse-go's revision.
func BenchmarkReencodeNative(b *testing.B) {
	conn := testEngine(b)
	data := engineNative(b, conn, benchQuery)
	want, err := reencodeNative(data, clientRevision)
	require.NoError(b, err)
	got, err := transcodeNative(data, clientRevision)
	require.NoError(b, err)
	requireSameBytes(b, want, got)
	for _, bc := range []struct {
		name string
		fn   func([]byte, uint64) ([]byte, error)
	}{{"old=reencodeNative", reencodeNative}, {"new=transcodeNative", transcodeNative}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.fn(data, clientRevision); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNotHandledIsWrapped: the reasons transcodeNative gives are all
// errNotHandled, with what went wrong in the message.
func TestNotHandledIsWrapped(t *testing.T) {
	data := clickhouseGoSeeds(t)[1]
	_, err := transcodeNative(data[:len(data)-1], clientRevision)
	require.ErrorIs(t, err, errNotHandled)
	assert.True(t, errors.Is(err, errShort), "%v", err)
	assert.Contains(t, err.Error(), "block 1")
}

// TestServedNative: the server answers a Native read at a client revision
// with reencodeNative's bytes, streamed and buffered (an HTTP-compressed
// answer is buffered), through the fast path and, for a type it does not
// handle, the fallback.
func TestServedNative(t *testing.T) {
	conn := testEngine(t)
	srv, err := New([]Engine{conn}, WithAnonymous(true), WithTempDir(t.TempDir()))
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for _, sql := range []string{
		"SELECT number AS n, toString(number) AS s, toLowCardinality(toString(number % 3)) AS lc, [toDateTime64(number, 9)] AS a FROM numbers(10)",
		"SELECT number AS n, toIntervalDay(number) AS i FROM numbers(10)",
	} {
		want, err := reencodeNative(engineNative(t, conn, sql), clientRevision)
		require.NoError(t, err)
		for _, gzip := range []bool{false, true} {
			q := url.Values{"query": {sql + " FORMAT Native"}, "client_protocol_version": {fmt.Sprint(clientRevision)}}
			if gzip {
				q.Set("enable_http_compression", "1")
			}
			// The transport asks for gzip and decompresses the answer.
			resp, err := ts.Client().Get(ts.URL + "/?" + q.Encode())
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			require.Equal(t, gzip, resp.Uncompressed, "gzip answer (buffered)")
			requireSameBytes(t, want, body, "%s (gzip %v)", sql, gzip)
		}
	}
}
