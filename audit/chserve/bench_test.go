package chserve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/chdb"
	"github.com/toolgate/toolgate/audit/chserve"
	"github.com/toolgate/toolgate/internal/testenv"
)

// benchRows is the batch size of the insert benchmarks: one exporter-sized
// batch is 1,000-10,000 spans; 100,000 rows shows the steady state.
const benchRows = 100_000

// benchTable is a decisions-shaped table: time, ids, low-cardinality
// dimensions, free text, a number and an attribute map.
const benchTable = `CREATE TABLE IF NOT EXISTS decisions (
	Timestamp DateTime64(9, 'UTC'), TraceId String, SpanId String,
	Agent LowCardinality(String), ToolName LowCardinality(String), Action LowCardinality(String),
	Reason String, Duration UInt64, Attributes Map(LowCardinality(String), String)
) ENGINE = MergeTree ORDER BY (Agent, ToolName, Timestamp)`

var benchColumns = []struct{ name, typ string }{
	{"Timestamp", "DateTime64(9, 'UTC')"}, {"TraceId", "String"}, {"SpanId", "String"},
	{"Agent", "LowCardinality(String)"}, {"ToolName", "LowCardinality(String)"}, {"Action", "LowCardinality(String)"},
	{"Reason", "String"}, {"Duration", "UInt64"}, {"Attributes", "Map(LowCardinality(String), String)"},
}

var benchTools = []string{"bash", "read_file", "write_file", "edit", "grep", "web_fetch", "list_dir"}

func benchRow(i int, base time.Time) []any {
	tool := benchTools[i%len(benchTools)]
	action := "allow"
	if i%5 == 0 {
		action = "deny"
	}
	return []any{base.Add(time.Duration(i) * time.Microsecond), fmt.Sprintf("%032x", i/8), fmt.Sprintf("%016x", i),
		fmt.Sprintf("agent-%d", i%4), tool, action, "policy matched rule " + tool, uint64(1000 + i%977),
		map[string]string{"gen_ai.tool.name": tool, "gate.action": action, "gate.risk": "review"}}
}

// nativeBody encodes rows as clickhouse-go sends a batch: one Native block
// at revision 0, built with clickhouse-go's own encoder.
func nativeBody(b testing.TB, rows int) []byte {
	b.Helper()
	block := proto.NewBlock()
	block.ServerContext = &column.ServerContext{Timezone: time.UTC}
	for _, c := range benchColumns {
		if err := block.AddColumn(c.name, column.Type(c.typ)); err != nil {
			b.Fatal(err)
		}
	}
	base := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for i := 0; i < rows; i++ {
		if err := block.Append(benchRow(i, base)...); err != nil {
			b.Fatal(err)
		}
	}
	var buf chproto.Buffer
	if err := block.Encode(&buf, 0); err != nil {
		b.Fatal(err)
	}
	return buf.Buf
}

// benchEngine opens the engine in-process on a fresh data directory.
func benchEngine(b *testing.B) *chdb.Conn { return benchEngine2(b) }

func benchEngine2(b testing.TB) *chdb.Conn {
	b.Helper()
	p := os.Getenv("TOOLGATE_LIBCHDB")
	if p == "" {
		_, file, _, _ := runtime.Caller(0)
		p = filepath.Join(filepath.Dir(file), "..", "..", ".cache", "chdb", "libchdb.so")
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("TOOLGATE_INTEGRATION") == "1" {
			b.Fatalf("libchdb.so not found at %s (make deps)", p)
		}
		b.Skipf("libchdb.so not found at %s (make deps)", p)
	}
	lib, err := chdb.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := lib.Connect("--path=" + b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.Query([]byte(benchTable), "TabSeparated"); err != nil {
		b.Fatal(err)
	}
	return conn
}

// benchServer serves conn in-process on a loopback port.
func benchServer(b *testing.B, conn *chdb.Conn) *httptest.Server {
	b.Helper()
	srv, err := chserve.New([]chserve.Engine{conn}, chserve.WithAnonymous(true), chserve.WithTempDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	b.Cleanup(ts.Close)
	return ts
}

func postInsert(b *testing.B, base string, body []byte) {
	resp, err := http.Post(base+"/?query="+url.QueryEscape("INSERT INTO decisions FORMAT Native"), "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("insert: %d %s", resp.StatusCode, msg)
	}
}

// BenchmarkInsertDirect is the baseline: the engine inserting a Native batch
// from a file (INSERT … FROM INFILE, the fastest way into chDB; inline data
// fails above ~100 KB).
func BenchmarkInsertDirect(b *testing.B) {
	conn := benchEngine(b)
	body := nativeBody(b, benchRows)
	file := filepath.Join(b.TempDir(), "batch.native")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		b.Fatal(err)
	}
	sql := []byte("INSERT INTO decisions FROM INFILE '" + file + "' FORMAT Native")
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := conn.Query(sql, "TabSeparated"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*benchRows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkInsertServer is the same batch POSTed to the server as
// clickhouse-go sends it: the server's own time per insert (HTTP, spooling,
// the engine) with no client-side encoding.
func BenchmarkInsertServer(b *testing.B) {
	conn := benchEngine(b)
	ts := benchServer(b, conn)
	body := nativeBody(b, benchRows)
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		postInsert(b, ts.URL, body)
	}
	b.ReportMetric(float64(b.N*benchRows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkProtocolCost alternates a direct engine insert and the same batch
// through the server, and reports server time / direct time: what the HTTP
// layer costs (goal < 1.5).
func BenchmarkProtocolCost(b *testing.B) {
	conn := benchEngine(b)
	ts := benchServer(b, conn)
	body := nativeBody(b, benchRows)
	file := filepath.Join(b.TempDir(), "batch.native")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		b.Fatal(err)
	}
	sql := []byte("INSERT INTO decisions FROM INFILE '" + file + "' FORMAT Native")
	var direct, served time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := conn.Query(sql, "TabSeparated"); err != nil {
			b.Fatal(err)
		}
		direct += time.Since(start)
		start = time.Now()
		postInsert(b, ts.URL, body)
		served += time.Since(start)
	}
	b.ReportMetric(served.Seconds()/direct.Seconds(), "server/direct")
	b.ReportMetric(float64(b.N*benchRows)/served.Seconds(), "server-rows/s")
	b.ReportMetric(float64(b.N*benchRows)/direct.Seconds(), "direct-rows/s")
}

// BenchmarkInsertClickHouseGo is end to end: clickhouse-go/v2 appending
// rows to a batch and sending it to the in-process server, per compression.
func BenchmarkInsertClickHouseGo(b *testing.B) {
	for _, compression := range []string{"none", "lz4", "zstd"} {
		b.Run(compression, func(b *testing.B) {
			conn := benchEngine(b)
			ts := benchServer(b, conn)
			opts, err := clickhouse.ParseDSN(ts.URL + "/default?compress=" + compression)
			if err != nil {
				b.Fatal(err)
			}
			c, err := clickhouse.Open(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			base := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				batch, err := c.PrepareBatch(ctx, "INSERT INTO decisions")
				if err != nil {
					b.Fatal(err)
				}
				for j := 0; j < benchRows; j++ {
					if err := batch.Append(benchRow(j, base)...); err != nil {
						b.Fatal(err)
					}
				}
				if err := batch.Send(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*benchRows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkServeLoad1M loads 1,000,000 rows into a separate `auditq serve`
// process with clickhouse-go (lz4, 10 batches of 100,000) and reports the
// server's peak RSS (goal < 1 GiB) and the end-to-end rate. Run with
// -benchtime=1x.
func BenchmarkServeLoad1M(b *testing.B) {
	ch := testenv.StartClickHouse(b)
	ctx := context.Background()
	opts, err := clickhouse.ParseDSN(ch.DSN(ch.Writer, "default", "compress=lz4"))
	if err != nil {
		b.Fatal(err)
	}
	c, err := clickhouse.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec(ctx, benchTable); err != nil {
		b.Fatal(err)
	}
	base := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	startRSS, _ := ch.RSS()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for part := 0; part < 10; part++ {
			batch, err := c.PrepareBatch(ctx, "INSERT INTO decisions")
			if err != nil {
				b.Fatal(err)
			}
			for j := 0; j < benchRows; j++ {
				if err := batch.Append(benchRow(part*benchRows+j, base)...); err != nil {
					b.Fatal(err)
				}
			}
			if err := batch.Send(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	var n uint64
	if err := c.QueryRow(ctx, "SELECT count() FROM decisions").Scan(&n); err != nil {
		b.Fatal(err)
	}
	if n != uint64(b.N*10*benchRows) {
		b.Fatalf("loaded %d rows, want %d", n, b.N*10*benchRows)
	}
	peak, err := ch.PeakRSS()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(startRSS)/(1<<20), "start-RSS-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(b.N*10*benchRows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkQueryLatency measures audit-style queries through the server
// with clickhouse-go over 1,000,000 decision rows: a filtered count with a
// bound parameter, a grouped count, and a page of rows. It reports p50 and
// p95 per query shape (goal: p50 < 100 ms).
func BenchmarkQueryLatency(b *testing.B) {
	conn := benchEngine(b)
	body := nativeBody(b, benchRows)
	file := filepath.Join(b.TempDir(), "batch.native")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if _, err := conn.Query([]byte("INSERT INTO decisions FROM INFILE '"+file+"' FORMAT Native"), "TabSeparated"); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := conn.Query([]byte("OPTIMIZE TABLE decisions FINAL"), "TabSeparated"); err != nil {
		b.Fatal(err)
	}
	ts := benchServer(b, conn)
	opts, err := clickhouse.ParseDSN(ts.URL + "/default?compress=lz4")
	if err != nil {
		b.Fatal(err)
	}
	c, err := clickhouse.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var p audit.Params
	ctx := p.String("tool", "bash").String("action", "deny").Context(context.Background())
	shapes := []struct{ name, sql string }{
		{"count", "SELECT count() FROM decisions WHERE ToolName = {tool:String} AND Action = {action:String}"},
		{"group", "SELECT ToolName, Action, count() FROM decisions GROUP BY ToolName, Action ORDER BY ToolName, Action"},
		{"page", "SELECT Timestamp, TraceId, SpanId, Agent, ToolName, Action, Reason, Duration, Attributes FROM decisions WHERE ToolName = {tool:String} ORDER BY Timestamp DESC LIMIT 100"},
	}
	for _, shape := range shapes {
		b.Run(shape.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				start := time.Now()
				rows, err := c.Query(ctx, shape.sql)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				if err := rows.Err(); err != nil || n == 0 {
					b.Fatalf("rows %d, err %v", n, err)
				}
				rows.Close()
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}
