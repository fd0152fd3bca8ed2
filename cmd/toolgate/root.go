package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = ""

// versionString is the build's version: the -X value, else the module's.
func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// stdio are the streams a command reads and writes; tests pass buffers.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// usageError marks errors that exit with code 2 (bad usage).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitError carries an exit code already reported to the user.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// newRootCmd builds the command tree; each subcommand lives in its own file
// as newXxxCmd(io stdio) *cobra.Command.
func newRootCmd(io stdio) *cobra.Command {
	root := &cobra.Command{
		Use:           "toolgate",
		Version:       versionString(),
		Short:         "Gate the tool calls of agents you did not write: coding-agent hooks and an MCP gateway",
		SilenceUsage:  true,
		SilenceErrors: true,
		Example: `  toolgate hook claude --policy ~/.config/toolgate/toolgate.yaml   # in Claude Code's PreToolUse hook
  toolgate hook codex                                                # in $CODEX_HOME/hooks.json
  toolgate hook gemini                                               # in ~/.gemini/settings.json (BeforeTool)
  toolgate flush                                                     # upload spooled decisions now`,
	}
	root.SetIn(io.in)
	root.SetOut(io.out)
	root.SetErr(io.err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		newHookCmd(io),
		newFlushCmd(io),
		// ---- MCP gateway (owned by the gateway branch, mcpgw): add
		// newMCPCmd(io) on the next line (cmd/toolgate/mcp.go). ----
		newMCPCmd(io),
	)
	return root
}

// run executes toolgate with args and returns the process exit code. A
// `toolgate hook` that fails before its own handler runs (an unknown flag,
// a missing agent) still answers in the blocking form (exit 2 + block
// JSON), so that no agent reads a usage error as "no decision".
func run(ctx context.Context, args []string, io stdio) int {
	root := newRootCmd(io)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if len(args) > 0 && args[0] == "hook" {
		agent := ""
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				agent = a
				break
			}
		}
		ferr := fmt.Errorf("toolgate hook: %w", err)
		a := agentByName(agent)
		var terr error
		if a != nil {
			terr = traceFault(a, hookEvent{}, hookFlags{}, ferr)
		}
		return writeFault(io, a, ferr, terr)
	}
	fmt.Fprintf(io.err, "toolgate: %s\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return 2
	}
	return 1
}

// isCobraUsage recognises cobra's own argument and command errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
