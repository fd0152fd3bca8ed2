package audit

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Decision is one gate decision: one row of gate_decisions, i.e. one
// execute_tool span that carried gate attributes. The JSON names are the
// stable, documented field names of auditq's json, jsonl and csv output
// (docs/auditq.md).
type Decision struct {
	Timestamp    time.Time `json:"timestamp"`      // span start
	InsertedAt   time.Time `json:"inserted_at"`    // when the row reached gate_decisions
	TraceID      string    `json:"trace_id"`       // lowercase hex
	SpanID       string    `json:"span_id"`        // lowercase hex
	ParentSpanID string    `json:"parent_span_id"` // usually the invoke_agent span
	ServiceName  string    `json:"service_name"`   // resource service.name
	Agent        string    `json:"agent"`          // gen_ai.agent.name
	RunID        string    `json:"run_id"`         // gate.AttrRunID
	TaskID       string    `json:"task_id"`        // gate.AttrTaskID
	ToolName     string    `json:"tool_name"`      // gen_ai.tool.name
	ToolCallID   string    `json:"tool_call_id"`   // gen_ai.tool.call.id
	Gated        bool      `json:"gated"`          // gate.gated
	OptOut       bool      `json:"opt_out"`        // gate.opt_out
	Action       string    `json:"action"`         // gate.action: allow | deny
	Reason       string    `json:"reason"`         // gate.reason
	Source       string    `json:"source"`         // gate.source
	RiskLevel    string    `json:"risk_level"`     // gate.risk.level: safe | review | high | ""
	Approval     string    `json:"approval"`       // gate.approval: approved | declined | timeout | invalid | pending | ""
	Approver     string    `json:"approver"`       // gate.approver
	ErrorKind    string    `json:"error_kind"`     // gate.error: fail-closed cause
	ErrorType    string    `json:"error_type"`     // error.type
	IsError      bool      `json:"is_error"`       // span status Error
	StatusMsg    string    `json:"status_message"` // span status message
	DurationNs   uint64    `json:"duration_ns"`    // whole tool call, ns
	GateDuration uint64    `json:"gate_duration_ns"`
	Input        string    `json:"input"` // gen_ai.tool.call.arguments (redacted), when recorded
	// Schema version 4 (rows written before read false, "" and 0, and
	// Verdicts the deciding gate's verdict).
	Rewritten         bool   `json:"rewritten"`             // gate.rewritten: the input that ran is a gate's rewrite
	RewrittenBy       string `json:"rewritten_by"`          // gate.rewritten_by: the gate of the last accepted rewrite
	OriginalInputHash string `json:"original_input_sha256"` // gate.input.original_sha256: hex SHA-256 of the model's input
	Rounds            uint64 `json:"rounds"`                // gate.rounds: times the gates ran; 0 = not recorded (one round)
	// Verdicts is every gate's verdict in the order the gates ran, each
	// "gate|action|risk|rule" (action allow, deny, ask or rewrite;
	// gate.ParseVerdict splits one): gate.verdicts, or for a span without
	// it (a single verdict that is the decision itself, or an older
	// producer) the one verdict Source|action|RiskLevel| (action "ask"
	// when an approver was asked; the rule is not recorded apart from the
	// list). Empty when no gate ran; never nil.
	Verdicts []string `json:"verdicts"`
	// Stage is how far the call got (gate.stage, schema version 5):
	// registry (unknown tool), reachability (tool not reachable for the
	// agent), input (invalid input) — refused by the executor before any
	// gate, with action deny, source "executor" and the executor's error
	// type as error_kind — or gate (it reached the gate; rows of older
	// producers read gate).
	Stage string `json:"stage"`
	// Rule is the deciding gate's rule (gate.rule, schema version 6:
	// Decision.Rule of the gate that decided, such as a classifier rule ID
	// or a custom gate's rule name); "" when the gate named none and in
	// rows of older producers (ByRule then reads the reason's "[rule]").
	Rule string `json:"rule"`
	// Calls is how many tool calls the decision records (gate.calls,
	// schema version 7): 1 for a span of one call (and in rows of older
	// producers); more for a span of the executor's grouped refusals (an
	// aborted run's calls past its refusal budget, one span per up to 64
	// calls). Stats counts calls: a grouped row counts Calls times.
	Calls uint64 `json:"calls"`
	// Interrupted: a write-ahead (strict mode) call whose agent process
	// ended while the tool ran; the spool uploaded the decision it had
	// committed before the tool ran, with span status Error and the message
	// InterruptedStatus (IsError and StatusMsg; no column of its own). The
	// tool may or may not have finished.
	Interrupted bool `json:"interrupted"`
	// The decision's place in its run's verifiable chain (gate.chain.*,
	// schema version 8; "" and 0 for rows of older producers and bridged
	// events): the chain's ID, the 1-based position, the previous
	// position's hash and this one's (lowercase hex SHA-256; see
	// gate.Link and `auditq verify`, which reports on them; not in
	// auditq decisions' output fields).
	ChainID   string `json:"-"`
	ChainSeq  uint64 `json:"-"`
	ChainPrev string `json:"-"`
	ChainHash string `json:"-"`
	// ApprovalID names the durable approval request an ask was stored as
	// (gate.approval.id, schema version 9): the pending decision (approval
	// pending, action deny) and the decision of the call resumed after
	// the answer carry the same ID. "" when the approver keeps no request,
	// when nobody was asked, and in rows of older producers.
	ApprovalID string `json:"approval_id"`
	// ApprovalWaitMs is the time from the ask to the answer in
	// milliseconds (gate.approval.wait_ms, schema version 9): for a
	// durable request its answer's time minus its ask's, else the time
	// the executor waited for the approver (a wait under a millisecond
	// reads 1). 0 when not known: nobody was asked, the ask is pending, or
	// a row of an older producer.
	ApprovalWaitMs uint64 `json:"approval_wait_ms"`
}

// scanDecision reads one row selected with selectList().
func scanDecision(rows driver.Rows) (Decision, error) {
	var d Decision
	err := rows.Scan(&d.Timestamp, &d.InsertedAt, &d.TraceID, &d.SpanID, &d.ParentSpanID, &d.ServiceName,
		&d.Agent, &d.RunID, &d.TaskID, &d.ToolName, &d.ToolCallID, &d.Gated, &d.OptOut, &d.Action,
		&d.Reason, &d.Source, &d.RiskLevel, &d.Approval, &d.Approver, &d.ErrorKind, &d.ErrorType,
		&d.IsError, &d.StatusMsg, &d.DurationNs, &d.GateDuration, &d.Input,
		&d.Rewritten, &d.RewrittenBy, &d.OriginalInputHash, &d.Rounds, &d.Verdicts, &d.Stage, &d.Rule, &d.Calls,
		&d.ChainID, &d.ChainSeq, &d.ChainPrev, &d.ChainHash, &d.ApprovalID, &d.ApprovalWaitMs)
	if d.Verdicts == nil {
		d.Verdicts = []string{}
	}
	d.Interrupted = d.IsError && d.StatusMsg == InterruptedStatus
	return d, err
}

// Filter selects decisions. Zero fields do not filter. String fields match
// the stored value exactly, byte for byte, except Reason, a
// case-insensitive substring of it. Any bytes may be given (they are bound
// as escaped query parameters, see Params); the stored value is what the
// producer recorded: gate.SafeText's form (an invalid byte as the text
// \xNN, names cut at gate.MaxNameBytes), control characters kept.
type Filter struct {
	Since time.Time // Timestamp >= Since
	Until time.Time // Timestamp < Until
	Agent string
	Tool  string
	// Action is "allow" or "deny".
	Action  string
	Risk    string
	Reason  string
	TraceID string
	RunID   string
	// Service is the resource service.name (ServiceName).
	Service string
	// Rewritten keeps only decisions whose input a gate rewrote
	// (gate.rewritten); false does not filter.
	Rewritten bool
	// Stage is one of gate.Stages() ("registry", "reachability", "input",
	// "gate"): the calls that got that far (Decision.Stage).
	Stage string
	// Interrupted keeps only interrupted calls (Decision.Interrupted:
	// status Error with the message InterruptedStatus); false does not
	// filter.
	Interrupted bool
	// Approval is an approval outcome (gate.approval: "approved",
	// "declined", "timeout", "invalid" or "pending"): the asks that ended
	// so. ApprovalNone keeps the decisions nobody was asked about.
	Approval string
	// Approver is who answered the asks (gate.approver).
	Approver string
	// ApprovalID is a durable approval request's ID (gate.approval.id):
	// its pending decision and the decision of the call resumed after it.
	ApprovalID string
}

// ApprovalNone is the Filter.Approval of the decisions without an ask
// (an empty gate.approval).
const ApprovalNone = "none"

// InterruptedStatus is the span status message of an interrupted call: a
// call recorded write-ahead (strict mode) whose agent process ended while
// the tool ran, uploaded by the spool when it was next opened with
// toolgate.call.interrupted=true and status Error. It is
// otelbridge/spool.InterruptedMessage (audit does not import the runtime;
// a test holds them equal).
const InterruptedStatus = "agent process ended before the call finished"

// where renders f as a WHERE clause over gate_decisions, with parameters.
func (f Filter) where(p *Params) string {
	var conds []string
	add := func(cond, name, value string) {
		if value != "" {
			conds = append(conds, cond)
			p.String(name, value)
		}
	}
	if !f.Since.IsZero() {
		conds = append(conds, "Timestamp >= fromUnixTimestamp64Nano({since:Int64})")
		p.Int64("since", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, "Timestamp < fromUnixTimestamp64Nano({until:Int64})")
		p.Int64("until", f.Until.UnixNano())
	}
	add("Agent = {agent:String}", "agent", f.Agent)
	add("ToolName = {tool:String}", "tool", f.Tool)
	add("Action = {action:String}", "action", f.Action)
	add("RiskLevel = {risk:String}", "risk", f.Risk)
	add("positionCaseInsensitiveUTF8(Reason, {reason:String}) > 0", "reason", f.Reason)
	add("TraceId = {trace:String}", "trace", strings.ToLower(f.TraceID))
	add("RunId = {run:String}", "run", f.RunID)
	add("ServiceName = {service:String}", "service", f.Service)
	add("Stage = {stage:String}", "stage", f.Stage)
	if f.Approval == ApprovalNone {
		conds = append(conds, "Approval = ''")
	} else {
		add("Approval = {approval:String}", "approval", f.Approval)
	}
	add("Approver = {approver:String}", "approver", f.Approver)
	add("ApprovalId = {approval_id:String}", "approval_id", f.ApprovalID)
	if f.Rewritten {
		conds = append(conds, "Rewritten")
	}
	if f.Interrupted {
		conds = append(conds, "IsError AND StatusMessage = {interrupted:String}")
		p.String("interrupted", InterruptedStatus)
	}
	if len(conds) == 0 {
		return ""
	}
	return "\nWHERE " + strings.Join(conds, "\n  AND ")
}

// Cursor marks a position in the newest-first order of decisions: the
// sorting key (Timestamp, SpanID, Action, Agent, ToolName) of the last
// decision of a page (see [Decision.Cursor]). A Cursor with only
// Timestamp and SpanID set is behind every decision sharing both.
type Cursor struct {
	Timestamp time.Time
	SpanID    string
	// Action, Agent and ToolName break ties between decisions that share
	// a span ID and a Timestamp (a producer that reuses span IDs).
	Action, Agent, ToolName string
}

// String encodes c as an opaque page token: base64url of
// "nanoseconds:" then base64url of SpanID, Action, Agent and ToolName,
// separated by ":" (any bytes a producer wrote round-trip).
func (c Cursor) String() string {
	s := strconv.FormatInt(c.Timestamp.UnixNano(), 10)
	for _, v := range []string{c.SpanID, c.Action, c.Agent, c.ToolName} {
		s += ":" + base64.RawURLEncoding.EncodeToString([]byte(v))
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// ErrBadCursor is wrapped by ParseCursor's errors.
var ErrBadCursor = errors.New("audit: bad page token")

// ParseCursor decodes a token made by Cursor.String (also the shorter
// tokens of earlier versions, without Action, Agent and ToolName).
func ParseCursor(token string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: %v", ErrBadCursor, err)
	}
	fields := strings.Split(string(raw), ":")
	if len(fields) != 2 && len(fields) != 5 {
		return Cursor{}, fmt.Errorf("%w: %d fields, want 2 or 5", ErrBadCursor, len(fields))
	}
	n, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: %v", ErrBadCursor, err)
	}
	c := Cursor{Timestamp: time.Unix(0, n).UTC()}
	if len(fields) == 2 {
		// A token of an earlier version: the span ID as it is, lowercase hex.
		for _, r := range fields[1] {
			if !strings.ContainsRune("0123456789abcdef", r) {
				return Cursor{}, fmt.Errorf("%w: span ID %q is not lowercase hex", ErrBadCursor, fields[1])
			}
		}
		c.SpanID = fields[1]
		return c, nil
	}
	var vs [4]string
	for i, f := range fields[1:] {
		b, err := base64.RawURLEncoding.DecodeString(f)
		if err != nil {
			return Cursor{}, fmt.Errorf("%w: %v", ErrBadCursor, err)
		}
		vs[i] = string(b)
	}
	c.SpanID, c.Action, c.Agent, c.ToolName = vs[0], vs[1], vs[2], vs[3]
	return c, nil
}

// Page is a request for one page of decisions.
type Page struct {
	// Limit is the page size; 0 means DefaultLimit. At most MaxLimit.
	Limit int
	// After continues after this cursor (the previous page's Next).
	After *Cursor
}

// Page size bounds.
const (
	DefaultLimit = 100
	MaxLimit     = 100000
)

// DecisionPage is one page of decisions, newest first.
type DecisionPage struct {
	Decisions []Decision
	// Next continues the listing; nil when this page is the last.
	Next *Cursor
}

// narrowWindows are the look-back windows Decisions tries, from the
// newest end of the range, before it reads the whole range: the newest page
// of a large range is almost always inside the last hour, and a narrower
// time range reads far fewer granules.
func narrowWindows() []time.Duration {
	return []time.Duration{time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 31 * 24 * time.Hour}
}

// Decisions lists the decisions matching f, newest first (by Timestamp,
// then SpanID descending), one page at a time. Duplicated spans appear
// once (the query reads FINAL).
//
// A page is looked for in growing windows back from the newest end of the
// range (the cursor, Until, or now): the newest Limit+1 decisions within a
// window [lo, …) that holds at least Limit+1 are the newest overall, so the
// first window that fills the page answers exactly.
func (s *Store) Decisions(ctx context.Context, f Filter, pg Page) (DecisionPage, error) {
	limit := pg.Limit
	switch {
	case limit == 0:
		limit = DefaultLimit
	case limit < 0 || limit > MaxLimit:
		return DecisionPage{}, fmt.Errorf("audit: page limit %d out of range 1..%d", limit, MaxLimit)
	}
	anchor := time.Now()
	switch {
	case pg.After != nil:
		anchor = pg.After.Timestamp
	case !f.Until.IsZero():
		anchor = f.Until
	}
	for _, w := range narrowWindows() {
		lo := anchor.Add(-w)
		if !f.Since.IsZero() && !lo.After(f.Since) {
			break // the window is the whole range: query it once below
		}
		nf := f
		nf.Since = lo
		page, n, err := s.decisionsPage(ctx, nf, pg.After, limit)
		if err != nil || n > limit {
			return page, err
		}
	}
	page, _, err := s.decisionsPage(ctx, f, pg.After, limit)
	return page, err
}

// decisionsPage runs one page query; n is the number of rows read (up to
// limit+1).
func (s *Store) decisionsPage(ctx context.Context, f Filter, after *Cursor, limit int) (DecisionPage, int, error) {
	var p Params
	where := f.where(&p)
	if after != nil {
		where = andWhere(where, after.afterCursor(&p))
	}
	p.Int64("limit", int64(limit)+1)
	sql := "SELECT " + selectList() + "\nFROM " + s.cfg.read(DecisionsTable) + " FINAL" + where +
		"\nORDER BY " + newestFirst + "\nLIMIT {limit:UInt32}" + finalSettings
	rows, err := s.query(ctx, "decisions", sql, &p)
	if err != nil {
		return DecisionPage{}, 0, err
	}
	defer rows.Close()
	var out DecisionPage
	for rows.Next() {
		d, err := scanDecision(rows)
		if err != nil {
			return DecisionPage{}, 0, s.wrap("decisions", err)
		}
		out.Decisions = append(out.Decisions, d)
	}
	if err := rows.Err(); err != nil {
		return DecisionPage{}, 0, s.wrap("decisions", err)
	}
	n := len(out.Decisions)
	if n > limit {
		out.Decisions = out.Decisions[:limit]
		last := out.Decisions[limit-1]
		next := last.Cursor()
		out.Next = &next
	}
	return out, n, nil
}
