package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/toolgate/toolgate/gate"
)

// EventType is the kind of an after-the-fact trace event, as in
// open-multi-agent's TraceEvent union (src/types.ts: LLMCallTrace,
// ToolCallTrace, TaskTrace, AgentTrace).
type EventType string

// Event types.
const (
	EventAgent    EventType = "agent"     // one agent run (the conversation loop); ends after its calls
	EventLLMCall  EventType = "llm_call"  // one LLM API call (one agent turn)
	EventToolCall EventType = "tool_call" // one tool execution
	EventTask     EventType = "task"      // one task, wrapping its retries
)

// ErrInvalidEvent is wrapped by the errors of [ParseEvent], [Event.Validate]
// and [Bridge.Handle] for events that cannot become a span.
var ErrInvalidEvent = errors.New("bridge: invalid trace event")

// TokenUsage is token accounting for one LLM call or one agent run.
type TokenUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Event is one after-the-fact trace event. Its JSON form is
// open-multi-agent's onTrace event (camelCase fields; times in Unix epoch
// milliseconds), extended with the gate fields of the onToolCall proposal
// (gated, gateAction, gateReason) and toolgate's own (toolCallId,
// gateSource, riskLevel, ..., traceId/spanId). Fields not of the event's
// type are ignored.
type Event struct {
	Type  EventType `json:"type"`
	RunID string    `json:"runId"`
	// Agent is the agent's name (all types but task, where it is optional).
	Agent  string `json:"agent"`
	TaskID string `json:"taskId,omitempty"`
	// StartMs and EndMs are Unix epoch milliseconds (fractions allowed).
	StartMs    float64 `json:"startMs"`
	EndMs      float64 `json:"endMs"`
	DurationMs float64 `json:"durationMs,omitempty"`

	// llm_call
	Model string `json:"model,omitempty"`
	Turn  int    `json:"turn,omitempty"`
	// Tokens: llm_call and agent.
	Tokens *TokenUsage `json:"tokens,omitempty"`

	// tool_call
	Tool       string `json:"tool,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	IsError    bool   `json:"isError,omitempty"`
	ErrorType  string `json:"errorType,omitempty"`
	Gated      bool   `json:"gated,omitempty"`
	GateAction string `json:"gateAction,omitempty"` // "allow" | "deny"
	GateReason string `json:"gateReason,omitempty"`
	GateSource string `json:"gateSource,omitempty"`
	GateError  string `json:"gateError,omitempty"`
	Approval   string `json:"approval,omitempty"`
	Approver   string `json:"approver,omitempty"`
	// ApprovalID names the durable approval request (gate.approval.id) and
	// ApprovalWaitMs is the time from ask to answer in milliseconds
	// (gate.approval.wait_ms).
	ApprovalID     string `json:"approvalId,omitempty"`
	ApprovalWaitMs int64  `json:"approvalWaitMs,omitempty"`
	RiskLevel      string `json:"riskLevel,omitempty"`
	OptOut         bool   `json:"optOut,omitempty"`
	// GateRule is the deciding gate's rule, if it names one.
	GateRule string `json:"gateRule,omitempty"`
	// GateDurationNs is the time spent deciding, approval included (ns).
	GateDurationNs int64 `json:"gateDurationNs,omitempty"`
	// Verdicts is every gate's verdict in order (gate.Verdict's JSON).
	Verdicts []gate.Verdict `json:"verdicts,omitempty"`
	// Rewritten, RewrittenBy, OriginalInputSha256 and Rounds are
	// gate.Record's fields of the same names.
	Rewritten           bool   `json:"rewritten,omitempty"`
	RewrittenBy         string `json:"rewrittenBy,omitempty"`
	OriginalInputSha256 string `json:"originalInputSha256,omitempty"`
	Rounds              int    `json:"rounds,omitempty"`
	// GateStage is gate.Record's Stage: "cancelled", "run", "registry",
	// "reachability" or "input" for a call refused before any gate (then
	// gateAction is "deny" and gated is false), "gate" or empty otherwise.
	GateStage string `json:"gateStage,omitempty"`
	// Calls is gate.Record's Calls: how many tool calls the event
	// records when it stands for a group of calls decided alike (recorded
	// as gate.calls when > 1); 0 or 1 is one call.
	Calls int64 `json:"calls,omitempty"`
	// TraceID and SpanID (hex) are set when the call already has a span
	// (toolgate's executor fills them in its ToolCallTrace): the bridge then
	// does not make another.
	TraceID string `json:"traceId,omitempty"`
	SpanID  string `json:"spanId,omitempty"`

	// task
	TaskTitle string `json:"taskTitle,omitempty"`
	Success   *bool  `json:"success,omitempty"`
	Retries   int    `json:"retries,omitempty"`

	// agent
	Turns     int `json:"turns,omitempty"`
	ToolCalls int `json:"toolCalls,omitempty"`
}

// maxEventBytes bounds one JSON event.
const maxEventBytes = 1 << 20

// ParseEvent decodes one JSON event (one onTrace callback argument, or one
// line of a JSON Lines stream) and validates it. Unknown fields are
// ignored. Errors wrap [ErrInvalidEvent].
func ParseEvent(data []byte) (Event, error) {
	if len(data) > maxEventBytes {
		return Event{}, fmt.Errorf("%w: %d bytes (limit %d)", ErrInvalidEvent, len(data), maxEventBytes)
	}
	var ev Event
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&ev); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	if dec.More() {
		return Event{}, fmt.Errorf("%w: trailing data after the event", ErrInvalidEvent)
	}
	if err := ev.Validate(); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// Start returns the event's start time, to the microsecond.
func (e Event) Start() time.Time { return msTime(e.StartMs) }

// End returns the event's end time.
func (e Event) End() time.Time { return msTime(e.EndMs) }

// msTime converts epoch milliseconds, rounding fractions to the microsecond
// (a float64 epoch in ms resolves about 0.25 µs today).
func msTime(ms float64) time.Time {
	whole := math.Floor(ms)
	us := math.Round((ms - whole) * 1000)
	return time.UnixMilli(int64(whole)).Add(time.Duration(us) * time.Microsecond)
}

// maxEpochMs is year 2200 in epoch ms: later times are rejected (and the
// nanosecond conversion stays in range).
const maxEpochMs = 7258118400000

// Validate reports whether e can become a span: a known type, a run ID,
// the type's identifying field (agent; model for llm_call; tool for
// tool_call; taskId for task), times in (0, year 2200] with start <= end,
// a gate action of "allow" or "deny" (or none), and an action on gated
// calls. Errors wrap [ErrInvalidEvent].
func (e Event) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s event: %s", ErrInvalidEvent, e.Type, fmt.Sprintf(format, a...))
	}
	switch e.Type {
	case EventAgent, EventLLMCall, EventToolCall:
		if e.Agent == "" {
			return bad("no agent")
		}
	case EventTask:
		if e.TaskID == "" {
			return bad("no taskId")
		}
	default:
		return fmt.Errorf("%w: unknown type %q", ErrInvalidEvent, e.Type)
	}
	if e.RunID == "" {
		return bad("no runId")
	}
	if e.Type == EventLLMCall && e.Model == "" {
		return bad("no model")
	}
	if e.Type == EventToolCall && e.Tool == "" {
		return bad("no tool")
	}
	for _, ms := range []float64{e.StartMs, e.EndMs} {
		if math.IsNaN(ms) || ms <= 0 || ms > maxEpochMs {
			return bad("time %v ms out of range", ms)
		}
	}
	if e.EndMs < e.StartMs {
		return bad("ends (%v) before it starts (%v)", e.EndMs, e.StartMs)
	}
	if e.Type == EventToolCall {
		switch gate.Action(e.GateAction) {
		case "":
			if e.Gated {
				return bad("gated without gateAction")
			}
		case gate.ActionAllow, gate.ActionDeny:
		default:
			return bad("gateAction %q (want allow or deny)", e.GateAction)
		}
		switch st := gate.Stage(e.GateStage); {
		case st == "" || st == gate.StageGate:
		case !st.PreGate():
			return bad("gateStage %q (want cancelled, run, registry, reachability, input or gate)", e.GateStage)
		case e.Gated || gate.Action(e.GateAction) != gate.ActionDeny:
			return bad("gateStage %q is a refusal before the gate: want gateAction deny and gated false", e.GateStage)
		}
	}
	if e.Type == EventToolCall {
		if e.GateDurationNs < 0 || float64(e.GateDurationNs) > (e.EndMs-e.StartMs+1)*1e6 {
			return bad("gateDurationNs %d out of range", e.GateDurationNs)
		}
		if e.Calls < 0 {
			return bad("calls %d is negative (0 or 1 is one call)", e.Calls)
		}
		if e.Rounds < 0 || e.Rounds > 1000 {
			return bad("rounds %d out of range", e.Rounds)
		}
		if len(e.Verdicts) > 1000 {
			return bad("%d verdicts (limit 1000)", len(e.Verdicts))
		}
		for i, v := range e.Verdicts {
			switch v.Action {
			case gate.ActionAllow, gate.ActionDeny, gate.ActionAsk:
			default:
				return bad("verdict %d: action %q (want allow, deny or ask)", i, v.Action)
			}
		}
	}
	if e.Tokens != nil && (e.Tokens.InputTokens < 0 || e.Tokens.OutputTokens < 0) {
		return bad("negative token count")
	}
	return nil
}

// Record returns a tool_call event's decision record: the value the
// bridge encodes with gate.Record.Attributes, exactly as the executor
// encodes its own calls.
func (e Event) Record() gate.Record {
	return gate.Record{
		Gated:             e.Gated || e.GateAction != "" && !gate.Stage(e.GateStage).PreGate(),
		Action:            gate.Action(e.GateAction),
		Reason:            e.GateReason,
		Source:            e.GateSource,
		Rule:              e.GateRule,
		ErrorKind:         e.GateError,
		Risk:              gate.RiskLevel(e.RiskLevel),
		Approval:          gate.ApprovalOutcome(e.Approval),
		Approver:          e.Approver,
		ApprovalID:        e.ApprovalID,
		ApprovalWait:      time.Duration(e.ApprovalWaitMs) * time.Millisecond,
		OptOut:            e.OptOut,
		Rewritten:         e.Rewritten,
		RewrittenBy:       e.RewrittenBy,
		OriginalInputHash: e.OriginalInputSha256,
		Rounds:            e.Rounds,
		Verdicts:          e.Verdicts,
		Duration:          time.Duration(e.GateDurationNs),
		Stage:             gate.Stage(e.GateStage),
		Calls:             e.Calls,
	}
}

// callKey is the event's tool call as the index knows it: its fields as
// recorded on its span (safe), and its decision as gate.Record.Attributes
// encodes it ("" — any decision — when the event carries none).
func (e Event) callKey() ToolCallKey {
	e = e.safe()
	k := ToolCallKey{Agent: e.Agent, RunID: e.RunID, Tool: e.Tool, ID: e.ToolCallID}
	if e.GateAction != "" || e.Gated {
		rec := e.Record()
		k.Decision = DecisionKey(rec.Attributes(nil, 0))
	}
	return k
}

// safe returns e with every identifying string valid UTF-8 and bounded
// (gate.SafeText), as span names and attributes require. The decision's
// strings are bounded by gate.Record.Attributes.
func (e Event) safe() Event {
	for _, p := range []*string{&e.RunID, &e.Agent, &e.TaskID, &e.Model, &e.Tool, &e.ToolCallID, &e.ErrorType, &e.TaskTitle} {
		*p = gate.SafeText(*p, gate.MaxNameBytes)
	}
	return e
}
