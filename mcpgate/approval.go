package mcpgate

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/textsafe"
)

// ApproverElicitation is gate.approver for answers a person gave through
// the MCP client's elicitation.
const ApproverElicitation = "mcp-elicitation"

// ApproverNone is gate.approver when no one could be asked (the client
// declared no elicitation and no approver is configured); the model reads
// "declined by the gateway (no one to ask)".
const ApproverNone = "the gateway (no one to ask)"

// askPrefix starts the IDs of the gateway's elicitation asks.
const askPrefix = "ask_"

// maxPending bounds the asks waiting for a client's answer.
const maxPending = 1024

// pendingAsk is an ask the client was sent as an elicitation.
type pendingAsk struct {
	callID    string
	tool      string
	inputHash [32]byte
	callHash  string
	message   string
	expires   time.Time
	answered  bool
	approve   bool
	note      string
}

// pendingStore holds asks between the input_required result and the
// client's retry. IDs are 128-bit random; an ID answers one call, once.
type pendingStore struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]*pendingAsk
}

func newPendingStore(ttl time.Duration) *pendingStore {
	return &pendingStore{ttl: ttl, m: map[string]*pendingAsk{}}
}

func (s *pendingStore) add(p *pendingAsk) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for id, q := range s.m {
		if now.After(q.expires) {
			delete(s.m, id)
		}
	}
	if len(s.m) >= maxPending {
		var oldest string
		for id, q := range s.m {
			if oldest == "" || q.expires.Before(s.m[oldest].expires) {
				oldest = id
			}
		}
		delete(s.m, oldest)
	}
	id := askPrefix + randomHex(16)
	p.expires = now.Add(s.ttl)
	s.m[id] = p
	return id
}

func (s *pendingStore) get(id string) (*pendingAsk, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[id]
	return p, ok
}

// resume records the client's answer for the ask id, after checking that
// the retry is the very call that was asked about (same tool, same input
// bytes). Errors: unknown or expired state, another call, no answer.
func (s *pendingStore) resume(id, tool string, input json.RawMessage, answer mcp.InputResponse) (*pendingAsk, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[id]
	if !ok || time.Now().After(p.expires) {
		return nil, errors.New("the approval state is unknown or expired; a person must approve this call")
	}
	if p.tool != tool || p.inputHash != sha256.Sum256(input) {
		p.answered, p.approve, p.note = true, false, "the answer was sent with another call than the one asked about"
		return nil, errors.New("the approval state belongs to another call; a person must approve this call")
	}
	p.answered = true
	p.approve = false
	switch a := answer.(type) {
	case *mcp.ElicitResult:
		v, _ := a.Content["approve"].(bool)
		p.approve = a.Action == "accept" && v
		p.note = "the user answered " + a.Action
		if a.Action == "accept" {
			p.note = fmt.Sprintf("the user answered approve=%v", v)
		}
	default:
		p.note = "no answer to the approval request"
	}
	return p, nil
}

// take removes and returns the answered ask id.
func (s *pendingStore) take(id string) (*pendingAsk, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[id]
	if ok {
		delete(s.m, id)
	}
	return p, ok && p.answered
}

// approverRouter answers the executor's asks: through the client (an
// elicitation, as a pending approval the retry resumes) when it can be
// asked, else by the fallback approver, else by declining.
type approverRouter struct {
	pending  *pendingStore
	fallback gate.Approver
}

// Approve implements gate.Approver.
func (a approverRouter) Approve(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
	if req.ResumeID != "" && !strings.HasPrefix(req.ResumeID, askPrefix) {
		// Not an elicitation of ours: the fallback approver's request.
		if a.fallback != nil {
			return a.fallback.Approve(ctx, req)
		}
		return req.Decline(ApproverNone, "no approver for this approval request"), nil
	}
	if req.ResumeID != "" {
		p, ok := a.pending.take(req.ResumeID)
		if !ok {
			return req.Decline(ApproverElicitation, "no answer for this approval request"), nil
		}
		if p.callHash != gate.CallHash(req.Call) {
			return req.Decline(ApproverElicitation, "the answer was for another call"), nil
		}
		if !p.approve {
			return req.Decline(ApproverElicitation, p.note), nil
		}
		return req.Approve(ApproverElicitation, p.note), nil
	}
	if creq, _ := ctx.Value(elicitKey{}).(*mcp.CallToolRequest); creq != nil && canElicit(creq) {
		// The person sees exactly what will run, with nothing hidden: the
		// model's bytes escaped (controls, invisible characters, invalid
		// UTF-8), bounded.
		in := gate.SafeText(textsafe.Escape(string(req.Call.RawInput)), 2000)
		p := &pendingAsk{callID: req.Call.ToolCallID, tool: req.Call.ToolName, inputHash: sha256.Sum256(req.Call.RawInput),
			callHash: gate.CallHash(req.Call), // the call, not this request (its nonce is new on resume)
			message: fmt.Sprintf("toolgate: the model wants to call %s with %s\nWhy a person is asked: %s\nRun it?",
				req.Call.ToolName, in, gate.SafeText(textsafe.Escape(req.Decision.Reason), 1000))}
		id := a.pending.add(p)
		return req.Pending(ApproverElicitation, id, time.Now()), nil
	}
	if a.fallback != nil {
		return a.fallback.Approve(ctx, req)
	}
	return req.Decline(ApproverNone, "a person must approve this call, and this MCP client cannot be asked (it declared no elicitation) and no approver is configured"), nil
}

// suspendedStore remembers calls the fallback approver suspended (an
// approvals inbox answered gate.ApprovalPending), by tool and input bytes,
// so that the model's next identical call resumes that request (same call
// ID) instead of asking again. In memory: after a restart the call is a new
// ask. Bounded (maxPending; the oldest is forgotten).
type suspendedStore struct {
	mu    sync.Mutex
	m     map[[32]byte]suspendedCall
	order [][32]byte
}

type suspendedCall struct{ callID, id string }

func suspendKey(tool string, input []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(input)
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

func (s *suspendedStore) add(tool string, input []byte, callID, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[[32]byte]suspendedCall{}
	}
	k := suspendKey(tool, input)
	if _, ok := s.m[k]; !ok {
		s.order = append(s.order, k)
	}
	s.m[k] = suspendedCall{callID: callID, id: id}
	for len(s.order) > maxPending {
		delete(s.m, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *suspendedStore) take(tool string, input []byte) (suspendedCall, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := suspendKey(tool, input)
	c, ok := s.m[k]
	if ok {
		delete(s.m, k)
	}
	return c, ok
}
