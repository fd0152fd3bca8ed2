package classify

import (
	"strings"

	"github.com/toolgate/toolgate/gate"
)

// Finding is one reason a command or path is not safe.
type Finding struct {
	// Level is review or high.
	Level gate.RiskLevel `json:"level"`
	// Rule is a stable rule ID such as "rm.recursive-home" or
	// "redirect.write-sensitive".
	Rule string `json:"rule"`
	// Reason explains the rule in a few words.
	Reason string `json:"reason"`
	// Command is the offending part of the input: a simple command, a
	// redirect, or a path (trimmed to 120 bytes).
	Command string `json:"command"`
	// Offset is the 0-based byte offset of Command in the input; Line and
	// Col are 1-based. Parts found inside a nested script (sh -c '…', eval,
	// a here-document fed to a shell) point at the outer word.
	Offset int `json:"offset"`
	Line   int `json:"line"`
	Col    int `json:"col"`
}

// Risk is a classifier's verdict.
type Risk struct {
	// Level is safe, review or high: the highest level of the findings, or
	// safe when there are none.
	Level gate.RiskLevel `json:"level"`
	// Reason is one line naming the decisive part and rule, then the rule
	// IDs of every other finding, highest level first ("…: uploads a file
	// [net.upload]; also [pytest] [curl]"); at most MaxReasonBytes bytes.
	Reason string `json:"reason"`
	// Findings lists every review or high part, in input order.
	Findings []Finding `json:"findings"`
}

// rule is the rule ID of the decisive finding (the first of the highest
// level), "" when there are none.
func (r Risk) rule() string {
	var top *Finding
	for i := range r.Findings {
		if f := &r.Findings[i]; top == nil || f.Level.Rank() > top.Level.Rank() {
			top = f
		}
	}
	if top == nil {
		return ""
	}
	return top.Rule
}

// String returns "level: reason".
func (r Risk) String() string { return string(r.Level) + ": " + r.Reason }

// summarize fills Level and Reason from the findings.
func summarize(findings []Finding, safeReason string) Risk {
	r := Risk{Level: gate.RiskSafe, Reason: safeReason, Findings: findings}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	var top *Finding
	for i := range findings {
		f := &findings[i]
		if top == nil || f.Level.Rank() > top.Level.Rank() {
			top = f
		}
	}
	if top == nil {
		return r
	}
	r.Level = top.Level
	var b strings.Builder
	b.Grow(128)
	b.WriteString(clip(top.Command, 80))
	b.WriteString(": ")
	b.WriteString(top.Reason)
	b.WriteString(" [")
	b.WriteString(top.Rule)
	b.WriteString("]")
	alsoRules(&b, findings, top.Rule)
	r.Reason = b.String()
	if len(r.Reason) > MaxReasonBytes {
		r.Reason = clip(r.Reason, MaxReasonBytes-len("…"))
	}
	return r
}

// MaxReasonBytes bounds Risk.Reason: a longer reason is cut on a rune
// boundary and ends with "…".
const MaxReasonBytes = 300

// alsoRules appends the rules of the other findings to b, highest level
// first (input order within a level), each once: "; also [pytest] [curl]".
func alsoRules(b *strings.Builder, findings []Finding, topRule string) {
	n := b.Len()
	for _, l := range []gate.RiskLevel{gate.RiskHigh, gate.RiskReview} {
		for i, f := range findings {
			// Each rule once: skip the top rule, rules already named at
			// this level, and review rules named among the high ones.
			if f.Level != l || f.Rule == topRule || ruleAt(findings[:i], f.Rule, l) || l == gate.RiskReview && ruleAt(findings, f.Rule, gate.RiskHigh) {
				continue
			}
			if b.Len() == n {
				b.WriteString("; also")
			}
			b.WriteString(" [")
			b.WriteString(f.Rule)
			b.WriteString("]")
			if b.Len() > MaxReasonBytes {
				return
			}
		}
	}
}

// clip shortens s to at most n bytes on a rune boundary, flattening
// newlines so that a reason stays on one line.
func clip(s string, n int) string {
	// Three vectorized byte searches cost less than a table lookup per
	// byte on all but the shortest strings (clip runs on every finding).
	if strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, '\r') >= 0 || strings.IndexByte(s, '\t') >= 0 {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == '\t' {
				return ' '
			}
			return r
		}, s)
	}
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// ruleAt reports whether some finding of level l has the rule.
func ruleAt(findings []Finding, rule string, l gate.RiskLevel) bool {
	for _, f := range findings {
		if f.Rule == rule && f.Level == l {
			return true
		}
	}
	return false
}
