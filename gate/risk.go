package gate

import "fmt"

// RiskLevel is a classifier's verdict on one tool call: safe (read-only,
// auto-pass), review (ambiguous or scoped side effects; a human confirms) or
// high (destructive, privileged, remote code, persistence, secrets; blocked by
// default). The zero value means no classifier ran.
type RiskLevel string

// Risk levels, in increasing order.
const (
	RiskNone   RiskLevel = ""
	RiskSafe   RiskLevel = "safe"
	RiskReview RiskLevel = "review"
	RiskHigh   RiskLevel = "high"
)

// Rank orders levels: none 0 < safe 1 < review 2 < high 3; unknown values
// rank as high so that a corrupt level never lowers a verdict.
func (r RiskLevel) Rank() int {
	switch r {
	case RiskNone:
		return 0
	case RiskSafe:
		return 1
	case RiskReview:
		return 2
	default:
		return 3
	}
}

// Max returns the higher of two levels.
func (r RiskLevel) Max(o RiskLevel) RiskLevel {
	if o.Rank() > r.Rank() {
		return o
	}
	return r
}

// ParseRiskLevel parses "safe", "review" or "high".
func ParseRiskLevel(s string) (RiskLevel, error) {
	switch l := RiskLevel(s); l {
	case RiskSafe, RiskReview, RiskHigh:
		return l, nil
	}
	return RiskNone, fmt.Errorf("gate: unknown risk level %q (want safe, review or high)", s)
}
