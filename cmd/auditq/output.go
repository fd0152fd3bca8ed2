package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	prettytable "github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/internal/textsafe"
	"golang.org/x/term"
)

// Output formats.
const (
	formatTable = "table"
	formatJSON  = "json"
	formatJSONL = "jsonl"
	formatCSV   = "csv"
)

// outFlags are the presentation flags shared by the query commands.
type outFlags struct {
	format  string
	utc     bool
	noColor bool
}

func (o *outFlags) add(cmd *cobra.Command, formats ...string) {
	f := cmd.Flags()
	f.StringVarP(&o.format, "format", "o", formatTable, "output format: "+strings.Join(formats, "|"))
	f.BoolVar(&o.utc, "utc", false, "show times in UTC instead of local time")
	f.BoolVar(&o.noColor, "no-color", false, "never colour the output (also: NO_COLOR set and non-empty)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// check validates --format against the allowed formats.
func (o *outFlags) check(formats ...string) error {
	for _, f := range formats {
		if o.format == f {
			return nil
		}
	}
	return usagef("--format %q: want one of %s", o.format, strings.Join(formats, ", "))
}

func (o *outFlags) location() *time.Location {
	if o.utc {
		return time.UTC
	}
	return time.Local
}

// terminal describes where the data goes. A writer that is a terminal
// (an *os.File on a TTY, or a test's fake implementing ttyWriter) gets
// colours, width fitting, bars and progress; anything else gets plain,
// stable output.
type terminal struct {
	tty   bool
	width int // 0: unlimited
	color bool
}

// ttyWriter lets tests stand in for a terminal.
type ttyWriter interface {
	io.Writer
	TerminalWidth() int
}

func detectTerminal(w io.Writer, noColor bool) terminal {
	var t terminal
	switch f := w.(type) {
	case ttyWriter:
		t.tty, t.width = true, f.TerminalWidth()
	case *os.File:
		if term.IsTerminal(int(f.Fd())) {
			t.tty = true
			if wd, _, err := term.GetSize(int(f.Fd())); err == nil {
				t.width = wd
			}
		}
	}
	_, noColorEnv := os.LookupEnv("NO_COLOR")
	t.color = t.tty && !noColor && !(noColorEnv && os.Getenv("NO_COLOR") != "")
	return t
}

// ANSI colours.
const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
)

// colorFor returns the colour of a cell value in a column, or "".
func colorFor(column, value string) string {
	switch column {
	case "ACTION":
		switch value {
		case "deny":
			return ansiRed + ansiBold
		case "allow":
			return ansiGreen
		}
		if strings.HasSuffix(value, interruptedMark) {
			return ansiYellow + ansiBold
		}
	case "RISK":
		switch value {
		case "high":
			return ansiRed
		case "review":
			return ansiYellow
		case "safe":
			return ansiDim
		}
	}
	return ""
}

// table is an aligned text table, rendered by go-pretty: columns two
// spaces apart, no borders, left-aligned, trailing spaces trimmed. Widths
// are display widths (go-pretty's text package: ANSI escape sequences count
// zero, East Asian wide runes two), so coloured cells line up.
type table struct {
	header []string
	rows   [][]string
	// shrink are the columns that may be cut to fit the width, in the
	// order they give way.
	shrink []string
	// drop are the columns left out, in this order, when cutting the
	// shrinkable ones to their minimum still does not fit.
	drop []string
}

// width is the display width of s: escape sequences count zero.
func width(s string) int { return text.StringWidthWithoutEscSequences(s) }

// minShrunk is the narrowest a shrinkable column gets.
func minShrunk(header string) int { return max(8, width(header)) }

// colSep is what separates two columns.
const colSep = "  "

// widths are the natural widths of t's columns (header and cells).
func (t *table) widths() []int {
	ws := make([]int, len(t.header))
	for i, h := range t.header {
		ws[i] = width(h)
		for _, r := range t.rows {
			ws[i] = max(ws[i], width(r[i]))
		}
	}
	return ws
}

// dropToFit removes t.drop columns until the table could fit width.
func (t *table) dropToFit(maxWidth int) {
	for _, name := range t.drop {
		need := -len(colSep)
		for i, w := range t.widths() {
			if slices.Contains(t.shrink, t.header[i]) {
				w = min(w, minShrunk(t.header[i]))
			}
			need += w + len(colSep)
		}
		if need <= maxWidth {
			return
		}
		i := indexOf(t.header, name)
		if i < 0 {
			continue
		}
		t.header = slices.Delete(slices.Clone(t.header), i, i+1)
		for j, r := range t.rows {
			t.rows[j] = slices.Delete(slices.Clone(r), i, i+1)
		}
	}
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// render writes the table. On a terminal with a width, t.drop columns are
// left out and t.shrink columns cut (ending in "…") until it fits; on a
// colour terminal the header is bold and ACTION and RISK are coloured.
func (t *table) render(w io.Writer, term terminal) error {
	if term.width > 0 {
		t.dropToFit(term.width)
	}
	widths := t.widths()
	limit := make([]int, len(widths)) // 0: not cut
	if term.width > 0 {
		total := -len(colSep)
		for _, wd := range widths {
			total += wd + len(colSep)
		}
		for _, name := range t.shrink {
			i := indexOf(t.header, name)
			if i < 0 {
				continue
			}
			if over := total - term.width; over > 0 {
				cut := max(minShrunk(t.header[i]), widths[i]-over)
				if cut < widths[i] {
					limit[i] = cut
					total -= widths[i] - cut
					widths[i] = cut
				}
			}
		}
	}
	tw := prettytable.NewWriter()
	style := prettytable.Style{
		Box:     prettytable.StyleBoxDefault,
		Format:  prettytable.FormatOptionsDefault,
		Options: prettytable.OptionsNoBordersAndSeparators,
		Size:    prettytable.SizeOptionsDefault,
	}
	style.Box.PaddingLeft, style.Box.PaddingRight = "", colSep
	style.Format.Header = text.FormatDefault
	tw.SetStyle(style)
	tw.SuppressTrailingSpaces()
	configs := make([]prettytable.ColumnConfig, len(t.header))
	for i, h := range t.header {
		c := prettytable.ColumnConfig{Number: i + 1, Align: text.AlignLeft, AlignHeader: text.AlignLeft}
		if limit[i] > 0 {
			c.WidthMax = limit[i]
			c.WidthMaxEnforcer = truncate
		}
		if term.color {
			c.TransformerHeader = func(v any) string { return ansiBold + fmt.Sprint(v) + ansiReset }
			c.Transformer = func(v any) string {
				s := fmt.Sprint(v)
				if col := colorFor(h, s); col != "" {
					return col + s + ansiReset
				}
				return s
			}
		}
		configs[i] = c
	}
	tw.SetColumnConfigs(configs)
	tw.AppendHeader(row(t.header))
	for _, r := range t.rows {
		tw.AppendRow(row(r))
	}
	_, err := io.WriteString(w, tw.Render()+"\n")
	return err
}

// row converts cells to a go-pretty row.
func row(cells []string) prettytable.Row {
	r := make(prettytable.Row, len(cells))
	for i, c := range cells {
		r[i] = c
	}
	return r
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// truncate cuts s to display width n, ending in "…" when cut; escape
// sequences are kept and count zero.
func truncate(s string, n int) string {
	if width(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	return text.Trim(s, n-1) + "…"
}

// oneLine makes a value safe for a table cell or tree line: runs of ASCII
// whitespace (space, \t, \n, \v, \f, \r) become one space, and control
// characters (an ANSI escape in a model-written reason, say) are shown
// escaped (\x1b) instead of reaching the terminal. Other Unicode spaces
// (U+00A0, U+3000, U+0085, …) are not collapsed: textsafe shows them
// escaped, so a look-alike space never reads as an ASCII one.
func oneLine(s string) string {
	return textsafe.Escape(strings.Join(strings.FieldsFunc(s, isASCIISpace), " "))
}

func isASCIISpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeJSONL writes v as one line of JSON.
func writeJSONL(w io.Writer, v any) error {
	if r, ok := v.(record); ok {
		// A record's MarshalJSON is already compact, unescaped JSON: what
		// the encoder would write after re-checking it.
		b, err := r.MarshalJSON()
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func newCSV(w io.Writer) *csv.Writer { return csv.NewWriter(w) }

// formatTime renders t for tables: millisecond precision in loc.
func formatTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format("2006-01-02 15:04:05.000")
}

// formatDuration renders nanoseconds compactly: 850µs, 12.3ms, 1.52s.
func formatDuration(ns uint64) string {
	d := time.Duration(ns)
	switch {
	case ns == 0:
		return ""
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d/time.Microsecond)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}

// redactDSN hides the password in a DSN for messages.
func redactDSN(dsn string) string { return audit.RedactDSN(dsn) }
