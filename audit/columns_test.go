package audit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/gate"
)

// Every entry of gate.Fields() has its gate_decisions column, typed by its
// field type and computed from its attribute. A new Record field fails
// here until a migration adds its column (and buildColumns places it).
func TestEveryGateFieldHasAColumn(t *testing.T) {
	cols, errs := buildColumns(gate.Fields())
	require.Empty(t, errs)
	byName := map[string]column{}
	for _, c := range cols {
		require.NotContains(t, byName, c.name, "column %s twice", c.name)
		byName[c.name] = c
	}
	wantType := map[gate.FieldType]string{
		gate.FieldString:     "String CODEC(ZSTD(1))",
		gate.FieldEnum:       "LowCardinality(String) CODEC(ZSTD(1))",
		gate.FieldBool:       "Bool",
		gate.FieldInt:        "UInt64 CODEC(ZSTD(1))",
		gate.FieldStringList: "Array(String) CODEC(ZSTD(1))",
	}
	for _, f := range gate.Fields() {
		c, ok := byName[f.Name]
		if !assert.True(t, ok, "gate field %s (%s) has no column", f.Key, f.Name) {
			continue
		}
		assert.Equal(t, f.Key, c.key, f.Name)
		typ := wantType[f.Type]
		if f.Default != "" {
			def := "'" + f.Default + "'"
			if f.Type == gate.FieldInt {
				def = f.Default
			}
			typ = strings.Replace(typ, " CODEC", " DEFAULT "+def+" CODEC", 1)
		}
		assert.Equal(t, typ, c.typ, f.Name)
		assert.Contains(t, c.expr, attr(f.Key), f.Name)
		assert.GreaterOrEqual(t, c.since, 2, f.Name)
	}
}

func TestBuildColumnsReportsUnplacedFields(t *testing.T) {
	tests := []struct {
		name    string
		fields  func([]gate.Field) []gate.Field
		wantErr string
	}{
		{
			name: "a new field without a column",
			fields: func(fs []gate.Field) []gate.Field {
				return append(fs, gate.Field{Key: attribute.Key("gate.new_thing"), Name: "NewThing", Type: gate.FieldString})
			},
			wantErr: "gate field gate.new_thing (NewThing) has no gate_decisions column",
		},
		{
			name: "a placed field that is gone",
			fields: func(fs []gate.Field) []gate.Field {
				var out []gate.Field
				for _, f := range fs {
					if f.Key != gate.AttrRounds {
						out = append(out, f)
					}
				}
				return out
			},
			wantErr: "gate.Fields() has no field gate.rounds",
		},
		{
			name: "an unknown field type",
			fields: func(fs []gate.Field) []gate.Field {
				out := append([]gate.Field(nil), fs...)
				for i := range out {
					if out[i].Key == gate.AttrReason {
						out[i].Type = 99
					}
				}
				return out
			},
			wantErr: "unknown field type 99",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := buildColumns(tc.fields(gate.Fields()))
			require.Len(t, errs, 1)
			assert.Contains(t, errs[0].Error(), tc.wantErr)
		})
	}
}

// The table's layout: the columns of the first table in their original
// order, then version 4's, 5's, 6's, 7's, 8's and 9's, appended (an upgraded table has
// the same).
func TestColumnLayout(t *testing.T) {
	var v2, v4, v5, v6, v7, v8, v9 []string
	for _, c := range decisionColumns() {
		switch c.since {
		case 2:
			v2 = append(v2, c.name)
		case 4:
			v4 = append(v4, c.name)
		case 5:
			v5 = append(v5, c.name)
		case 6:
			v6 = append(v6, c.name)
		case 7:
			v7 = append(v7, c.name)
		case 8:
			v8 = append(v8, c.name)
		case 9:
			v9 = append(v9, c.name)
		default:
			t.Errorf("column %s: since %d", c.name, c.since)
		}
	}
	assert.Equal(t, "Timestamp InsertedAt TraceId SpanId ParentSpanId ServiceName Agent RunId TaskId ToolName ToolCallId "+
		"Gated OptOut Action Reason Source RiskLevel Approval Approver ErrorKind ErrorType IsError StatusMessage Duration "+
		"GateDuration Input", strings.Join(v2, " "))
	assert.Equal(t, "Rewritten RewrittenBy OriginalInputHash Rounds Verdicts VerdictGates VerdictActions", strings.Join(v4, " "))
	assert.Equal(t, "Stage", strings.Join(v5, " "))
	assert.Equal(t, "Rule", strings.Join(v6, " "))
	assert.Equal(t, "Calls", strings.Join(v7, " "))
	assert.Equal(t, "ChainId ChainSeq ChainPrev ChainHash", strings.Join(v8, " "))
	assert.Equal(t, "ApprovalId ApprovalWaitMs", strings.Join(v9, " "))
	// The derived columns are the table's own (DEFAULT), not the view's.
	view := names(viewColumns(decisionColumns()))
	assert.NotContains(t, view, "VerdictGates")
	assert.True(t, strings.HasSuffix(view, "Input, Rewritten, RewrittenBy, OriginalInputHash, Rounds, Verdicts, Stage, Rule, Calls, ChainId, ChainSeq, ChainPrev, ChainHash, ApprovalId, ApprovalWaitMs"), view)
	// Queries read Verdicts with the verdict a span leaves out restored
	// (none for a call refused before the gate).
	assert.True(t, strings.HasSuffix(selectList(), ", Rounds, "+verdicts(true)+", Stage, Rule, Calls, ChainId, ChainSeq, ChainPrev, ChainHash, ApprovalId, ApprovalWaitMs"), selectList())
}

// Stage reads "gate" for spans without gate.stage (older producers), in
// the view and as the column's DEFAULT for rows stored before version 5.
func TestStageColumn(t *testing.T) {
	var stage column
	for _, c := range decisionColumns() {
		if c.name == "Stage" {
			stage = c
		}
	}
	assert.Equal(t, "LowCardinality(String) DEFAULT 'gate' CODEC(ZSTD(1))", stage.typ)
	assert.Equal(t, "if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage'])", stage.expr)
	_, err := gateColumn(gate.Field{Key: "k", Name: "K", Type: gate.FieldBool, Default: "x"}, 5)
	assert.Error(t, err, "a default is for strings")
}

// Calls reads 1 for spans without gate.calls (one call: every span but
// the executor's grouped refusals, and older producers'), for a 0 or a
// value that is not a number, and as the column's DEFAULT for rows stored
// before version 7. An int default must be a UInt64.
func TestCallsColumn(t *testing.T) {
	var calls column
	for _, c := range decisionColumns() {
		if c.name == "Calls" {
			calls = c
		}
	}
	assert.Equal(t, "UInt64 DEFAULT 1 CODEC(ZSTD(1))", calls.typ)
	assert.Equal(t, "if(toUInt64OrZero(SpanAttributes['gate.calls']) = 0, toUInt64(1), toUInt64OrZero(SpanAttributes['gate.calls']))", calls.expr)
	assert.Equal(t, 7, calls.since)
	for _, bad := range []string{"x", "-1", "1.5", "1)"} {
		_, err := gateColumn(gate.Field{Key: "k", Name: "K", Type: gate.FieldInt, Default: bad}, 7)
		assert.Error(t, err, bad)
	}
}
