// Command approver asks a human on the terminal before risky tool calls.
// A gate asks for every shell command that is not on a short read-only
// list; the terminal approver prompts for each ask ("y" once, "a" always
// for this exact command in this run, anything else declines). Without a
// TTY, or when no answer comes in time, the call is denied.
//
//	go run ./examples/approver            # interactive
//	go run ./examples/approver </dev/null # no TTY: every ask is denied
//	# and export its spans when OTEL_EXPORTER_OTLP_ENDPOINT is set (with the
//	# collector's token in OTEL_EXPORTER_OTLP_HEADERS); after make demo:
//	source .demo/env && go run ./examples/approver
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/examples/internal/tracing"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// readOnly are the commands that run without asking.
var readOnly = []string{"ls", "pwd", "cat", "git status", "git log"}

func askUnlessReadOnly() gate.Gate {
	return gate.Named("shell-allowlist", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		cmd := strings.TrimSpace(c.String("command"))
		for _, p := range readOnly {
			if cmd == p || strings.HasPrefix(cmd, p+" ") {
				return gate.Allow().WithRisk(gate.RiskSafe), nil
			}
		}
		return gate.Ask("command " + cmd + " is not on the read-only list").WithRisk(gate.RiskReview), nil
	}))
}

func run(ctx context.Context, out io.Writer, approver gate.Approver, commands []string) (err error) {
	// Spans: to the collector OTEL_EXPORTER_OTLP_ENDPOINT names (with the
	// token in OTEL_EXPORTER_OTLP_HEADERS), flushed before returning;
	// without the variable, nothing is exported.
	tp, shutdown, err := tracing.Setup(ctx, "approver", out)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, shutdown()) }()
	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "bash",
		Description: "Run a shell command (simulated: nothing is executed).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","minLength":1}},"required":["command"]}`),
		Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
			var a struct{ Command string }
			if err := json.Unmarshal(in, &a); err != nil {
				return executor.Result{}, err
			}
			return executor.Text("(simulated) ran " + a.Command), nil
		},
	})
	if err != nil {
		return err
	}
	ex, err := executor.New(reg, executor.WithGates(askUnlessReadOnly()), executor.WithApprover(approver),
		executor.WithTracerProvider(tp))
	if err != nil {
		return err
	}
	agent, err := ex.Agent("shell-agent", executor.AgentAllow("bash"))
	if err != nil {
		return err
	}
	r := agent.Run("approver-demo")
	defer r.End()
	for i, cmd := range commands {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		res := r.Execute(ctx, executor.ToolCall{ID: fmt.Sprintf("call_%d", i+1), Name: "bash", Input: in})
		status := "ran"
		if res.IsError {
			status = "denied"
		}
		fmt.Fprintf(out, "%-24s %-6s approval=%-8s approver=%s\n", cmd, status, res.Gate.Approval, res.Gate.Approver)
	}
	return nil
}

func main() {
	timeout := flag.Duration("timeout", 30*time.Second, "how long each prompt waits for an answer")
	flag.Parse()
	commands := flag.Args()
	if len(commands) == 0 {
		commands = []string{"ls -la", "make test", "make test", "git push origin main", "git status"}
	}
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		fmt.Fprintln(os.Stderr, "approver: standard input is not a terminal, so nobody can be asked: every ask will be declined (run it in a terminal to answer the prompts)")
	}
	approver := approve.NewTerminal(approve.WithTerminalTimeout(*timeout))
	if err := run(context.Background(), os.Stdout, approver, commands); err != nil {
		fmt.Fprintln(os.Stderr, "approver:", err)
		os.Exit(1)
	}
}
