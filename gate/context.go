package gate

import (
	"encoding/json"
	"strings"
)

// ToolCallContext is everything a gate may look at for one tool call. The
// executor fills it after JSON-Schema validation and before execution; gates
// must treat it as read-only.
type ToolCallContext struct {
	// ToolName is the registered tool name (gen_ai.tool.name).
	ToolName string
	// Input is the validated input, decoded from JSON (a map for object
	// schemas).
	Input map[string]any
	// RawInput is the input the tool will receive, exactly: the model's
	// bytes, or after an accepted rewrite the rewrite's bytes (validated
	// against the tool's schema by the same decoder).
	RawInput json.RawMessage
	// OriginalInput is the model's input when a gate rewrote it (RawInput
	// then holds the rewrite); nil when no rewrite happened.
	OriginalInput json.RawMessage
	// ToolCallID is the model's tool-call ID (gen_ai.tool.call.id).
	ToolCallID string
	// AgentName, RunID and TaskID identify who is calling and within what.
	AgentName string
	RunID     string
	TaskID    string
	// WorkingDir is the directory the call runs in, when the caller knows
	// it and it matters to what the call does (a coding agent's shell
	// command or relative path: "rm -r build" in one project is not the
	// same call in another). Part of the call's identity (CallHash): an
	// approval is for the call in that directory. "" when unknown.
	WorkingDir string
	// Annotations are the tool's declared (untrusted) hints.
	Annotations Annotations
	// Consequential marks tools whose effects leave the sandbox (payments,
	// e-mail, deployments); policies may ask for approval on them.
	Consequential bool
}

// String returns the value of a string field of Input, or "" when it is
// absent or not a string.
func (c ToolCallContext) String(field string) string {
	s, _ := c.Input[field].(string)
	return s
}

// SameFieldName reports whether two input field names are one name to a
// parser that matches names case-insensitively: equal under
// strings.EqualFold (Go's encoding/json binds both to one struct field)
// once '-' and '_' are dropped (Go's encoding/json/v2 with case:ignore
// ignores them too: "dry_run", "dry-run" and "DRYRUN" are one name there).
// The executor refuses input with two such names in one object; a gate
// that reads a field should read every key that is SameFieldName to it.
func SameFieldName(a, b string) bool {
	if strings.ContainsAny(a, "-_") || strings.ContainsAny(b, "-_") {
		a, b = strings.Map(dropDashUnderscore, a), strings.Map(dropDashUnderscore, b)
	}
	return strings.EqualFold(a, b)
}

func dropDashUnderscore(r rune) rune {
	if r == '-' || r == '_' {
		return -1
	}
	return r
}
