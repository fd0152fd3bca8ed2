// Package mcpgate is toolgate's MCP gateway (`toolgate mcp`): an MCP server,
// on the official Go SDK (github.com/modelcontextprotocol/go-sdk v1.8.0),
// that connects to upstream MCP servers and presents their tools to one
// client, running every tools/call through the executor — the same
// registry, JSON-Schema validation, gates, approvals, spans and chained
// decisions as an agent that embeds toolgate.
//
// Usage:
//
//	gw, err := mcpgate.New(ctx, []mcpgate.Upstream{{
//		Name:    "fs",
//		Command: []string{"mcp-server-filesystem", "/work"},
//		Roots:   []string{"/work"},
//	}}, mcpgate.WithClassifier(classify.WithWorkspace("/work")), mcpgate.WithTracerProvider(tp))
//	defer gw.Close()
//	err = gw.ServeStdio(ctx)                 // or gw.ServeHTTP(ctx, l) with l from mcpgate.Listen("127.0.0.1:8931")
//
// Names: each upstream tool is presented as "<upstream>_<tool>", always
// (PresentedNames): every name matches ^[a-zA-Z0-9_-]{1,64}$, a name that
// needed changes or is too long ends in a hash of the original, and no two
// tools share a name. Tools matched by Upstream.Hide are neither listed nor
// callable (an unknown tool is a JSON-RPC error).
//
// Decisions: the executor registers each presented tool with the
// upstream's input schema (a tool whose schema does not compile is not
// presented) and one gate routes by tool: the upstream's first matching
// Rule (shell → classify.BashGate on the rule's fields; read, write,
// delete → classify.PathGate with that operation; fetch and ask → review;
// allow, deny), else BuiltinRules (@modelcontextprotocol/server-filesystem's
// tools), else a default risk from the tool's annotations — believed only
// when Upstream.Trusted; untrusted annotations are MCP's defaults (not
// read-only, destructive, open-world) — safe only for a trusted read-only
// closed-world tool, review (ask) otherwise. Only an allowed call is
// forwarded, within the call timeout. A denial is a CallToolResult with
// isError and the reason, telling the model not to retry; protocol faults
// stay JSON-RPC errors.
//
// Asks: when the client declared elicitation, the ask is put to it — the
// executor's durable-approval path: the first call is a pending decision
// and returns an input_required result (2026-07-28 MRTR) carrying an
// elicitation form and an opaque request state; the client's retry with
// the answer resumes exactly that call (same tool, same input bytes, same
// call ID; the state answers one call, once, within the approval timeout).
// For a 2025-11-25 (handshake) client the SDK turns the same result into a
// push elicitation/create and retries itself. Without elicitation the ask
// goes to WithApprover, else it is denied with a reason.
//
// Spans: each call is a server span "tools/call {tool}" (mcp.method.name,
// mcp.protocol.version, mcp.session.id for handshake sessions,
// network.transport pipe|tcp, gen_ai.tool.name, gen_ai.operation.name,
// error.type=tool_error on an isError result), parented from
// params._meta.traceparent when the client sends one, with the executor's
// execute_tool span (gate.*, gen_ai.*, the chain) as its child. The
// gateway is one run (WithRunID) whose invoke_agent span starts at New
// and ends at Close.
//
// Robustness: an upstream that fails to start or list its tools is logged
// and left out (Gateway.Upstreams); one that crashes or hangs makes its
// calls error results; a malformed stdio line is answered with a JSON-RPC
// error (FilteredStdio) instead of ending the session.
//
// Roots: the gateway is the upstream's client, so the roots an upstream
// sees are Upstream.Roots and nothing else; the client's roots never reach
// it (with the filesystem server, client roots replace its command-line
// directories: a client could widen what it may write).
package mcpgate
