package chserve_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testenv"
)

// The statements below are what the collector-contrib clickhouseexporter
// (v0.161.0, exporter/clickhouseexporter/internal/sqltemplates) runs with
// create_schema: true, rendered for database "otel", engine MergeTree() and
// a 72h TTL. The exporter's own end-to-end test lives in a separate module;
// this one checks that the server accepts its DDL and batch shape.
var exporterDDL = []string{
	`CREATE DATABASE IF NOT EXISTS "otel"`,
	`CREATE TABLE IF NOT EXISTS "otel"."otel_traces"  (
    Timestamp DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    TraceState String CODEC(ZSTD(1)),
    SpanName LowCardinality(String) CODEC(ZSTD(1)),
    SpanKind LowCardinality(String) CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion String CODEC(ZSTD(1)),
    SpanAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    Duration UInt64 CODEC(T64, ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1)),
    StatusMessage String CODEC(ZSTD(1)),
    Events Nested (
        Timestamp DateTime64(9),
        Name LowCardinality(String),
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    Links Nested (
        TraceId String,
        SpanId String,
        TraceState String,
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_res_attr_key mapKeys(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_res_attr_value mapValues(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_span_attr_key mapKeys(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_span_attr_value mapValues(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_duration Duration TYPE minmax GRANULARITY 1
) ENGINE = MergeTree()
PARTITION BY toDate(Timestamp)
ORDER BY (ServiceName, SpanName, toDateTime(Timestamp))
TTL toDateTime(Timestamp) + toIntervalHour(72)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1`,
	`CREATE TABLE IF NOT EXISTS "otel"."otel_traces_trace_id_ts"  (
     TraceId String CODEC(ZSTD(1)),
     Start DateTime CODEC(Delta, ZSTD(1)),
     End DateTime CODEC(Delta, ZSTD(1)),
     INDEX idx_trace_id TraceId TYPE bloom_filter(0.01) GRANULARITY 1
) ENGINE = MergeTree()
PARTITION BY toDate(Start)
ORDER BY (TraceId, Start)
TTL toDateTime(Start) + toIntervalHour(72)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1`,
	`CREATE MATERIALIZED VIEW IF NOT EXISTS "otel"."otel_traces_trace_id_ts_mv"
TO "otel"."otel_traces_trace_id_ts"
AS SELECT
	TraceId,
	min(Timestamp) as Start,
	max(Timestamp) as End
FROM "otel"."otel_traces"
WHERE TraceId != ''
GROUP BY TraceId`,
	`CREATE TABLE IF NOT EXISTS "otel"."otel_logs"  (
    Timestamp DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    TimestampTime DateTime DEFAULT toDateTime(Timestamp),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    TraceFlags UInt8,
    SeverityText LowCardinality(String) CODEC(ZSTD(1)),
    SeverityNumber UInt8,
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    Body String CODEC(ZSTD(1)),
    ResourceSchemaUrl LowCardinality(String) CODEC(ZSTD(1)),
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeSchemaUrl LowCardinality(String) CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion LowCardinality(String) CODEC(ZSTD(1)),
    ScopeAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    LogAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_body Body TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 8
) ENGINE = MergeTree()
PARTITION BY toDate(TimestampTime)
PRIMARY KEY (ServiceName, TimestampTime)
ORDER BY (ServiceName, TimestampTime, Timestamp)
TTL TimestampTime + toIntervalHour(72)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1`,
}

const exporterTracesInsert = `INSERT INTO "otel"."otel_traces" (
    Timestamp, TraceId, SpanId, ParentSpanId, TraceState, SpanName, SpanKind, ServiceName,
    ResourceAttributes, ScopeName, ScopeVersion, SpanAttributes, Duration, StatusCode, StatusMessage,
    Events.Timestamp, Events.Name, Events.Attributes,
    Links.TraceId, Links.SpanId, Links.TraceState, Links.Attributes
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// TestExporterShape runs the exporter's schema and its batch inserts the way
// the exporter sends them (async_insert=true, compress=lz4, ten concurrent
// connections), with concurrent queries, and checks the materialized view.
func TestExporterShape(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	opts, err := clickhouse.ParseDSN(ch.DSN(ch.Writer, "default", "async_insert=true&compress=lz4"))
	require.NoError(t, err)
	opts.MaxOpenConns = 10
	w, err := clickhouse.Open(opts)
	require.NoError(t, err)
	defer w.Close()
	v, err := w.ServerVersion()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v.Version.Major, uint64(24))
	for _, ddl := range exporterDDL {
		require.NoError(t, w.Exec(ctx, ddl), ddl[:min(len(ddl), 60)])
	}
	for _, ddl := range exporterDDL { // create_schema runs on every start
		require.NoError(t, w.Exec(ctx, ddl), ddl[:min(len(ddl), 60)])
	}

	r := open(t, ch.DSN(ch.Reader, "otel", "compress=lz4"))
	const workers, batches, perBatch = 10, 5, 400
	var wg sync.WaitGroup
	errs := make(chan error, workers*batches+workers)
	base := time.Now().UTC().Truncate(time.Second)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				batch, err := w.PrepareBatch(ctx, exporterTracesInsert)
				if err != nil {
					errs <- fmt.Errorf("prepare: %w", err)
					return
				}
				for i := 0; i < perBatch; i++ {
					trace := fmt.Sprintf("%032x", g*1000+b)
					ts := base.Add(time.Duration(i) * time.Millisecond)
					if err := batch.Append(ts, trace, fmt.Sprintf("%016x", i), "", "", "execute_tool bash", "Internal", "agent",
						map[string]string{"service.name": "agent"}, "toolgate", "v0", map[string]string{"gen_ai.tool.name": "bash", "gate.action": "allow"},
						uint64(1500), "Ok", "",
						[]time.Time{ts}, []string{"gate.decision"}, []map[string]string{{"gate.reason": "policy"}},
						[]string{}, []string{}, []string{}, []map[string]string{}); err != nil {
						errs <- fmt.Errorf("append: %w", err)
						return
					}
				}
				if err := batch.Send(); err != nil {
					errs <- fmt.Errorf("send: %w", err)
					return
				}
			}
		}(g)
	}
	// Queries run while the inserts do.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			var n uint64
			if err := r.QueryRow(ctx, "SELECT count() FROM otel_traces WHERE SpanAttributes['gen_ai.tool.name'] = 'bash'").Scan(&n); err != nil {
				errs <- fmt.Errorf("query: %w", err)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	var spans, traces uint64
	require.NoError(t, r.QueryRow(ctx, "SELECT count() FROM otel_traces").Scan(&spans))
	assert.Equal(t, uint64(workers*batches*perBatch), spans)
	require.NoError(t, r.QueryRow(ctx, "SELECT uniqExact(TraceId) FROM otel_traces_trace_id_ts").Scan(&traces))
	assert.Equal(t, uint64(workers*batches), traces, "the materialized view saw every batch")
	var names []string
	require.NoError(t, r.QueryRow(ctx, "SELECT Events.Name FROM otel_traces LIMIT 1").Scan(&names))
	assert.Equal(t, []string{"gate.decision"}, names)

	rows, err := r.Query(ctx, "SHOW TABLES FROM otel")
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	assert.Equal(t, "otel_logs,otel_traces,otel_traces_trace_id_ts,otel_traces_trace_id_ts_mv", strings.Join(tables, ","))
}
