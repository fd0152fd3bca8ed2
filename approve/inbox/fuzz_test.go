package inbox

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/gate"
)

// FuzzApprove resumes calls with hostile request IDs and inputs against an
// inbox holding approved requests: whatever the ID and the call, the
// Approver approves only the exact call (gate.CallHash) an approved
// request was made for, only under that request's ID, and only once.
func FuzzApprove(f *testing.F) {
	f.Add(uint8(0), "", `{"cmd":"ls"}`, `{"cmd":"ls"}`, "run-1")
	f.Add(uint8(0), "", `{"cmd":"ls"}`, `{"cmd":"ls","x":1}`, "run-1")
	f.Add(uint8(0), "", `{"cmd":"ls"}`, `{"cmd":"ls"}`, "run-2")
	f.Add(uint8(1), "apr_aaaaaaaaaaaaaaaaaaaaaaaaaa", `{"cmd":"ls"}`, `{"cmd":"ls"}`, "run-1")
	f.Add(uint8(1), "../../../../etc/passwd\x00", `{}`, `{}`, "run-1")
	f.Add(uint8(2), "x", `{"a":[1,2]}`, `{"a":[1,2.0]}`, "run-1")
	f.Add(uint8(3), "", `{"cmd":"other"}`, `{"cmd":"other"}`, "run-1")
	f.Add(uint8(3), "", `{"cmd":"ls"}`, `{ "cmd" : "other" }`, "run-1")
	f.Add(uint8(4), "", `{"cmd":"ls"}`, `{"cmd":"ls"}`, "run-1")

	fx := newFixture(f)
	ctx := context.Background()
	ap := NewApprover(fx.ib, ApproverConfig{Mode: Suspend})
	// A standing approved request for another call, whose ID a hostile
	// resume may name.
	other := fx.ask(f, `{"cmd":"other"}`)
	if _, err := fx.ib.Answer(ctx, other.ID, Answer{Approve: true, Approver: "alice"}); err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, sel uint8, resumeID, askInput, runInput, runID string) {
		r, err := fx.ib.Ask(ctx, testRequest(askInput))
		if err != nil {
			return // not JSON, too large: nothing stored
		}
		approve := sel%5 != 4
		if _, err := fx.ib.Answer(ctx, r.ID, Answer{Approve: approve, Approver: "alice"}); err != nil {
			t.Fatal(err)
		}
		var id string
		switch sel % 5 {
		case 0, 4:
			id = r.ID
		case 1:
			id = resumeID
		case 2:
			id = r.ID + resumeID
		case 3:
			id = other.ID
		}
		call := testCall(runInput)
		call.RunID = runID
		req := gate.NewApprovalRequest(call, gate.Ask("fuzz"), nil)
		req.ResumeID = id
		res, err := ap.Approve(ctx, req)
		if err != nil || !res.Approved() {
			return
		}
		if res.CallHash != req.CallHash {
			t.Fatalf("the answer is bound to another request")
		}
		var approved Request
		switch id {
		case r.ID:
			approved = r
		case other.ID:
			approved = other
		default:
			t.Fatalf("approved under ID %q, which names no approved request", id)
		}
		if !approve && id == r.ID {
			t.Fatalf("a declined request approved the call")
		}
		if gate.CallHash(call) != approved.CallHash {
			t.Fatalf("approved a call whose hash differs from the request's")
		}
		if res.RequestID != id {
			t.Fatalf("RequestID %q, want %q", res.RequestID, id)
		}
		// Once only.
		if res2, err := ap.Approve(ctx, req); err == nil && res2.Approved() {
			t.Fatalf("approved twice")
		}
	})
}
