package audit_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
)

// chainRows builds n chained rows as a producer would: each row's hash
// over its content and the previous hash.
func chainRows(id string, n int) []gate.StoredDecision {
	rows := make([]gate.StoredDecision, n)
	prev := ""
	for i := range rows {
		d := gate.StoredDecision{SpanID: fmt.Sprintf("%016x", i+1), Agent: "coder", RunID: "run-1", ToolName: "bash",
			Gated: true, Action: "allow", Source: "classify.bash", Reason: fmt.Sprintf("call %d", i+1), Stage: "gate", Calls: 1,
			ChainID: id, ChainSeq: uint64(i + 1), ChainPrev: prev}
		d.ChainHash = d.Hash()
		prev = d.ChainHash
		rows[i] = d
	}
	return rows
}

// sp is the span ID of chainRows' position seq.
func sp(seq int) string { return fmt.Sprintf("%016x", seq) }

// rehash recomputes row i's hash and relinks the rows after it: what a
// store writer who knows the encoding does to hide an edit.
func rehash(rows []gate.StoredDecision, from int) {
	for i := from; i < len(rows); i++ {
		if i > 0 {
			rows[i].ChainPrev = rows[i-1].ChainHash
		}
		rows[i].ChainHash = rows[i].Hash()
	}
}

// TestVerify is the verifier's findings for each kind of damage, pure Go
// over the rows as the store returns them (ordered by chain and
// position).
func TestVerify(t *testing.T) {
	type finding struct {
		kind   string
		seq    uint64
		last   uint64
		spanID string
	}
	tests := []struct {
		name   string
		damage func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd)
		want   []finding
	}{
		{"complete", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			return rows, map[string]audit.ChainEnd{"c": {Length: 6, Head: rows[5].ChainHash}}
		}, nil},
		{"complete without run span", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			return rows, nil
		}, nil},
		{"one deleted", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			return append(rows[:2:2], rows[3:]...), nil
		}, []finding{{audit.ProblemMissing, 3, 3, ""}}},
		{"first two deleted", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			return rows[2:], nil
		}, []finding{{audit.ProblemMissing, 1, 2, ""}}},
		{"tail lost, run span stored", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			return rows[:4], map[string]audit.ChainEnd{"c": {Length: 6, Head: rows[5].ChainHash}}
		}, []finding{{audit.ProblemMissing, 5, 6, ""}}},
		{"reason edited", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			rows[3].Reason = "nothing to see"
			return rows, nil
		}, []finding{{audit.ProblemEdited, 4, 0, sp(4)}}},
		{"action edited", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			rows[0].Action = "deny"
			return rows, nil
		}, []finding{{audit.ProblemEdited, 1, 0, sp(1)}}},
		{"deleted and the next row rehashed onto its predecessor", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			// Position 4 deleted, 5..6 renumbered: the hashes are redone
			// for the new positions but position 3's successor still
			// claims its old predecessor.
			rows = append(rows[:3:3], rows[4:]...)
			rows[3].ChainSeq, rows[4].ChainSeq = 4, 5
			rows[3].ChainHash = rows[3].Hash()
			rows[4].ChainPrev = rows[3].ChainHash
			rows[4].ChainHash = rows[4].Hash()
			return rows, nil
		}, []finding{{audit.ProblemBrokenLink, 4, 0, fmt.Sprintf("%016x", 5)}}},
		{"inserted at position 1", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			rows[0].ChainPrev = rows[1].ChainHash
			rows[0].ChainHash = rows[0].Hash()
			return rows, nil
		}, []finding{{audit.ProblemBrokenLink, 1, 0, sp(1)}, {audit.ProblemBrokenLink, 2, 0, sp(2)}}},
		{"duplicate position", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			dup := rows[2]
			dup.SpanID, dup.Reason = "ffffffffffffffff", "forged"
			dup.ChainHash = dup.Hash()
			return append(rows[:3:3], append([]gate.StoredDecision{dup}, rows[3:]...)...), nil
		}, []finding{{audit.ProblemDuplicate, 3, 0, "ffffffffffffffff"}}},
		{"head differs", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			return rows, map[string]audit.ChainEnd{"c": {Length: 6, Head: strings.Repeat("0", 64)}}
		}, []finding{{audit.ProblemHead, 6, 0, sp(6)}}},
		{"edit rehashed to the end, run span stored", func(rows []gate.StoredDecision) ([]gate.StoredDecision, map[string]audit.ChainEnd) {
			// A writer who recomputes every later hash is caught only by
			// the head the run span recorded.
			head := rows[5].ChainHash
			rows[2].Reason = "forged"
			rehash(rows, 2)
			return rows, map[string]audit.ChainEnd{"c": {Length: 6, Head: head}}
		}, []finding{{audit.ProblemHead, 6, 0, sp(6)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, ends := tc.damage(chainRows("c", 6))
			reps := audit.Verify(audit.Chains{Rows: rows, Ends: ends})
			require.Len(t, reps, 1)
			r := reps[0]
			assert.Equal(t, "coder", r.Agent)
			assert.Equal(t, "run-1", r.RunID)
			var got []finding
			for _, p := range r.Problems {
				got = append(got, finding{p.Kind, p.Seq, p.Last, p.SpanID})
				assert.NotEmpty(t, p.Detail)
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, len(tc.want) == 0, r.Complete)
			// Without its run end a chain without problems is open (its
			// tail unchecked), never reported complete.
			status := audit.StatusProblems
			if len(tc.want) == 0 {
				status = map[bool]string{true: audit.StatusComplete, false: audit.StatusOpen}[ends != nil]
			}
			assert.Equal(t, status, r.Status)
			assert.Equal(t, ends != nil, r.RunSpan)
		})
	}
}

// Several chains are reported apart, each with its agent and run.
func TestVerifySeparatesChains(t *testing.T) {
	a, b := chainRows("a", 3), chainRows("b", 2)
	b[1].Reason = "edited"
	for i := range b {
		b[i].Agent = "aaa"
	}
	reps := audit.Verify(audit.Chains{Rows: append(a, b...)})
	require.Len(t, reps, 2)
	assert.Equal(t, "b", reps[0].ChainID, "ordered by agent")
	assert.False(t, reps[0].Complete)
	assert.True(t, reps[1].Complete)
	assert.EqualValues(t, 3, reps[1].Rows)
}

// hostileString draws strings that test the stored forms: invalid UTF-8,
// control characters, the verdict separator, JSON and SQL quoting, long
// runs (past the name and text limits).
func hostileString(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"", "|", "a|b||", "\xff\xfe", "\x00\x01\x1b[31m", `"\'`, "[\"x\"]", "[", "true", "0", "-1", "é\u0301", "\u2028"}),
		rapid.String(),
		rapid.StringOf(rapid.SampledFrom([]rune{'|', '\\', '"', '\'', '\x00', '\n', 'a', 'é', '\uFFFD', '['})),
		rapid.Map(rapid.IntRange(200, 9000), func(n int) string { return strings.Repeat("x\xff|", n/3) }),
	).Draw(t, label)
}

// TestChainHashSurvivesTheStore is the trail's property: for any record
// (hostile strings included) and any call identity, the hash the producer
// computes from the span's attributes (the executor's path:
// gate.Record.Attributes, then gate.StoredDecision.ReadAttributes) is the
// hash recomputed from the row the real ClickHouse engine stores
// (otel_traces with the exporter's string forms → the gate_decisions view
// → Store.Chains).
func TestChainHashSurvivesTheStore(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		stages := []gate.Stage{"", gate.StageGate, gate.StageRegistry, gate.StageInput, gate.StageRun, gate.StageCancelled}
		var verdicts []gate.Verdict
		for i := range rapid.IntRange(0, 4).Draw(rt, "verdicts") {
			verdicts = append(verdicts, gate.Verdict{Gate: hostileString(rt, fmt.Sprint("vgate", i)), Action: gate.Action(rapid.SampledFrom([]string{"allow", "deny", "ask"}).Draw(rt, "vaction")),
				Rewrote: rapid.Bool().Draw(rt, "rewrote"), Risk: gate.RiskLevel(hostileString(rt, "vrisk")), Rule: hostileString(rt, "vrule")})
		}
		rec := gate.Record{
			Gated: rapid.Bool().Draw(rt, "gated"), OptOut: rapid.Bool().Draw(rt, "optout"),
			Action: gate.Action(rapid.SampledFrom([]string{"allow", "deny", "", "\xffx"}).Draw(rt, "action")),
			Reason: hostileString(rt, "reason"), Source: hostileString(rt, "source"), Rule: hostileString(rt, "rule"),
			ErrorKind: hostileString(rt, "error"), Risk: gate.RiskLevel(hostileString(rt, "risk")),
			Approval: gate.ApprovalOutcome(hostileString(rt, "approval")), Approver: hostileString(rt, "approver"),
			ApprovalID: hostileString(rt, "approvalID"), ApprovalWait: time.Duration(rapid.Int64Range(-1<<40, 1<<40).Draw(rt, "approvalWait")),
			Rewritten: rapid.Bool().Draw(rt, "rewritten"), RewrittenBy: hostileString(rt, "rewrittenBy"),
			OriginalInputHash: hostileString(rt, "originalHash"), Rounds: rapid.IntRange(0, 5).Draw(rt, "rounds"),
			Verdicts: verdicts, Duration: time.Duration(rapid.Int64Range(-1<<40, 1<<40).Draw(rt, "duration")),
			Stage: rapid.SampledFrom(stages).Draw(rt, "stage"), Calls: rapid.Int64Range(0, 70).Draw(rt, "calls"),
		}
		if !rec.Stored() {
			rec.Gated = true
		}
		ids := []attribute.KeyValue{
			semconv.GenAIToolName(gate.SafeText(hostileString(rt, "tool"), gate.MaxNameBytes)),
			semconv.GenAIToolCallID(gate.SafeText(hostileString(rt, "callID"), gate.MaxNameBytes)),
			semconv.GenAIAgentName(gate.SafeText(hostileString(rt, "agent"), gate.MaxNameBytes)),
		}
		if run := hostileString(rt, "run"); run != "" {
			ids = append(ids, gate.AttrRunID.String(gate.SafeText(run, gate.MaxNameBytes)))
		}
		if task := hostileString(rt, "task"); task != "" {
			ids = append(ids, gate.AttrTaskID.String(gate.SafeText(task, gate.MaxNameBytes)))
		}
		// The recorded arguments (content recording on), hostile bytes
		// as the executor records them (SafeText); none when recording is
		// off.
		if rapid.Bool().Draw(rt, "recordContent") {
			ids = append(ids, semconv.GenAIToolCallArgumentsKey.String(gate.SafeText(hostileString(rt, "input"), 1<<16)))
		}
		attrs := rec.Attributes(append([]attribute.KeyValue(nil), ids...), rapid.IntRange(0, 6000).Draw(rt, "reasonLimit"))
		traceID, spanID := fmt.Sprintf("%032x", n), fmt.Sprintf("%016x", n)
		// The producer's side.
		var d gate.StoredDecision
		d.TraceID, d.SpanID = traceID, spanID
		d.ReadAttributes(attrs)
		d.Defaults()
		chainID := hex.EncodeToString([]byte(fmt.Sprint("chain-", n)))
		link := gate.Link{ID: chainID, Seq: rapid.Int64Range(1, 1<<40).Draw(rt, "seq")}
		if link.Seq > 1 {
			link.Prev = strings.Repeat("ab", 32)
		}
		link.Hash = gate.LinkHash(link.ID, uint64(link.Seq), link.Prev, d.Digest())
		attrs = link.Attributes(attrs)
		require.NoError(rt, audittest.InsertSpans(ctx, env.Writer, env.Database, []audittest.Span{{
			Timestamp: time.Now(), TraceID: traceID, SpanID: spanID, Name: "execute_tool", Service: "chain-property",
			Attrs: audittest.SpanAttrs(attrs), Status: "Unset",
		}}))
		// The verifier's side.
		chains, err := env.Store.Chains(ctx, audit.ChainQuery{RunID: d.RunID, Since: time.Now().Add(-time.Hour)})
		require.NoError(rt, err)
		var row *gate.StoredDecision
		for i := range chains.Rows {
			if chains.Rows[i].ChainID == chainID {
				row = &chains.Rows[i]
			}
		}
		require.NotNil(rt, row, "the row of chain %s", chainID)
		assert.Equal(rt, link.Hash, row.ChainHash, "stored hash")
		assert.Equal(rt, link.Hash, row.Hash(), "recomputed from the stored row")
		if len(row.Verdicts) == 0 {
			row.Verdicts = nil
		}
		d.ChainID, d.ChainSeq, d.ChainPrev, d.ChainHash = link.ID, uint64(link.Seq), link.Prev, link.Hash
		assert.Equal(rt, d, *row, "the producer's reading of the attributes is the stored row")
	})
}

// chainedSpans is one run of n chained decisions, as the executor records
// them (gate.Record.Attributes with its Link), for the store.
func chainedSpans(traceID string, n int) []audittest.Span {
	spans := make([]audittest.Span, n)
	prev := ""
	base := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for i := range spans {
		rec := gate.Record{Gated: true, Action: gate.ActionAllow, Source: "classify.bash", Reason: fmt.Sprint("call ", i+1), Stage: gate.StageGate}
		ids := []attribute.KeyValue{semconv.GenAIToolName("bash"), semconv.GenAIToolCallID(fmt.Sprint("call_", i+1)),
			semconv.GenAIAgentName("chained"), gate.AttrRunID.String("run-chained")}
		attrs := rec.Attributes(ids, 0)
		d := gate.StoredDecision{TraceID: traceID, SpanID: fmt.Sprintf("%016x", 0xc4a1<<16+i)}
		d.ReadAttributes(attrs)
		d.Defaults()
		rec.Chain = gate.Link{ID: "00c4a1", Seq: int64(i + 1), Prev: prev}
		rec.Chain.Hash = gate.LinkHash(rec.Chain.ID, uint64(i+1), prev, d.Digest())
		prev = rec.Chain.Hash
		spans[i] = audittest.Span{Timestamp: base.Add(time.Duration(i) * time.Second), TraceID: traceID, SpanID: d.SpanID,
			Name: "execute_tool bash", Service: "chained", Attrs: audittest.SpanAttrs(rec.Chain.Attributes(attrs))}
	}
	return spans
}

// A database at schema version 7 that already holds chained decisions
// (the producer was upgraded first) is upgraded by migration 8: the chain
// columns are added, the view records them from then on, the rows already
// copied are repaired, and the chain verifies complete.
func TestMigrateUpgradesVersion7(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	const db = "upgrade7"
	opts := []audit.Option{audit.WithDatabase(db)}
	require.NoError(t, audittest.CreateAtVersion(ctx, env.Writer, db, 7))
	traceID := strings.Repeat("c4", 16)
	spans := chainedSpans(traceID, 5)
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, append(audittest.Fixture(), spans[:3]...)))

	st, err := audit.Open(ctx, env.ReaderDSN, opts...)
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Chains(ctx, audit.ChainQuery{RunID: "run-chained"})
	require.ErrorIs(t, err, audit.ErrNotMigrated)

	res, err := audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	assert.Equal(t, []int{8, 9, 10, 11, 12}, res.Applied)
	freshCols, freshView := schemaOf(t, ctx, env.Writer, env.Database)
	cols, view := schemaOf(t, ctx, env.Writer, db)
	assert.Equal(t, freshCols, cols, "same schema as a fresh install")
	assert.Equal(t, freshView, view)

	// The rest of the run arrives through the new view.
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, db, spans[3:]))
	chains, err := st.Chains(ctx, audit.ChainQuery{RunID: "run-chained"})
	require.NoError(t, err)
	require.Len(t, chains.Rows, 5, "repaired and new rows, each once")
	reps := audit.Verify(chains)
	require.Len(t, reps, 1)
	assert.True(t, reps[0].Complete, "%+v", reps[0].Problems)
	// The fixture's decisions carry no chain.
	all, err := st.Chains(ctx, audit.ChainQuery{Since: audittest.FixtureBase.Add(-time.Hour)})
	require.NoError(t, err)
	assert.EqualValues(t, audittest.FixtureDecisions, all.Unchained)
}

// A keyed chain (executor.WithChainKey) is checked with its key; without
// it, only its positions and links; and a store writer who re-chains an
// edit without the key is caught at every row they rehashed.
func TestVerifyKeyed(t *testing.T) {
	key := []byte("auditor's secret")
	keyedRows := func() []gate.StoredDecision {
		rows := chainRows(gate.KeyedChainPrefix+"c", 5)
		prev := ""
		for i := range rows {
			rows[i].ChainPrev = prev
			rows[i].ChainHash = rows[i].HashKeyed(key)
			prev = rows[i].ChainHash
		}
		return rows
	}
	kinds := func(r audit.ChainReport) []string {
		var out []string
		for _, p := range r.Problems {
			out = append(out, fmt.Sprint(p.Kind, "@", p.Seq))
		}
		return out
	}
	reps := audit.VerifyKeyed(audit.Chains{Rows: keyedRows()}, key)
	require.Len(t, reps, 1)
	assert.True(t, reps[0].Complete, kinds(reps[0]))

	reps = audit.Verify(audit.Chains{Rows: keyedRows()})
	assert.Equal(t, []string{"key_needed@1"}, kinds(reps[0]), "without the key: not complete, nothing else wrong")

	reps = audit.VerifyKeyed(audit.Chains{Rows: keyedRows()}, []byte("wrong key"))
	assert.Len(t, reps[0].Problems, 5, "a wrong key fails every row")

	// The writer edits position 2 and re-chains 2..5 with the public,
	// unkeyed hash: every rehashed row fails its keyed hash.
	rows := keyedRows()
	rows[1].Reason = "forged"
	rehash(rows, 1)
	reps = audit.VerifyKeyed(audit.Chains{Rows: rows}, key)
	assert.Equal(t, []string{"edited@2", "edited@3", "edited@4", "edited@5"}, kinds(reps[0]))

	// With a key, an unkeyed chain is not proof (a store writer can
	// compute its hashes): reported not_keyed, nothing else wrong.
	reps = audit.VerifyKeyed(audit.Chains{Rows: chainRows("plain", 3)}, key)
	assert.Equal(t, []string{"not_keyed@1"}, kinds(reps[0]))
}
