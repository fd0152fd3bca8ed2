package main

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/replay"
)

// report is what the demo prints.
type report struct {
	Summary         *replay.Summary
	Sampling        string
	Endpoint        string
	Policy          string
	JaegerURL       string
	Database        string
	StoredDecisions uint64
	OnlyDenials     bool
	JaegerSpans     int
	// Chains is how many hash chains (one per run) verified complete,
	// holding ChainDecisions decisions, in VerifyTime (0: not verified).
	Chains         int
	ChainDecisions uint64
	VerifyTime     time.Duration
}

// ruleID finds the first "[rule.id]" a reason carries, as `auditq stats
// --by rule` does for a decision whose gate named no rule.
var ruleID = regexp.MustCompile(audit.RulePattern)

// ruleCount groups deny reasons by the classifier rule behind them.
type ruleCount struct {
	Rule    string
	Count   int
	Example string
}

// byRule groups the summary's deny reasons by rule, as `auditq stats --by
// rule` does: the deciding gate's rule (gate.rule) when it named one, else
// the reason's first "[rule.id]"; reasons with neither form the group "".
// Most frequent first.
func byRule(s *replay.Summary) []ruleCount {
	idx := map[string]int{}
	var out []ruleCount
	for _, rc := range s.DenyReasons {
		key := rc.Rule
		if m := ruleID.FindStringSubmatch(rc.Reason); key == "" && m != nil {
			key = m[1]
		}
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, ruleCount{Rule: key, Example: rc.Reason})
		}
		out[i].Count += rc.Count
	}
	slices.SortStableFunc(out, func(a, b ruleCount) int { return cmp.Compare(b.Count, a.Count) })
	return out
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func (r report) print(w io.Writer) {
	s := r.Summary
	fmt.Fprintf(w, "\ntoolgate demo: %d tool calls from %d recorded agent runs, replayed in %.2f s (%.0f calls/s)\n\n",
		s.Calls, len(s.Runs), s.Wall.Seconds(), s.CallsPerSecond())
	fmt.Fprintf(w, "  %-15s %5d  (gated %d)\n", "calls", s.Calls, s.Gated)
	fmt.Fprintf(w, "  %-15s %5d  (%d of them approved by policy %q)\n", "allowed", s.Allowed, s.Approved, r.Policy)
	fmt.Fprintf(w, "  %-15s %5d  (%d declined by policy %q, %d high risk)\n", "denied", s.Denied, s.Declined, r.Policy, s.ByRisk[gate.RiskHigh])
	fmt.Fprintf(w, "  %-15s safe %d · review %d · high %d\n", "by risk", s.ByRisk[gate.RiskSafe], s.ByRisk[gate.RiskReview], s.ByRisk[gate.RiskHigh])
	tools := make([]string, 0, len(s.ByTool))
	for t := range s.ByTool {
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.ByTool[b].Calls, s.ByTool[a].Calls), cmp.Compare(a, b))
	})
	var parts []string
	for _, t := range tools {
		parts = append(parts, fmt.Sprintf("%s %d/%d", t, s.ByTool[t].Denied, s.ByTool[t].Calls))
	}
	fmt.Fprintf(w, "  %-15s %s\n", "denied by tool", strings.Join(parts, " · "))

	if rules := byRule(s); len(rules) > 0 {
		fmt.Fprintf(w, "\n  top deny reasons (by rule, as `auditq stats --action deny --by rule`):\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for i, rc := range rules {
			if i == 8 {
				break
			}
			rule := rc.Rule
			if rule == "" {
				rule = "(no rule)"
			}
			fmt.Fprintf(tw, "    %d\t%s\te.g. %s\n", rc.Count, rule, clip(rc.Example, 90))
		}
		tw.Flush()
	}
	if sl := s.Slowest; sl.Tool != "" {
		fmt.Fprintf(w, "\n  slowest gate: %s for %s call %d of %s\n", sl.Duration.Round(1000), sl.Tool, sl.Seq, sl.Run)
	}
	switch {
	case r.StoredDecisions > 0 && r.OnlyDenials:
		fmt.Fprintf(w, "\n  ClickHouse: %d denials in %s.gate_decisions, as many as the replay made (sampling %s keeps allowed calls only in part)\n", r.StoredDecisions, r.Database, r.Sampling)
	case r.StoredDecisions > 0:
		fmt.Fprintf(w, "\n  ClickHouse: %d decisions in %s.gate_decisions; counts by action, risk and tool match the replay\n", r.StoredDecisions, r.Database)
	}
	if r.Chains > 0 {
		fmt.Fprintf(w, "  Verifiable trail: %d of %d runs' hash chains complete (%d decisions, every position to the run's recorded end; verified in %s, as `auditq verify`)\n",
			r.Chains, len(s.Runs), r.ChainDecisions, r.VerifyTime.Round(time.Millisecond))
	}
	if run := s.MostDenied(); run != nil {
		fmt.Fprintf(w, "  Jaeger: the run with the most denials is %s (%d of %d calls denied)\n", run.ID, run.Denied, run.Calls)
		if r.JaegerSpans > 0 {
			fmt.Fprintf(w, "    %s/api/traces/%s (%d spans, Jaeger's HTTP query API)\n", r.JaegerURL, run.TraceID, r.JaegerSpans)
		} else {
			fmt.Fprintf(w, "    %s/api/traces/%s (Jaeger's HTTP query API)\n", r.JaegerURL, run.TraceID)
		}
		fmt.Fprintf(w, "    (the Jaeger built from its Go module has no web UI; with the official image, %s/trace/%s)\n", r.JaegerURL, run.TraceID)
		fmt.Fprintf(w, "\n  Look further:\n")
		fmt.Fprintf(w, "    source .demo/env\n")
		fmt.Fprintf(w, "    bin/auditq stats --by action,risk\n")
		fmt.Fprintf(w, "    bin/auditq stats --action deny --by rule\n")
		fmt.Fprintf(w, "    bin/auditq decisions --since 1h --action deny --limit 20\n")
		fmt.Fprintf(w, "    bin/auditq trace %s --jaeger-url %s\n", run.TraceID, r.JaegerURL)
		fmt.Fprintf(w, "    bin/auditq tail --action deny\n")
		fmt.Fprintf(w, "    bin/auditq verify --since 1h\n")
		fmt.Fprintf(w, "    make stop\n")
	}
}
