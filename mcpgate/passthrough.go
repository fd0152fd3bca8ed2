package mcpgate

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/textsafe"
)

// inflight tracks the client calls forwarded to one upstream while they
// run, so that an elicitation the upstream sends meanwhile can reach the
// person who made the call.
type inflight struct {
	mu    sync.Mutex
	calls map[uint64]*mcp.CallToolRequest
	next  uint64
}

// add records a forwarded call; the returned func removes it.
func (f *inflight) add(r *mcp.CallToolRequest) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[uint64]*mcp.CallToolRequest{}
	}
	id := f.next
	f.next++
	f.calls[id] = r
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.calls, id)
	}
}

// sole is the one call in flight, or nil when there are none or several
// (an elicitation over stdio or a shared session names no request: with
// two calls running, it could be either's).
func (f *inflight) sole() *mcp.CallToolRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) != 1 {
		return nil
	}
	for _, r := range f.calls {
		return r
	}
	return nil
}

// maxElicitMessage bounds the upstream's message as the person sees it.
const maxElicitMessage = 2000

// passElicitation is the upstream client's elicitation handler: a form
// elicitation the upstream sends while exactly one client call to it runs
// goes to that call's client, when it declared elicitation and speaks a
// revision with server-initiated requests (before 2026-07-28), its message
// prefixed with the upstream's name ("[fs] …", escaped and bounded, so
// that it cannot pass for toolgate's own approval question). The answer
// goes back to the upstream only: it approves nothing in the gate.
// Otherwise — no or several calls in flight, a client that cannot be
// asked, a URL elicitation — the upstream is told "decline".
func (g *Gateway) passElicitation(up *upstreamConn) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		decline := func(why string) (*mcp.ElicitResult, error) {
			g.cfg.logger.Warn("mcpgate: an upstream's elicitation was declined", "upstream", up.cfg.Name, "why", why)
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		if req == nil || req.Params == nil {
			return decline("no parameters")
		}
		if m := req.Params.Mode; m != "" && m != "form" {
			return decline("only form elicitations are passed on, not " + gate.SafeText(m, 20))
		}
		creq := up.inflight.sole()
		switch {
		case creq == nil:
			return decline("not exactly one client call to this upstream is running")
		case creq.Session == nil || !canElicit(creq):
			return decline("the client declared no elicitation")
		case creq.ProtocolVersion() >= "2026-07-28":
			return decline("the client's protocol revision has no server-initiated requests")
		}
		p := *req.Params
		p.Message = "[" + up.cfg.Name + "] " + gate.SafeText(textsafe.Escape(p.Message), maxElicitMessage)
		res, err := creq.Session.Elicit(ctx, &p)
		if err != nil {
			return decline("the client: " + err.Error())
		}
		return res, nil
	}
}
