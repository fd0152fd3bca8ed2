// Package exportertest checks the audit schema against the real
// OpenTelemetry collector-contrib clickhouse exporter (v0.161.0, the
// release deploy/otel-collector builds): the exporter writes spans through
// its own code, with create_schema: true, into the embedded ClickHouse
// server; the audit migrations then run (or ran first) and the audit query
// API must read the decisions back, once each, even when a batch is sent
// twice.
//
// It is a separate Go module so that the collector's dependency tree stays
// out of toolgate's go.mod; it pins clickhouse-go to v2.47.0, the version
// that collector links. Run it with:
//
//	cd audit/exportertest && go test ./...
//
// (TOOLGATE_INTEGRATION=1 turns a missing libchdb into a failure.)
package exportertest
