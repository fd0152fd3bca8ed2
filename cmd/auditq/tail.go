package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/audit"
)

func newTailCmd(io stdio) *cobra.Command {
	var (
		conn     connFlags
		out      outFlags
		filt     filterFlags
		since    string
		interval time.Duration
	)
	formats := []string{formatTable, formatJSONL, formatCSV}
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Follow new decisions as they arrive, until interrupted",
		Long: `tail prints decisions as they reach the audit store (in arrival order),
each once, and keeps following until interrupted (Ctrl-C). By default it
starts with decisions arriving from now on; --since 10m first prints those
that arrived in the last ten minutes.

Formats: table (one aligned line per decision), jsonl, csv. Decisions reach
the store after the collector's batching, typically within seconds.`,
		Example: `  # watch denials live
  auditq tail --action deny
  # stream everything an agent does as JSON lines
  auditq tail --agent coder --format jsonl | jq -c '{tool_name, action, reason}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(formats...); err != nil {
				return err
			}
			if interval < 100*time.Millisecond {
				return usagef("--interval %v: want at least 100ms", interval)
			}
			f, err := filt.filter(time.Now())
			if err != nil {
				return err
			}
			var opts []audit.FollowOption
			if since != "" {
				from, err := parseTimeFlag("since", since, time.Now())
				if err != nil {
					return err
				}
				opts = append(opts, audit.FollowFrom(from))
			}
			ctx := cmd.Context()
			st, err := conn.open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			tw := newTailWriter(io.out, out)
			return follow(ctx, st, &conn, f, interval, tw.write, io.err, opts...)
		},
	}
	conn.add(cmd)
	out.add(cmd, formats...)
	filt.add(cmd, false, "")
	cmd.Flags().StringVar(&since, "since", "", "first print decisions that arrived since then (duration like 10m, or RFC 3339)")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "how often to poll")
	return cmd
}

// tailWriter prints decisions one at a time in fixed-width columns (a
// stream cannot be measured first).
type tailWriter struct {
	w      io.Writer
	o      outFlags
	term   terminal
	loc    *time.Location
	header bool
}

func newTailWriter(w io.Writer, o outFlags) *tailWriter {
	return &tailWriter{w: w, o: o, term: detectTerminal(w, o.noColor), loc: o.location()}
}

// tailWidths are the fixed column widths of tail's table; REASON, last,
// takes the rest of the line on a terminal and all it needs otherwise.
func tailWidths() []int { return []int{23, 12, 14, 6, 6, 9, 18, 0} }

func tailHeader() []string {
	return []string{"TIME", "AGENT", "TOOL", "ACTION", "RISK", "DURATION", "SOURCE", "REASON"}
}

func (t *tailWriter) write(d audit.Decision) error {
	switch t.o.format {
	case formatJSONL:
		return writeJSONL(t.w, structRecord(d, t.loc))
	case formatCSV:
		cw := newCSV(t.w)
		if !t.header {
			t.header = true
			if err := cw.Write(structRecord(audit.Decision{}, t.loc).keys); err != nil {
				return err
			}
		}
		if err := cw.Write(structRecord(d, t.loc).csvRow()); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	}
	if !t.header {
		t.header = true
		if _, err := io.WriteString(t.w, t.line(tailHeader(), true)); err != nil {
			return err
		}
	}
	c := decisionCells(d, t.loc, false)
	_, err := io.WriteString(t.w, t.line([]string{c[0], c[1], c[2], c[3], c[4], c[7], c[5], c[6]}, false))
	return err
}

func (t *tailWriter) line(cells []string, header bool) string {
	widths := tailWidths()
	last := len(widths) - 1
	if t.term.width > 0 {
		fixed := 0
		for _, w := range widths[:last] {
			fixed += w + 2
		}
		widths[last] = max(10, t.term.width-fixed)
	}
	var b strings.Builder
	for i, c := range cells {
		if widths[i] > 0 && t.term.tty {
			c = truncate(c, widths[i]) // piped output is never cut
		}
		cell := c
		if t.term.color {
			if header {
				cell = ansiBold + c + ansiReset
			} else if col := colorFor(tailHeader()[i], c); col != "" {
				cell = col + c + ansiReset
			}
		}
		b.WriteString(cell)
		if i < last {
			b.WriteString(strings.Repeat(" ", max(widths[i]-width(c), 0)+len(colSep)))
		}
	}
	return fmt.Sprintln(strings.TrimRight(b.String(), " "))
}

// tailRetry is how often tail tries again while the server is unreachable.
const tailRetry = 2 * time.Second

// follow polls for new decisions every interval and writes each once,
// until ctx ends. When the server goes away (a restart, `make demo`
// starting a new stack) it says so once on stderr and keeps trying every
// tailRetry, continuing from where it was; any other failure (credentials
// refused, tables missing, a bad query) ends it with an explanation.
func follow(ctx context.Context, st *audit.Store, conn *connFlags, f audit.Filter, interval time.Duration, write func(audit.Decision) error, errw io.Writer, opts ...audit.FollowOption) error {
	fl := st.NewFollower(f, opts...)
	lost := false
	for {
		ds, err := fl.Poll(ctx)
		for _, d := range ds {
			if werr := write(d); werr != nil {
				return werr
			}
		}
		wait := interval
		var ue *audit.UnreachableError
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &ue):
			if !lost {
				fmt.Fprintf(errw, "auditq: tail: lost the server: %v; retrying every %s (Ctrl-C to stop)\n", conn.explain(err), tailRetry)
			}
			lost, wait = true, tailRetry
		case err != nil:
			return conn.explain(err)
		case lost:
			fmt.Fprintln(errw, "auditq: tail: the server answers again; following")
			lost = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}
