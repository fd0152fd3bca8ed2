package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Migration is one versioned schema step. Every statement is idempotent
// (IF NOT EXISTS, or an insert whose duplicates the table collapses), so a
// step interrupted half-way is simply run again.
type Migration struct {
	Version    int
	Name       string
	Statements []string
}

// Checksum identifies the generated SQL of m (hex SHA-256 over its
// statements, NUL-separated). schema_migrations records the checksum of the
// step generated with the default options (see releasedChecksums),
// so that what is recorded does not depend on --database, --cluster or
// --retention.
func (m Migration) Checksum() string {
	h := sha256.New()
	for _, s := range m.Statements {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Migrations returns the schema steps in version order, generated for the
// options (database, traces table, cluster, retention).
//
// Order problem and its answer: the materialized view reads otel_traces,
// which the collector's exporter creates on its first start
// (create_schema: true). So step 1 creates otel_traces IF NOT EXISTS with
// the exporter's own DDL (contrib v0.161.0, internal/sqltemplates/
// traces_table.sql): whichever runs first, migrations or exporter, the other
// finds a compatible table and leaves it alone. Step 3 creates the view and
// then backfills gate_decisions from the spans already in otel_traces, so
// decisions written before the view existed are not lost; rows that both
// the view and the backfill copy are collapsed by the table's deduplication.
//
// Each step's SQL is fixed once released (its checksum is recorded):
// steps 2 and 3 create the table and view with the columns of version 2
// (columnsAt), and later steps that add columns are upgrades (see
// config.upgrade): ALTER TABLE … ADD COLUMN IF NOT EXISTS, the view's new
// query (ALTER TABLE … MODIFY QUERY, which swaps it without a gap in
// ingestion), and a repair of the rows already copied without the new
// columns. A fresh install runs every step in order and ends with the same
// table as an upgraded one.
func Migrations(opts ...Option) ([]Migration, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return c.migrations(), nil
}

func (c config) migrations() []Migration {
	return []Migration{
		{1, "otel_traces", []string{c.tracesDDL()}},
		{2, "gate_decisions", []string{c.decisionsDDL(columnsAt(2))}},
		{3, "gate_decisions_mv", []string{c.viewDDL(columnsAt(3)), c.backfill(columnsAt(3))}},
		c.upgrade(4, "verdicts_rewrites"),
		c.stageDefaults(c.upgrade(5, "stage")),
		c.upgrade(6, "rule"),
		c.upgrade(7, "calls"),
		c.chainIndexes(c.upgrade(8, "chain")),
		c.approvalIndex(c.upgrade(9, "approvals")),
		c.rollup(),
		c.daily(),
		c.arrivals(),
	}
}

// approvalIndex adds to migration 9 (last, after its ADD COLUMN) a skip
// index on ApprovalId: `auditq decisions --approval-id` finds the
// decisions of one approval request (the pending ask and the resumed
// call) without reading every granule. It indexes the parts written from
// then on (older rows hold no approval ID).
func (c config) approvalIndex(m Migration) Migration {
	index := "ALTER TABLE " + c.table(DecisionsTable) + c.onCluster() +
		"\n    ADD INDEX IF NOT EXISTS idx_approval_id ApprovalId TYPE bloom_filter(0.01) GRANULARITY 1"
	m.Statements = append(m.Statements, index)
	return m
}

// chainIndexes adds to migration 8 (last, after its ADD COLUMN) the skip
// indexes `auditq verify` reads chains by: bloom filters on ChainId (a
// chain's rows, wherever its run's days fall) and RunId (--run). They
// index the parts written from then on (older rows hold no chain).
func (c config) chainIndexes(m Migration) Migration {
	index := "ALTER TABLE " + c.table(DecisionsTable) + c.onCluster() +
		"\n    ADD INDEX IF NOT EXISTS idx_chain_id ChainId TYPE bloom_filter(0.001) GRANULARITY 1," +
		"\n    ADD INDEX IF NOT EXISTS idx_run_id RunId TYPE bloom_filter(0.01) GRANULARITY 1"
	m.Statements = append(m.Statements, index)
	return m
}

// stageDefaults adds to migration 5 (after its ADD COLUMN, before the
// view's new query) the new DEFAULT of the derived verdict columns: a call
// refused before the gate has no verdict (verdictPart(i, true)). Rows
// stored with the columns keep their values (no call before version 5
// was refused before the gate); rows older than version 4 compute them,
// with Stage reading "gate", as before.
func (c config) stageDefaults(m Migration) Migration {
	mods := make([]string, len(verdictPartColumns))
	for i, vc := range verdictPartColumns {
		mods[i] = "MODIFY COLUMN " + vc.name + " DEFAULT " + verdictPart(vc.member, true)
	}
	modify := "ALTER TABLE " + c.table(DecisionsTable) + c.onCluster() + "\n    " + strings.Join(mods, ",\n    ")
	m.Statements = append([]string{m.Statements[0], modify}, m.Statements[1:]...)
	return m
}

func (c config) databaseDDL() string {
	return "CREATE DATABASE IF NOT EXISTS `" + c.database + "`" + c.onCluster()
}

func (c config) migrationsDDL() string {
	return "CREATE TABLE IF NOT EXISTS " + c.table(MigrationsTable) + c.onCluster() + ` (
    Version UInt32,
    Name String,
    Checksum String,
    AppliedAt DateTime64(3) DEFAULT now64(3)
) ENGINE = ` + c.engine("ReplacingMergeTree", "AppliedAt") + `
ORDER BY Version`
}

// tracesDDL is the exporter's otel_traces table (contrib v0.161.0), so that
// the exporter's own CREATE TABLE IF NOT EXISTS finds it compatible.
func (c config) tracesDDL() string {
	return "CREATE TABLE IF NOT EXISTS " + c.table(c.tracesTable) + c.onCluster() + ` (
    Timestamp DateTime64(9) CODEC(Delta, ZSTD(1)),
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
    Duration UInt64 CODEC(ZSTD(1)),
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
) ENGINE = ` + c.engine("MergeTree") + `
PARTITION BY toDate(Timestamp)
ORDER BY (ServiceName, SpanName, toDateTime(Timestamp))` + c.ttl("Timestamp") + `
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1`
}

// decisionsDDL is gate_decisions: one row per decision, deduplicated by
// SpanId.
//
//   - Engine: ReplacingMergeTree(Version). Version counts down as InsertedAt
//     grows, so of two copies of a span the first inserted survives.
//   - Partition by day (like otel_traces), so retention drops whole days
//     and a time range prunes partitions.
//   - Sorting key (toStartOfHour(Timestamp), Action, Agent, ToolName,
//     Timestamp, SpanId): the hour first, so that parts written by
//     successive exporter batches (each covering the last seconds) do not
//     overlap and FINAL need not merge them (measured: 4x faster counts
//     over 1M fresh rows than with Action first); then the audit filters,
//     lowest cardinality first (deny is the rare, interesting value); SpanId
//     last makes the key unique per span, which deduplication needs. Every
//     key column of two copies of one span is equal, so they always
//     collapse.
//   - Skip indexes: a bloom filter on TraceId (trace lookups) and minmax on
//     InsertedAt (the follow stream).
func (c config) decisionsDDL(cols []column) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + c.table(DecisionsTable) + c.onCluster() + " (\n")
	for _, col := range cols {
		fmt.Fprintf(&b, "    %s %s,\n", col.name, col.typ)
	}
	b.WriteString(`    Version UInt64 MATERIALIZED bitNot(toUInt64(toUnixTimestamp64Nano(InsertedAt))),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_inserted_at InsertedAt TYPE minmax GRANULARITY 1
) ENGINE = ` + c.engine("ReplacingMergeTree", "Version") + `
PARTITION BY toDate(Timestamp)
PRIMARY KEY (toStartOfHour(Timestamp), Action, Agent, ToolName, Timestamp)
ORDER BY (toStartOfHour(Timestamp), Action, Agent, ToolName, Timestamp, SpanId)` + c.ttl("Timestamp") + `
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1`)
	return b.String()
}

// viewSelect is the SELECT shared by the view and the backfill: the
// view columns of cols, computed from one otel_traces row that is a
// decision.
func (c config) viewSelect(cols []column) string {
	return c.selectFrom(viewColumns(cols), nil) + "FROM " + c.table(c.tracesTable) + "\nWHERE " + gateSpanCondition()
}

// selectFrom renders "SELECT expr AS name, …\n" for cols (view columns),
// with the expressions in replace instead of theirs.
func (c config) selectFrom(cols []column, replace map[string]string) string {
	var b strings.Builder
	b.WriteString("SELECT\n")
	for i, col := range cols {
		sep := ","
		if i == len(cols)-1 {
			sep = ""
		}
		expr := col.expr
		if r, ok := replace[col.name]; ok {
			expr = r
		}
		fmt.Fprintf(&b, "    %s AS %s%s\n", expr, col.name, sep)
	}
	return b.String()
}

func (c config) viewDDL(cols []column) string {
	return "CREATE MATERIALIZED VIEW IF NOT EXISTS " + c.table(DecisionsView) + c.onCluster() +
		" TO " + c.table(DecisionsTable) + " AS\n" + c.viewSelect(cols)
}

func (c config) backfill(cols []column) string {
	return "INSERT INTO " + c.table(DecisionsTable) + " (" + names(viewColumns(cols)) + ")\n" + c.viewSelect(cols)
}

// upgrade is migration v when it adds the columns of version v
// (decisionColumns with since = v) to an existing gate_decisions, in
// three idempotent statements:
//
//  1. ALTER TABLE gate_decisions ADD COLUMN IF NOT EXISTS, each column
//     with its type's default (derived columns with their DEFAULT
//     expression, which ClickHouse also computes, on read, for the rows
//     written before: VerdictGates of an old row is its fallback entry).
//  2. ALTER TABLE gate_decisions_mv MODIFY QUERY: the view's new SELECT
//     takes over without dropping the view, so no span is missed while it
//     changes.
//  3. The repair backfill: spans that carry a new attribute but reached
//     gate_decisions through the older view (their producer was upgraded
//     before this migration ran, or the exporter ran first and step 3's
//     backfill copied them) are copied again with every column, stamped
//     with the InsertedAt of the copy already there. Equal InsertedAt
//     means equal Version, and of equal versions ReplacingMergeTree keeps
//     the last inserted: the repaired copy replaces the old one (FINAL
//     reads it at once), and the follow stream does not report it again.
//     Spans without the new attributes are left alone: their new columns
//     would be the defaults they already read as (so are spans whose new
//     attribute has its column's default value, such as gate.stage =
//     gate: version 5 repairs only the calls refused before the gate).
func (c config) upgrade(v int, name string) Migration {
	var adds, has []string
	for _, col := range decisionColumns() {
		if col.since != v {
			continue
		}
		adds = append(adds, "ADD COLUMN IF NOT EXISTS "+col.name+" "+col.typ)
		switch {
		case col.key != "" && col.def != "":
			// A span whose value is the default reads the same without
			// a repair.
			has = append(has, attr(col.key)+" NOT IN ('', "+quoteString(col.def)+")")
		case col.key != "":
			has = append(has, "mapContains(SpanAttributes, "+quoteString(string(col.key))+")")
		}
	}
	cols := columnsAt(v)
	alter := "ALTER TABLE " + c.table(DecisionsTable) + c.onCluster() + "\n    " + strings.Join(adds, ",\n    ")
	modify := "ALTER TABLE " + c.table(DecisionsView) + c.onCluster() + " MODIFY QUERY\n" + c.viewSelect(cols)
	carries := "(" + strings.Join(has, " OR ") + ")"
	repair := "INSERT INTO " + c.table(DecisionsTable) + " (" + names(viewColumns(cols)) + ")\n" +
		c.selectFrom(viewColumns(cols), map[string]string{"InsertedAt": "repaired.FirstInsertedAt"}) +
		"FROM " + c.table(c.tracesTable) + "\n" +
		"INNER JOIN (\n" +
		"    SELECT SpanId, min(InsertedAt) AS FirstInsertedAt\n" +
		"    FROM " + c.table(DecisionsTable) + "\n" +
		"    WHERE SpanId IN (SELECT SpanId FROM " + c.table(c.tracesTable) + " WHERE " + carries + ")\n" +
		"    GROUP BY SpanId\n" +
		") AS repaired USING (SpanId)\n" +
		"WHERE " + gateSpanCondition() + "\n  AND " + carries
	return Migration{Version: v, Name: name, Statements: []string{alter, modify, repair}}
}

// MigrationResult reports what Migrate did.
type MigrationResult struct {
	// Applied are the versions run now, in order.
	Applied []int
	// Current is the schema version after the run.
	Current int
}

// Migrate creates the database and the schema_migrations table if needed
// and applies, in order, every migration not yet recorded there. conn must
// be allowed to create tables (the writer user). It is safe to run again
// and concurrently: every step is idempotent.
func Migrate(ctx context.Context, conn driver.Conn, opts ...Option) (MigrationResult, error) {
	c, err := newConfig(opts)
	if err != nil {
		return MigrationResult{}, err
	}
	return c.migrate(ctx, conn)
}

func (c config) migrate(ctx context.Context, conn driver.Conn) (MigrationResult, error) {
	var res MigrationResult
	for _, stmt := range []string{c.databaseDDL(), c.migrationsDDL()} {
		if err := conn.Exec(ctx, stmt); err != nil {
			return res, fmt.Errorf("audit: migrate: prepare: %w", err)
		}
	}
	applied, err := c.applied(ctx, conn)
	if err != nil {
		return res, err
	}
	released := releasedChecksums()
	for _, m := range c.migrations() {
		if _, ok := applied[m.Version]; ok {
			res.Current = m.Version
			continue
		}
		for i, stmt := range m.Statements {
			if err := conn.Exec(ctx, stmt); err != nil {
				return res, fmt.Errorf("audit: migration %d (%s) statement %d: %w", m.Version, m.Name, i+1, err)
			}
		}
		var p Params
		p.Int64("v", int64(m.Version)).String("n", m.Name).String("c", released[m.Version])
		err := conn.Exec(p.Context(ctx), "INSERT INTO "+c.table(MigrationsTable)+" (Version, Name, Checksum) SELECT {v:UInt32}, {n:String}, {c:String}")
		if err != nil {
			return res, fmt.Errorf("audit: migration %d (%s): record: %w", m.Version, m.Name, err)
		}
		res.Applied = append(res.Applied, m.Version)
		res.Current = m.Version
	}
	return res, nil
}

// applied reads schema_migrations: version → checksum.
func (c config) applied(ctx context.Context, conn driver.Conn) (map[int]string, error) {
	rows, err := conn.Query(ctx, "SELECT Version, Checksum FROM "+c.table(MigrationsTable)+" FINAL ORDER BY Version")
	if err != nil {
		return nil, fmt.Errorf("audit: read %s: %w", MigrationsTable, err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var v uint32
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, fmt.Errorf("audit: read %s: %w", MigrationsTable, err)
		}
		out[int(v)] = sum
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: read %s: %w", MigrationsTable, err)
	}
	return out, nil
}

// releasedChecksums maps each version to the checksum of its SQL generated
// with the default options (database otel, no cluster, no retention): what
// the step is, independent of where and how it was applied. Migrate records
// it, and Status compares with it.
func releasedChecksums() map[int]string {
	out := map[int]string{}
	for _, m := range (config{database: DefaultDatabase, tracesTable: DefaultTracesTable, rollupDelay: DefaultRollupDelay}).migrations() {
		out[m.Version] = m.Checksum()
	}
	return out
}

// MigrationStatus is one migration and whether it is applied.
type MigrationStatus struct {
	Migration
	Applied bool
	// Changed is true when the recorded checksum is neither this version's
	// released checksum (its SQL with the default options, which Migrate
	// records whatever the options) nor the checksum of its SQL with the
	// options given to Status or with the retention read from the live
	// table's TTL (what releases before that recorded): the step's SQL
	// itself changed since it was applied (a development build, or a
	// hand-edited schema_migrations), not merely its options.
	Changed bool
}

// Status lists every migration with its state. It creates nothing; a
// missing schema_migrations table reads as nothing applied.
func Status(ctx context.Context, conn driver.Conn, opts ...Option) ([]MigrationStatus, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	applied, err := c.applied(ctx, conn)
	if err != nil {
		var ex *clickhouse.Exception
		if !errors.As(err, &ex) || (ex.Code != codeUnknownTable && ex.Code != codeUnknownDatabase) {
			return nil, err
		}
		applied = map[int]string{}
	}
	// What a step may be recorded as: its released checksum, or (older
	// releases) the checksum of its SQL with the options — those given
	// here, or the retention the tables were created with.
	known := map[int][]string{}
	for v, sum := range releasedChecksums() {
		known[v] = append(known[v], sum)
	}
	candidates := []config{c}
	if days, ok := c.liveRetentionDays(ctx, conn); ok {
		live := c
		live.retention = time.Duration(days) * 24 * time.Hour
		candidates = append(candidates, live)
	}
	for _, cc := range candidates {
		for _, m := range cc.migrations() {
			known[m.Version] = append(known[m.Version], m.Checksum())
		}
	}
	var out []MigrationStatus
	for _, m := range c.migrations() {
		sum, ok := applied[m.Version]
		changed := ok && !slices.Contains(known[m.Version], sum)
		out = append(out, MigrationStatus{Migration: m, Applied: ok, Changed: changed})
	}
	return out, nil
}

// liveRetentionDays reads the retention gate_decisions was created with
// from its TTL clause (system.tables), in days; ok is false without one or
// when it cannot be read.
func (c config) liveRetentionDays(ctx context.Context, conn driver.Conn) (days int, ok bool) {
	var engine string
	var p Params
	p.String("db", c.database).String("t", DecisionsTable)
	row := conn.QueryRow(p.Context(ctx), "SELECT engine_full FROM system.tables WHERE database = {db:String} AND name = {t:String}")
	if row.Scan(&engine) != nil {
		return 0, false
	}
	// The TTL clause c.ttl writes, as system.tables shows it.
	const prefix = "TTL toDateTime(Timestamp) + toIntervalDay("
	_, rest, found := strings.Cut(engine, prefix)
	if !found {
		return 0, false
	}
	n, _, found := strings.Cut(rest, ")")
	days, err := strconv.Atoi(n)
	return days, found && err == nil && days > 0
}

// ClickHouse error codes this package recognises
// (src/Common/ErrorCodes.cpp).
const (
	codeNoSuchColumn      = 16
	codeUnknownIdentifier = 47
	codeUnknownTable      = 60
	codeUnknownDatabase   = 81
)
