package replay

import (
	"cmp"
	"slices"
	"time"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// Summary is what a replay did: counts by gate action and risk level, the
// top deny reasons, the slowest gate and per-run totals.
type Summary struct {
	// Calls is the number of calls replayed; Gated those a gate decided.
	Calls, Gated int
	// Allowed and Denied count gate.action allow and deny.
	Allowed, Denied int
	// Approved and Declined count asks resolved by the approver (included
	// in Allowed and Denied).
	Approved, Declined int
	// NotGated counts calls that ended before the gate (unknown tool,
	// unreachable, invalid input); each is listed in Ungated.
	NotGated int
	Ungated  []string
	// ByRisk counts calls by gate.risk.level ("" when no classifier ran).
	ByRisk map[gate.RiskLevel]int
	// ByTool counts calls and denials per tool.
	ByTool map[string]*ToolCount
	// DenyReasons are the deny reasons, most frequent first.
	DenyReasons []ReasonCount
	// Slowest is the call whose gate took longest.
	Slowest SlowCall
	// Runs are the per-run totals, in replay order.
	Runs []*RunSummary
	// Wall is the replay's wall time.
	Wall time.Duration

	reasons map[ReasonCount]int // by reason and rule, Count 0
}

// ToolCount is one tool's calls and denials.
type ToolCount struct{ Calls, Denied int }

// ReasonCount is a deny reason, with the rule it was given under, and how
// often it was given.
type ReasonCount struct {
	Reason string
	// Rule is the deciding gate's rule (gate.Record.Rule), if it named one.
	Rule  string
	Count int
}

// SlowCall identifies the call with the slowest gate decision.
type SlowCall struct {
	Run      string
	Seq      int
	Tool     string
	Duration time.Duration
}

// RunSummary is one run's totals and its trace ID (hex).
type RunSummary struct {
	ID, Agent, TraceID     string
	Calls, Allowed, Denied int
}

func newSummary() *Summary {
	return &Summary{ByRisk: map[gate.RiskLevel]int{}, ByTool: map[string]*ToolCount{}, reasons: map[ReasonCount]int{}}
}

func (s *Summary) startRun(r Run, traceID string) *RunSummary {
	rs := &RunSummary{ID: r.ID, Agent: AgentName(r), TraceID: traceID}
	s.Runs = append(s.Runs, rs)
	return rs
}

func (s *Summary) add(rs *RunSummary, c Call, res executor.ToolResult) {
	s.Calls++
	rs.Calls++
	tc := s.ByTool[c.Tool]
	if tc == nil {
		tc = &ToolCount{}
		s.ByTool[c.Tool] = tc
	}
	tc.Calls++
	g := res.Gate
	if !g.Gated {
		s.NotGated++
		s.Ungated = append(s.Ungated, res.ToolCallID+": "+res.ErrorType)
		return
	}
	s.Gated++
	s.ByRisk[g.Risk]++
	switch g.Approval {
	case gate.ApprovalApproved:
		s.Approved++
	case gate.ApprovalDeclined, gate.ApprovalTimeout:
		s.Declined++
	}
	if g.Action == gate.ActionDeny {
		s.Denied++
		rs.Denied++
		tc.Denied++
		s.reasons[ReasonCount{Reason: g.Reason, Rule: g.Rule}]++
	} else {
		s.Allowed++
		rs.Allowed++
	}
	if g.Duration > s.Slowest.Duration {
		s.Slowest = SlowCall{Run: c.Run, Seq: c.Seq, Tool: c.Tool, Duration: g.Duration}
	}
}

// finish orders the deny reasons, most frequent first.
func (s *Summary) finish() {
	s.DenyReasons = s.DenyReasons[:0]
	for r, n := range s.reasons {
		r.Count = n
		s.DenyReasons = append(s.DenyReasons, r)
	}
	slices.SortFunc(s.DenyReasons, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Rule, b.Rule))
	})
}

// MostDenied returns the run with the most denials (the first such run on
// a tie), or nil when nothing was denied.
func (s *Summary) MostDenied() *RunSummary {
	var best *RunSummary
	for _, r := range s.Runs {
		if r.Denied > 0 && (best == nil || r.Denied > best.Denied) {
			best = r
		}
	}
	return best
}

// CallsPerSecond is the replay's throughput.
func (s *Summary) CallsPerSecond() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return float64(s.Calls) / s.Wall.Seconds()
}
