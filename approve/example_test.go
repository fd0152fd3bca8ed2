package approve_test

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/gate"
)

// A UI answers asks by call hash; the answer is built from the pending
// request, so it is bound to that call, and it is used once.
func ExampleChannel() {
	ui := approve.NewChannel("ui", 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := <-ui.Requests()
		_ = ui.Resolve(req.CallHash, gate.ApprovalApproved, "checked the diff", gate.GrantScopeNone)
		fmt.Println("second answer:", ui.Resolve(req.CallHash, gate.ApprovalApproved, "", gate.GrantScopeNone))
	}()
	call := gate.ToolCallContext{ToolName: "deploy", ToolCallID: "c1", Input: map[string]any{"env": "prod"}}
	req := gate.ApprovalRequest{Call: call, Decision: gate.Ask("deploys to production"), CallHash: gate.CallHash(call)}
	res, _ := ui.Approve(context.Background(), req)
	<-done
	fmt.Println(res.Outcome, res.Approver, res.Reason, res.CallHash == req.CallHash)
	// Output:
	// second answer: approve: no pending approval for this call hash (unknown, already answered or expired)
	// approved ui checked the diff true
}

// A policy answers asks without a human: the first matching rule wins.
func ExamplePolicy() {
	p, err := approve.ParsePolicy([]byte(`
rules:
  - tool: bash
    match: '^git (status|diff)$'
    approve: true
    reason: read-only git
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	a := p.Approver("example")
	for _, cmd := range []string{"git status", "git push"} {
		call := gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"command": cmd}, ToolCallID: "c1"}
		res, _ := a.Approve(context.Background(), gate.ApprovalRequest{Call: call, Decision: gate.Ask("review"), CallHash: gate.CallHash(call)})
		fmt.Printf("%s: %s by %s (%s)\n", cmd, res.Outcome, res.Approver, res.Reason)
	}
	// Output:
	// git status: approved by policy:example (read-only git)
	// git push: declined by policy:example (needs human review)
}
