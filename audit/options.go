package audit

import (
	"fmt"
	"time"
)

// Defaults, matching the collector's clickhouse exporter (database "otel"
// is what deploy/otel-collector configures; the exporter's own default is
// "default").
const (
	DefaultDatabase    = "otel"
	DefaultTracesTable = "otel_traces"
	// DecisionsTable is the typed table of gate decisions.
	DecisionsTable = "gate_decisions"
	// DecisionsView is the materialized view that fills DecisionsTable.
	DecisionsView = "gate_decisions_mv"
	// MigrationsTable records the applied schema versions.
	MigrationsTable = "schema_migrations"
)

// config is what the options set.
type config struct {
	database    string
	tracesTable string
	cluster     string
	retention   time.Duration
	// rollupDelay: see WithRollupDelay.
	rollupDelay time.Duration
	// exportWindow: see WithExportWindow (0: exportWindowRows).
	exportWindow uint64
}

// Option configures Open, Migrate and Migrations.
type Option func(*config)

// WithDatabase sets the ClickHouse database holding otel_traces and the
// audit tables (default "otel").
func WithDatabase(name string) Option { return func(c *config) { c.database = name } }

// WithTracesTable sets the exporter's traces table name (default
// "otel_traces"; the exporter's traces_table_name).
func WithTracesTable(name string) Option { return func(c *config) { c.tracesTable = name } }

// WithCluster makes the migrations run ON CLUSTER name with Replicated
// engines (ReplicatedMergeTree and ReplicatedReplacingMergeTree under
// /clickhouse/tables/{shard}/{database}/{table}, replica {replica}) and
// the Distributed tables of a sharded layout (otel_traces_all,
// gate_decisions_all, gate_decisions_hourly_all; migration 10). The
// server must define the cluster and the {shard} and {replica} macros.
// A Store opened with it reads the Distributed tables, with GLOBAL IN
// subqueries (docs/deployment.md: which queries stay exact on shards).
func WithCluster(name string) Option { return func(c *config) { c.cluster = name } }

// WithRetention sets a TTL on gate_decisions (and on otel_traces when the
// migrations create it): rows older than d, rounded up to whole days, are
// dropped a whole day partition at a time by background merges
// (ttl_only_drop_parts; an explicit OPTIMIZE … FINAL also deletes single
// expired rows). Zero, the
// default, keeps decisions forever: retention of an audit trail is a policy
// choice, so it is never implied.
func WithRetention(d time.Duration) Option { return func(c *config) { c.retention = d } }

// WithExportWindow sets about how many decisions (rows) one query of
// [Store.Export] sorts: the export groups whole UTC hours, newest first,
// into windows of at least rows decisions (one hour may hold more).
// Default, and for rows <= 0: 20,000. Smaller windows bring the first rows
// sooner and cost a query (some milliseconds) per window.
func WithExportWindow(rows int) Option {
	return func(c *config) { c.exportWindow = uint64(max(rows, 0)) }
}

// WithRollupDelay sets how long after a decision's InsertedAt the
// roll-up (HourlyView, Roll) treats its insert as finished (default
// DefaultRollupDelay). It bounds how soon an hour is answered from the
// roll-up, never what is counted; tests that roll up at once use 0.
func WithRollupDelay(d time.Duration) Option { return func(c *config) { c.rollupDelay = d } }

// isIdent reports whether s is a plain identifier, [A-Za-z_][A-Za-z0-9_]*,
// safe to put in SQL text between backquotes.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

func newConfig(opts []Option) (config, error) {
	c := config{database: DefaultDatabase, tracesTable: DefaultTracesTable, rollupDelay: DefaultRollupDelay}
	for _, o := range opts {
		o(&c)
	}
	for what, v := range map[string]string{"database": c.database, "traces table": c.tracesTable} {
		if !isIdent(v) {
			return c, fmt.Errorf("audit: invalid %s name %q (want [A-Za-z_][A-Za-z0-9_]*)", what, v)
		}
	}
	if c.cluster != "" && !isIdent(c.cluster) {
		return c, fmt.Errorf("audit: invalid cluster name %q (want [A-Za-z_][A-Za-z0-9_]*)", c.cluster)
	}
	if c.rollupDelay < 0 {
		return c, fmt.Errorf("audit: negative roll-up delay %v", c.rollupDelay)
	}
	if c.retention < 0 {
		return c, fmt.Errorf("audit: negative retention %v", c.retention)
	}
	return c, nil
}

// table returns the quoted, database-qualified name of t.
func (c config) table(t string) string { return "`" + c.database + "`.`" + t + "`" }

// read is the table queries read t from: t itself, or on a cluster its
// Distributed table over every shard (t_all, distributedDDL).
func (c config) read(t string) string {
	if c.cluster != "" {
		return c.table(t + distributedSuffix)
	}
	return c.table(t)
}

// onCluster is the ON CLUSTER clause, or "".
func (c config) onCluster() string {
	if c.cluster == "" {
		return ""
	}
	return " ON CLUSTER `" + c.cluster + "`"
}

// engine returns a MergeTree-family engine, Replicated when a cluster is
// set. kind is "MergeTree" or "ReplacingMergeTree"; args are the engine's
// own arguments (the version column).
func (c config) engine(kind string, args ...string) string {
	if c.cluster != "" {
		args = append([]string{"'/clickhouse/tables/{shard}/{database}/{table}'", "'{replica}'"}, args...)
		kind = "Replicated" + kind
	}
	s := kind + "("
	for i, a := range args {
		if i > 0 {
			s += ", "
		}
		s += a
	}
	return s + ")"
}

// ttl is the TTL clause on column, or "".
func (c config) ttl(column string) string {
	if c.retention == 0 {
		return ""
	}
	days := int64((c.retention + 24*time.Hour - 1) / (24 * time.Hour))
	return fmt.Sprintf("\nTTL toDateTime(%s) + toIntervalDay(%d)", column, days)
}

// finalSettings is the SETTINGS clause of every query that reads
// gate_decisions with FINAL: each day partition is deduplicated on its
// own (do_not_merge_across_partitions_select_final), in parallel and
// without merging parts of different days. It is exact because the two
// copies of a span always share their Timestamp, hence their partition
// (toDate(Timestamp)). Measured with 1M decisions in 200 unmerged parts
// (docs/deployment.md): 20-25 % less time for FINAL row reads (pages),
// about the same for aggregations over every day.
const finalSettings = "\nSETTINGS do_not_merge_across_partitions_select_final = 1"
