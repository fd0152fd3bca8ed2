// Command embed is the README's "Embed it" snippet as a program: one bash
// tool behind the classifier gate, and the model-facing result of a call the
// gate denies. The tool itself only echoes: nothing is run.
//
//	go run ./examples/embed
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// runShell stands in for a real shell tool.
func runShell(_ context.Context, in json.RawMessage) (executor.Result, error) {
	return executor.Text("would run: " + string(in)), nil
}

func run(ctx context.Context, out io.Writer) error {
	bash, err := classify.BashGate() // safe → allow, review → ask, high → deny
	if err != nil {
		return err
	}
	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
		Execute:     runShell,
	})
	if err != nil {
		return err
	}
	ex, err := executor.New(reg, executor.WithGates(bash), executor.WithApprover(approve.NewTerminal()))
	if err != nil {
		return err
	}
	agent, err := ex.Agent("coder", executor.AgentPresets(executor.PresetAll))
	if err != nil {
		return err
	}
	run := agent.Run("run-42") // its calls form one trace under the run's invoke_agent span
	defer run.End()
	for i, cmd := range []string{"ls -la", "rm -rf ~"} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		res := run.Execute(ctx, executor.ToolCall{ID: fmt.Sprintf("call_%d", i+1), Name: "bash", Input: in})
		fmt.Fprintf(out, "%-10s isError=%-5v %s\n", cmd, res.IsError, res.Content)
	}
	return nil
}
