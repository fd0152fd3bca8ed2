package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/policy"
)

// hookInbox is the policy's durable approvals inbox (approver.kind inbox)
// for an agent whose hook cannot ask a person (Codex; Gemini CLI by
// default): the first call is stored as a request and denied, naming it;
// once a person approved it (auditq approve ID, the approvals page), the
// same call made again — same tool, input, agent and session — resumes
// the request and is allowed, once.
type hookInbox struct {
	ib   *inbox.Inbox
	path string
}

// openHookInbox opens the inbox the policy names (default
// inbox.DefaultPath, outside the workspace).
func openHookInbox(pol *policy.Policy) (*hookInbox, error) {
	path := pol.Approver.Inbox
	if path == "" {
		p, err := inbox.DefaultPath()
		if err != nil {
			return nil, err
		}
		path = p
	}
	db, err := inbox.Open(path, inbox.OpenConfig{})
	if err != nil {
		return nil, fmt.Errorf("approvals inbox: %w", err)
	}
	return &hookInbox{ib: inbox.New(db, db, inbox.Config{}), path: path}, nil
}

// approved finds an approved, unused request for exactly this call of this
// session: the same agent, run (session), tool, input (compared as JSON
// values) and working directory (the same command in another directory is
// another call). The resumed call then takes the request's call ID, so
// that its call hash is the one the person approved.
func (h *hookInbox) approved(ctx context.Context, agent, run, tool string, input json.RawMessage, dir string) (inbox.Request, bool, error) {
	if run == "" {
		return inbox.Request{}, false, nil // no session: nothing to match a retry to
	}
	rs, err := h.ib.List(ctx, inbox.Filter{Status: []inbox.Status{inbox.StatusApproved}, Agent: agent, RunID: run, Limit: 64})
	if err != nil {
		return inbox.Request{}, false, fmt.Errorf("approvals inbox: %w", err)
	}
	for _, r := range rs {
		if r.Tool == tool && r.WorkingDir == gate.SafeText(dir, gate.MaxTextBytes) && sameJSON(r.Input, input) {
			return r, true, nil
		}
	}
	return inbox.Request{}, false, nil
}

// sameJSON reports whether a and b are the same JSON value (key order and
// white space aside).
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, err1 := json.Marshal(va)
	cb, err2 := json.Marshal(vb)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// pendingReason is what the model reads for a call stored in the inbox.
func pendingReason(tool, id, reason, path string) string {
	return fmt.Sprintf("Tool %q has not run: a person must approve this call first (%s). It is waiting as approval request %s: "+
		"ask the user to approve it (auditq approve %s --inbox %s, or the approvals page), then make exactly the same call again: "+
		"it runs once. Do not retry before it is approved: it is denied again.", tool, reason, id, id, path)
}
