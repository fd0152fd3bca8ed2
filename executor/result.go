package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// ToolCall is one call the model asked for.
type ToolCall struct {
	// ID is the model's tool-call ID (gen_ai.tool.call.id); it binds
	// approvals to the call, so it should be unique within a run.
	ID string
	// Name is the tool name the model used.
	Name string
	// Input is the arguments as the model sent them (a JSON object; empty
	// or null means {}).
	Input json.RawMessage
	// WorkingDir is the directory the call runs in, when it is known and
	// matters (gate.ToolCallContext.WorkingDir): part of the call's
	// identity, so an approval holds only for the call in that directory.
	WorkingDir string
}

// Causes of error results the executor itself produces. ToolResult.Err
// wraps exactly one of them; match with errors.Is.
var (
	ErrUnknownTool   = errors.New("executor: tool not registered")
	ErrNotReachable  = errors.New("executor: tool not reachable for this agent")
	ErrInvalidInput  = errors.New("executor: input does not match the tool's schema")
	ErrDenied        = errors.New("executor: denied by the gate")
	ErrToolFailed    = errors.New("executor: tool failed")
	ErrToolPanicked  = errors.New("executor: tool panicked")
	ErrInvalidOutput = errors.New("executor: output does not match the tool's output schema")
	ErrRunAborted    = errors.New("executor: run aborted after a denied call")
	ErrCancelled     = errors.New("executor: call cancelled before it ran")
	// ErrRefusalBudget: the run was aborted because too many consecutive
	// calls did not run — refused before the gate or denied by it
	// (WithRefusalBudget). It wraps
	// ErrRunAborted.
	ErrRefusalBudget = fmt.Errorf("%w: too many consecutive calls did not run", ErrRunAborted)
	ErrInternal      = errors.New("executor: internal error")
	// ErrApprovalPending: the call is suspended until a person answers its
	// durable approval request (gate.ApprovalPending; ToolResult.Gate.
	// ApprovalID names the request). It did not run. Persist the call (its
	// ID, tool and input, the agent and run IDs) and execute it again later
	// under gate.WithResume(ctx, ApprovalID) on a run with the same agent
	// and run ID: it runs only if it is the same call and the request was
	// approved, and only once.
	ErrApprovalPending = errors.New("executor: waiting for a person's approval")
)

// Values of the error.type span attribute (OTel semantic conventions
// v1.41.0: a low-cardinality error class) on failed calls, besides
// gate.ErrorTypeGateDenied for denied calls.
const (
	ErrorTypeToolNotFound  = "tool_not_found"
	ErrorTypeNotReachable  = "tool_not_reachable"
	ErrorTypeInvalidInput  = "invalid_input"
	ErrorTypeToolError     = "tool_error" // Execute returned an error or an IsError result
	ErrorTypeToolPanic     = "tool_panic"
	ErrorTypeInvalidOutput = "invalid_output"
	ErrorTypeRunAborted    = "run_aborted"
	ErrorTypeCancelled     = "cancelled"
	// ErrorTypeRefusalBudget is the error kind of the one decision that
	// aborted a run for its refusal budget (WithRefusalBudget).
	ErrorTypeRefusalBudget = "refusal_budget"
	ErrorTypeInternal      = "internal"
	// ErrorTypeApprovalPending is the error.type of a call suspended for
	// a durable approval (ErrApprovalPending).
	ErrorTypeApprovalPending = "approval_pending"
)

// ToolResult is the executor's answer for one call: exactly one per call,
// never a panic. Forward Content to the model as the tool result, with
// IsError as its error flag.
type ToolResult struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	// Content is the model-facing text: the tool's output (truncated to
	// the tool's maximum) or, for an error result, a message naming the
	// tool and the cause. A denial's message names the tool, the policy and
	// the reason and tells the model not to retry the same call.
	Content string `json:"content"`
	// Structured is the tool's structured output, if any.
	Structured json.RawMessage `json:"structured,omitempty"`
	IsError    bool            `json:"isError"`
	// TruncatedBytes is how many bytes of Content were cut (0 when none).
	TruncatedBytes int `json:"truncatedBytes,omitempty"`
	// ErrorType is the error.type recorded on the span ("" on success).
	ErrorType string `json:"errorType,omitempty"`
	// Gate is the call's decision record; Gate.Gated is false when no gate
	// ran. A call the executor refused before any gate (ErrUnknownTool,
	// ErrNotReachable, ErrInvalidInput) is a decision too: Gate.Stage
	// registry, reachability or input, Gate.Action deny, Gate.Source
	// "executor". errors.Is(Err, ErrDenied) tells a gate's denial.
	Gate gate.Record `json:"gate"`
	// TraceID and SpanID identify the call's execute_tool span (W3C trace
	// context IDs; zero, IsValid false, when the tracer provider records
	// nothing, e.g. a no-op provider). JSON: lowercase hex.
	TraceID trace.TraceID `json:"traceId"`
	SpanID  trace.SpanID  `json:"spanId"`
	// Err is the cause of an error result the executor produced (wrapping
	// one of the Err* values), nil on success and for a tool's own IsError
	// result.
	Err error `json:"-"`
}

// ToolCallTrace is the event the trace hook (WithOnTrace) receives once
// per call, after the call's span ends.
type ToolCallTrace struct {
	Tool       string
	ToolCallID string
	Agent      string
	RunID      string
	TaskID     string
	IsError    bool
	ErrorType  string
	// Decision is the call's decision record, the same value as
	// ToolResult.Gate (reason redacted and bounded).
	Decision gate.Record
	// Start and End bound the whole call; Decision.Duration is the
	// deciding part.
	Start, End time.Time
	// Input and Output are recorded only with WithRecordContent, redacted
	// and size-limited; empty otherwise.
	Input, Output string
	// TraceID and SpanID identify the call's span (hex; empty when the
	// span is not sampled).
	TraceID, SpanID string
}
