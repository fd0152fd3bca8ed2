package approve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/gate"
)

// DefaultReviewReason is the reason given when no policy rule approves a
// review-level call.
const DefaultReviewReason = "needs human review"

// Policy decides asks without a human: the first rule that matches the
// request answers; when none does, Default answers. Rules see the call as
// it will run (after any rewrite) and the gate's risk. It is what a replay
// uses in place of a person at a terminal.
//
// YAML shape:
//
//	default: {approve: false, reason: "needs human review"}
//	rules:
//	  - tool: bash              # optional: exact tool name
//	    risk: review            # optional: safe | review | high
//	    match: '^git (status|diff)'  # optional: RE2 regexp on the call's command, path, file_path or code
//	    approve: true
//	    reason: "read-only git"
type Policy struct {
	Default Rule   `yaml:"default"`
	Rules   []Rule `yaml:"rules"`
}

// Rule is one policy rule: it matches a request when each of its set
// fields matches (Tool: the exact tool name; Risk: the decision's risk
// level; Match: an RE2 regexp that must match every command, cmd, path,
// file_path and code field of the input, in any spelling a case-insensitive
// parser reads as that field, else its raw input), and answers with Approve and Reason. Rules are
// best built by ParsePolicy, which checks them; in a Rule built in Go, a
// Match that does not compile matches nothing.
type Rule struct {
	Tool    string `yaml:"tool,omitempty"`
	Risk    string `yaml:"risk,omitempty"`
	Match   string `yaml:"match,omitempty"`
	Approve bool   `yaml:"approve"`
	Reason  string `yaml:"reason,omitempty"`

	re *regexp.Regexp
}

// DefaultPolicy denies every ask with DefaultReviewReason.
func DefaultPolicy() *Policy {
	return &Policy{Default: Rule{Approve: false, Reason: DefaultReviewReason}}
}

// LoadPolicy reads a policy YAML file (see Policy). Unknown fields, a bad
// risk level, an invalid regexp or a declining rule without a reason are
// errors that name the rule; a file that cannot be read is an error
// wrapping the os error.
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("approve: policy: %w", err)
	}
	return ParsePolicy(b)
}

// ParsePolicy parses policy YAML (see Policy and LoadPolicy). Empty YAML
// is DefaultPolicy; a declining default without a reason gets
// DefaultReviewReason.
func ParsePolicy(b []byte) (*Policy, error) {
	p := &Policy{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("approve: policy: %w", err)
	}
	if p.Default.Reason == "" && !p.Default.Approve {
		p.Default.Reason = DefaultReviewReason
	}
	for i := range p.Rules {
		r := &p.Rules[i]
		if r.Risk != "" {
			if _, err := gate.ParseRiskLevel(r.Risk); err != nil {
				return nil, fmt.Errorf("approve: policy rule %d: %w", i+1, err)
			}
		}
		if r.Match != "" {
			re, err := regexp.Compile(r.Match)
			if err != nil {
				return nil, fmt.Errorf("approve: policy rule %d: match: %w", i+1, err)
			}
			r.re = re
		}
		if !r.Approve && r.Reason == "" {
			return nil, fmt.Errorf("approve: policy rule %d: a declining rule needs a reason", i+1)
		}
	}
	return p, nil
}

// subjects are the texts a rule's match is applied to: the value of every
// key of the call's input that is "command", "cmd", "path", "file_path" or
// "code" to a case-insensitive parser (gate.SameFieldName) — the fields
// the classifier gates judge, every one of which a tool may read — in key
// order; the raw input when there is none. ok is false when such a key
// holds something other than a string (no rule's match applies then).
func subjects(c gate.ToolCallContext) (subs []string, ok bool) {
	keys := make([]string, 0, 2)
	for k := range c.Input {
		for _, f := range []string{"command", "cmd", "path", "file_path", "code"} {
			if gate.SameFieldName(k, f) {
				keys = append(keys, k)
				break
			}
		}
	}
	if len(keys) == 0 {
		return []string{string(c.RawInput)}, true
	}
	slices.Sort(keys)
	for _, k := range keys {
		s, isStr := c.Input[k].(string)
		if !isStr {
			return nil, false
		}
		subs = append(subs, s)
	}
	return subs, true
}

// matches applies r's Match to s. A Rule built in Go rather than parsed has
// no compiled regexp: it is compiled here, and one that does not compile
// matches nothing.
func (r Rule) matches(s string) bool {
	re := r.re
	if re == nil {
		var err error
		if re, err = regexp.Compile(r.Match); err != nil {
			return false
		}
	}
	return re.MatchString(s)
}

// matchesAll reports whether r's Match matches every subject of the call:
// a rule that approves "git status" must not approve a call whose other
// command field holds something else.
func (r Rule) matchesAll(c gate.ToolCallContext) bool {
	subs, ok := subjects(c)
	if !ok {
		return false
	}
	for _, s := range subs {
		if !r.matches(s) {
			return false
		}
	}
	return true
}

// decide returns the rule that answers the request.
func (p *Policy) decide(req gate.ApprovalRequest) Rule {
	for _, r := range p.Rules {
		if r.Tool != "" && r.Tool != req.Call.ToolName {
			continue
		}
		if r.Risk != "" && gate.RiskLevel(r.Risk) != req.Decision.Risk {
			continue
		}
		if r.Match != "" && !r.matchesAll(req.Call) {
			continue
		}
		return r
	}
	return p.Default
}

// Approver returns a gate.Approver that answers from the policy, named
// "policy:" + name (recorded as gate.approver). Its answers are built from
// the request (req.Approve or req.Decline, with the rule's reason); when
// ctx has already ended it answers req.TimedOut. The error is always nil.
func (p *Policy) Approver(name string) gate.Approver {
	who := "policy:" + name
	return gate.ApproverFunc(func(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		if err := ctx.Err(); err != nil {
			return req.TimedOut(who, "no answer: "+err.Error()), nil
		}
		r := p.decide(req)
		if r.Approve {
			return req.Approve(who, r.Reason), nil
		}
		return req.Decline(who, r.Reason), nil
	})
}
