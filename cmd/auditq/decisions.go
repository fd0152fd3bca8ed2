package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/textsafe"
)

// filterFlags are the decision filters shared by decisions, stats, tail
// and export.
type filterFlags struct {
	since, until string
	agent, tool  string
	action, risk string
	reason       string
	trace, run   string
	service      string
	stage        string
	rewritten    bool
	interrupted  bool
	// The asks: their outcome, who answered, a durable request's ID.
	approval, approver, approvalID string
}

func (f *filterFlags) add(cmd *cobra.Command, withTime bool, defaultSince string) {
	fs := cmd.Flags()
	if withTime {
		fs.StringVar(&f.since, "since", defaultSince, "from this time: a duration before now (24h, 90m, 7d) or RFC 3339; empty for no bound")
		fs.StringVar(&f.until, "until", "", "up to (excluding) this time: a duration before now or RFC 3339")
	}
	fs.StringVar(&f.agent, "agent", "", "only this agent (gen_ai.agent.name)")
	fs.StringVar(&f.tool, "tool", "", "only this tool (gen_ai.tool.name)")
	fs.StringVar(&f.action, "action", "", "only this action: allow or deny")
	fs.StringVar(&f.risk, "risk", "", "only this risk level: safe, review or high")
	fs.StringVar(&f.reason, "reason", "", "only reasons containing this text (case-insensitive)")
	fs.StringVar(&f.trace, "trace", "", "only this trace ID")
	fs.StringVar(&f.run, "run", "", "only this run ID")
	fs.StringVar(&f.service, "service", "", "only this service (OTel service.name)")
	fs.BoolVar(&f.rewritten, "rewritten", false, "only calls whose input a gate rewrote")
	fs.BoolVar(&f.interrupted, "interrupted", false, "only interrupted calls: recorded write-ahead (strict mode), the agent process ended while the tool ran")
	fs.StringVar(&f.stage, "stage", "", "only calls that got this far: cancelled (context done), run (run aborted), registry (unknown tool), reachability (tool not reachable for the agent) or input (invalid input) — refused before any gate — or gate")
	fs.StringVar(&f.approval, "approval", "", "only asks that ended so: approved, declined, timeout, invalid or pending (suspended, awaiting an answer); none for the calls nobody was asked about")
	fs.StringVar(&f.approver, "approver", "", "only asks this approver answered (gate.approver)")
	fs.StringVar(&f.approvalID, "approval-id", "", "only the decisions of this durable approval request (gate.approval.id: the pending ask and the resumed call)")
	_ = cmd.RegisterFlagCompletionFunc("approval", cobra.FixedCompletions(approvalNames(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("action", cobra.FixedCompletions([]string{string(gate.ActionAllow), string(gate.ActionDeny)}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions(stageNames(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("risk", cobra.FixedCompletions([]string{string(gate.RiskSafe), string(gate.RiskReview), string(gate.RiskHigh)}, cobra.ShellCompDirectiveNoFileComp))
}

// stageNames are the values of --stage (gate.Stages, in check order).
func stageNames() []string {
	var out []string
	for _, s := range gate.Stages() {
		out = append(out, string(s))
	}
	return out
}

// approvalNames are the values of --approval: the approval outcomes, then
// none.
func approvalNames() []string {
	return []string{string(gate.ApprovalApproved), string(gate.ApprovalDeclined), string(gate.ApprovalTimeout),
		string(gate.ApprovalInvalid), string(gate.ApprovalPending), audit.ApprovalNone}
}

// filter validates the flags and builds the query filter.
func (f *filterFlags) filter(now time.Time) (audit.Filter, error) {
	var out audit.Filter
	var err error
	if out.Since, err = parseTimeFlag("since", f.since, now); err != nil {
		return out, err
	}
	if out.Until, err = parseTimeFlag("until", f.until, now); err != nil {
		return out, err
	}
	if !out.Since.IsZero() && !out.Until.IsZero() && !out.Since.Before(out.Until) {
		return out, usagef("--since (%s) must be before --until (%s)", out.Since.Format(time.RFC3339), out.Until.Format(time.RFC3339))
	}
	switch gate.Action(f.action) {
	case "", gate.ActionAllow, gate.ActionDeny:
	default:
		return out, usagef("--action %q: want allow or deny", f.action)
	}
	switch gate.RiskLevel(f.risk) {
	case "", gate.RiskSafe, gate.RiskReview, gate.RiskHigh:
	default:
		return out, usagef("--risk %q: want safe, review or high", f.risk)
	}
	if f.stage != "" && !slices.Contains(stageNames(), f.stage) {
		return out, usagef("--stage %q: want %s", f.stage, strings.Join(stageNames(), ", "))
	}
	if f.approval != "" && !slices.Contains(approvalNames(), f.approval) {
		return out, usagef("--approval %q: want %s", f.approval, strings.Join(approvalNames(), ", "))
	}
	out.Stage = f.stage
	out.Approval, out.Approver, out.ApprovalID = f.approval, f.approver, f.approvalID
	out.Agent, out.Tool, out.Action, out.Risk = f.agent, f.tool, f.action, f.risk
	out.Reason, out.TraceID, out.RunID, out.Service = f.reason, f.trace, f.run, f.service
	out.Rewritten, out.Interrupted = f.rewritten, f.interrupted
	return out, nil
}

func newDecisionsCmd(io stdio) *cobra.Command {
	var (
		conn  connFlags
		out   outFlags
		filt  filterFlags
		limit int
		after string
	)
	formats := []string{formatTable, formatJSON, formatJSONL, formatCSV}
	cmd := &cobra.Command{
		Use:   "decisions",
		Short: "List gate decisions, newest first",
		Long: `decisions lists the gate's decisions (one per gated tool call), newest first,
filtered by time, agent, tool, action, risk, reason text, trace, run, stage or
approval (--approval outcome, --approver, --approval-id).
Calls the executor refused before any gate — an unknown tool, a tool the agent
cannot reach, invalid input — are decisions too (action deny, source executor):
--stage registry, reachability or input lists them. --interrupted lists the
calls recorded write-ahead (strict mode) whose agent process ended while the
tool ran (ACTION reads "allow (interrupted)"). When a decision of the page was
an ask, the table has an APPROVAL column: the outcome, who answered and how
long the answer took ("approved by alice after 2m03s"); json, jsonl and csv
always carry approval, approver, approval_id and approval_wait_ms.

Pages: at most --limit decisions are printed; when there are more, stderr
says so with the token that continues: repeat the command with --after TOKEN.
Field names of json, jsonl and csv are documented in docs/auditq.md.`,
		Example: `  # what did we deny in the last day?
  auditq decisions --since 24h --action deny
  # one agent's high-risk shell calls, as JSON for jq
  auditq decisions --agent coder --tool bash --risk high --format json | jq '.[].reason'
  # which calls did the agent not see finish? (strict mode, agent process died)
  auditq decisions --since 7d --interrupted
  # who let what through this week, and how long did they take?
  auditq decisions --since 7d --approval approved
  # the calls suspended for an answer that has not come (yet)
  auditq decisions --since 7d --approval pending
  # what did agents try that never reached the gate? (unknown tools)
  auditq decisions --since 7d --stage registry
  # a fixed window, as CSV
  auditq decisions --since 2026-11-28T00:00:00Z --until 2026-11-29T00:00:00Z --format csv > day.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(formats...); err != nil {
				return err
			}
			if limit < 1 || limit > audit.MaxLimit {
				return usagef("--limit %d: want 1..%d", limit, audit.MaxLimit)
			}
			f, err := filt.filter(time.Now())
			if err != nil {
				return err
			}
			page := audit.Page{Limit: limit}
			if after != "" {
				c, err := audit.ParseCursor(after)
				if err != nil {
					return usagef("--after: %v", err)
				}
				page.After = &c
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), conn.timeout)
			defer cancel()
			st, err := conn.open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			res, err := st.Decisions(ctx, f, page)
			if err != nil {
				return explain(err, conn.database)
			}
			if err := writeDecisions(io.out, out, res.Decisions); err != nil {
				return err
			}
			if len(res.Decisions) == 0 && out.format == formatTable {
				fmt.Fprintln(io.err, "auditq: no decisions match")
			}
			if res.Next != nil {
				fmt.Fprintf(io.err, "auditq: more decisions: repeat with --after %s\n", res.Next)
			}
			return nil
		},
	}
	conn.add(cmd)
	out.add(cmd, formats...)
	filt.add(cmd, true, "24h")
	cmd.Flags().IntVarP(&limit, "limit", "n", audit.DefaultLimit, "print at most this many decisions")
	cmd.Flags().StringVar(&after, "after", "", "continue after this page token (printed when there are more)")
	return cmd
}

// decisionHeader are the table columns of a decision; with approval, the
// APPROVAL column after REASON.
func decisionHeader(approval bool) []string {
	if approval {
		return []string{"TIME", "AGENT", "TOOL", "ACTION", "RISK", "SOURCE", "REASON", "APPROVAL", "DURATION", "TRACE"}
	}
	return []string{"TIME", "AGENT", "TOOL", "ACTION", "RISK", "SOURCE", "REASON", "DURATION", "TRACE"}
}

// approvalCell is the APPROVAL cell of d: its outcome, "by" who answered,
// "after" the wait (formatWait) when recorded; "" when nobody was asked.
func approvalCell(d audit.Decision) string {
	if d.Approval == "" && d.Approver == "" && d.ApprovalWaitMs == 0 {
		return ""
	}
	s := oneLine(d.Approval)
	if d.Approver != "" {
		s += " by " + oneLine(d.Approver)
	}
	if d.ApprovalWaitMs > 0 {
		s += " after " + formatWait(d.ApprovalWaitMs)
	}
	return strings.TrimSpace(s)
}

// formatWait renders a wait in milliseconds by its largest units: 850ms,
// 12.3s, 2m03s, 1h05m, 3d04h.
func formatWait(ms uint64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%dd%02dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

// decisionCells are d's cells under decisionHeader. SOURCE is the gate
// that decided (gate.source, e.g. classify.bash, chain[0]:approval). ACTION
// is actionCell (marked when the call was interrupted). TOOL
// is toolCell: a decision that records several calls (the executor's
// grouped refusals, Decision.Calls > 1) ends in "×n".
func decisionCells(d audit.Decision, loc *time.Location, approval bool) []string {
	cells := []string{formatTime(d.Timestamp, loc), oneLine(d.Agent), toolCell(d), actionCell(d), oneLine(d.RiskLevel),
		oneLine(d.Source), oneLine(d.Reason)}
	if approval {
		cells = append(cells, approvalCell(d))
	}
	return append(cells, formatDuration(d.DurationNs), oneLine(d.TraceID))
}

// anyAsked reports whether a decision of ds was an ask (the table then
// has the APPROVAL column).
func anyAsked(ds []audit.Decision) bool {
	for _, d := range ds {
		if approvalCell(d) != "" {
			return true
		}
	}
	return false
}

// interruptedMark ends the ACTION cell of an interrupted call
// (Decision.Interrupted): the agent process ended while the tool ran.
const interruptedMark = " (interrupted)"

// actionCell is d's action, with interruptedMark for an interrupted call.
func actionCell(d audit.Decision) string {
	if d.Interrupted {
		return oneLine(d.Action) + interruptedMark
	}
	return oneLine(d.Action)
}

// toolCell is d's tool name, with " ×n" when the decision records n > 1
// calls. The name is the model's (an unknown tool's is whatever it sent), so
// a name that is not a plain identifier is shown quoted and escaped: a call
// named "bash ×5000" reads "\"bash ×5000\"", never like 5000 grouped calls
// of bash.
func toolCell(d audit.Decision) string {
	name := oneLine(d.ToolName)
	if !plainToolName(d.ToolName) {
		name = textsafe.Quote(d.ToolName)
	}
	if d.Calls > 1 {
		return name + " ×" + strconv.FormatUint(d.Calls, 10)
	}
	return name
}

// plainToolName reports whether s is non-empty and only ASCII letters,
// digits and _ - . : / @ (the tool names of MCP and the GenAI conventions).
func plainToolName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_-.:/@", c) >= 0) {
			return false
		}
	}
	return true
}

// writeDecisions renders decisions in the chosen format.
func writeDecisions(w io.Writer, o outFlags, ds []audit.Decision) error {
	loc := o.location()
	switch o.format {
	case formatJSON:
		recs := make([]record, 0, len(ds))
		for _, d := range ds {
			recs = append(recs, structRecord(d, loc))
		}
		return writeJSON(w, recs)
	case formatJSONL:
		for _, d := range ds {
			if err := writeJSONL(w, structRecord(d, loc)); err != nil {
				return err
			}
		}
		return nil
	case formatCSV:
		cw := newCSV(w)
		if err := cw.Write(structRecord(audit.Decision{}, loc).keys); err != nil {
			return err
		}
		for _, d := range ds {
			if err := cw.Write(structRecord(d, loc).csvRow()); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	default:
		if len(ds) == 0 {
			return nil
		}
		asked := anyAsked(ds)
		t := &table{header: decisionHeader(asked), shrink: []string{"REASON", "APPROVAL", "SOURCE", "AGENT", "TOOL", "TRACE"}, drop: []string{"TRACE", "DURATION", "SOURCE"}}
		for _, d := range ds {
			t.add(decisionCells(d, loc, asked)...)
		}
		return t.render(w, detectTerminal(w, o.noColor))
	}
}
