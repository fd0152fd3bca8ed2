package audittest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/gate"
)

// Shape of LoadShaped's decisions: the picture of real use.
const (
	ShapedAgents  = 40  // agent-00 … agent-39; each run is one agent's
	ShapedTools   = 200 // tool-000 … tool-199; an agent uses 20 of them
	ShapedRules   = 50  // rule.00 … rule.49: the reason templates of denials
	ShapedRunCall = 60  // calls per run (runs of 20–100 average 60)
	ShapedWindow  = 30 * 24 * time.Hour
)

// ShapedOptions tunes LoadShaped.
type ShapedOptions struct {
	// Batch is the number of spans per INSERT (default 100,000): each
	// insert writes at least one new part, so a small batch leaves many
	// unmerged parts (with merges stopped).
	Batch int
	// Offset is the index of the first span (default 0): loading [Offset,
	// Offset+n) again writes the same spans (same IDs, same attributes),
	// as a retried export does.
	Offset int
	// Total is the size of the whole synthetic trail the spans are taken
	// from (default n): span i's timestamp is end - (i+1)·window/Total.
	Total int
}

// LoadShaped inserts n synthetic gated execute_tool spans into
// database.otel_traces (so the materialized view fills gate_decisions, as
// the exporter's spans do), shaped like real use: 40 agents, 200 tools (20
// per agent), 70 % allowed, 25 % denied by one of 50 rules (reason
// templates quoting the call, risk review or high), 5 % asked
// (policy.consequential; 60 % approved by alice, bob or terminal, after
// 1–600 s), runs of 60 calls in one trace, spread evenly over the 30 days
// before end, newest first. Span i is a pure function of i, so loading a
// range twice duplicates its spans exactly.
func LoadShaped(ctx context.Context, conn driver.Conn, database string, n int, end time.Time, o ShapedOptions) error {
	if o.Batch <= 0 {
		o.Batch = 100000
	}
	if o.Total <= 0 {
		o.Total = o.Offset + n
	}
	a := func(k attribute.Key) string { return "'" + strings.ReplaceAll(string(k), "'", `\'`) + "'" }
	step := ShapedWindow.Nanoseconds() / int64(max(o.Total, 1))
	for off := o.Offset; off < o.Offset+n; off += o.Batch {
		cnt := min(o.Batch, o.Offset+n-off)
		q := fmt.Sprintf(`INSERT INTO %[1]s.otel_traces (Timestamp, TraceId, SpanId, ParentSpanId, SpanName, SpanKind, ServiceName, ResourceAttributes, SpanAttributes, Duration, StatusCode, StatusMessage)
SELECT fromUnixTimestamp64Nano(toInt64(%[2]d - (g + 1) * %[3]d)) AS ts,
  lower(hex(MD5(toString(run)))) AS trace,
  lower(hex(reinterpretAsFixedString(cityHash64(g, 'span')))) AS span,
  lower(hex(reinterpretAsFixedString(cityHash64(run, 'root')))),
  concat('execute_tool ', tool), 'Internal', 'toolgate-bench', map('service.name', 'toolgate-bench'),
  map(%[4]s, agent, %[5]s, tool, %[6]s, concat('call_', toString(g)), %[7]s, concat('run-', toString(run)),
      %[8]s, 'true', %[9]s, action, %[10]s, reason, %[11]s, source, %[12]s, risk, %[13]s, rule,
      %[14]s, approval, %[15]s, approver, %[16]s, toString(wait), %[17]s, 'gate',
      %[18]s, toString(g %% 5000000), %[19]s, concat('["', source, '|', if(kind = 2, 'ask', action), '|', risk, '|', rule, '"]')),
  (g %% 1000 + 1) * 1000000,
  if(action = 'deny', 'Error', 'Unset'), if(action = 'deny', concat('denied: ', reason), '')
FROM (
  SELECT g, run, agent, tool, kind, template,
    multiIf(kind = 0, 'allow', kind = 1, 'deny', approved, 'allow', 'deny') AS action,
    multiIf(kind = 1, concat('template ', toString(template), ': ', ['rm -rf /tmp/w', 'curl https://x.example/', 'cat ~/.ssh/id_', 'git push --force origin b'][template %% 4 + 1], toString(g %% 997), ' [', rule, ']'),
            kind = 2, if(approved, 'approved by operator', 'approval declined'), '') AS reason,
    if(kind = 2, 'policy.consequential', concat('classify.', ['bash', 'path', 'http', 'sql'][toUInt32(substring(tool, 6)) %% 4 + 1])) AS source,
    multiIf(kind = 0, 'safe', kind = 2, 'review', ['review', 'high'][template %% 2 + 1]) AS risk,
    multiIf(kind = 1, concat('rule.', leftPad(toString(template), 2, '0')), kind = 2, 'ask.consequential', '') AS rule,
    if(kind = 2, if(approved, 'approved', 'declined'), '') AS approval,
    if(kind = 2, ['alice', 'bob', 'terminal'][g %% 3 + 1], '') AS approver,
    if(kind = 2, (cityHash64(g, 'wait') %% 600 + 1) * 1000, 0) AS wait
  FROM (
    SELECT number AS g, intDiv(number, %[20]d) AS run,
      concat('agent-', leftPad(toString(cityHash64(run, 'agent') %% %[21]d), 2, '0')) AS agent_name,
      agent_name AS agent,
      toUInt32(substring(agent_name, 7)) AS agent_idx,
      concat('tool-', leftPad(toString((agent_idx * 5 + cityHash64(number, 'tool') %% 20) %% %[22]d), 3, '0')) AS tool,
      cityHash64(number, 'kind') %% 100 AS k,
      multiIf(k < 70, 0, k < 95, 1, 2) AS kind,
      (toUInt32(substring(tool, 6)) * 3 + cityHash64(number, 'rule') %% 3) %% %[23]d AS template,
      cityHash64(number, 'approved') %% 10 < 6 AS approved
    FROM numbers(%[24]d, %[25]d)
  )
)`, "`"+database+"`", end.UnixNano(), step,
			a(semconv.GenAIAgentNameKey), a(semconv.GenAIToolNameKey), a(semconv.GenAIToolCallIDKey), a(gate.AttrRunID),
			a(gate.AttrGated), a(gate.AttrAction), a(gate.AttrReason), a(gate.AttrSource), a(gate.AttrRiskLevel), a(gate.AttrRule),
			a(gate.AttrApproval), a(gate.AttrApprover), a(gate.AttrApprovalWait), a(gate.AttrStage),
			a(gate.AttrDuration), a(gate.AttrVerdicts),
			ShapedRunCall, ShapedAgents, ShapedTools, ShapedRules, off, cnt)
		if err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("audittest: load shaped decisions [%d, %d): %w", off, off+cnt, err)
		}
	}
	return nil
}
