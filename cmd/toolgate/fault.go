package main

import (
	"context"
	"encoding/json"
	"errors"
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

// spooledOnly is traceFault's report of a denial that is in the durable
// spool but not uploaded yet (recorded: the next hook or toolgate flush
// sends it), as opposed to one that could not be recorded at all.
type spooledOnly struct{ msg string }

func (e spooledOnly) Error() string { return e.msg }

// writeFault answers a fault in the agent's blocking form, which all
// three agents honour: the block JSON on stdout and exit code 2 with the
// reason on stderr (and why the denial could not be recorded, traceErr,
// when it could not). It returns the exit code.
func writeFault(io stdio, a *agentSpec, err, traceErr error) int {
	reason := faultReason(err)
	fmt.Fprintf(io.err, "%s\n", reason)
	if full := err.Error(); strings.Contains(full, "\n") {
		fmt.Fprintf(io.err, "%s\n", full)
	}
	var spooled spooledOnly
	switch {
	case errors.As(traceErr, &spooled):
		// Recorded, durably: only the upload waits.
		fmt.Fprintf(io.err, "toolgate hook: the denial is recorded in the spool, not yet uploaded: %v\n", traceErr)
	case traceErr != nil:
		fmt.Fprintf(io.err, "toolgate hook: the denial was not recorded: %v\n", traceErr)
	}
	_, _ = io.out.Write(append(blockJSON(reason), '\n'))
	return 2
}

// traceFault records a fault's denial as a decision, when it can: a fresh
// executor on a free spool slot, whose one gate fails with the fault (the
// executor denies it, gate.error=error), so that the denial has the same
// execute_tool span and gate.* record as any other. The policy's export
// settings are used when the policy loads, else the defaults. It is bounded
// by faultTraceBudget and never panics; the error says why the denial
// could not be recorded.
func traceFault(a *agentSpec, ev hookEvent, f hookFlags, cause error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recording the denial panicked: %v", r)
		}
	}()
	if a == nil {
		return errors.New("no agent")
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
			return err
		}
	}
	tel, err := openTelemetry(ctx, target, ServiceName, DefaultExportWait)
	if err != nil {
		return err
	}
	defer func() {
		if n := tel.finish(envDuration(envExportWait, DefaultExportWait)); n > 0 && err == nil {
			err = spooledOnly{fmt.Sprintf("%d spans left in the spool %s (collector at %s unreachable): toolgate flush uploads them", n, slotDir(target.spoolDir, tel.slot), target.endpoint)}
		}
	}()
	tool := ev.ToolName
	if tool == "" {
		tool = "unknown_tool"
	}
	reg, err := executor.NewRegistry(agentTool(tool, openSchema))
	if err != nil {
		tool = "invalid_tool_name"
		if reg, err = executor.NewRegistry(agentTool(tool, openSchema)); err != nil {
			return err
		}
	}
	failing := gate.Named(SourceHookFault, gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		return gate.Decision{}, fmt.Errorf("%s", faultReason(cause))
	}))
	ex, err := executor.New(reg, executor.WithTracerProvider(tel.p), executor.WithGates(failing),
		executor.WithRecordContent(true), executor.WithRefusalBudget(-1))
	if err != nil {
		return err
	}
	name := pol.Export.Agent
	if name == "" {
		name = a.genAI
	}
	agent, err := ex.Agent(name, executor.AgentPresets(executor.PresetAll))
	if err != nil {
		return err
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
	res := run.Execute(ctx, executor.ToolCall{ID: callID, Name: tool, Input: in})
	run.End()
	if !res.TraceID.IsValid() {
		return errors.New("the denial's span was not recorded")
	}
	return nil
}
