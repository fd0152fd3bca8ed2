package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/gate"
)

// A call is suspended pending approval, a human approves it (here in the
// same program; usually auditq approve, the HTTP API or the web page, from
// another process), and the resumed call is approved — once.
func Example() {
	dir, _ := os.MkdirTemp("", "inbox-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := inbox.Open(filepath.Join(dir, "approvals.db"), inbox.OpenConfig{})
	if err != nil {
		panic(err)
	}
	if _, err := db.Add(ctx, "alice"); err != nil { // the token is for the HTTP API
		panic(err)
	}
	ib := inbox.New(db, db, inbox.Config{})
	approver := inbox.NewApprover(ib, inbox.ApproverConfig{Mode: inbox.Suspend})

	call := gate.ToolCallContext{
		ToolName: "shell", RawInput: json.RawMessage(`{"cmd":"rm -rf build"}`),
		ToolCallID: "call_1", AgentName: "builder", RunID: "run-42",
	}

	// 1. The gate asks; the approver stores the request and suspends.
	res, err := approver.Approve(ctx, gate.NewApprovalRequest(call, gate.Ask("deletes files"), nil))
	if err != nil {
		panic(err)
	}
	fmt.Println("ask:", res.Outcome)
	id := res.RequestID

	// 2. A human answers, seeing the request (and its CallHash).
	r, _ := ib.Get(ctx, id)
	fmt.Println("inbox:", r.Tool, string(r.Input), r.Status)
	if _, err := ib.Answer(ctx, id, inbox.Answer{Approve: true, Approver: "alice", Reason: "build dir only", CallHash: r.CallHash}); err != nil {
		panic(err)
	}

	// 3. The run resumes under gate.WithResume(ctx, id): the gates ask
	// again with ResumeID set, and the stored answer applies (Take).
	resumed := gate.NewApprovalRequest(call, gate.Ask("deletes files"), nil)
	resumed.ResumeID = gate.ResumeID(gate.WithResume(ctx, id))
	res, err = approver.Approve(ctx, resumed)
	if err != nil {
		panic(err)
	}
	fmt.Println("resume:", res.Outcome, "by", res.Approver, "-", res.Reason)

	// A second resume of the same approval is refused.
	_, err = approver.Approve(ctx, resumed)
	fmt.Println("again:", err != nil)

	// A resume with another input is refused too.
	tampered := call
	tampered.RawInput = json.RawMessage(`{"cmd":"rm -rf /"}`)
	req := gate.NewApprovalRequest(tampered, gate.Ask("deletes files"), nil)
	req.ResumeID = id
	_, err = approver.Approve(ctx, req)
	fmt.Println("tampered:", err != nil)

	// Output:
	// ask: pending
	// inbox: shell {"cmd":"rm -rf build"} pending
	// resume: approved by alice - build dir only
	// again: true
	// tampered: true
}
