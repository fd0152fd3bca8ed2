package executor

import (
	"context"
	"encoding/json"

	"github.com/toolgate/toolgate/gate"
)

// Tool types, the values of gen_ai.tool.type (OTel semantic conventions
// v1.41.0, gen_ai registry).
const (
	ToolTypeFunction  = "function"  // a function the client runs (default)
	ToolTypeExtension = "extension" // a tool the agent calls on an external service
	ToolTypeDatastore = "datastore" // a data store the agent reads
)

// Tool is one tool an agent may call.
type Tool struct {
	// Name is the registered name (gen_ai.tool.name): 1–128 characters of
	// A–Z, a–z, 0–9, '_', '-' and '.', as MCP recommends.
	Name string
	// Description is shown to the model.
	Description string
	// InputSchema is the JSON Schema (draft 2020-12 unless $schema says
	// otherwise) of the input object. It is compiled at registration;
	// external $refs are not loaded. Nil means any JSON object.
	InputSchema json.RawMessage
	// OutputSchema, when set, is the JSON Schema a successful result's
	// Structured output (or, without it, its Content parsed as JSON) must
	// satisfy; an output that does not is an error result.
	OutputSchema json.RawMessage
	// Annotations are the tool's MCP-style hints. They are untrusted: gates
	// may use them to be stricter, never laxer.
	Annotations gate.Annotations
	// Consequential marks tools whose effects leave the sandbox (payments,
	// e-mail, deployments).
	Consequential bool
	// MaxOutputBytes caps the result's Content: longer output keeps its
	// head and tail around a marker saying how much was cut. 0 uses the
	// executor's default (WithMaxOutputBytes); negative means no cap.
	MaxOutputBytes int
	// Type is gen_ai.tool.type: ToolTypeFunction (default when empty),
	// ToolTypeExtension or ToolTypeDatastore.
	Type string
	// Execute runs the tool on its validated input (a JSON object; after an
	// allowed rewrite, the rewritten input). The call's details are
	// available from CallFrom(ctx). An error becomes an error result; a
	// panic is recovered and becomes an error result too.
	Execute func(ctx context.Context, input json.RawMessage) (Result, error)
}

// Result is what a tool returns.
type Result struct {
	// Content is the text the model sees.
	Content string
	// Structured is optional structured output (a JSON value), checked
	// against the tool's OutputSchema.
	Structured json.RawMessage
	// IsError marks a tool-level failure the model should see as an error.
	IsError bool
}

// Text returns a successful Result with content s.
func Text(s string) Result { return Result{Content: s} }

type callKey struct{}

// callContext carries the call to the tool: one value holds both the
// context link and the call (instead of a ToolCallContext plus a
// context.WithValue node); it lives in the call's callState.
type callContext struct {
	context.Context
	call gate.ToolCallContext
}

// Value returns the call for callKey and defers to the parent otherwise.
func (c *callContext) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return &c.call
	}
	return c.Context.Value(key)
}

// CallFrom returns the gate's view of the call a tool is running for (tool
// name, validated input, IDs, agent, run and task). ok is false outside a
// Tool's Execute.
func CallFrom(ctx context.Context) (call gate.ToolCallContext, ok bool) {
	p, ok := ctx.Value(callKey{}).(*gate.ToolCallContext)
	if !ok {
		return gate.ToolCallContext{}, false
	}
	return *p, true
}
