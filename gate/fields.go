package gate

import "go.opentelemetry.io/otel/attribute"

// FieldType is the shape of a Record field on a span, and so of its
// column in the audit store.
type FieldType int

// Field types.
const (
	FieldString     FieldType = iota + 1 // a string of many values
	FieldEnum                            // a string of few values (ClickHouse LowCardinality)
	FieldBool                            // a bool
	FieldInt                             // an int64
	FieldStringList                      // a string slice
)

// Field is one Record field as recorded on a span: its attribute key, the
// column name the audit store gives it and its type.
type Field struct {
	Key  attribute.Key
	Name string
	Type FieldType
	// Default is the value a span without the attribute stands for (a
	// span of an older producer, or a value Record.Attributes leaves out),
	// when it is not the type's zero value. For a FieldInt, an integer
	// that also stands for a recorded 0.
	Default string
}

// Fields lists the Record's span attributes in a fixed order: the single
// list the audit store's gate_decisions columns are generated from, so a
// new Record field is one edit here (and in Record.Attributes) plus a
// migration. A new field goes last (the audit store's columns and the
// chain's content encoding, StoredDecision, keep their order).
func Fields() []Field {
	return []Field{
		{AttrGated, "Gated", FieldBool, ""},
		{AttrOptOut, "OptOut", FieldBool, ""},
		{AttrAction, "Action", FieldEnum, ""},
		{AttrReason, "Reason", FieldString, ""},
		{AttrSource, "Source", FieldEnum, ""},
		{AttrRiskLevel, "RiskLevel", FieldEnum, ""},
		{AttrApproval, "Approval", FieldEnum, ""},
		{AttrApprover, "Approver", FieldEnum, ""},
		{AttrError, "ErrorKind", FieldEnum, ""},
		{AttrDuration, "GateDuration", FieldInt, ""},
		{AttrRewritten, "Rewritten", FieldBool, ""},
		{AttrRewrittenBy, "RewrittenBy", FieldEnum, ""},
		{AttrOriginalInputHash, "OriginalInputHash", FieldString, ""},
		{AttrRounds, "Rounds", FieldInt, ""},
		{AttrVerdicts, "Verdicts", FieldStringList, ""},
		{Key: AttrStage, Name: "Stage", Type: FieldEnum, Default: string(StageGate)},
		{AttrRule, "Rule", FieldEnum, ""},
		{Key: AttrCalls, Name: "Calls", Type: FieldInt, Default: "1"},
		{AttrChainID, "ChainId", FieldString, ""},
		{AttrChainSeq, "ChainSeq", FieldInt, ""},
		{AttrChainPrev, "ChainPrev", FieldString, ""},
		{AttrChainHash, "ChainHash", FieldString, ""},
		{AttrApprovalID, "ApprovalId", FieldString, ""},
		{AttrApprovalWait, "ApprovalWaitMs", FieldInt, ""},
	}
}
