package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/policy"
)

// SourceHookFault is the gate.source of a fault's denial.
const SourceHookFault = "toolgate.hook"

// faultReason is what the model and the user read for a fault.
func faultReason(err error) string {
	msg := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] // the first line; a panic's stack is for stderr
	}
	return "toolgate hook failed closed, so the call was denied: " + gate.SafeText(msg, 2000) +
		". Do not retry the same call: it will be denied again until the hook is fixed."
}

// writeFault answers a fault in the agent's blocking form, which all
// three agents honour: the block JSON on stdout and exit code 2 with the
// reason on stderr. It returns the exit code.
func writeFault(io stdio, a *agentSpec, err error) int {
	reason := faultReason(err)
	fmt.Fprintf(io.err, "%s\n", reason)
	if full := err.Error(); strings.Contains(full, "\n") {
		fmt.Fprintf(io.err, "%s\n", full)
	}
	_, _ = io.out.Write(append(blockJSON(reason), '\n'))
	return 2
}

// traceFault records a fault's denial as a decision, when it can: a fresh
// executor on a free spool slot, whose one gate fails with the fault (the
// executor denies it, gate.error=error), so that the denial has the same
// execute_tool span and gate.* record as any other. The policy's export
// settings are used when the policy loads, else the defaults. It is bounded
// by faultTraceBudget and never panics.
func traceFault(a *agentSpec, ev hookEvent, f hookFlags, cause error) {
	defer func() { _ = recover() }()
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), faultTraceBudget)
	defer cancel()
	pol, err := loadHookPolicy(f.policy)
	if err != nil {
		pol = policy.Default()
	}
	target, err := resolveExport(pol)
	if err != nil {
		if target, err = resolveExport(policy.Default()); err != nil {
			return
		}
	}
	tel, err := openTelemetry(ctx, target, ServiceName, DefaultExportWait)
	if err != nil {
		return
	}
	defer tel.finish(envDuration(envExportWait, DefaultExportWait))
	tool := ev.ToolName
	if tool == "" {
		tool = "unknown_tool"
	}
	reg, err := executor.NewRegistry(agentTool(tool, openSchema))
	if err != nil {
		tool = "invalid_tool_name"
		if reg, err = executor.NewRegistry(agentTool(tool, openSchema)); err != nil {
			return
		}
	}
	failing := gate.Named(SourceHookFault, gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		return gate.Decision{}, fmt.Errorf("%s", faultReason(cause))
	}))
	ex, err := executor.New(reg, executor.WithTracerProvider(tel.p), executor.WithGates(failing),
		executor.WithRecordContent(true), executor.WithRefusalBudget(-1))
	if err != nil {
		return
	}
	name := pol.Export.Agent
	if name == "" {
		name = a.genAI
	}
	agent, err := ex.Agent(name, executor.AgentPresets(executor.PresetAll))
	if err != nil {
		return
	}
	in := ev.ToolInput
	if !json.Valid(in) || len(in) == 0 || in[0] != '{' {
		in = json.RawMessage(`{}`)
	}
	callID := ev.ToolUseID
	if callID == "" {
		callID = a.name + "-" + randomID()
	}
	run := agent.Run(ev.SessionID)
	run.Execute(ctx, executor.ToolCall{ID: callID, Name: tool, Input: in})
	run.End()
}
