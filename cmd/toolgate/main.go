// Command toolgate puts toolgate's gate in front of agents it does not
// embed in: `toolgate hook claude|codex|gemini` is the pre-tool-use hook of
// Claude Code, Codex CLI and Gemini CLI (one process per tool call: it
// reads the agent's hook event on stdin, judges the call with the policy
// file's gate through the executor, records the decision span durably and
// answers in the agent's own format); `toolgate flush` uploads the spans
// hooks left in the spool while the collector was down. The MCP gateway
// (`toolgate mcp`) joins them in mcp.go.
//
// Exit codes: 0 ok (a hook's deny is exit 0 with the agent's block JSON),
// 1 error, 2 bad usage — and, for `toolgate hook`, a fault inside the hook
// (a bad policy file, malformed input, a panic, the time budget exceeded),
// answered as a deny in the agent's blocking form (exit 2, the reason on
// stderr, the block JSON on stdout).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// startTime is when main's package was initialised (after the runtime
// and the dependencies' init: the timings' zero).
var startTime = time.Now()

func main() {
	if len(os.Args) > 1 && os.Args[1] == "hook" {
		shortLivedGC() // the process, not run: tests call run in their own
	}
	// A client that goes away closes our stdout and stderr: a write there
	// must fail (EPIPE) rather than end the process (Go's default for fds
	// 1 and 2), so that the gateway still uploads what it recorded and a
	// hook still finishes its spool write.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}
