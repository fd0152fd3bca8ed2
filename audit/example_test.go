package audit_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// The migrations are plain SQL generated from options; print them to
// review or to hand to a DBA (auditq migrate --print does the same).
func ExampleMigrations() {
	ms, err := audit.Migrations(audit.WithCluster("audit"), audit.WithRetention(365*24*time.Hour))
	if err != nil {
		panic(err)
	}
	for _, m := range ms {
		first, _, _ := strings.Cut(m.Statements[0], "\n")
		fmt.Printf("%d %s: %s\n", m.Version, m.Name, first)
	}
	// Output:
	// 1 otel_traces: CREATE TABLE IF NOT EXISTS `otel`.`otel_traces` ON CLUSTER `audit` (
	// 2 gate_decisions: CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions` ON CLUSTER `audit` (
	// 3 gate_decisions_mv: CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_mv` ON CLUSTER `audit` TO `otel`.`gate_decisions` AS
	// 4 verdicts_rewrites: ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
	// 5 stage: ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
	// 6 rule: ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
	// 7 calls: ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
	// 8 chain: ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
	// 9 approvals: ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit`
	// 10 hourly_rollup: CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_hourly` ON CLUSTER `audit` (
	// 11 daily_rollups: CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_daily_rule` ON CLUSTER `audit` (
	// 12 arrivals: CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions_arrivals` ON CLUSTER `audit` (
}

// Count the last day's decisions by action, as `auditq stats` does, then
// list the denials.
func ExampleStore_Stats() {
	ctx := context.Background()
	st, err := audit.Open(ctx, "http://reader:PASS@127.0.0.1:8123")
	if err != nil {
		fmt.Println(err) // *audit.UnreachableError when no server answers
		return
	}
	defer st.Close()
	since := time.Now().Add(-24 * time.Hour)
	s, err := st.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{Since: since}, By: []audit.Dimension{audit.ByAction}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d decisions, %d denied\n", s.Total, s.TotalDenied)
	page, err := st.Decisions(ctx, audit.Filter{Since: since, Action: "deny"}, audit.Page{Limit: 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range page.Decisions {
		fmt.Println(d.Timestamp.Format(time.RFC3339), d.Agent, d.ToolName, d.Reason)
	}
}
