package inbox

import (
	"encoding/json"
	"time"
)

// Status is where a request stands.
type Status string

// Request statuses.
const (
	// StatusPending: stored, not answered, not expired.
	StatusPending Status = "pending"
	// StatusApproved: a known approver approved it; not yet used.
	StatusApproved Status = "approved"
	// StatusDeclined: a known approver declined it.
	StatusDeclined Status = "declined"
	// StatusExpired: no answer before ExpiresAt, or the call that waited
	// for it (Block) stopped waiting.
	StatusExpired Status = "expired"
	// StatusUsed: an approved request that a resumed call consumed (the
	// call ran, or was let through the gates, once).
	StatusUsed Status = "used"
)

// Request is one durable approval request: the exact call an ask was
// raised for, and its answer once given. Times are UTC.
type Request struct {
	// ID names the request: "apr_" and 26 base32 characters (random).
	ID     string `json:"id"`
	Status Status `json:"status"`

	// The call, as it will run.
	Tool       string          `json:"tool"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`                   // the input the tool will receive (after any rewrite)
	Original   json.RawMessage `json:"originalInput,omitempty"` // the model's input, when a gate rewrote it
	CallHash   string          `json:"callHash"`                // gate.CallHash of the call: tool, input, call ID, agent, run
	Agent      string          `json:"agent"`
	RunID      string          `json:"runId"`
	TaskID     string          `json:"taskId,omitempty"`
	WorkingDir string          `json:"workingDir,omitempty"` // where the call runs (gate.ToolCallContext.WorkingDir), when known
	TraceID    string          `json:"traceId,omitempty"`    // the asking call's span (lowercase hex W3C IDs)
	SpanID     string          `json:"spanId,omitempty"`

	// The gate's ask.
	Reason string `json:"reason"`
	Risk   string `json:"risk,omitempty"`
	Rule   string `json:"rule,omitempty"`
	Source string `json:"source,omitempty"` // the gate that asked

	AskedAt   time.Time `json:"askedAt"`
	ExpiresAt time.Time `json:"expiresAt"`

	// Answer is set once a known approver answered; nil while pending.
	Answer *Answer `json:"answer,omitempty"`
	// UsedAt is when a resumed call consumed the answer (StatusUsed, or a
	// declined request that was resumed); zero before.
	UsedAt time.Time `json:"usedAt,omitzero"`
	// Note says why a request expired or was refused at resume, if known.
	Note string `json:"note,omitempty"`
}

// Answer is a human's answer to a request.
type Answer struct {
	Approve  bool   `json:"approve"`
	Approver string `json:"approver"` // a name known to Approvers
	Reason   string `json:"reason,omitempty"`
	// ForRun, on an approval: approve the same tool and input for the rest
	// of the run (gate.GrantScopeRun).
	ForRun bool `json:"forRun,omitempty"`
	// CallHash, when set, is the call the human saw (Request.CallHash as
	// shown); an answer whose CallHash differs from the stored one is
	// refused with ErrCallChanged.
	CallHash string    `json:"callHash,omitempty"`
	At       time.Time `json:"at"` // set by Inbox.Answer
}

// Filter selects requests for List. Zero fields select everything.
type Filter struct {
	Status []Status // any of these (after expiry is applied)
	Agent  string
	RunID  string
	// OlderThan keeps requests asked at least this long ago (measured from
	// Now).
	OlderThan time.Duration
	// Now is the time OlderThan is measured from (zero: the Inbox's clock
	// in Inbox.List, time.Now in a Store).
	Now time.Time
	// Limit caps the result (0: no cap). Newest first.
	Limit int
}
