package mcpgate_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/mcpgate"
)

// An ask goes to the client as an elicitation: push elicitation on a
// handshake (2025-11-25) session, MRTR input_required on 2026-07-28. The
// call runs only when the person approves, and the question names the
// call.
func TestGatewayElicitationApproval(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, approve := range []bool{true, false} {
			t.Run(version+map[bool]string{true: "/approve", false: "/decline"}[approve], func(t *testing.T) {
				var asked atomic.Int64
				var question atomic.Value
				copts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					question.Store(req.Params.Message)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": approve}}, nil
				}}
				e := newEnv(t, copts, &mcp.ClientSessionOptions{ProtocolVersion: version})
				require.Equal(t, version, e.client.InitializeResult().ProtocolVersion)
				r := e.call(t, "fs_echo", map[string]any{"message": "hello"})
				require.Equal(t, int64(1), asked.Load())
				require.Contains(t, question.Load().(string), "fs_echo")
				require.Contains(t, question.Load().(string), `"hello"`)
				if approve {
					require.False(t, r.IsError, text(r))
					require.Contains(t, text(r), "ran echo")
					require.Equal(t, int64(1), e.up.calls.Load())
				} else {
					require.True(t, r.IsError)
					require.Contains(t, text(r), "denied")
					require.Zero(t, e.up.calls.Load())
				}
				// The execute_tool spans: a pending ask, then the resumed call.
				var approvals []string
				for _, s := range e.spans.GetSpans() {
					if strings.HasPrefix(s.Name, "execute_tool") {
						for _, a := range s.Attributes {
							if a.Key == gate.AttrApproval {
								approvals = append(approvals, a.Value.AsString())
							}
						}
					}
				}
				want := "declined"
				if approve {
					want = "approved"
				}
				require.Equal(t, []string{"pending", want}, approvals)
			})
		}
	}
}

// A client that forges or replays the request state cannot approve a call
// it was not asked about.
func TestGatewayRequestStateForgery(t *testing.T) {
	copts := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		}}
	e := newEnv(t, copts, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	ctx := context.Background()
	yes := mcp.InputResponseMap{"toolgate_approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}

	// A made-up state.
	r, err := e.client.CallTool(ctx, &mcp.CallToolParams{Name: "fs_echo", Arguments: map[string]any{"message": "a"},
		RequestState: "ask_00000000000000000000000000000000", InputResponses: yes})
	require.NoError(t, err)
	require.True(t, r.IsError)
	require.Zero(t, e.up.calls.Load())

	// A real ask, answered for other arguments: refused, and the state is
	// spent.
	ask := func(msg string) string {
		r, err := e.client.CallTool(ctx, &mcp.CallToolParams{Name: "fs_echo", Arguments: map[string]any{"message": msg}})
		require.NoError(t, err)
		require.True(t, r.NeedsInput())
		return r.RequestState
	}
	retry := func(msg, state string) *mcp.CallToolResult {
		r, err := e.client.CallTool(ctx, &mcp.CallToolParams{Name: "fs_echo", Arguments: map[string]any{"message": msg},
			RequestState: state, InputResponses: yes})
		require.NoError(t, err)
		return r
	}
	state := ask("shown")
	r = retry("swapped", state)
	require.True(t, r.IsError, text(r))
	require.Zero(t, e.up.calls.Load())
	r = retry("shown", state)
	require.True(t, r.IsError, "the state was spent by the swapped retry")
	require.Zero(t, e.up.calls.Load())

	// The right call with a fresh state runs once; the state does not
	// approve it twice.
	state = ask("shown")
	r = retry("shown", state)
	require.False(t, r.IsError, text(r))
	require.Equal(t, int64(1), e.up.calls.Load())
	r = retry("shown", state)
	require.True(t, r.IsError)
	require.Equal(t, int64(1), e.up.calls.Load())

	// Every call above is a decision: 2 asks (pending) and 5 retries.
	var decisions int
	for _, s := range e.spans.GetSpans() {
		if strings.HasPrefix(s.Name, "execute_tool") {
			decisions++
		}
	}
	require.Equal(t, 2+5, decisions)
}

// A client without elicitation, with a durable approvals inbox as the
// fallback approver: the ask is stored and the model told to call again;
// calling again before an answer still does not run; after a person
// approves it in the inbox, the same call runs once; a further identical
// call is a new ask.
func TestGatewayInboxFallback(t *testing.T) {
	db, err := inbox.Open(filepath.Join(t.TempDir(), "approvals.db"), inbox.OpenConfig{})
	require.NoError(t, err)
	_, err = db.Add(context.Background(), "alice")
	require.NoError(t, err)
	ib := inbox.New(db, db, inbox.Config{})
	e := newEnv(t, nil, nil, mcpgate.WithApprover(inbox.NewApprover(ib, inbox.ApproverConfig{Mode: inbox.Suspend})))
	args := map[string]any{"message": "needs a person"}
	r := e.call(t, "fs_echo", args)
	require.True(t, r.IsError)
	id := regexp.MustCompile(`apr_[a-z0-9]+`).FindString(text(r))
	require.NotEmpty(t, id, text(r))
	require.Contains(t, text(r), "call the tool again with exactly the same arguments")

	r = e.call(t, "fs_echo", args) // not answered yet
	require.True(t, r.IsError, text(r))
	require.Zero(t, e.up.calls.Load())
	id2 := regexp.MustCompile(`apr_[a-z0-9]+`).FindString(text(r))
	require.NotEmpty(t, id2, text(r))

	_, err = ib.Answer(context.Background(), id2, inbox.Answer{Approve: true, Approver: "alice", Reason: "ok"})
	require.NoError(t, err)
	// Other arguments do not ride on the approval.
	r = e.call(t, "fs_echo", map[string]any{"message": "something else"})
	require.True(t, r.IsError)
	require.Zero(t, e.up.calls.Load())
	r = e.call(t, "fs_echo", args)
	require.False(t, r.IsError, text(r))
	require.Equal(t, int64(1), e.up.calls.Load())
	r = e.call(t, "fs_echo", args)
	require.True(t, r.IsError, "an approval answers one call")
	require.Equal(t, int64(1), e.up.calls.Load())
}

// The question a person is asked hides nothing the model wrote: control
// characters and invisible text in the arguments are escaped.
func TestGatewayElicitationEscapes(t *testing.T) {
	var question string
	copts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		question = req.Params.Message
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	e := newEnv(t, copts, nil)
	r := e.call(t, "fs_echo", map[string]any{"message": "hi\u202e\r\x1b[2K approved by admin\u200b"})
	require.True(t, r.IsError)
	for _, hidden := range []string{"\u202e", "\x1b", "\r", "\u200b"} {
		require.NotContains(t, question, hidden)
	}
	require.Contains(t, question, "approved by admin")
}
