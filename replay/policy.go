package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/gate"
)

// DefaultReviewReason is the reason given when no policy rule approves a
// review-level call.
const DefaultReviewReason = "needs human review"

// Policy decides review-level (ask) calls without a human: the first rule
// that matches answers; when none does, Default answers. It is what a
// replay uses in place of a person at a terminal.
//
// YAML shape:
//
//	default: {approve: false, reason: "needs human review"}
//	rules:
//	  - tool: bash              # optional: exact tool name
//	    risk: review            # optional: safe | review | high
//	    match: '^git (status|diff)'  # optional: RE2 regexp on the call's command, path or code
//	    approve: true
//	    reason: "read-only git"
type Policy struct {
	Default Rule   `yaml:"default"`
	Rules   []Rule `yaml:"rules"`
}

// Rule is one policy rule.
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

// LoadPolicy reads a policy YAML file. Unknown fields, a bad risk level or
// an invalid regexp are errors that name the rule.
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: policy: %w", err)
	}
	return ParsePolicy(b)
}

// ParsePolicy parses policy YAML (see Policy).
func ParsePolicy(b []byte) (*Policy, error) {
	p := DefaultPolicy()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("replay: policy: %w", err)
	}
	if p.Default.Reason == "" && !p.Default.Approve {
		p.Default.Reason = DefaultReviewReason
	}
	for i := range p.Rules {
		r := &p.Rules[i]
		if r.Risk != "" {
			if _, err := gate.ParseRiskLevel(r.Risk); err != nil {
				return nil, fmt.Errorf("replay: policy rule %d: %w", i+1, err)
			}
		}
		if r.Match != "" {
			re, err := regexp.Compile(r.Match)
			if err != nil {
				return nil, fmt.Errorf("replay: policy rule %d: match: %w", i+1, err)
			}
			r.re = re
		}
		if !r.Approve && r.Reason == "" {
			return nil, fmt.Errorf("replay: policy rule %d: a declining rule needs a reason", i+1)
		}
	}
	return p, nil
}

// subject is the text a rule's match is applied to: the command, path or
// code of the call.
func subject(c gate.ToolCallContext) string {
	for _, k := range []string{"command", "path", "file_path", "code"} {
		if s := c.String(k); s != "" {
			return s
		}
	}
	return string(c.RawInput)
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
		if r.re != nil && !r.re.MatchString(subject(req.Call)) {
			continue
		}
		return r
	}
	return p.Default
}

// Approver returns a gate.Approver that answers from the policy, named
// "policy:" + name.
func (p *Policy) Approver(name string) gate.Approver {
	who := "policy:" + name
	return gate.ApproverFunc(func(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		if err := ctx.Err(); err != nil {
			return gate.ApprovalResult{Outcome: gate.ApprovalTimeout, Approver: who}, err
		}
		r := p.decide(req)
		res := gate.ApprovalResult{Approved: r.Approve, Approver: who, Reason: r.Reason}
		if r.Approve {
			res.Outcome = gate.ApprovalApproved
		} else {
			res.Outcome = gate.ApprovalDeclined
		}
		return res, nil
	})
}
