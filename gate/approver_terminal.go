package gate

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// TerminalApprover asks a human on a terminal. It prints the call (agent,
// tool, call ID, the gate's reason and the input, cut to 2,000 bytes) and
// reads one line: "y" approves this call once, "a" approves it and
// remembers a grant for this exact command for the rest of the run
// (GrantScopeRun), anything else declines. When its input is not a TTY it
// declines without prompting; when no answer comes within its timeout
// (default 60 s) or ctx ends, the outcome is ApprovalTimeout. Prompts are
// serialised: concurrent asks wait their turn (their wait counts against
// their context, not against the timeout). Approver name: "terminal".
//
// The approver reads its input from one goroutine, started at the first
// prompt, that lives until the input ends.
type TerminalApprover struct {
	in      io.Reader
	out     io.Writer
	tty     bool
	timeout time.Duration

	turn  chan struct{}
	once  sync.Once
	lines chan string
}

// TerminalOption configures a TerminalApprover.
type TerminalOption func(*TerminalApprover)

// WithTerminalIO replaces the terminal (default os.Stdin and os.Stderr, TTY
// detected on os.Stdin): answers are read from in, prompts written to out,
// and isTTY says whether in is an interactive terminal.
func WithTerminalIO(in io.Reader, out io.Writer, isTTY bool) TerminalOption {
	return func(t *TerminalApprover) { t.in, t.out, t.tty = in, out, isTTY }
}

// WithTerminalTimeout sets how long a prompt waits for an answer (default
// 60 s; d <= 0 keeps the default).
func WithTerminalTimeout(d time.Duration) TerminalOption {
	return func(t *TerminalApprover) {
		if d > 0 {
			t.timeout = d
		}
	}
}

// NewTerminalApprover returns a TerminalApprover.
func NewTerminalApprover(opts ...TerminalOption) *TerminalApprover {
	t := &TerminalApprover{
		in:      os.Stdin,
		out:     os.Stderr,
		tty:     term.IsTerminal(int(os.Stdin.Fd())),
		timeout: 60 * time.Second,
		turn:    make(chan struct{}, 1),
		lines:   make(chan string),
	}
	for _, o := range opts {
		o(t)
	}
	return t
}

const terminalName = "terminal"

// Approve prompts for req; see TerminalApprover.
func (t *TerminalApprover) Approve(ctx context.Context, req ApprovalRequest) (ApprovalResult, error) {
	res := ApprovalResult{Approver: terminalName, CallHash: req.CallHash}
	if !t.tty {
		res.Outcome, res.Reason = ApprovalDeclined, "no terminal to ask on (input is not a TTY)"
		return res, nil
	}
	select {
	case t.turn <- struct{}{}:
		defer func() { <-t.turn }()
	case <-ctx.Done():
		res.Outcome, res.Reason = ApprovalTimeout, "no answer: "+ctx.Err().Error()
		return res, nil
	}
	t.once.Do(func() { go t.read() })

	c := req.Call
	in := string(c.RawInput)
	if len(in) > 2000 {
		in = in[:2000] + "…"
	}
	fmt.Fprintf(t.out, "\ntoolgate: agent %q wants to call tool %q (call %s)\n  reason: %s\n  input:  %s\nAllow? [y]es once / [a]lways this command in this run / [N]o: ",
		c.AgentName, c.ToolName, c.ToolCallID, req.Decision.Reason, in)

	timer := time.NewTimer(t.timeout)
	defer timer.Stop()
	select {
	case line, ok := <-t.lines:
		if !ok {
			res.Outcome, res.Reason = ApprovalDeclined, "terminal input closed"
			return res, nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			res.Approved, res.Outcome = true, ApprovalApproved
		case "a", "always":
			res.Approved, res.Outcome, res.Remember = true, ApprovalApproved, GrantScopeRun
		default:
			res.Outcome, res.Reason = ApprovalDeclined, "declined on the terminal"
		}
		return res, nil
	case <-timer.C:
		fmt.Fprintln(t.out, "\ntoolgate: no answer, denied")
		res.Outcome, res.Reason = ApprovalTimeout, "no answer within "+t.timeout.String()
		return res, nil
	case <-ctx.Done():
		fmt.Fprintln(t.out, "\ntoolgate: cancelled, denied")
		res.Outcome, res.Reason = ApprovalTimeout, "no answer: "+ctx.Err().Error()
		return res, nil
	}
}

// read feeds input lines to Approve; a line typed while no prompt waits is
// held until the next prompt.
func (t *TerminalApprover) read() {
	s := bufio.NewScanner(t.in)
	for s.Scan() {
		t.lines <- s.Text()
	}
	close(t.lines)
}
