package grafana_test

import (
	"fmt"
	"time"

	"github.com/toolgate/toolgate/deploy/grafana"
)

// A panel's SQL as ClickHouse receives it from Grafana.
func ExampleExpandMacros() {
	sql, err := grafana.ExpandMacros(
		"SELECT count() FROM otel.gate_decisions FINAL WHERE $__timeFilter(Timestamp) AND $__conditionalAll(Agent IN (${agent:singlequote}), $agent)",
		grafana.MacroEnv{From: time.Unix(1700000000, 0), To: time.Unix(1700003600, 0), Interval: time.Minute,
			Vars: map[string][]string{"agent": {"coder"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sql)
	// Output:
	// SELECT count() FROM otel.gate_decisions FINAL WHERE Timestamp >= toDateTime(1700000000) AND Timestamp <= toDateTime(1700003600) AND Agent IN ('coder')
}
