package mcpgate_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"pgregory.net/rapid"
)

// Property: an asked call runs at the upstream only on a retry that
// carries the state of an ask for exactly that call (same arguments),
// answered "approve", on the first retry that carries the state (a state
// answers one retry, whatever it carries) — whatever states, arguments and
// answers a client sends in whatever order; and every retry is a recorded
// decision.
func TestGatewayApprovalBindingProperty(t *testing.T) {
	copts := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}}
	e := newEnv(t, copts, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		type ask struct {
			state, msg string
			used       bool
		}
		var asks []*ask
		before := e.up.calls.Load()
		want := int64(0)
		msg := rapid.SampledFrom([]string{"a", "b", "c"})
		n := rapid.IntRange(1, 12).Draw(rt, "ops")
		for range n {
			if len(asks) == 0 || rapid.Bool().Draw(rt, "newAsk") {
				m := msg.Draw(rt, "msg")
				r, err := e.client.CallTool(ctx, &mcp.CallToolParams{Name: "fs_echo", Arguments: map[string]any{"message": m}})
				if err != nil || !r.NeedsInput() {
					rt.Fatalf("ask: %v %+v", err, r)
				}
				asks = append(asks, &ask{state: r.RequestState, msg: m})
				continue
			}
			a := asks[rapid.IntRange(0, len(asks)-1).Draw(rt, "which")]
			state := a.state
			if rapid.IntRange(0, 5).Draw(rt, "forge") == 0 {
				state = rapid.StringMatching(`ask_[0-9a-f]{0,32}`).Draw(rt, "forged")
			}
			m := msg.Draw(rt, "retryMsg")
			action := rapid.SampledFrom([]string{"accept", "decline", "cancel"}).Draw(rt, "action")
			approve := rapid.Bool().Draw(rt, "approve")
			r, err := e.client.CallTool(ctx, &mcp.CallToolParams{Name: "fs_echo", Arguments: map[string]any{"message": m},
				RequestState: state, InputResponses: mcp.InputResponseMap{"toolgate_approval": &mcp.ElicitResult{Action: action, Content: map[string]any{"approve": approve}}}})
			if err != nil {
				rt.Fatalf("retry: %v", err)
			}
			matches := state == a.state && m == a.msg && !a.used
			if state == a.state {
				a.used = true
			}
			runs := matches && action == "accept" && approve
			if runs {
				want++
			}
			if r.IsError == runs {
				rt.Fatalf("retry state ok=%v msg ok=%v used=%v %s/%v: isError=%v: %s", state == a.state, m == a.msg, !matches, action, approve, r.IsError, text(r))
			}
			if got := e.up.calls.Load() - before; got != want {
				rt.Fatalf("upstream ran %d calls, want %d", got, want)
			}
		}
	})
}
