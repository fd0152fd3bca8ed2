package audit

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/gate"
)

// ChainQuery selects the chains to verify: every chain (gate.chain.id)
// with at least one decision in the window and, when RunID is set, of
// that run. All rows of a selected chain are read, also those outside
// the window, so a chain that crosses the window's edge is verified
// whole. Zero fields do not filter.
type ChainQuery struct {
	RunID string    // toolgate.run.id
	Since time.Time // Timestamp >= Since
	Until time.Time // Timestamp < Until
}

// ChainEnd is what a run's invoke_agent span recorded of its chain at the
// run's End (gate.chain.length, gate.chain.head).
type ChainEnd struct {
	Length uint64
	Head   string
	// Agent and RunID are the run span's gen_ai.agent.name and
	// toolgate.run.id (to report a chain none of whose rows is stored).
	Agent, RunID string
}

// Chains is the stored state of the selected chains.
type Chains struct {
	// Rows are the chained decisions (schema version 8 columns read as
	// gate.StoredDecision), ordered by ChainId, ChainSeq, SpanId.
	Rows []gate.StoredDecision
	// Ends are the chains' run-span records, by chain ID, for the chains
	// whose run span is stored.
	Ends map[string]ChainEnd
	// Unchained counts the decisions in the window (and of the run) that
	// carry no chain: rows of older producers or of bridged events.
	Unchained uint64
}

// Chains reads the chains q selects: their rows from gate_decisions
// (FINAL: one row per span; ordered by chain and position) and their
// ends from the run spans in the traces table. It fails with
// ErrNotMigrated before schema version 8.
func (s *Store) Chains(ctx context.Context, q ChainQuery) (Chains, error) {
	var p Params
	var conds []string
	if q.RunID != "" {
		conds = append(conds, "RunId = {run:String}")
		p.String("run", q.RunID)
	}
	if !q.Since.IsZero() {
		conds = append(conds, "Timestamp >= fromUnixTimestamp64Nano({since:Int64})")
		p.Int64("since", q.Since.UnixNano())
	}
	if !q.Until.IsZero() {
		conds = append(conds, "Timestamp < fromUnixTimestamp64Nano({until:Int64})")
		p.Int64("until", q.Until.UnixNano())
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	table := s.cfg.read(DecisionsTable)
	var out Chains
	// The chains in the window, and the unchained decisions there.
	rows, err := s.query(ctx, "verify", "SELECT ChainId, count() FROM "+table+" FINAL"+where+" GROUP BY ChainId"+finalSettings, &p)
	if err != nil {
		return out, err
	}
	var ids []string
	for rows.Next() {
		var id string
		var n uint64
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return out, s.wrap("verify", err)
		}
		if id == "" {
			out.Unchained = n
			continue
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, s.wrap("verify", err)
	}
	// The chains whose run span (gate.chain.length) is in the window: a
	// chain none of whose rows is left (deleted, or its chain columns
	// cleared) is still found by its run span.
	var tconds []string
	if q.RunID != "" {
		tconds = append(tconds, "SpanAttributes['"+string(gate.AttrRunID)+"'] = {run:String}")
	}
	if !q.Since.IsZero() {
		tconds = append(tconds, "Timestamp >= fromUnixTimestamp64Nano({since:Int64})")
	}
	if !q.Until.IsZero() {
		tconds = append(tconds, "Timestamp < fromUnixTimestamp64Nano({until:Int64})")
	}
	tconds = append(tconds, "mapContains(SpanAttributes, '"+string(gate.AttrChainLength)+"')")
	rows, err = s.query(ctx, "verify", "SELECT DISTINCT SpanAttributes['"+string(gate.AttrChainID)+"'] FROM "+
		s.cfg.read(s.cfg.tracesTable)+" WHERE "+strings.Join(tconds, " AND "), &p)
	if err != nil {
		return out, err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return out, s.wrap("verify", err)
		}
		if id != "" {
			ids = append(ids, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, s.wrap("verify", err)
	}
	if len(ids) == 0 {
		return out, nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var d gate.StoredDecision
	cols := d.Columns()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	// Every row of those chains (the bloom filter on ChainId skips the
	// granules of other chains).
	var cp Params
	cp.Strings("chains", ids)
	rows, err = s.query(ctx, "verify", "SELECT "+strings.Join(names, ", ")+" FROM "+table+" FINAL"+
		" WHERE ChainId IN {chains:Array(String)} ORDER BY ChainId, ChainSeq, SpanId"+finalSettings, &cp)
	if err != nil {
		return out, err
	}
	for rows.Next() {
		var d gate.StoredDecision
		cols := d.Columns()
		ptrs := make([]any, len(cols))
		for i, c := range cols {
			ptrs[i] = c.Ptr
		}
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return out, s.wrap("verify", err)
		}
		out.Rows = append(out.Rows, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, s.wrap("verify", err)
	}
	// The run spans that recorded those chains' ends.
	rows, err = s.query(ctx, "verify", "SELECT SpanAttributes['"+string(gate.AttrChainID)+"'] AS id,"+
		" max(toUInt64OrZero(SpanAttributes['"+string(gate.AttrChainLength)+"'])) AS length,"+
		" argMax(SpanAttributes['"+string(gate.AttrChainHead)+"'], toUInt64OrZero(SpanAttributes['"+string(gate.AttrChainLength)+"'])) AS head,"+
		" any(SpanAttributes['"+string(semconv.GenAIAgentNameKey)+"']), any(SpanAttributes['"+string(gate.AttrRunID)+"'])"+
		" FROM "+s.cfg.read(s.cfg.tracesTable)+
		" WHERE SpanAttributes['"+string(gate.AttrChainID)+"'] IN {chains:Array(String)} AND mapContains(SpanAttributes, '"+string(gate.AttrChainLength)+"')"+
		" GROUP BY id", &cp)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	out.Ends = map[string]ChainEnd{}
	for rows.Next() {
		var id string
		var e ChainEnd
		if err := rows.Scan(&id, &e.Length, &e.Head, &e.Agent, &e.RunID); err != nil {
			return out, s.wrap("verify", err)
		}
		out.Ends[id] = e
	}
	if err := rows.Err(); err != nil {
		return out, s.wrap("verify", err)
	}
	return out, nil
}

// Problem kinds of a chain (ChainProblem.Kind).
const (
	// ProblemMissing: positions no stored row holds (lost or deleted
	// decisions): between the first and last stored position, before the
	// first, or after the last up to the length the run span recorded.
	ProblemMissing = "missing"
	// ProblemEdited: a row whose recomputed hash differs from its stored
	// gate.chain.hash: a covered column was changed after it was recorded.
	ProblemEdited = "edited"
	// ProblemBrokenLink: a row whose gate.chain.prev differs from the
	// stored hash of the row before it (position 1: is not empty): a
	// decision was deleted, inserted or reordered and the chain re-joined.
	ProblemBrokenLink = "broken_link"
	// ProblemDuplicate: two rows (two spans) at one position, with
	// different content.
	ProblemDuplicate = "duplicate"
	// ProblemHead: the run span's gate.chain.head differs from the stored
	// hash of the row at its gate.chain.length.
	ProblemHead = "head_mismatch"
	// ProblemUnverified: a keyed chain (gate.KeyedChain) verified without
	// its key: positions and links were checked, the hashes were not.
	ProblemUnverified = "key_needed"
	// ProblemNotKeyed: a chain that is not keyed, verified with a key.
	// Anyone who can write to the store can compute an unkeyed chain's
	// hashes: a keyed chain renamed (its hmac- prefix removed) and
	// re-chained after an edit, or a whole forged run, verifies as an
	// unkeyed chain; with a key, only keyed chains are proof.
	ProblemNotKeyed = "not_keyed"
)

// ChainProblem is one finding in a chain.
type ChainProblem struct {
	Kind string `json:"kind"` // Problem*
	// Seq is the position (the first of a range of missing ones).
	Seq uint64 `json:"seq"`
	// Last is the last missing position of a range (= Seq for one).
	Last uint64 `json:"last,omitempty"`
	// SpanID is the row's span (for missing positions, empty).
	SpanID string `json:"span_id,omitempty"`
	// Detail says what differs.
	Detail string `json:"detail"`
}

// Statuses of a chain (ChainReport.Status).
const (
	// StatusComplete: no problem, and the run's end is stored (its
	// invoke_agent span with gate.chain.length): every position from 1 to
	// the length the run recorded is there.
	StatusComplete = "complete"
	// StatusOpen: no problem in the positions stored, but no run end is
	// stored: the run has not ended yet, its process ended without End
	// (killed, crashed: its run span was never exported), its run span was
	// lost, or it ran without one (executor.WithRunSpan(false)). Positions
	// 1 to the last stored one are verified; positions after it — a lost
	// or deleted tail, such as the decision in flight when the agent was
	// killed — cannot be detected.
	StatusOpen = "open"
	// StatusProblems: at least one problem (Problems).
	StatusProblems = "problems"
)

// ChainReport is the verification of one chain.
type ChainReport struct {
	ChainID string `json:"chain_id"`
	Agent   string `json:"agent"`
	RunID   string `json:"run_id"`
	// Rows is how many rows the store holds of the chain; Last the
	// highest position among them.
	Rows uint64 `json:"rows"`
	Last uint64 `json:"last_seq"`
	// Length is the chain's length at the run's End when the run span is
	// stored (RunSpan true): positions up to it must all be there.
	Length  uint64 `json:"length,omitempty"`
	RunSpan bool   `json:"run_span"`
	// Complete: no problem found in the stored positions (also when
	// Status is StatusOpen: the tail after Last is then unchecked).
	Complete bool `json:"complete"`
	// Status is StatusComplete, StatusOpen or StatusProblems.
	Status   string         `json:"status"`
	Problems []ChainProblem `json:"problems"`
}

// Verify checks every chain of c: each row's hash recomputed from its
// stored columns (gate.StoredDecision.Hash), each link to the row
// before, the positions from 1 to the last stored one (or to the length
// the run span recorded, when stored, so that a lost tail is found), and
// duplicates. Reports are ordered by agent, run and chain ID. Keyed
// chains are reported ProblemUnverified: use VerifyKeyed.
func Verify(c Chains) []ChainReport { return VerifyKeyed(c, nil) }

// VerifyKeyed is Verify with the key of the keyed chains
// (executor.WithChainKey): their hashes are recomputed as HMAC-SHA256
// under key (gate.StoredDecision.HashKeyed); unkeyed chains as by Verify.
//
// A chain whose run span is stored but none of whose rows is (every row
// deleted, or its chain columns cleared) is reported with its positions
// 1 … length missing. With a key, a chain that is not keyed is reported
// ProblemNotKeyed.
func VerifyKeyed(c Chains, key []byte) []ChainReport {
	var out []ChainReport
	seen := map[string]bool{}
	for start := 0; start < len(c.Rows); {
		end := start
		for end < len(c.Rows) && c.Rows[end].ChainID == c.Rows[start].ChainID {
			end++
		}
		id := c.Rows[start].ChainID
		seen[id] = true
		e, ok := c.Ends[id]
		out = append(out, verifyChain(id, c.Rows[start:end], e, ok, key))
		start = end
	}
	for id, e := range c.Ends {
		if !seen[id] {
			out = append(out, verifyChain(id, nil, e, true, key))
		}
	}
	slices.SortFunc(out, func(a, b ChainReport) int {
		if n := strings.Compare(a.Agent, b.Agent); n != 0 {
			return n
		}
		if n := strings.Compare(a.RunID, b.RunID); n != 0 {
			return n
		}
		return strings.Compare(a.ChainID, b.ChainID)
	})
	return out
}

// verifyChain checks the rows of chain id (ordered by ChainSeq; none when
// only its run span is stored).
func verifyChain(id string, rows []gate.StoredDecision, end ChainEnd, hasEnd bool, key []byte) ChainReport {
	r := ChainReport{ChainID: id, Agent: end.Agent, RunID: end.RunID,
		Rows: uint64(len(rows)), RunSpan: hasEnd, Length: end.Length, Problems: []ChainProblem{}}
	if len(rows) > 0 {
		r.Agent, r.RunID, r.Last = rows[0].Agent, rows[0].RunID, rows[len(rows)-1].ChainSeq
	}
	keyed := gate.KeyedChain(r.ChainID)
	if !keyed && len(key) > 0 {
		r.Problems = append(r.Problems, ChainProblem{Kind: ProblemNotKeyed, Seq: 1,
			Detail: "verified with a key, but the chain is not keyed (its ID does not start " + gate.KeyedChainPrefix +
				"): anyone who can write to the store can compute its hashes (a keyed chain renamed and re-chained, or a forged run)"})
	}
	if !keyed {
		key = nil
	}
	checkHashes := !keyed || len(key) > 0
	if !checkHashes && len(rows) > 0 {
		r.Problems = append(r.Problems, ChainProblem{Kind: ProblemUnverified, Seq: rows[0].ChainSeq,
			Detail: "a keyed chain (HMAC-SHA256): its hashes cannot be checked without the key (auditq verify --chain-key-file); positions and links were checked"})
	}
	missing := func(from, to uint64) {
		if from > to {
			return
		}
		d := "position " + strconv.FormatUint(from, 10) + " is not stored"
		if to > from {
			d = "positions " + strconv.FormatUint(from, 10) + " to " + strconv.FormatUint(to, 10) + " are not stored"
		}
		r.Problems = append(r.Problems, ChainProblem{Kind: ProblemMissing, Seq: from, Last: to, Detail: d + " (decisions lost or deleted)"})
	}
	var prev *gate.StoredDecision // the last row of the previous position
	next := uint64(1)
	for i := range rows {
		row := &rows[i]
		if got := row.HashKeyed(key); checkHashes && got != row.ChainHash {
			r.Problems = append(r.Problems, ChainProblem{Kind: ProblemEdited, Seq: row.ChainSeq, SpanID: row.SpanID,
				Detail: "stored hash " + short(row.ChainHash) + " but the row's columns hash to " + short(got) + " (the row was changed after it was recorded)"})
		}
		if prev != nil && row.ChainSeq == prev.ChainSeq {
			if row.ChainHash != prev.ChainHash || row.SpanID != prev.SpanID {
				r.Problems = append(r.Problems, ChainProblem{Kind: ProblemDuplicate, Seq: row.ChainSeq, SpanID: row.SpanID,
					Detail: "position also held by span " + prev.SpanID + " with other content"})
			}
			continue
		}
		if row.ChainSeq == 0 {
			r.Problems = append(r.Problems, ChainProblem{Kind: ProblemBrokenLink, Seq: 0, SpanID: row.SpanID, Detail: "position 0: not a valid position"})
			continue
		}
		missing(next, row.ChainSeq-1)
		switch {
		case row.ChainSeq == 1 && row.ChainPrev != "":
			r.Problems = append(r.Problems, ChainProblem{Kind: ProblemBrokenLink, Seq: 1, SpanID: row.SpanID,
				Detail: "position 1 links to " + short(row.ChainPrev) + ", not to nothing"})
		case prev != nil && prev.ChainSeq == row.ChainSeq-1 && row.ChainPrev != prev.ChainHash:
			r.Problems = append(r.Problems, ChainProblem{Kind: ProblemBrokenLink, Seq: row.ChainSeq, SpanID: row.SpanID,
				Detail: "links to " + short(row.ChainPrev) + " but position " + strconv.FormatUint(prev.ChainSeq, 10) +
					" (span " + prev.SpanID + ") has hash " + short(prev.ChainHash) + " (a decision was deleted, inserted or reordered)"})
		}
		prev, next = row, row.ChainSeq+1
	}
	if hasEnd {
		missing(next, end.Length)
		if prev != nil && end.Length == prev.ChainSeq && end.Head != prev.ChainHash {
			r.Problems = append(r.Problems, ChainProblem{Kind: ProblemHead, Seq: end.Length, SpanID: prev.SpanID,
				Detail: "the run span recorded head " + short(end.Head) + " but position " + strconv.FormatUint(end.Length, 10) + " has hash " + short(prev.ChainHash)})
		}
	}
	r.Complete = len(r.Problems) == 0
	switch {
	case !r.Complete:
		r.Status = StatusProblems
	case hasEnd:
		r.Status = StatusComplete
	default:
		r.Status = StatusOpen
	}
	return r
}

// short is a hash's first 16 hex digits ("(none)" when empty).
func short(h string) string {
	if h == "" {
		return "(none)"
	}
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

// String is a one-line summary of r.
func (r ChainReport) String() string {
	switch r.Status {
	case StatusComplete:
		return fmt.Sprintf("chain %s: complete (%d decisions)", r.ChainID, r.Rows)
	case StatusOpen:
		return fmt.Sprintf("chain %s: open, run not ended (%d decisions verified, positions 1 to %d)", r.ChainID, r.Rows, r.Last)
	}
	return fmt.Sprintf("chain %s: %d problems", r.ChainID, len(r.Problems))
}
