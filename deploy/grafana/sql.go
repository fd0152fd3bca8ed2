package grafana

import (
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/audit"
)

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func identifier(s string) bool { return identRE.MatchString(s) }

// sqlSet is the dashboard's SQL, over db.gate_decisions (columns: package
// audit, gate_decisions). FINAL collapses duplicated decisions that have not
// been merged yet. The panels whose question fits the hourly roll-up
// (audit.HourlyTable: counts per hour, agent, tool, action, approval and
// approver) read it through rolledSource; the others (reasons, single
// calls, buckets narrower than an hour) read gate_decisions.
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
	rolled := rolledSource(db)
	return sqlSet{
		agents:     q("SELECT DISTINCT Agent", from, "WHERE $__timeFilter(Timestamp) AND Agent != ''", "ORDER BY Agent"),
		tools:      q("SELECT DISTINCT ToolName", from, "WHERE $__timeFilter(Timestamp)", "ORDER BY ToolName"),
		total:      q("SELECT sum(Calls) AS decisions", rolled),
		denied:     q("SELECT sum(Denied) AS denied", rolled),
		denyRate:   q("SELECT if(sum(Calls) = 0, 0, sum(Denied) / sum(Calls)) AS deny_rate", rolled),
		agentCount: q("SELECT uniqExact(Agent) AS agents", rolled),
		overTime: q("SELECT $__timeInterval(Timestamp) AS time, Action AS action, sum(Calls) AS decisions", from, where,
			"GROUP BY time, action", "ORDER BY time"),
		topReasons: q("SELECT Reason AS reason, sum(Calls) AS denials", from, where, "  AND Action = 'deny'",
			"GROUP BY reason", "ORDER BY denials DESC, reason", "LIMIT 10"),
		byToolAgent: q("SELECT Agent AS agent, ToolName AS tool, sum(Calls) AS decisions,",
			"  sumIf(Calls, Action = 'allow') AS allowed, sum(Denied) AS denied,",
			"  round(denied / decisions, 3) AS deny_rate", rolled,
			"GROUP BY agent, tool", "ORDER BY denied DESC, decisions DESC, agent, tool"),
		denied200: q("SELECT Timestamp AS time, Agent AS agent, ToolName AS tool, Reason AS reason,",
			"  Source AS policy, RiskLevel AS risk, RunId AS run_id, ToolCallId AS tool_call_id, TraceId AS trace_id", from, where,
			"  AND Action = 'deny'", "ORDER BY Timestamp DESC", "LIMIT 200"),
		byApprover: q("SELECT Approver AS approver, Approval AS outcome, sum(Calls) AS asks,",
			"  sum(Waited) AS waited,",
			"  if(waited = 0, 0, round(sum(WaitSumMs) / waited / 1000, 1)) AS avg_wait_s,",
			"  round(max(WaitMaxMs) / 1000, 1) AS max_wait_s", rolled,
			"WHERE Approval != ''", "GROUP BY approver, outcome", "ORDER BY asks DESC, approver, outcome"),
	}
}

// rolledSource is the FROM clause of the panels the roll-up answers: the
// roll-up's rows of the whole hours inside the dashboard's time range
// that no decision reached after the roll-up's last run (its watermark,
// max(RolledThrough); the hours reached after it are read from the
// arrivals, schema version 12; package audit, Store.Stats, does the same), and
// gate_decisions' rows of every other hour of the range (its partial first
// and last hours, the hours decisions reached since), with the agent and
// tool variables applied to both. Columns: Agent, ToolName, Action,
// Approval, Approver, Calls, Denied (calls denied), Waited (decisions that
// recorded an approval wait), WaitSumMs, WaitMaxMs. The two halves cover
// disjoint hours, and each counts a span once (FINAL), so the sums are
// exactly those over gate_decisions.
func rolledSource(db string) string {
	hourly := db + "." + audit.HourlyTable
	decisions := db + "." + audit.DecisionsTable
	hour := "toStartOfHour(toDateTime(Timestamp, 'UTC'))"
	// The dirty hours from the arrivals (schema version 12), which hold a
	// few rows per hour, not from every part of gate_decisions.
	dirty := "(SELECT DISTINCT Hour FROM " + db + "." + audit.ArrivalsTable + " WHERE LastInsertedAt > (SELECT max(RolledThrough) FROM " + hourly + "))"
	vars := `  AND $__conditionalAll(Agent IN (${agent:singlequote}), $agent)
  AND $__conditionalAll(ToolName IN (${tool:singlequote}), $tool)`
	return strings.Join([]string{
		"FROM (",
		"SELECT Agent, ToolName, Action, Approval, Approver, Calls, Denied, Waited, WaitSumMs, WaitMaxMs",
		"FROM " + hourly + " FINAL",
		"WHERE Hour >= $__fromTime AND Hour + INTERVAL 1 HOUR <= $__toTime",
		"  AND Hour NOT IN " + dirty,
		vars,
		"UNION ALL",
		"SELECT Agent, ToolName, Action, Approval, Approver, Calls, if(Action = 'deny', Calls, 0), toUInt64(ApprovalWaitMs > 0), ApprovalWaitMs, ApprovalWaitMs",
		"FROM " + decisions + " FINAL",
		"WHERE $__timeFilter(Timestamp)",
		vars,
		"  AND (" + hour + " < $__fromTime OR " + hour + " + INTERVAL 1 HOUR > $__toTime OR " + hour + " IN " + dirty + ")",
		")",
	}, "\n")
}
