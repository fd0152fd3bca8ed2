package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/approve/inbox/inboxhttp"
)

// inboxEnv names the approvals inbox when --inbox is not given.
const inboxEnv = "TOOLGATE_INBOX"

// defaultInbox names the inbox without --inbox and $TOOLGATE_INBOX in
// help texts; the path is inbox.DefaultPath's (the default of
// examples/unattended too): outside the workspace, where an agent's own
// tools cannot write its approvals.
const defaultInbox = "~/.local/state/toolgate/approvals.db ($XDG_STATE_HOME/toolgate/approvals.db)"

// inboxFlag is the --inbox flag shared by the approval commands.
type inboxFlag struct{ path string }

func (f *inboxFlag) add(fs interface {
	StringVar(p *string, name, value, usage string)
}) {
	fs.StringVar(&f.path, "inbox", "", "the approvals inbox, a bbolt file shared with the agents (default $"+inboxEnv+", else "+defaultInbox+")")
}

// resolve returns the inbox path: the flag, $TOOLGATE_INBOX, the default.
func (f *inboxFlag) resolve() string {
	if f.path != "" {
		return f.path
	}
	if env := os.Getenv(inboxEnv); env != "" {
		return env
	}
	p, err := inbox.DefaultPath()
	if err != nil {
		return ".toolgate/approvals.db" // no home directory: the working directory
	}
	return p
}

// open opens the inbox. With mustExist, a missing file is an error that
// says where auditq looked (an inbox is created by the first ask, or by
// approvals approvers add).
func (f *inboxFlag) open(mustExist bool) (*inbox.Inbox, *inbox.DB, error) {
	path := f.resolve()
	if mustExist {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("no approvals inbox at %s (pass --inbox PATH or set %s; an agent creates it with its first ask, 'auditq approvals approvers add NAME' creates it too)", path, inboxEnv)
		}
	}
	db, err := inbox.Open(path, inbox.OpenConfig{})
	if err != nil {
		return nil, nil, fmt.Errorf("open the approvals inbox %s: %w", path, err)
	}
	return inbox.New(db, db, inbox.Config{}), db, nil
}

func newApprovalsCmd(io stdio) *cobra.Command {
	var (
		ib        inboxFlag
		o         outFlags
		status    string
		agent     string
		run       string
		olderThan string
		limit     int
	)
	cmd := &cobra.Command{
		Use:   "approvals [--status pending|approved|declined|expired|used|all] [--agent A] [--run R] [--older-than 10m]",
		Short: "List the approval requests that wait for a person (and answered ones)",
		Long: `approvals lists the durable approval requests of an inbox (docs/approvals.md):
the call each is for (tool and the exact input that will run), the agent and
run that asked, the gate's reason and risk, and how long it has waited.
Answer with 'auditq approve ID' or 'auditq decline ID --reason …', or serve
the HTTP API and web page with 'auditq approvals serve'.

The inbox is --inbox, else $` + inboxEnv + `, else ` + defaultInbox + `.
Text the model wrote is shown escaped (invisible and bidi characters as
\u escapes). --format json prints the requests as stored, newest first.`,
		Example: `  auditq approvals
  auditq approvals --agent unattended --older-than 10m
  auditq approvals --status all --format json --inbox .toolgate/approvals.db
  auditq approvals approvers add alice
  auditq approvals serve`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(formatTable, formatJSON); err != nil {
				return err
			}
			st, err := inboxhttp.ParseStatus(status)
			if err != nil {
				return usagef("--status: %v", err)
			}
			if limit < 0 {
				return usagef("--limit %d: want 0 (no cap) or more", limit)
			}
			f := inbox.Filter{Status: st, Agent: agent, RunID: run, Limit: limit}
			if olderThan != "" {
				d, err := parseDuration(olderThan)
				if err != nil || d < 0 {
					return usagef("--older-than %q: want a duration like 10m, 2h or 7d", olderThan)
				}
				f.OlderThan = d
			}
			in, _, err := ib.open(true)
			if err != nil {
				return err
			}
			rs, err := in.List(cmd.Context(), f)
			if err != nil {
				return err
			}
			if o.format == formatJSON {
				if rs == nil {
					rs = []inbox.Request{}
				}
				return writeJSON(io.out, rs)
			}
			return approvalsTable(io.out, rs, len(st) != 1 || st[0] != inbox.StatusPending, detectTerminal(io.out, o.noColor), time.Now())
		},
	}
	f := cmd.Flags()
	ib.add(cmd.PersistentFlags())
	o.add(cmd, formatTable, formatJSON)
	f.StringVar(&status, "status", "pending", "requests in this status: pending|approved|declined|expired|used|all")
	f.StringVar(&agent, "agent", "", "only requests of this agent")
	f.StringVar(&run, "run", "", "only requests of this run ID")
	f.StringVar(&olderThan, "older-than", "", "only requests asked at least this long ago (10m, 2h, 7d)")
	f.IntVar(&limit, "limit", 200, "at most this many requests, newest first (0: all)")
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions([]string{"pending", "approved", "declined", "expired", "used", "all"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.AddCommand(newApproversCmd(io, &ib), newApprovalsServeCmd(io, &ib), newApprovalsShowCmd(io, &ib))
	return cmd
}

// approvalsTable writes the requests as a table; withStatus adds the STATUS
// and APPROVER columns (a listing that is not only the pending ones).
func approvalsTable(w io.Writer, rs []inbox.Request, withStatus bool, term terminal, now time.Time) error {
	if len(rs) == 0 {
		_, err := fmt.Fprintln(w, "no approval requests")
		return err
	}
	// INPUT and REASON are never cut silently: on a terminal they are cut
	// here, visibly, naming the command that shows them whole.
	t := table{header: []string{"ID", "AGE", "AGENT", "RUN", "TOOL", "RISK", "REASON", "INPUT"},
		shrink: []string{"RUN", "AGENT"}, drop: []string{"RUN"}}
	inputMax, reasonMax := 0, 0
	if term.width > 0 {
		inputMax, reasonMax = max(40, term.width/2), max(30, term.width/4)
	}
	if withStatus {
		t.header = append([]string{"ID", "STATUS", "APPROVER"}, t.header[1:]...)
	}
	for _, r := range rs {
		cells := []string{r.ID, formatAge(now.Sub(r.AskedAt)), oneLine(r.Agent), oneLine(r.RunID), oneLine(r.Tool), oneLine(r.Risk), cutCell(oneLine(r.Reason), reasonMax, r.ID), cutCell(oneLine(inboxhttp.ReadableJSON(string(r.Input))), inputMax, r.ID)}
		if withStatus {
			approver := ""
			if r.Answer != nil {
				approver = oneLine(r.Answer.Approver)
			}
			cells = append([]string{r.ID, string(r.Status), approver}, cells[1:]...)
		}
		t.add(cells...)
	}
	return t.render(w, term)
}

// cutCell cuts s to at most n runes (0: no cut), marking the cut visibly
// with the command that shows the request whole.
func cutCell(s string, n int, id string) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:n]) + fmt.Sprintf("…(cut, %d bytes: auditq approvals show %s)", len(s), id)
}

// formatAge renders how long ago: 45s, 12m, 3h05m, 2d4h.
func formatAge(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// defaultApprover is the name answers are given as without --as: $USER,
// else the account's name.
func defaultApprover() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func newApproveCmd(io stdio) *cobra.Command {
	return newAnswerCmd(io, true)
}

func newDeclineCmd(io stdio) *cobra.Command {
	return newAnswerCmd(io, false)
}

// newAnswerCmd builds approve (approve true) or decline.
func newAnswerCmd(io stdio, approve bool) *cobra.Command {
	var (
		ib       inboxFlag
		reason   string
		forRun   bool
		as       string
		callHash string
		yes      bool
	)
	verb := "approve"
	cmd := &cobra.Command{
		Use:   "approve ID [--reason R] [--for-run] [--as NAME] [--call-hash H]",
		Short: "Approve a pending approval request: the call it is for may run, once",
		Long: `approve answers a pending approval request (auditq approvals lists them) with
an approval: the agent's suspended call runs when it resumes, exactly as it
was asked (the call's input cannot change), once; a blocked call runs now.
--for-run also approves the same tool and input for the rest of the run.

The answer is recorded with the approver's name: --as NAME, else $USER. Only
approvers the inbox knows may answer ('auditq approvals approvers add NAME').
--call-hash refuses the answer unless the request is for the call with that
hash (the callHash 'auditq approvals --format json' shows), for scripts that
show a person the call before answering. A request that is already answered,
expired or used is refused (exit 1).

The whole call is printed first (as 'auditq approvals show ID' does). On a
terminal, approve then asks "approve this call? [y/N]" (--yes skips the
question); when stdin is not a terminal it needs --yes, or --call-hash H
(the call hash 'auditq approvals show ID' printed), else exit 2.`,
		Example: `  auditq approve apr_… --reason 'known package'
  auditq approve apr_… --for-run --as alice --inbox .toolgate/approvals.db`,
	}
	if !approve {
		verb = "decline"
		cmd.Use = "decline ID --reason R [--as NAME] [--call-hash H]"
		cmd.Short = "Decline a pending approval request: the call it is for is denied"
		cmd.Long = `decline answers a pending approval request (auditq approvals lists them) with
a refusal: the agent's call is denied when it resumes (or at once when it
blocks), and the decline and its reason are recorded. --reason is required.
The whole call is printed first; on a terminal decline asks "decline this
call? [y/N]" (--yes skips it); without a terminal it needs --yes or
--call-hash H, else exit 2.

The answer is recorded with the approver's name: --as NAME, else $USER. Only
approvers the inbox knows may answer ('auditq approvals approvers add NAME').
A request that is already answered, expired or used is refused (exit 1).`
		cmd.Example = `  auditq decline apr_… --reason 'not on the allow-list'
  auditq decline apr_… --reason 'wrong host' --as alice`
	}
	cmd.Args = func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("%s: want exactly one request ID (auditq approvals lists them)", verb)
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		id := args[0]
		if !inbox.ValidID(id) {
			return usagef("%s: %q is not a request ID (apr_ and 26 characters; auditq approvals lists them)", verb, truncateArg(id))
		}
		if !approve && strings.TrimSpace(reason) == "" {
			return usagef("decline: --reason is required (it is recorded and shown to whoever resumes the run)")
		}
		name := as
		if name == "" {
			name = defaultApprover()
		}
		if name == "" {
			return usagef("%s: no approver name: pass --as NAME ($USER is not set)", verb)
		}
		in, _, err := ib.open(true)
		if err != nil {
			return err
		}
		req, err := in.Get(cmd.Context(), id)
		if errors.Is(err, inbox.ErrNotFound) {
			return fmt.Errorf("%s %s: no such request in %s (auditq approvals --status all lists them)", verb, id, ib.resolve())
		} else if err != nil {
			return fmt.Errorf("%s %s: %w", verb, id, err)
		}
		showRequest(io.out, req)
		if !yes && callHash == "" {
			if !isTerminalReader(io.in) {
				return usagef("%s %s: stdin is not a terminal, so nobody can confirm the call printed above: pass --yes to %s it, or --call-hash %s (the call hash 'auditq approvals show %s' prints) to %s only that call", verb, id, verb, req.CallHash, id, verb)
			}
			fmt.Fprintf(io.err, "%s this call? [y/N] ", verb)
			line, _ := bufio.NewReader(io.in).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				return fmt.Errorf("%s %s: not confirmed; nothing changed", verb, id)
			}
		}
		return answerRequest(cmd.Context(), io, in, id, inbox.Answer{Approve: approve, Approver: name, Reason: reason, ForRun: forRun, CallHash: callHash}, ib.resolve())
	}
	f := cmd.Flags()
	ib.add(f)
	f.StringVar(&as, "as", "", "answer as this approver (default $USER); it must be registered: auditq approvals approvers add NAME")
	f.StringVar(&callHash, "call-hash", "", "refuse the answer unless the request is for the call with this hash (its callHash; answers without asking)")
	f.BoolVarP(&yes, "yes", "y", false, "answer without asking (needed when stdin is not a terminal, unless --call-hash)")
	if approve {
		f.StringVar(&reason, "reason", "", "why the call may run (recorded)")
		f.BoolVar(&forRun, "for-run", false, "also approve the same tool and input for the rest of the run")
	} else {
		f.StringVar(&reason, "reason", "", "why the call is refused (required; recorded)")
	}
	return cmd
}

func truncateArg(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// answerRequest answers request id and prints the call it answered.
func answerRequest(ctx context.Context, io stdio, in *inbox.Inbox, id string, a inbox.Answer, path string) error {
	verb := "approve"
	if !a.Approve {
		verb = "decline"
	}
	r, err := in.Answer(ctx, id, a)
	if err != nil {
		cur, gerr := in.Get(ctx, id)
		switch {
		case errors.Is(err, inbox.ErrNotFound):
			return fmt.Errorf("%s %s: no such request in %s (auditq approvals --status all lists them)", verb, id, path)
		case errors.Is(err, inbox.ErrUnknownApprover):
			return fmt.Errorf("%s %s: %s is not an approver of this inbox: register it with 'auditq approvals approvers add %s', or answer as a registered approver with --as NAME", verb, id, strconv.Quote(oneLine(a.Approver)), shellWord(a.Approver))
		case errors.Is(err, inbox.ErrAnswered) && gerr == nil && cur.Answer != nil:
			return fmt.Errorf("%s %s: already %s by %s at %s; nothing changed", verb, id, cur.Status, oneLine(cur.Answer.Approver), cur.Answer.At.Format(time.RFC3339))
		case errors.Is(err, inbox.ErrExpired) && gerr == nil:
			note := ""
			if cur.Note != "" {
				note = " (" + oneLine(cur.Note) + ")"
			}
			return fmt.Errorf("%s %s: the request expired%s; nothing changed — the agent's call is denied when it resumes", verb, id, note)
		case errors.Is(err, inbox.ErrUsed):
			return fmt.Errorf("%s %s: the approval was already used by a resumed call; nothing changed", verb, id)
		case errors.Is(err, inbox.ErrCallChanged):
			return fmt.Errorf("%s %s: --call-hash %s is not the call this request is for (callHash %s); nothing changed", verb, id, oneLine(truncateArg(a.CallHash)), cur.CallHash)
		}
		return fmt.Errorf("%s %s: %w", verb, id, err)
	}
	ans := r.Answer
	what := "approved"
	if !ans.Approve {
		what = "declined"
	}
	line := fmt.Sprintf("%s by %s", what, oneLine(ans.Approver))
	if ans.ForRun {
		line += " for the rest of run " + oneLine(r.RunID)
	}
	if ans.Reason != "" {
		line += ": " + oneLine(ans.Reason)
	}
	_, err = fmt.Fprintln(io.out, line)
	return err
}

// isTerminalReader reports whether r is a terminal (a test's fake may
// implement IsTerminal).
func isTerminalReader(r io.Reader) bool {
	switch f := r.(type) {
	case interface{ IsTerminal() bool }:
		return f.IsTerminal()
	case *os.File:
		return term.IsTerminal(int(f.Fd()))
	}
	return false
}

// indent prefixes every line of s with pre.
func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// showRequest writes the whole request: every field, the whole input
// pretty-printed (and the original input when a gate rewrote it), all of
// it escaped (internal/textsafe: control, bidi and invisible characters
// as \u escapes), nothing cut.
func showRequest(w io.Writer, r inbox.Request) {
	fmt.Fprintf(w, "request    %s\n", r.ID)
	fmt.Fprintf(w, "status     %s\n", oneLine(string(r.Status)))
	fmt.Fprintf(w, "tool       %s\n", oneLine(r.Tool))
	fmt.Fprintf(w, "call hash  %s\n", oneLine(r.CallHash))
	fmt.Fprintf(w, "agent      %s\n", oneLine(r.Agent))
	fmt.Fprintf(w, "run        %s\n", oneLine(r.RunID))
	if r.TaskID != "" {
		fmt.Fprintf(w, "task       %s\n", oneLine(r.TaskID))
	}
	if r.WorkingDir != "" {
		fmt.Fprintf(w, "runs in    %s\n", oneLine(r.WorkingDir))
	}
	risk := r.Risk
	if risk == "" {
		risk = "unrated"
	}
	fmt.Fprintf(w, "risk       %s\n", oneLine(risk))
	if r.Rule != "" || r.Source != "" {
		fmt.Fprintf(w, "rule       %s (%s)\n", oneLine(r.Rule), oneLine(r.Source))
	}
	fmt.Fprintf(w, "reason     %s\n", strings.TrimPrefix(indent(inboxhttp.Visible(r.Reason), "           "), "           "))
	fmt.Fprintf(w, "asked      %s\n", r.AskedAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "expires    %s\n", r.ExpiresAt.UTC().Format(time.RFC3339))
	if r.TraceID != "" {
		fmt.Fprintf(w, "trace      %s %s\n", oneLine(r.TraceID), oneLine(r.SpanID))
	}
	if a := r.Answer; a != nil {
		what := "approved"
		if !a.Approve {
			what = "declined"
		}
		fmt.Fprintf(w, "answer     %s by %s at %s: %s\n", what, oneLine(a.Approver), a.At.UTC().Format(time.RFC3339), oneLine(a.Reason))
	}
	if r.Note != "" {
		fmt.Fprintf(w, "note       %s\n", oneLine(r.Note))
	}
	fmt.Fprintf(w, "input (%d bytes, whole):\n%s\n", len(r.Input), indent(inboxhttp.PrettyInput(r.Input), "  "))
	if len(r.Original) > 0 {
		fmt.Fprintf(w, "original input (the model's, before a gate rewrote it; %d bytes):\n%s\n", len(r.Original), indent(inboxhttp.PrettyInput(r.Original), "  "))
	}
}

func newApprovalsShowCmd(io stdio, ib *inboxFlag) *cobra.Command {
	return &cobra.Command{
		Use:   "show ID [--inbox PATH]",
		Short: "Show one approval request whole: the full input, reason, risk and call hash",
		Long: `show prints one approval request whole, nothing cut: the tool, the full
input pretty-printed (and the model's original input when a gate rewrote
it), the reason, risk, call hash, agent, run and times. Text the model wrote
is shown escaped (invisible and bidi characters as \u escapes). Pass the
call hash to 'auditq approve ID --call-hash H' to approve exactly this call.`,
		Example: `  auditq approvals show apr_…`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("approvals show: want exactly one request ID (auditq approvals lists them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if !inbox.ValidID(id) {
				return usagef("approvals show: %q is not a request ID (apr_ and 26 characters; auditq approvals lists them)", truncateArg(id))
			}
			in, _, err := ib.open(true)
			if err != nil {
				return err
			}
			r, err := in.Get(cmd.Context(), id)
			if errors.Is(err, inbox.ErrNotFound) {
				return fmt.Errorf("approvals show %s: no such request in %s (auditq approvals --status all lists them)", id, ib.resolve())
			} else if err != nil {
				return fmt.Errorf("approvals show %s: %w", id, err)
			}
			showRequest(io.out, r)
			return nil
		},
	}
}

// shellWord quotes s for a shell command line when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(oneLine(s), "'", `'\''`) + "'"
}

func newApproversCmd(io stdio, ib *inboxFlag) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvers",
		Short: "Manage who may answer approval requests",
		Example: `  auditq approvals approvers add alice
  auditq approvals approvers add bot-slack --token-only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("approvals approvers: want a subcommand (add NAME)")
		},
	}
	var tokenOnly bool
	add := &cobra.Command{
		Use:   "add NAME [--token-only]",
		Short: "Register an approver and print its HTTP token (once)",
		Long: `add registers NAME as an approver of the inbox, so that answers given as NAME
(auditq approve --as NAME, or $USER) are accepted, and prints a new bearer
token for the HTTP API and the web page (auditq approvals serve). Only a hash
of the token is kept: it is shown this once. Adding a known name replaces its
token (the old one stops working, and its web sessions end).`,
		Example: `  auditq approvals approvers add alice
  TOKEN=$(auditq approvals approvers add chatops-bot --token-only)`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("approvals approvers add: want exactly one approver name")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			_, db, err := ib.open(false)
			if err != nil {
				return err
			}
			name := args[0]
			token, err := db.Add(cmd.Context(), name)
			if err != nil {
				return fmt.Errorf("approvals approvers add: %w", err)
			}
			if tokenOnly {
				_, err = fmt.Fprintln(io.out, token)
				return err
			}
			fmt.Fprintf(io.out, "approver %s may answer the approvals in %s\n", strconv.Quote(name), ib.resolve())
			fmt.Fprintf(io.out, "HTTP token (shown once; keep it secret): %s\n", token)
			_, err = fmt.Fprintf(io.out, "web page: auditq approvals serve, then open http://%s/login?token=%s\n", defaultApprovalsAddr, token)
			return err
		},
	}
	add.Flags().BoolVar(&tokenOnly, "token-only", false, "print only the token (for scripts)")
	cmd.AddCommand(add)
	return cmd
}
