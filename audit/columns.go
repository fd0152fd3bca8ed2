package audit

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/gate"
)

// column is one typed column of gate_decisions: its ClickHouse type and the
// expression the materialized view computes it from, over one otel_traces
// row as the clickhouse exporter writes it.
type column struct {
	name string // ClickHouse column name (CamelCase, like otel_traces)
	typ  string // ClickHouse type, with codec
	expr string // SELECT expression over an otel_traces row
}

// attr is the SpanAttributes lookup of key. The exporter stores every
// attribute value as a string, so a missing key reads as ”.
func attr(key attribute.Key) string {
	return "SpanAttributes[" + quoteString(string(key)) + "]"
}

// quoteString renders s as a ClickHouse string literal. It is used only for
// the attribute keys and other constants of this package, never for user
// input (user input always travels as a query parameter).
func quoteString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(s) + "'"
}

// decisionColumns lists gate_decisions' columns in table order, each with
// the attribute it comes from. The keys are the gate package's constants and
// the GenAI semantic conventions v1.41.0 (go.opentelemetry.io/otel/semconv);
// no attribute name is spelled out here.
func decisionColumns() []column {
	return []column{
		{"Timestamp", "DateTime64(9) CODEC(Delta, ZSTD(1))", "Timestamp"},
		{"InsertedAt", "DateTime64(9) CODEC(Delta, ZSTD(1))", "now64(9)"},
		{"TraceId", "String CODEC(ZSTD(1))", "TraceId"},
		{"SpanId", "String CODEC(ZSTD(1))", "SpanId"},
		{"ParentSpanId", "String CODEC(ZSTD(1))", "ParentSpanId"},
		{"ServiceName", "LowCardinality(String) CODEC(ZSTD(1))", "ServiceName"},
		{"Agent", "LowCardinality(String) CODEC(ZSTD(1))", attr(semconv.GenAIAgentNameKey)},
		{"RunId", "String CODEC(ZSTD(1))", attr(gate.AttrRunID)},
		{"TaskId", "String CODEC(ZSTD(1))", attr(gate.AttrTaskID)},
		{"ToolName", "LowCardinality(String) CODEC(ZSTD(1))", attr(semconv.GenAIToolNameKey)},
		{"ToolCallId", "String CODEC(ZSTD(1))", attr(semconv.GenAIToolCallIDKey)},
		{"Gated", "Bool", attr(gate.AttrGated) + " = 'true'"},
		{"OptOut", "Bool", attr(gate.AttrOptOut) + " = 'true'"},
		{"Action", "LowCardinality(String) CODEC(ZSTD(1))", attr(gate.AttrAction)},
		{"Reason", "String CODEC(ZSTD(1))", attr(gate.AttrReason)},
		{"Source", "LowCardinality(String) CODEC(ZSTD(1))", attr(gate.AttrSource)},
		{"RiskLevel", "LowCardinality(String) CODEC(ZSTD(1))", attr(gate.AttrRiskLevel)},
		{"Approval", "LowCardinality(String) CODEC(ZSTD(1))", attr(gate.AttrApproval)},
		{"Approver", "LowCardinality(String) CODEC(ZSTD(1))", attr(gate.AttrApprover)},
		{"ErrorKind", "LowCardinality(String) CODEC(ZSTD(1))", attr(gate.AttrError)},
		{"ErrorType", "LowCardinality(String) CODEC(ZSTD(1))", attr(semconv.ErrorTypeKey)},
		{"IsError", "Bool", "StatusCode = 'Error'"},
		{"StatusMessage", "String CODEC(ZSTD(1))", "StatusMessage"},
		{"Duration", "UInt64 CODEC(ZSTD(1))", "Duration"},
		{"GateDuration", "UInt64 CODEC(ZSTD(1))", "toUInt64OrZero(" + attr(gate.AttrDuration) + ")"},
		{"Input", "String CODEC(ZSTD(3))", attr(semconv.GenAIToolCallArgumentsKey)},
	}
}

// gateSpanCondition selects the otel_traces rows that are gate decisions,
// by the same definition as otelbridge and the collector's audit filter: a
// span carrying gate.action, or gate.gated = true, or gate.opt_out = true
// (an agent opted out of the executor's gates: audited with an empty
// action). Tool calls refused before any gate ran (unknown tool, invalid
// input: gate.gated = false, no action) are not decisions.
func gateSpanCondition() string {
	return fmt.Sprintf("(mapContains(SpanAttributes, %s) OR %s = 'true' OR %s = 'true')",
		quoteString(string(gate.AttrAction)), attr(gate.AttrGated), attr(gate.AttrOptOut))
}

// selectList is the comma-separated list of gate_decisions columns, in the
// order scanDecision expects.
func selectList() string {
	cols := decisionColumns()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}
