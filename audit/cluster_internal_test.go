package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On a cluster the store reads the Distributed tables, and the roll-up's
// subqueries over them are GLOBAL (a plain IN over a Distributed table is
// refused by distributed_product_mode = deny); migration 10 creates those
// tables ON CLUSTER, sharded by trace so that a span's copies meet on one
// shard. (chDB has no clusters: the engine tests run the same SQL on one
// node, without the _all suffix and GLOBAL.)
func TestClusterReadsDistributedTables(t *testing.T) {
	c, err := newConfig([]Option{WithCluster("audit")})
	require.NoError(t, err)
	s := &Store{cfg: c}
	var p Params
	src := s.rollupSource(Filter{Since: time.Date(2026, 11, 1, 0, 30, 0, 0, time.UTC), Agent: "a"}, []int64{1764554400}, &p, &dailyRollups()[0])
	assert.Contains(t, src, "FROM `otel`.`gate_decisions_daily_rule_all`")
	assert.Contains(t, src, "FROM `otel`.`gate_decisions_hourly_all`\n")
	// Each hour's newest recount, found per shard: the subquery reads the
	// local table (each shard runs it over its own rows), so it needs no
	// GLOBAL and takes no other shard's RolledThrough.
	assert.Contains(t, src, "(Hour, RolledThrough) IN (SELECT Hour, max(RolledThrough) FROM `otel`.`gate_decisions_hourly`\n")
	assert.NotContains(t, src, "GLOBAL")
	assert.Contains(t, src, "FROM `otel`.`gate_decisions_all` FINAL")
	// The dirty hours are a list read before the query: no subquery of
	// them, so none that a Distributed table would need GLOBAL for.
	assert.Contains(t, src, "Hour NOT IN (toDateTime(1764554400, 'UTC'))")
	assert.Contains(t, src, "Day NOT IN (toDateTime(1764547200, 'UTC'))")
	assert.Contains(t, src, "(Timestamp >= toDateTime64(1764554400, 9, 'UTC') AND Timestamp < toDateTime64(1764558000, 9, 'UTC'))")
	assert.NotContains(t, src, "SELECT DISTINCT")

	ms := c.migrations()
	require.Equal(t, 10, ms[len(ms)-3].Version)
	require.Equal(t, 12, ms[len(ms)-1].Version)
	var all []string
	for _, m := range ms[len(ms)-3:] {
		all = append(all, m.Statements...)
	}
	ddl := strings.Join(all, ";\n")
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS `otel`.`otel_traces_all` ON CLUSTER `audit` AS `otel`.`otel_traces`\nENGINE = Distributed(`audit`, `otel`, `otel_traces`, cityHash64(TraceId))",
		"CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_all` ON CLUSTER `audit` AS `otel`.`gate_decisions`\nENGINE = Distributed(`audit`, `otel`, `gate_decisions`, cityHash64(TraceId))",
		"CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_hourly_all` ON CLUSTER `audit` AS `otel`.`gate_decisions_hourly`\nENGINE = Distributed(`audit`, `otel`, `gate_decisions_hourly`)",
		"ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', RolledThrough)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_hourly_mv` ON CLUSTER `audit`\nREFRESH EVERY 1 MINUTE APPEND TO `otel`.`gate_decisions_hourly`",
		"CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_daily_tool_all` ON CLUSTER `audit` AS `otel`.`gate_decisions_daily_tool`\nENGINE = Distributed(`audit`, `otel`, `gate_decisions_daily_tool`)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_daily_rule_mv` ON CLUSTER `audit`\nREFRESH EVERY 1 MINUTE TO `otel`.`gate_decisions_daily_rule`",
		"CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_arrivals_all` ON CLUSTER `audit` AS `otel`.`gate_decisions_arrivals`\nENGINE = Distributed(`audit`, `otel`, `gate_decisions_arrivals`)",
		"ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', LastInsertedAt)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_arrivals_mv` ON CLUSTER `audit` TO `otel`.`gate_decisions_arrivals` AS",
	} {
		assert.Contains(t, ddl, want)
	}
	// Without a cluster: local tables, plain IN, no Distributed tables.
	one := &Store{cfg: config{database: "otel", tracesTable: DefaultTracesTable}}
	src = one.rollupSource(Filter{}, nil, &p, nil)
	assert.NotContains(t, src, "_all")
	assert.NotContains(t, src, "GLOBAL")
}
