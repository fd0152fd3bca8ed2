// Package exportertest checks the audit schema against the real
// OpenTelemetry collector-contrib clickhouse exporter (v0.161.0, the
// release deploy/otel-collector builds): the exporter writes spans through
// its own code, with create_schema: true, into the embedded ClickHouse
// server; the audit migrations then run (or ran first) and the audit query
// API must read the decisions back, once each, even when a batch is sent
// twice. TestExporterAttributeStrings records how the exporter stores each
// attribute shape of the decision record in SpanAttributes (a string slice
// such as gate.verdicts: a JSON array, ["a|deny|high|r","b|allow||"]), the
// shapes audittest.AttrString writes in the other tests.
//
// It is a separate Go module so that the collector's dependency tree stays
// out of toolgate's go.mod; it pins clickhouse-go to v2.47.0, the version
// that collector links. Run it with:
//
//	cd audit/exportertest && go test ./...
//
// (TOOLGATE_INTEGRATION=1 turns a missing libchdb into a failure.)
package exportertest
