// Package e2e holds toolgate's end-to-end tests: the real executor exports
// its execute_tool spans with otelbridge (OTLP/gRPC) to the real collector
// (bin/otelcol-toolgate with deploy/otel-collector/config.yaml), which writes
// the audit to the embedded ClickHouse (auditq serve, with the audit
// migrations) and the sampled traces to Jaeger v2 (bin/jaeger), each a
// separate process on free loopback ports (internal/testenv).
//
// The tests check that gate_decisions holds exactly one row per gated call
// (duplicated exports collapsed), that Jaeger's HTTP query API returns the
// spans with their gate attributes, that each sampling mode stores and shows
// what it should and nothing else, that a 30 s ClickHouse outage loses
// nothing and that a 10 s collector outage loses at most what the SDK counts
// as lost; the fault tests log what was lost. The spool's fault tests run
// the agent as a separate process (cmd/toolgate-demo in load mode): the
// collector down 5 minutes at 100 calls/s (nothing lost), the agent
// SIGKILLed 20 times with torn log tails (strict mode: every call whose
// tool ran is stored), the spool's budget exhausted (each policy applied
// and counted). BenchmarkEndToEndSpool compares the spool off, on and in
// strict mode. BenchmarkEndToEnd measures
// decisions/s from executor to ClickHouse and the collector's CPU time per
// 1,000 decisions.
//
// The package has no non-test code. Missing components skip the tests,
// or fail them under TOOLGATE_INTEGRATION=1 (make test). Set
// TOOLGATE_E2E_SHORT=1 to shorten the outages (CI smoke runs).
package e2e
