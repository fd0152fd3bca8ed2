package gate

import (
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

// Verdict is one gate's answer within a decision, as Judge records it.
type Verdict struct {
	// Gate names the gate (its Source).
	Gate string `json:"gate"`
	// Action is what the gate answered: allow, deny or ask. A rewrite is
	// Rewrote with the action it came with.
	Action Action `json:"action"`
	// Rewrote: the gate rewrote the input (the round ended there and every
	// gate judged the rewrite in the next round).
	Rewrote bool `json:"rewrote,omitempty"`
	// Risk is the level the gate reported, if any.
	Risk RiskLevel `json:"risk,omitempty"`
	// Rule is the rule the gate applied, if it names one.
	Rule string `json:"rule,omitempty"`
	// Reason is the gate's own reason (not redacted by gate; the executor
	// redacts it before recording).
	Reason string `json:"reason,omitempty"`
	// ErrorKind is set when the gate failed closed (ErrorKind*).
	ErrorKind string `json:"error,omitempty"`
}

// verdictAction is the action written in AttrVerdicts.
func (v Verdict) verdictAction() string {
	if v.Rewrote {
		return "rewrite"
	}
	return field(string(v.Action))
}

// Record is the one decision record of one tool call: what the executor
// returns in ToolResult.Gate, hands to trace hooks, encodes on the call's
// span (Attributes), what otelbridge/bridge encodes for bridged events with the
// same function, and what the audit store's gate_decisions columns are
// generated from (Fields).
type Record struct {
	// Gated: at least one gate ran.
	Gated bool `json:"gated"`
	// Action is the final action: ActionAllow or ActionDeny (an ask ends as
	// one of them; see Approval). Empty when not gated.
	Action Action `json:"action,omitempty"`
	// Reason is the deciding reason (redacted and bounded by the executor).
	Reason string `json:"reason,omitempty"`
	// Source names the gate that decided: the denying gate, the asking
	// gate, or for an allow the gate of the final round that reported the
	// highest risk (else the first gate of that round).
	Source string `json:"source,omitempty"`
	// Rule is the deciding gate's rule, if it names one.
	Rule string `json:"rule,omitempty"`
	// ErrorKind is set on a fail-closed denial (ErrorKind*).
	ErrorKind string `json:"error,omitempty"`
	// Risk is the highest level any gate of the final round reported.
	Risk RiskLevel `json:"risk,omitempty"`
	// Approval and Approver are set when the decision was an ask.
	Approval ApprovalOutcome `json:"approval,omitempty"`
	Approver string          `json:"approver,omitempty"`
	// ApprovalID names the durable approval request the ask was stored as
	// (gate.approval.id; approve/inbox), "" when the approver keeps none.
	ApprovalID string `json:"approvalId,omitempty"`
	// ApprovalWait is the time from the ask to the answer
	// (gate.approval.wait_ms): AnsweredAt−AskedAt of a durable request, or
	// the time the executor waited for an in-process approver; 0 when
	// unknown or not asked.
	ApprovalWait time.Duration `json:"approvalWaitNs,omitempty"`
	// OptOut: the executor's owner opted this agent out of the
	// executor-level gates.
	OptOut bool `json:"optOut,omitempty"`
	// Rewritten: the input that ran (or was judged last) is a gate's
	// rewrite; RewrittenBy names the gate of the last accepted rewrite and
	// OriginalInputHash is InputHash of the model's raw input.
	Rewritten         bool   `json:"rewritten,omitempty"`
	RewrittenBy       string `json:"rewrittenBy,omitempty"`
	OriginalInputHash string `json:"originalInputSha256,omitempty"`
	// Rounds is how many times the gates ran (1 + accepted rewrites).
	Rounds int `json:"rounds,omitempty"`
	// Verdicts is every gate's verdict, in order, over all rounds.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Duration is the time spent deciding, approval included.
	Duration time.Duration `json:"durationNs,omitempty"`
	// Stage is how far the call got (see Stage): StageGate for a call that
	// passed the executor's checks; a stage before it (Stage.PreGate:
	// cancelled, run, registry, reachability, input) for one the executor
	// refused itself, before any gate —
	// then Gated is false, Action is ActionDeny, Source is SourceExecutor
	// and ErrorKind is the executor's error type. Empty in records of
	// producers that do not know stages (read as StageGate).
	Stage Stage `json:"stage,omitempty"`
	// Calls is how many tool calls this decision records: 0 or 1 is one
	// call (the call it is the record of); more is a group of calls
	// decided alike, which the executor makes of the calls an aborted run
	// makes past its refusal budget (one span per up to 64 refused calls,
	// Stage StageRun). Encoded as gate.calls when greater than 1; audit
	// reads a span without it as 1 call.
	Calls int64 `json:"calls,omitempty"`
	// Chain is the decision's place in its run's verifiable chain (see
	// Link); zero when the producer does not chain its decisions (bridged
	// events, ungated calls the store does not keep).
	Chain Link `json:"chain,omitzero"`
}

// Attributes appends r's span attributes (the gate.* keys of
// attributes.go, and sampling.priority=1 on a denial) to attrs and returns
// the extended slice. It is the only encoder of a decision: the executor
// and otelbridge/bridge both use it. Every string is passed through SafeText
// (names and identifiers bounded by MaxNameBytes, the reason by
// reasonLimit, or MaxTextBytes when reasonLimit <= 0).
//
// Shapes: gate.gated and gate.opt_out (when true) and gate.rewritten (when
// true) are bools; gate.duration_ns and gate.rounds (when > 1) are int64;
// gate.verdicts is a string slice; the rest are strings, recorded only when
// not empty. gate.stage is recorded when Stage is set. A record that is
// neither gated nor refused before the gate (Stage.PreGate) records only
// gate.gated, gate.opt_out, gate.stage and gate.calls; a pre-gate refusal records its
// action, source, reason and error kind like a gated decision (no
// gate.duration_ns: no gate ran). The gate.chain.* keys are recorded when
// Chain is set (Link.Attributes). gate.approval.id is recorded when
// ApprovalID is set and gate.approval.wait_ms (int64, ApprovalWaitMs) when
// ApprovalWait is positive, on a gated or pre-gate record.
func (r *Record) Attributes(attrs []attribute.KeyValue, reasonLimit int) []attribute.KeyValue {
	attrs = append(attrs, AttrGated.Bool(r.Gated))
	if r.OptOut {
		attrs = append(attrs, AttrOptOut.Bool(true))
	}
	if r.Stage != "" {
		attrs = append(attrs, AttrStage.String(SafeText(string(r.Stage), MaxNameBytes)))
	}
	if r.Calls > 1 {
		attrs = append(attrs, AttrCalls.Int64(r.Calls))
	}
	attrs = r.Chain.Attributes(attrs)
	preGate := r.Stage.PreGate()
	if !r.Gated && !preGate {
		return attrs
	}
	attrs = append(attrs,
		AttrAction.String(SafeText(string(r.Action), MaxNameBytes)),
		AttrSource.String(SafeText(r.Source, MaxNameBytes)))
	if r.Gated || r.Duration != 0 {
		attrs = append(attrs, AttrDuration.Int64(int64(r.Duration)))
	}
	if r.Reason != "" {
		attrs = append(attrs, AttrReason.String(SafeText(r.Reason, reasonLimit)))
	}
	if r.Rule != "" {
		attrs = append(attrs, AttrRule.String(SafeText(r.Rule, MaxNameBytes)))
	}
	if r.ErrorKind != "" {
		attrs = append(attrs, AttrError.String(SafeText(r.ErrorKind, MaxNameBytes)))
	}
	if r.Approval != "" {
		attrs = append(attrs, AttrApproval.String(SafeText(string(r.Approval), MaxNameBytes)), AttrApprover.String(SafeText(r.Approver, MaxNameBytes)))
	}
	if r.ApprovalID != "" {
		attrs = append(attrs, AttrApprovalID.String(SafeText(r.ApprovalID, MaxNameBytes)))
	}
	if ms := r.ApprovalWaitMs(); ms > 0 {
		attrs = append(attrs, AttrApprovalWait.Int64(ms))
	}
	if r.Risk != RiskNone {
		attrs = append(attrs, AttrRiskLevel.String(SafeText(string(r.Risk), MaxNameBytes)))
	}
	if r.Rewritten {
		attrs = append(attrs, AttrRewritten.Bool(true), AttrRewrittenBy.String(SafeText(r.RewrittenBy, MaxNameBytes)),
			AttrOriginalInputHash.String(SafeText(r.OriginalInputHash, MaxNameBytes)))
	}
	if r.Rounds > 1 {
		attrs = append(attrs, AttrRounds.Int(r.Rounds))
	}
	if len(r.Verdicts) > 1 || len(r.Verdicts) == 1 && !r.onlyVerdictIsFinal() {
		attrs = append(attrs, AttrVerdicts.StringSlice(EncodeVerdicts(r.Verdicts)))
	}
	if r.Action == ActionDeny {
		attrs = append(attrs, AttrSamplingPriority.Int(1))
	}
	return attrs
}

// ApprovalWaitMs is ApprovalWait as gate.approval.wait_ms records it:
// whole milliseconds, a positive wait under one millisecond as 1 (so a
// recorded wait is never read as "unknown"), 0 when ApprovalWait is not
// positive.
func (r *Record) ApprovalWaitMs() int64 {
	if r.ApprovalWait <= 0 {
		return 0
	}
	return max(r.ApprovalWait.Milliseconds(), 1)
}

// onlyVerdictIsFinal: the single verdict says no more than the final
// decision's own attributes (same gate, action and risk, no rule — a
// verdict's rule is recorded only in gate.verdicts (gate.rule is the
// decision's), and readers restore a left-out verdict without one —, no rewrite, no approval turning
// an ask around), so gate.verdicts is left out.
func (r *Record) onlyVerdictIsFinal() bool {
	v := &r.Verdicts[0]
	return !v.Rewrote && v.Action == r.Action && r.Approval == "" && v.Gate == r.Source && v.Risk == r.Risk && v.Rule == ""
}

// MaxVerdicts bounds the verdicts recorded on a span; later ones are
// summarised in one last entry "…|more|n|" (n verdicts not listed).
const MaxVerdicts = 64

// EncodeVerdicts renders verdicts as AttrVerdicts entries
// ("gate|action|risk|rule"); '|' inside a name or rule becomes '/', and
// each field passes through SafeText.
func EncodeVerdicts(vs []Verdict) []string {
	n := min(len(vs), MaxVerdicts)
	var more string
	if len(vs) > n {
		more = "…|more|" + strconv.Itoa(len(vs)-n) + "|"
	}
	// Every entry is a substring of one string: two allocations for any
	// number of verdicts (the text and the slice). The size is exact unless
	// SafeText has to escape a field.
	size := len(more)
	for i := range vs[:n] {
		v := &vs[i]
		action := min(len(v.Action), MaxNameBytes)
		if v.Rewrote {
			action = len("rewrite")
		}
		size += min(len(v.Gate), MaxNameBytes) + action + min(len(v.Risk), MaxNameBytes) + min(len(v.Rule), MaxNameBytes) + 3
	}
	var b strings.Builder
	b.Grow(size)
	var ends [MaxVerdicts]int
	for i := range vs[:n] {
		v := &vs[i]
		putField(&b, v.Gate)
		b.WriteByte('|')
		if v.Rewrote {
			b.WriteString("rewrite") // as verdictAction
		} else {
			putField(&b, string(v.Action))
		}
		b.WriteByte('|')
		putField(&b, string(v.Risk))
		b.WriteByte('|')
		putField(&b, v.Rule)
		ends[i] = b.Len()
	}
	b.WriteString(more)
	text := b.String()
	out := make([]string, 0, n+1)
	start := 0
	for _, end := range ends[:n] {
		out = append(out, text[start:end])
		start = end
	}
	if more != "" {
		out = append(out, text[start:])
	}
	return out
}

// ParseVerdict splits one AttrVerdicts entry into gate, action, risk and
// rule.
func ParseVerdict(entry string) (gate, action, risk, rule string) {
	parts := strings.SplitN(entry, "|", 4)
	for len(parts) < 4 {
		parts = append(parts, "")
	}
	return parts[0], parts[1], parts[2], parts[3]
}

func field(s string) string {
	s = SafeText(s, MaxNameBytes)
	if strings.IndexByte(s, '|') >= 0 {
		s = strings.ReplaceAll(s, "|", "/")
	}
	return s
}

// putField writes field(s) to b.
func putField(b *strings.Builder, s string) {
	s = SafeText(s, MaxNameBytes)
	for {
		i := strings.IndexByte(s, '|')
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteByte('/')
		s = s[i+1:]
	}
	b.WriteString(s)
}
