// Package audit is toolgate's ClickHouse side: the schema that turns the
// spans written by the OpenTelemetry collector's clickhouse exporter into a
// typed table of gate decisions, the migrations that create it, and a query
// API over it.
//
// # Data flow
//
// The executor records every tool call as an execute_tool span with GenAI
// semantic-convention attributes (gen_ai.tool.name, gen_ai.agent.name, …)
// and gate attributes (gate.action, gate.reason, …; see package gate). The
// collector's clickhouse exporter (contrib v0.161.0) inserts those spans
// into otel_traces, storing every attribute value as a string in
// SpanAttributes Map(LowCardinality(String), String). The migrations in
// this package add gate_decisions, a ReplacingMergeTree with one typed row
// per decision, filled by the materialized view gate_decisions_mv from the
// otel_traces rows that carry gate attributes.
//
// # Duplicates
//
// The exporter delivers at least once, so a retried batch inserts the same
// span twice. gate_decisions is deduplicated by SpanId (its sorting key ends
// in SpanId, and every other key column derives from the same span); merges
// collapse duplicates eventually, and every query here reads with FINAL so
// results are exact before merges too. The copy that survives is the first
// one inserted (the version column counts down with InsertedAt), which is
// what lets [Follower] report each decision once. [Store.Stats] reads the
// whole hours of its range from the hourly roll-up (gate_decisions_hourly,
// recounted from gate_decisions FINAL by a refreshable view, so copies count
// once there too) and only the rest from gate_decisions; see rollup.go.
//
// # Queries
//
// Every query is parameterized with ClickHouse server-side parameters
// ({name:Type}); user input never reaches SQL text. Open a [Store] with
// [Open] and use [Store.Decisions], [Store.Stats], [Store.Trace] and
// [Store.NewFollower]. [Migrate] (or [Store.Migrate]) applies the schema.
package audit
