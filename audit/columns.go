package audit

import (
	"fmt"
	"strconv"
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
	typ  string // ClickHouse type, with DEFAULT clause and codec
	// expr is the SELECT expression over an otel_traces row; "" for a
	// column the table computes itself from its DEFAULT expression (the
	// view and the backfills leave it out).
	expr string
	// key is the gate.Fields() attribute the column records; "" for the
	// other columns.
	key attribute.Key
	// read is the expression queries read the column with (scanDecision),
	// when it is not the column itself.
	read string
	// since is the schema version whose migration added the column (2:
	// the table as first created).
	since int
	// def is the value a span without the attribute stands for
	// (gate.Field.Default), when the column has one.
	def string
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

// stringList is the Array(String) of a string-slice attribute. The
// exporter stores a slice as pcommon's Value.AsString renders it: a JSON
// array without HTML escaping (["a|deny|high|r","b|allow||"], [] when
// empty; measured with the exporter in audit/exportertest). A value that
// is not an array (a producer that sent one string) is a one-element list;
// a missing key is the empty list.
func stringList(key attribute.Key) string {
	a := attr(key)
	return "if(startsWith(" + a + ", '['), JSONExtract(" + a + ", 'Array(String)'), if(" + a + " = '', [], [" + a + "]))"
}

// gateColumn generates the column of one gate.Fields() entry from its
// type. The expression reads the exporter's string form of the attribute:
//
//	FieldString      String                  the value
//	FieldEnum        LowCardinality(String)  the value
//	FieldBool        Bool                    value = 'true' (false when absent)
//	FieldInt         UInt64                  toUInt64OrZero(value) (0 when absent)
//	FieldStringList  Array(String)           stringList (empty when absent)
//
// A string field with a Default (gate.Field.Default: what a span of an
// older producer, without the attribute, stands for) reads as that value
// when the attribute is absent or empty, and the column's DEFAULT is that
// value, so rows stored before the migration that added it read it too.
// An int field with a Default (gate.Calls: "1") reads as that value when
// the attribute is absent, 0 or not a number, with the same DEFAULT.
func gateColumn(f gate.Field, since int) (column, error) {
	c := column{name: f.Name, key: f.Key, since: since, def: f.Default}
	if f.Default != "" && f.Type != gate.FieldString && f.Type != gate.FieldEnum && f.Type != gate.FieldInt {
		return c, fmt.Errorf("audit: gate field %s (%s): a default is for string and int fields", f.Key, f.Name)
	}
	value, def := attr(f.Key), ""
	if f.Type == gate.FieldInt && f.Default != "" {
		if _, err := strconv.ParseUint(f.Default, 10, 64); err != nil {
			return c, fmt.Errorf("audit: gate field %s (%s): default %q is not a UInt64", f.Key, f.Name, f.Default)
		}
		// Absent, 0 or not a number: the default.
		n := "toUInt64OrZero(" + attr(f.Key) + ")"
		c.typ, c.expr = "UInt64 DEFAULT "+f.Default+" CODEC(ZSTD(1))", "if("+n+" = 0, toUInt64("+f.Default+"), "+n+")"
		return c, nil
	}
	if f.Default != "" {
		value = "if(" + attr(f.Key) + " = '', " + quoteString(f.Default) + ", " + attr(f.Key) + ")"
		def = " DEFAULT " + quoteString(f.Default)
	}
	switch f.Type {
	case gate.FieldString:
		c.typ, c.expr = "String"+def+" CODEC(ZSTD(1))", value
	case gate.FieldEnum:
		c.typ, c.expr = "LowCardinality(String)"+def+" CODEC(ZSTD(1))", value
	case gate.FieldBool:
		c.typ, c.expr = "Bool", attr(f.Key)+" = 'true'"
	case gate.FieldInt:
		c.typ, c.expr = "UInt64 CODEC(ZSTD(1))", "toUInt64OrZero("+attr(f.Key)+")"
	case gate.FieldStringList:
		c.typ, c.expr = "Array(String) CODEC(ZSTD(1))", stringList(f.Key)
	default:
		return c, fmt.Errorf("audit: gate field %s (%s): unknown field type %d", f.Key, f.Name, f.Type)
	}
	return c, nil
}

// Verdict entries ("gate|action|risk|rule", gate.EncodeVerdicts) as the
// derived columns split them.
const (
	verdictSep = "|"
	// verdictMore is the action of the entry that summarises the verdicts
	// beyond gate.MaxVerdicts ("…|more|n|"); it names no gate.
	verdictMore = "more"
)

// verdicts is the decision's verdict list over gate_decisions' own
// columns: Verdicts (gate.verdicts) when recorded; else, for a gated
// decision, the one verdict it stands for, Source|action|RiskLevel| with
// action "ask" when an approver was asked, else Action. A producer leaves
// gate.verdicts out when its single verdict is the decision itself (same
// gate, action, risk and rule, no rewrite, no approval;
// gate.Record.Attributes), and older producers and the events bridged
// from them never record it. The verdict's rule is not recorded apart
// from the list, so it reads empty. A call no gate judged (opted out) has
// none.
//
// From schema version 5 (stage = true) a call refused before the gate
// (Stage registry, reachability or input: no gate judged it) has none
// either; before, such calls were not stored.
func verdicts(stage bool) string {
	sep := quoteString(verdictSep)
	none := "(NOT Gated AND Action = '')"
	if stage {
		none = "(NOT Gated AND (Action = '' OR Stage != " + quoteString(string(gate.StageGate)) + "))"
	}
	return "if(notEmpty(Verdicts) OR " + none + ", Verdicts, [concat(Source, " + sep +
		", if(Approval != '', " + quoteString(string(gate.ActionAsk)) + ", Action), " + sep + ", RiskLevel, " + sep + ")])"
}

// verdictPart is the DEFAULT expression of a column holding member i (1:
// gate, 2: action) of each entry of verdicts(stage), leaving out the
// entry that summarises the verdicts beyond gate.MaxVerdicts
// ("…|more|n|").
func verdictPart(i int, stage bool) string {
	sep := quoteString(verdictSep)
	return fmt.Sprintf("arrayMap(v -> splitByChar(%s, v)[%d], arrayFilter(v -> splitByChar(%s, v)[2] != %s, %s))",
		sep, i, sep, quoteString(verdictMore), verdicts(stage))
}

// verdictPartColumns are the derived verdict columns (name, member of
// each entry), added by migration 4 and given their stage-aware DEFAULT
// by migration 5.
var verdictPartColumns = []struct {
	name   string
	member int
}{{"VerdictGates", 1}, {"VerdictActions", 2}}

// gateColumns hands out the columns generated from gate.Fields(), each
// once, by attribute key.
type gateColumns struct {
	byKey map[attribute.Key]gate.Field
	errs  []error
}

func newGateColumns(fields []gate.Field) *gateColumns {
	g := &gateColumns{byKey: map[attribute.Key]gate.Field{}}
	for _, f := range fields {
		g.byKey[f.Key] = f
	}
	return g
}

// take returns key's column, added by migration since. A key that
// gate.Fields() does not list gives no column and an error in g.errs.
func (g *gateColumns) take(key attribute.Key, since int) []column {
	f, ok := g.byKey[key]
	if !ok {
		g.errs = append(g.errs, fmt.Errorf("audit: gate.Fields() has no field %s", key))
		return nil
	}
	delete(g.byKey, key)
	c, err := gateColumn(f, since)
	if err != nil {
		g.errs = append(g.errs, err)
		return nil
	}
	return []column{c}
}

// decisionColumns lists gate_decisions' columns in table order, each with
// the attribute it comes from and the migration that added it. The gate
// columns (every gate.Fields() entry) are generated from gate.Fields():
// name, type and expression by field type (gateColumn); their places are
// fixed here, because existing tables keep their layout: the columns of
// the first table (version 2) in their original order, then each later
// migration's columns appended in the order it added them. A new
// gate.Fields() entry needs a migration that adds its column, and a take
// below; until then buildColumns reports it (and a test fails). The other keys are the GenAI
// semantic conventions v1.41.0 (go.opentelemetry.io/otel/semconv); no
// attribute name is spelled out here.
func decisionColumns() []column {
	cols, _ := buildColumns(gate.Fields())
	return cols
}

// buildColumns lays out the columns for fields (gate.Fields()); the
// errors name the fields left without a column, and the placed keys
// whose field is missing or has an unknown type. TestEveryGateFieldHasAColumn
// requires none.
func buildColumns(fields []gate.Field) ([]column, []error) {
	g := newGateColumns(fields)
	v2 := func(name, typ, expr string) []column { return []column{{name: name, typ: typ, expr: expr, since: 2}} }
	var cols []column
	for _, cs := range [][]column{
		v2("Timestamp", "DateTime64(9) CODEC(Delta, ZSTD(1))", "Timestamp"),
		v2("InsertedAt", "DateTime64(9) CODEC(Delta, ZSTD(1))", "now64(9)"),
		v2("TraceId", "String CODEC(ZSTD(1))", "TraceId"),
		v2("SpanId", "String CODEC(ZSTD(1))", "SpanId"),
		v2("ParentSpanId", "String CODEC(ZSTD(1))", "ParentSpanId"),
		v2("ServiceName", "LowCardinality(String) CODEC(ZSTD(1))", "ServiceName"),
		v2("Agent", "LowCardinality(String) CODEC(ZSTD(1))", attr(semconv.GenAIAgentNameKey)),
		v2("RunId", "String CODEC(ZSTD(1))", attr(gate.AttrRunID)),
		v2("TaskId", "String CODEC(ZSTD(1))", attr(gate.AttrTaskID)),
		v2("ToolName", "LowCardinality(String) CODEC(ZSTD(1))", attr(semconv.GenAIToolNameKey)),
		v2("ToolCallId", "String CODEC(ZSTD(1))", attr(semconv.GenAIToolCallIDKey)),
		g.take(gate.AttrGated, 2),
		g.take(gate.AttrOptOut, 2),
		g.take(gate.AttrAction, 2),
		g.take(gate.AttrReason, 2),
		g.take(gate.AttrSource, 2),
		g.take(gate.AttrRiskLevel, 2),
		g.take(gate.AttrApproval, 2),
		g.take(gate.AttrApprover, 2),
		g.take(gate.AttrError, 2),
		v2("ErrorType", "LowCardinality(String) CODEC(ZSTD(1))", attr(semconv.ErrorTypeKey)),
		v2("IsError", "Bool", "StatusCode = 'Error'"),
		v2("StatusMessage", "String CODEC(ZSTD(1))", "StatusMessage"),
		v2("Duration", "UInt64 CODEC(ZSTD(1))", "Duration"),
		g.take(gate.AttrDuration, 2),
		v2("Input", "String CODEC(ZSTD(3))", attr(semconv.GenAIToolCallArgumentsKey)),
		// Version 4: rewrites, rounds and every gate's verdict (read with
		// the single verdict a span leaves out restored), plus the
		// verdicts split into their gates and actions (arrays aligned
		// entry by entry) for grouping with arrayJoin.
		g.take(gate.AttrRewritten, 4),
		g.take(gate.AttrRewrittenBy, 4),
		g.take(gate.AttrOriginalInputHash, 4),
		g.take(gate.AttrRounds, 4),
		withRead(g.take(gate.AttrVerdicts, 4), verdicts(true)),
		// As migration 4 added them; migration 5 replaces their DEFAULT
		// with verdictPart(i, true) (stageDefaults).
		{{name: "VerdictGates", typ: "Array(LowCardinality(String)) DEFAULT " + verdictPart(1, false) + " CODEC(ZSTD(1))", since: 4}},
		{{name: "VerdictActions", typ: "Array(LowCardinality(String)) DEFAULT " + verdictPart(2, false) + " CODEC(ZSTD(1))", since: 4}},
		// Version 5: how far the call got (gate.stage); calls refused
		// before the gate are decisions ("gate" for older spans).
		g.take(gate.AttrStage, 5),
		// Version 6: the deciding gate's rule (gate.rule; "" for older
		// spans, which ByRule reads from the reason's "[rule]").
		g.take(gate.AttrRule, 6),
		// Version 7: how many calls the decision records (gate.calls on
		// the executor's grouped refusals; 1 for every other span and
		// for older rows).
		g.take(gate.AttrCalls, 7),
		// Version 8: the decision's place in its run's verifiable chain
		// (gate.chain.*: empty for older spans and bridged events, which
		// no chain holds).
		g.take(gate.AttrChainID, 8),
		g.take(gate.AttrChainSeq, 8),
		g.take(gate.AttrChainPrev, 8),
		g.take(gate.AttrChainHash, 8),
		// Version 9: durable approvals (gate.approval.id: the approval
		// request the ask was stored as; gate.approval.wait_ms: the time
		// from the ask to the answer; "" and 0 for older spans and for
		// approvers that keep no request or report no wait).
		g.take(gate.AttrApprovalID, 9),
		g.take(gate.AttrApprovalWait, 9),
	} {
		cols = append(cols, cs...)
	}
	errs := g.errs
	for _, f := range fields {
		if _, left := g.byKey[f.Key]; left {
			errs = append(errs, fmt.Errorf("audit: gate field %s (%s) has no gate_decisions column: add a migration and place it in decisionColumns", f.Key, f.Name))
		}
	}
	return cols, errs
}

// withRead sets the read expression of cs' columns.
func withRead(cs []column, read string) []column {
	for i := range cs {
		cs[i].read = read
	}
	return cs
}

// columnsAt is decisionColumns as schema version v has them.
func columnsAt(v int) []column {
	var out []column
	for _, c := range decisionColumns() {
		if c.since <= v {
			out = append(out, c)
		}
	}
	return out
}

// viewColumns are the columns of cols the view computes (expr set).
func viewColumns(cols []column) []column {
	var out []column
	for _, c := range cols {
		if c.expr != "" {
			out = append(out, c)
		}
	}
	return out
}

// gateSpanCondition selects the otel_traces rows that are gate decisions,
// by the same definition as otelbridge and the collector's audit filter: a
// span carrying gate.action, or gate.gated = true, or gate.opt_out = true
// (an agent opted out of the executor's gates: audited with an empty
// action). Tool calls the executor refused before any gate ran (unknown
// tool, unreachable tool, invalid input: gate.stage registry,
// reachability or input) carry gate.action = deny and gate.gated = false:
// decisions by this same condition (older producers recorded no action
// for them, and they were not stored). The condition is part of migrations
// 3 to 5, whose SQL is frozen: it does not change.
func gateSpanCondition() string {
	return fmt.Sprintf("(mapContains(SpanAttributes, %s) OR %s = 'true' OR %s = 'true')",
		quoteString(string(gate.AttrAction)), attr(gate.AttrGated), attr(gate.AttrOptOut))
}

// names joins the columns' names with ", ".
func names(cols []column) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.name
	}
	return strings.Join(out, ", ")
}

// selectList is what queries select from gate_decisions for a Decision:
// the columns the view fills (at the current schema version), each by its
// read expression, in the order scanDecision expects.
func selectList() string {
	cols := viewColumns(decisionColumns())
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.name
		if c.read != "" {
			out[i] = c.read
		}
	}
	return strings.Join(out, ", ")
}
