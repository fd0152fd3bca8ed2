// Package policy reads toolgate's one policy file — shared by the
// pre-tool-use hooks of coding agents (`toolgate hook <agent>`) and the
// MCP gateway (`toolgate mcp`) — and turns it into one gate.Gate.
//
// The file (YAML, version 1, strict: an unknown key, a wrong type or a
// bad value is an error naming file:line) picks a permission profile of
// package classify (strict, workspace, read-only), the workspace, what a
// high verdict becomes, the approver used where the way in has no native
// ask, where decision spans go, and per-tool rules. See docs/policy.md.
//
// Usage:
//
//	p, err := policy.Load("")          // $TOOLGATE_POLICY, ./toolgate.yaml, else Default()
//	if err != nil { ... }               // e.g. "toolgate.yaml:4: unknown profile "wide" ..."
//	g, err := p.Gate(cwd)               // one gate routing by tool name
//	ex, _ := executor.New(reg, executor.WithGates(g))
//
// Routing: a call's tool name selects a rule — the file's rules first
// (first match; exact name or a path.Match glob), then the built-in table
// (BuiltinRules: the tools of Claude Code, Codex CLI, Gemini CLI and the
// replayed runs). A rule's kind sends the call to classify.BashGate
// (shell), classify.PathGate (read, write, delete: the operation is the
// rule's, never the call's), or a fixed decision (allow, deny, ask,
// fetch). A tool no rule matches is asked about ("no policy for tool X";
// denied under read-only), never allowed.
//
// The package imports gate, classify and approve/inbox (for the default
// inbox path); it never runs tools and does not import executor.
package policy
