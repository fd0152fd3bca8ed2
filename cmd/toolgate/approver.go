package main

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/gate"
)

// agentAskPrefix starts the approval ID of an ask handed to the agent's
// own prompt ("claude-code:<tool_use_id>").
func agentAskPrefix(a *agentSpec) string { return a.genAI + ":" }

// hookApprover answers the executor's asks for one hook call:
//   - native (an agent that asks its user itself: Claude Code; Gemini CLI
//     with --ask native): the
//     request is handed to the agent's prompt — recorded as pending
//     (deny, gate.approval=pending, gate.approval.id "<agent>:<call ID>",
//     approver "<agent>.user"): toolgate did not allow the call; the
//     agent's user decides;
//   - otherwise (Codex, whose hooks cannot ask: an ask or a bare allow
//     makes it run the call; Gemini CLI by default): declined, with a
//     reason telling the model a person must approve the call — unless the
//     policy's approver is the inbox (execute uses inbox.Approver then).
func hookApprover(a *agentSpec, callID string, native bool) gate.Approver {
	return gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		if native {
			return req.Pending(a.genAI+".user", agentAskPrefix(a)+callID, time.Now().UTC()), nil
		}
		why := "a person must approve this call, and the " + a.genAI + " hook cannot ask one: " +
			"ask the user to run it, or to allow it in the toolgate policy (or set approver.kind: inbox)"
		return req.Decline("toolgate-hook."+a.name, why), nil
	})
}
