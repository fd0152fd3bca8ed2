package grafana

import (
	"regexp"
	"strings"
)

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func identifier(s string) bool { return identRE.MatchString(s) }

// sqlSet is the dashboard's SQL, over db.gate_decisions (columns: package
// audit, gate_decisions). FINAL collapses duplicated decisions that have not
// been merged yet.
type sqlSet struct {
	agents, tools                                string
	total, denied, denyRate, agentCount          string
	overTime, topReasons, byToolAgent, denied200 string
	byApprover                                   string
}

func queries(db string) sqlSet {
	from := "FROM " + db + ".gate_decisions FINAL"
	where := `WHERE $__timeFilter(Timestamp)
  AND $__conditionalAll(Agent IN (${agent:singlequote}), $agent)
  AND $__conditionalAll(ToolName IN (${tool:singlequote}), $tool)`
	q := func(lines ...string) string { return strings.Join(lines, "\n") }
	return sqlSet{
		agents:     q("SELECT DISTINCT Agent", from, "WHERE $__timeFilter(Timestamp) AND Agent != ''", "ORDER BY Agent"),
		tools:      q("SELECT DISTINCT ToolName", from, "WHERE $__timeFilter(Timestamp)", "ORDER BY ToolName"),
		total:      q("SELECT sum(Calls) AS decisions", from, where),
		denied:     q("SELECT sumIf(Calls, Action = 'deny') AS denied", from, where),
		denyRate:   q("SELECT if(sum(Calls) = 0, 0, sumIf(Calls, Action = 'deny') / sum(Calls)) AS deny_rate", from, where),
		agentCount: q("SELECT uniqExact(Agent) AS agents", from, where),
		overTime: q("SELECT $__timeInterval(Timestamp) AS time, Action AS action, sum(Calls) AS decisions", from, where,
			"GROUP BY time, action", "ORDER BY time"),
		topReasons: q("SELECT Reason AS reason, sum(Calls) AS denials", from, where, "  AND Action = 'deny'",
			"GROUP BY reason", "ORDER BY denials DESC, reason", "LIMIT 10"),
		byToolAgent: q("SELECT Agent AS agent, ToolName AS tool, sum(Calls) AS decisions,",
			"  sumIf(Calls, Action = 'allow') AS allowed, sumIf(Calls, Action = 'deny') AS denied,",
			"  round(denied / decisions, 3) AS deny_rate", from, where,
			"GROUP BY agent, tool", "ORDER BY denied DESC, decisions DESC, agent, tool"),
		denied200: q("SELECT Timestamp AS time, Agent AS agent, ToolName AS tool, Reason AS reason,",
			"  Source AS policy, RiskLevel AS risk, RunId AS run_id, ToolCallId AS tool_call_id, TraceId AS trace_id", from, where,
			"  AND Action = 'deny'", "ORDER BY Timestamp DESC", "LIMIT 200"),
		byApprover: q("SELECT Approver AS approver, Approval AS outcome, sum(Calls) AS asks,",
			"  countIf(ApprovalWaitMs > 0) AS waited,",
			"  if(waited = 0, 0, round(sumIf(ApprovalWaitMs, ApprovalWaitMs > 0) / waited / 1000, 1)) AS avg_wait_s,",
			"  round(max(ApprovalWaitMs) / 1000, 1) AS max_wait_s", from, where,
			"  AND Approval != ''", "GROUP BY approver, outcome", "ORDER BY asks DESC, approver, outcome"),
	}
}
