package approve

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

	"github.com/toolgate/toolgate/gate"
)

// TerminalName is the approver name a Terminal records (gate.approver).
const TerminalName = "terminal"

// DefaultTerminalMaxShown is the default bound, in bytes after escaping,
// on each free text a Terminal shows (the gate's reason, the input that
// will run, the model's original input); see WithTerminalMaxShown.
const DefaultTerminalMaxShown = 16 << 10

// Terminal asks a human on a terminal. It prints the call (agent, tool,
// call ID, the gate's reason and the input that will run; when a gate
// rewrote the input, the model's original input on a line of its own) and
// reads one line: "y" approves this call once, "a" approves it and
// remembers a grant for this exact command for the rest of the run
// (gate.GrantScopeRun), anything else declines.
//
// Everything printed that the model or a gate controls (the names are
// quoted, and cut to gate.MaxNameBytes) is escaped so that no input can
// clear, overwrite, reorder or hide what the human reads. A rune is printed
// as it is only if it is the ASCII space or a visible letter, number,
// punctuation, symbol or (see below) combining mark; everything else is
// shown as an ASCII Go escape:
//
//   - invalid UTF-8 as \xNN;
//   - control characters (ESC and the sequences it starts, \r, \n, \b,
//     C1 controls) as \x1b, \r, \n, \u009b;
//   - every Default_Ignorable_Code_Point (Other_Default_Ignorable_Code_Point,
//     all format characters Cf such as bidirectional overrides, zero-width
//     space and joiners, soft hyphen and tag characters, and the variation
//     selectors U+FE00–FE0F, U+E0100–E01EF, so an emoji's U+FE0F too) as
//     \u034f, \u202e, \ufe0f, \U000e0041;
//   - every space other than the ASCII space (Zs: U+00A0, U+2000–200A,
//     U+3000, …) and the line and paragraph separators, so that alignment
//     tricks show;
//   - runes drawn as blank: U+2800 (braille pattern blank), the Hangul
//     fillers U+115F, U+1160, U+3164, U+FFA0 (also default-ignorable), the
//     Khitan filler U+16FE4 and U+1D159 (musical null notehead);
//   - private-use code points and noncharacters, and every code point Go's
//     Unicode tables do not assign (so runes newer than the tables too).
//     (Surrogates are not valid UTF-8: their bytes show as \xNN.)
//
// A combining mark is printed as it is only right after a letter or digit
// printed as it is, and at most four in a row: a mark with no base (at the
// start of a text, after a space, punctuation, a symbol or an escape) and
// a fifth and further marks in a row ("Zalgo" stacks) are escaped, as is
// every mark after an escaped one. Accented letters, CJK and emoji stay
// readable; emoji joined with U+200D or followed by U+FE0F show those as
// escapes. Backslashes in the text are printed as they are, so JSON reads
// as sent.
//
// A human is never asked about text that was not shown in full. Each free
// text is shown whole up to WithTerminalMaxShown bytes after escaping
// (default DefaultTerminalMaxShown). If the input that will run, the
// model's original input or the reason is longer, the Terminal prints the
// call with that text cut (head and tail around "…[N bytes cut]…") and a
// line saying it is too long to review on a terminal, and declines
// without reading an answer (reason "input too long to review on a
// terminal (N bytes)", N the input's length in bytes; "model's original
// input …" or "reason …" when that is the text too long).
//
// An answer counts only for the prompt on screen: a line typed while no
// prompt waits (ahead of a prompt, or after one timed out) is discarded,
// so it cannot approve a call the human has not seen.
//
// When its input is not a TTY it declines without prompting; when the
// input ends it declines; when no answer comes within its timeout (default
// 60 s) or ctx ends, the outcome is gate.ApprovalTimeout. Prompts are
// serialised: concurrent asks wait their turn (their wait counts against
// their context, not against the timeout). Approver name: TerminalName.
//
// The approver reads its input from one goroutine, started at the first
// prompt (or too-long notice), that lives until the input ends.
type Terminal struct {
	in      io.Reader
	out     io.Writer
	tty     bool
	timeout time.Duration
	shown   int // bound on each free text shown, bytes after escaping

	turn chan struct{} // holds a token while a prompt is on screen
	once sync.Once     // starts read
	done chan struct{} // closed when the input ends

	mu      sync.Mutex
	waiting bool        // a prompt waits for a line
	answer  chan string // capacity 1: the line for the waiting prompt
}

// TerminalOption configures a Terminal.
type TerminalOption func(*Terminal)

// WithTerminalIO replaces the terminal (default os.Stdin and os.Stderr, TTY
// detected on os.Stdin): answers are read from in, prompts written to out,
// and isTTY says whether in is an interactive terminal.
func WithTerminalIO(in io.Reader, out io.Writer, isTTY bool) TerminalOption {
	return func(t *Terminal) { t.in, t.out, t.tty = in, out, isTTY }
}

// WithTerminalTimeout sets how long a prompt waits for an answer (default
// 60 s; d <= 0 keeps the default).
func WithTerminalTimeout(d time.Duration) TerminalOption {
	return func(t *Terminal) {
		if d > 0 {
			t.timeout = d
		}
	}
}

// WithTerminalMaxShown sets how many bytes, after escaping, of each free
// text (the reason, the input, the model's original input) a Terminal
// shows (default DefaultTerminalMaxShown; n <= 0 keeps the default). A
// call with a longer text is declined without asking; see Terminal.
func WithTerminalMaxShown(n int) TerminalOption {
	return func(t *Terminal) {
		if n > 0 {
			t.shown = n
		}
	}
}

// NewTerminal returns a Terminal that asks on os.Stdin and os.Stderr unless
// WithTerminalIO says otherwise. Its reading goroutine starts at the first
// prompt.
func NewTerminal(opts ...TerminalOption) *Terminal {
	t := &Terminal{
		in:      os.Stdin,
		out:     os.Stderr,
		tty:     term.IsTerminal(int(os.Stdin.Fd())),
		timeout: 60 * time.Second,
		shown:   DefaultTerminalMaxShown,
		turn:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		answer:  make(chan string, 1),
	}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Approve prompts for req and returns the human's answer, built from req;
// see Terminal. The error is always nil.
func (t *Terminal) Approve(ctx context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
	if !t.tty {
		return req.Decline(TerminalName, "no terminal to ask on (input is not a TTY)"), nil
	}
	select {
	case t.turn <- struct{}{}:
		defer func() { <-t.turn }()
	case <-ctx.Done():
		return req.TimedOut(TerminalName, "no answer: "+ctx.Err().Error()), nil
	}

	text, tooLong := prompt(req, t.shown)
	if tooLong != "" {
		// Shown but not offered. The reader runs, and no prompt waits, so
		// a line typed at this notice is discarded rather than kept for
		// the next prompt.
		t.once.Do(func() { go t.read() })
		fmt.Fprint(t.out, text)
		return req.Decline(TerminalName, tooLong), nil
	}

	t.mu.Lock()
	select {
	case <-t.answer: // a line that raced the end of the previous prompt
	default:
	}
	t.waiting = true
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.waiting = false
		t.mu.Unlock()
	}()
	t.once.Do(func() { go t.read() })

	fmt.Fprint(t.out, text)

	timer := time.NewTimer(t.timeout)
	defer timer.Stop()
	select {
	case line := <-t.answer:
		return t.resultFor(req, line), nil
	case <-t.done:
		select {
		case line := <-t.answer: // the last line came with the end of input
			return t.resultFor(req, line), nil
		default:
		}
		return req.Decline(TerminalName, "terminal input closed"), nil
	case <-timer.C:
		fmt.Fprintln(t.out, "\ntoolgate: no answer, denied")
		return req.TimedOut(TerminalName, "no answer within "+t.timeout.String()), nil
	case <-ctx.Done():
		fmt.Fprintln(t.out, "\ntoolgate: cancelled, denied")
		return req.TimedOut(TerminalName, "no answer: "+ctx.Err().Error()), nil
	}
}

func (t *Terminal) resultFor(req gate.ApprovalRequest, line string) gate.ApprovalResult {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return req.Approve(TerminalName, "")
	case "a", "always":
		return req.ApproveForRun(TerminalName, "")
	default:
		return req.Decline(TerminalName, "declined on the terminal")
	}
}

// read hands each input line to the prompt waiting for it; a line read
// while no prompt waits is discarded.
func (t *Terminal) read() {
	s := bufio.NewScanner(t.in)
	for s.Scan() {
		t.mu.Lock()
		if t.waiting {
			t.waiting = false
			t.answer <- s.Text() // emptied when waiting was set: never blocks
		}
		t.mu.Unlock()
	}
	close(t.done)
}

// prompt returns the text a Terminal prints for req, each free text
// escaped and shown whole if it fits in max bytes. It ends in the question
// (no newline after it), and tooLong is empty; or, when a free text is
// longer than max, it shows that text cut, ends in a line saying so, and
// tooLong is the reason to decline (the input is checked first, then the
// model's original input, then the reason). The text is valid UTF-8 whose
// only control characters are the newlines that separate its lines: a
// leading one, one after the header, the reason, each input line and the
// too-long line. Names are quoted and escaped, cut to gate.MaxNameBytes.
func prompt(req gate.ApprovalRequest, max int) (text, tooLong string) {
	c := req.Call
	reason := escape(req.Decision.Reason)
	input := escape(string(c.RawInput))
	var original string
	if req.OriginalInput != nil {
		original = escape(string(req.OriginalInput))
	}
	switch {
	case len(input) > max:
		tooLong = fmt.Sprintf("input too long to review on a terminal (%d bytes)", len(c.RawInput))
	case len(original) > max:
		tooLong = fmt.Sprintf("model's original input too long to review on a terminal (%d bytes)", len(req.OriginalInput))
	case len(reason) > max:
		tooLong = fmt.Sprintf("reason too long to review on a terminal (%d bytes)", len(req.Decision.Reason))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\ntoolgate: agent %s wants to call tool %s (call %s)\n",
		quoteName(c.AgentName), quoteName(c.ToolName), quoteName(c.ToolCallID))
	fmt.Fprintf(&b, "  reason: %s\n", gate.Cut(reason, max))
	if req.OriginalInput != nil {
		fmt.Fprintf(&b, "  input (rewritten, will run): %s\n", gate.Cut(input, max))
		fmt.Fprintf(&b, "  model's original input:      %s\n", gate.Cut(original, max))
	} else {
		fmt.Fprintf(&b, "  input:  %s\n", gate.Cut(input, max))
	}
	if tooLong != "" {
		fmt.Fprintf(&b, "toolgate: denied without asking: %s; at most %d bytes are shown, after escaping\n", tooLong, max)
		return b.String(), tooLong
	}
	b.WriteString("Allow? [y]es once / [a]lways this command in this run / [N]o: ")
	return b.String(), ""
}

// quoteName returns s, cut to gate.MaxNameBytes, quoted and escaped (see
// quote); a cut name ends in "…" after its closing quote.
func quoteName(s string) string {
	if len(s) <= gate.MaxNameBytes {
		return quote(s)
	}
	return quote(s[:runeStart(s, gate.MaxNameBytes)]) + "…"
}
