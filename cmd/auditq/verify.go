package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/audit"
)

// exitProblems is verify's exit code when a chain has a problem (or is open, with --require-end).
const exitProblems = 3

// exitError carries an exit code other than 1 for an error that is a
// result, not a failure (verify found problems).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// verifyResult is verify's json output.
type verifyResult struct {
	// Complete: every chain verified is complete (audit.StatusComplete:
	// no problem, its run's end stored).
	Complete bool `json:"complete"`
	// Chains verified, and of them complete, open (no problem, but the
	// run's end is not stored: audit.StatusOpen) and with problems.
	Chains         int `json:"chains"`
	CompleteChains int `json:"complete_chains"`
	OpenChains     int `json:"open_chains"`
	ProblemChains  int `json:"problem_chains"`
	// Unchained is how many decisions in the window (and of the run)
	// carry no chain (ChainId empty: bridged events, older producers, or
	// rows unchained after the fact): not verifiable; a problem with
	// --require-chained.
	Unchained uint64              `json:"unchained"`
	Reports   []audit.ChainReport `json:"reports"`
}

func newVerifyCmd(io stdio) *cobra.Command {
	var (
		conn           connFlags
		out            outFlags
		run            string
		since, until   string
		keyFile        string
		requireEnd     bool
		requireChained bool
	)
	formats := []string{formatTable, formatJSON}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the decisions' hash chains: complete, missing positions, edited or re-linked rows",
		Long: `verify checks the verifiable trail: the executor gives every decision of a
run a position in its run's chain (gate.chain.seq) and a hash (gate.chain.hash,
SHA-256 over the previous position's hash and the decision as stored). verify
reads every chain with a decision in the window (--since, --until; and of the
run --run), all of its rows, and reports per chain (with its agent and run):

  complete       every position from 1 to the length the run's invoke_agent
                 span recorded at End is stored, each row hashes to its
                 stored hash and links to the one before it
  open           no problem in the positions stored, but the run's end is not
                 stored: the run is still going, or its agent was killed or
                 crashed before End (the run span is never exported), or it
                 runs without a run span. Positions 1 to the last stored one
                 are verified; a lost tail after it (the decision in flight
                 at a crash) cannot be seen. Not a problem unless
                 --require-end
  missing        positions no row holds: decisions lost on the way or deleted
                 (up to the run's recorded length when its end is stored)
  edited         a row whose columns no longer hash to its stored hash
  broken_link    a row whose previous hash is not the stored hash of the row
                 before it: a decision deleted, inserted or reordered
  duplicate      two rows (spans) at one position with different content
  head_mismatch  the run span's head is not the hash of the last position
  key_needed     a keyed chain (executor.WithChainKey: HMAC-SHA256) verified
                 without --chain-key-file: positions and links checked only
  not_keyed      a chain without a key verified with --chain-key-file: a
                 store writer can compute its hashes (a keyed chain renamed
                 and re-chained, or a forged run), so it proves nothing

A run whose invoke_agent span is stored but none of whose decisions is (all
deleted, or their chain columns cleared) is reported with every position
missing.

verify also counts the decisions in the window that carry no chain
(unchained): decisions bridged from framework events (otelbridge/bridge),
rows of an older producer — or a run unchained by a store writer who cleared
its ChainId and deleted its run span. They are not verifiable; with
--require-chained any of them is a problem (exit 3): use it where every
decision comes from the executor.

Exit codes: 0 no chain has a problem (each complete or open; none found),
3 a chain has a problem (or, with --require-end, is open; or, with
--require-chained, a decision in the window is unchained), 1 error, 2 bad
usage. See docs/durability.md for what this proves and what not.`,
		Example: `  auditq verify --since 24h
  auditq verify --run run-42 --format json
  auditq verify --since 1h --require-end   # runs known to have ended: open fails too
  auditq verify --since 24h --require-chained   # every decision from the executor: unchained rows fail
  auditq verify --since 2026-11-28T00:00:00Z --until 2026-11-29T00:00:00Z || echo "trail damaged"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(formats...); err != nil {
				return err
			}
			now := time.Now()
			var q audit.ChainQuery
			var err error
			if q.Since, err = parseTimeFlag("since", since, now); err != nil {
				return err
			}
			if q.Until, err = parseTimeFlag("until", until, now); err != nil {
				return err
			}
			q.RunID = run
			if q.RunID == "" && q.Since.IsZero() && q.Until.IsZero() {
				return usagef("verify: say which chains: --run ID, or a window with --since (and --until)")
			}
			if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
				return usagef("verify: --since must be before --until")
			}
			var key []byte
			if keyFile != "" {
				if key, err = os.ReadFile(keyFile); err != nil {
					return usagef("--chain-key-file: %v (give the file holding the key the executor was given with WithChainKey)", err)
				}
				key = bytes.TrimSuffix(bytes.TrimSuffix(key, []byte("\n")), []byte("\r"))
				if len(key) == 0 {
					return usagef("--chain-key-file %s is empty: give the file holding the key the executor was given with WithChainKey", keyFile)
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), conn.timeout)
			defer cancel()
			st, err := conn.open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			chains, err := st.Chains(ctx, q)
			if err != nil {
				return explain(err, conn.database)
			}
			res := verifyResult{Unchained: chains.Unchained, Reports: audit.VerifyKeyed(chains, key)}
			if res.Reports == nil {
				res.Reports = []audit.ChainReport{}
			}
			res.Chains = len(res.Reports)
			for _, r := range res.Reports {
				switch r.Status {
				case audit.StatusComplete:
					res.CompleteChains++
				case audit.StatusOpen:
					res.OpenChains++
				default:
					res.ProblemChains++
				}
			}
			res.Complete = res.CompleteChains == res.Chains
			if err := writeVerify(io.out, io.err, out, res); err != nil {
				return err
			}
			if res.ProblemChains > 0 {
				return exitError{exitProblems, fmt.Errorf("verify: %d of %d chains have problems", res.ProblemChains, res.Chains)}
			}
			if requireEnd && res.OpenChains > 0 {
				return exitError{exitProblems, fmt.Errorf("verify: %d of %d chains are open (no run end stored) and --require-end was given", res.OpenChains, res.Chains)}
			}
			if requireChained && res.Unchained > 0 {
				return exitError{exitProblems, fmt.Errorf("verify: %d decisions in the window carry no chain (ChainId empty) and --require-chained was given: bridged events, an older producer, or rows unchained after the fact", res.Unchained)}
			}
			return nil
		},
	}
	conn.add(cmd)
	out.add(cmd, formats...)
	f := cmd.Flags()
	f.StringVar(&run, "run", "", "verify the chains of this run (toolgate.run.id)")
	f.StringVar(&since, "since", "", "chains with a decision at or after this time: a duration before now (24h, 7d) or RFC 3339")
	f.StringVar(&until, "until", "", "chains with a decision before this time: a duration before now or RFC 3339")
	f.BoolVar(&requireEnd, "require-end", false, "exit 3 also when a chain is open (its run's end is not stored): for runs known to have ended")
	f.BoolVar(&requireChained, "require-chained", false, "exit 3 also when a decision in the window carries no chain (unchained: bridged events, older producers, or a run whose chain was cleared)")
	f.StringVar(&keyFile, "chain-key-file", "", "file holding the key of keyed chains (executor.WithChainKey; one trailing newline ignored)")
	return cmd
}

// writeVerify prints res: json as verifyResult; a table of one line per
// chain then one line per problem.
func writeVerify(w, errw io.Writer, o outFlags, res verifyResult) error {
	if o.format == formatJSON {
		return writeJSON(w, res)
	}
	if len(res.Reports) == 0 {
		fmt.Fprintln(errw, "auditq: no chained decisions match")
		if res.Unchained > 0 {
			fmt.Fprintf(errw, "auditq: %d decisions in the window carry no chain (bridged events, older producers, or unchained after the fact; --require-chained fails on them)\n", res.Unchained)
		}
		return nil
	}
	term := detectTerminal(w, o.noColor)
	t := &table{header: []string{"AGENT", "RUN", "CHAIN", "ROWS", "STATUS"}, shrink: []string{"AGENT", "RUN"}}
	for _, r := range res.Reports {
		status := r.Status
		switch r.Status {
		case audit.StatusOpen:
			status = "open: run not ended, verified to " + strconv.FormatUint(r.Last, 10)
		case audit.StatusProblems:
			status = strconv.Itoa(len(r.Problems)) + " problems"
			if len(r.Problems) == 1 {
				status = "1 problem"
			}
		}
		length := strconv.FormatUint(r.Rows, 10)
		if r.RunSpan {
			length += "/" + strconv.FormatUint(r.Length, 10)
		}
		t.add(oneLine(r.Agent), oneLine(r.RunID), oneLine(r.ChainID), length, status)
	}
	if err := t.render(w, term); err != nil {
		return err
	}
	p := &table{header: []string{"CHAIN", "SEQ", "PROBLEM", "SPAN", "DETAIL"}, shrink: []string{"DETAIL"}}
	for _, r := range res.Reports {
		for _, pr := range r.Problems {
			seq := strconv.FormatUint(pr.Seq, 10)
			if pr.Last > pr.Seq {
				seq += "-" + strconv.FormatUint(pr.Last, 10)
			}
			p.add(oneLine(r.ChainID), seq, pr.Kind, oneLine(pr.SpanID), oneLine(pr.Detail))
		}
	}
	if len(p.rows) > 0 {
		fmt.Fprintln(w)
		if err := p.render(w, term); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d chains complete", res.CompleteChains, res.Chains)
	if res.OpenChains > 0 {
		fmt.Fprintf(&b, "; %d open (no run end stored: the run has not ended, or its agent was killed before End; verified up to the last stored position, a lost tail is not detectable)", res.OpenChains)
	}
	if res.ProblemChains > 0 {
		fmt.Fprintf(&b, "; %d with problems", res.ProblemChains)
	}
	if res.Unchained > 0 {
		fmt.Fprintf(&b, "; %d decisions carry no chain (bridged events, older producers, or unchained after the fact; --require-chained fails on them)", res.Unchained)
	}
	fmt.Fprintln(errw, "auditq: "+b.String())
	return nil
}
