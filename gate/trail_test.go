package gate_test

import (
	"encoding/hex"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/gate"
)

// decodeContent parses gate.StoredDecision.AppendContent's encoding back:
// if every encoding decodes to the value it came from, no two values share
// one (the encoding is injective).
func decodeContent(b []byte) (gate.StoredDecision, error) {
	var d gate.StoredDecision
	field := func() (string, error) {
		i := strings.IndexByte(string(b), ':')
		if i < 0 {
			return "", errors.New("no length")
		}
		n, err := strconv.Atoi(string(b[:i]))
		if err != nil || n < 0 || i+1+n > len(b) {
			return "", errors.New("bad length")
		}
		s := string(b[i+1 : i+1+n])
		b = b[i+1+n:]
		return s, nil
	}
	v, err := field()
	if err != nil || v != gate.ChainVersion {
		return d, errors.New("no version")
	}
	for _, c := range d.Columns() {
		if c.Chain || c.Trailer && len(b) == 0 {
			continue // no trailer: its columns are zero
		}
		s, err := field()
		if err != nil {
			return d, err
		}
		switch p := c.Ptr.(type) {
		case *string:
			*p = s
		case *bool:
			*p, err = strconv.ParseBool(s)
		case *uint64:
			*p, err = strconv.ParseUint(s, 10, 64)
		case *[]string:
			var n uint64
			if n, err = strconv.ParseUint(s, 10, 64); err == nil {
				for range n {
					e, err := field()
					if err != nil {
						return d, err
					}
					*p = append(*p, e)
				}
			}
		}
		if err != nil {
			return d, err
		}
	}
	if len(b) != 0 {
		return d, errors.New("trailing bytes")
	}
	return d, nil
}

// drawStored draws a stored decision with hostile strings: separators,
// length-like prefixes ("3:abc"), invalid UTF-8, NUL, long runs.
func drawStored(t *rapid.T) gate.StoredDecision {
	str := func(label string) string {
		return rapid.OneOf(
			rapid.SampledFrom([]string{"", "|", ":", "1:", "3:abc", "\x00", "\xff", "true", "0", "Reason"}),
			rapid.String(),
			rapid.StringOf(rapid.SampledFrom([]rune{':', '|', '0', '1', '9', '\x00', 'a'})),
		).Draw(t, label)
	}
	var d gate.StoredDecision
	for _, c := range d.Columns() {
		if c.Chain {
			continue
		}
		switch p := c.Ptr.(type) {
		case *string:
			*p = str(c.Name)
		case *bool:
			*p = rapid.Bool().Draw(t, c.Name)
		case *uint64:
			*p = rapid.Uint64().Draw(t, c.Name)
		case *[]string:
			*p = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) string { return str("entry") }), 0, 5).Draw(t, c.Name)
		}
	}
	return d
}

// The content encoding decodes to the value it came from, for any value:
// no two stored decisions (one value moved across a field boundary, a
// list entry split in two, …) share an encoding, so none share a digest
// short of a SHA-256 collision.
func TestStoredContentIsInjective(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := drawStored(t)
		got, err := decodeContent(d.AppendContent(nil))
		require.NoError(t, err)
		if len(d.Verdicts) == 0 {
			d.Verdicts = nil // an empty list is the empty list
		}
		require.Equal(t, d, got)
	})
}

// Moving bytes between neighbouring fields, or between list entries,
// changes the digest (the targeted form of the property above).
func TestStoredDigestSeesFieldBoundaries(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := drawStored(t)
		d.Reason, d.Source = "ab", "c"
		e := d
		e.Reason, e.Source = "a", "bc"
		assert.NotEqual(t, d.Digest(), e.Digest())
		d.Verdicts, e.Verdicts = []string{"a|b"}, []string{"a", "b"}
		assert.NotEqual(t, d.Digest(), e.Digest())
		d.Verdicts, e.Verdicts = nil, []string{""}
		assert.NotEqual(t, d.Digest(), e.Digest())
	})
}

// Every content column changes the digest; the chain columns do not (they
// enter the link hash).
func TestEveryContentColumnIsCovered(t *testing.T) {
	var base gate.StoredDecision
	digest := base.Digest()
	n := len(base.Columns())
	for i := range n {
		var d gate.StoredDecision
		c := d.Columns()[i]
		switch p := c.Ptr.(type) {
		case *string:
			*p = "x"
		case *bool:
			*p = true
		case *uint64:
			*p = 1
		case *[]string:
			*p = []string{"x"}
		}
		if c.Chain {
			assert.Equal(t, digest, d.Digest(), c.Name)
		} else {
			assert.NotEqual(t, digest, d.Digest(), c.Name)
		}
	}
}

// The stored decision's columns are every gate.Fields() column plus the
// call's identity columns and its recorded arguments (Input), and no
// other; the chain columns are exactly the gate.chain.* fields.
func TestStoredColumnsAreTheFields(t *testing.T) {
	var d gate.StoredDecision
	got := map[string]bool{}
	chain := map[string]bool{}
	for _, c := range d.Columns() {
		got[c.Name] = true
		if c.Chain {
			chain[c.Name] = true
		}
	}
	want := map[string]bool{"TraceId": true, "SpanId": true, "Agent": true, "RunId": true, "TaskId": true, "ToolName": true, "ToolCallId": true, "Input": true}
	wantChain := map[string]bool{}
	for _, f := range gate.Fields() {
		want[f.Name] = true
		if strings.HasPrefix(string(f.Key), "gate.chain.") {
			wantChain[f.Name] = true
		}
	}
	assert.Equal(t, want, got)
	assert.Equal(t, wantChain, chain)
}

// ReadAttributes reads a full record's attributes into every decision
// column, as the store's column types read them.
func TestReadAttributes(t *testing.T) {
	rec := full()
	var d gate.StoredDecision
	d.ReadAttributes(rec.Attributes(nil, 0))
	d.Defaults()
	assert.Equal(t, gate.StoredDecision{
		Gated: true, OptOut: true, Action: "deny", Reason: `no \xff`, Source: "classify.bash", RiskLevel: "high",
		Approval: "declined", Approver: "ui", ErrorKind: "invalid", GateDuration: 1500, Rewritten: true,
		RewrittenBy: "normalise", OriginalInputHash: gate.InputHash([]byte(`{}`)), Rounds: 2,
		Verdicts: gate.EncodeVerdicts(rec.Verdicts), Stage: "gate", Rule: "rm.root", Calls: 3,
		ApprovalID: "apr-1", ApprovalWaitMs: 90250,
		ChainID: "chain-1", ChainSeq: 2, ChainPrev: "prev", ChainHash: "hash",
	}, d)
	// Absent attributes read as the column defaults; a negative int reads
	// as toUInt64OrZero does (0); a string stands for its stored form.
	var e gate.StoredDecision
	e.ReadAttributes([]attribute.KeyValue{gate.AttrDuration.Int64(-5), gate.AttrGated.String("true"), gate.AttrCalls.Int64(0), gate.AttrApprovalWait.Int64(-1)})
	e.Defaults()
	assert.Equal(t, gate.StoredDecision{Gated: true, Stage: "gate", Calls: 1}, e)
	assert.True(t, reflect.DeepEqual(e.Verdicts, []string(nil)))
	// The recorded arguments are the Input column, byte for byte.
	var in gate.StoredDecision
	in.ReadAttributes([]attribute.KeyValue{semconv.GenAIToolCallArgumentsKey.String("rm -rf / \xff\x00")})
	assert.Equal(t, "rm -rf / \xff\x00", in.Input)
}

// The keyed link hash is LinkHash without a key, and under a key neither
// that nor the hash under another key.
func TestKeyedLinkHash(t *testing.T) {
	var dg [32]byte
	dg[0] = 1
	plain := gate.LinkHash("c", 1, "", dg)
	assert.Equal(t, plain, gate.KeyedLinkHash(nil, "c", 1, "", dg))
	k1, k2 := gate.KeyedLinkHash([]byte("a"), "c", 1, "", dg), gate.KeyedLinkHash([]byte("b"), "c", 1, "", dg)
	assert.NotEqual(t, plain, k1)
	assert.NotEqual(t, k1, k2)
	assert.Len(t, k1, 64)
	assert.True(t, gate.KeyedChain(gate.KeyedChainPrefix+"x"))
	assert.False(t, gate.KeyedChain("x"))
}

// legacyDecision is a decision as a producer before the approval columns
// stored it (none set), with the digest and link hash that producer
// computed (toolgate-chain-v1 before schema version 9, measured at the
// commit before them).
func legacyDecision() (d gate.StoredDecision, digest, hash string) {
	d = gate.StoredDecision{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331", Agent: "coder", RunID: "run-1",
		TaskID: "t", ToolName: "bash", ToolCallID: "call_1", Input: `{"cmd":"rm -rf /"}`, Gated: true, Action: "deny",
		Reason: "approval declined", Source: "chain[0]:approval", RiskLevel: "high", Approval: "declined", Approver: "terminal",
		GateDuration: 1500, Rounds: 1, Verdicts: []string{"classify.bash|ask|high|delete.root"}, Stage: "gate", Rule: "delete.root", Calls: 1,
		ChainID: "c1", ChainSeq: 2, ChainPrev: "ab"}
	return d, "d946a690708d8c517a809d55e59ad79eb1dea323404af636aaae64dc167bfc9e", "1a4bd1b9fb0323fac8f4357e41b86048531d3c47bcb7dc55be3cbcc9099f475a"
}

// The approval columns came after the chain: a decision without them has
// the digest and hash it had before (rows already stored still verify),
// and either of them, set, changes both (an approval ID or a wait is
// covered: clearing or editing one is detected).
func TestApprovalColumnsKeepOlderHashes(t *testing.T) {
	d, digest, hash := legacyDecision()
	dg := d.Digest()
	assert.Equal(t, digest, hex.EncodeToString(dg[:]))
	assert.Equal(t, hash, d.Hash())
	withID, withWait, both := d, d, d
	withID.ApprovalID = "apr-1"
	withWait.ApprovalWaitMs = 1
	both.ApprovalID, both.ApprovalWaitMs = "apr-1", 1
	seen := map[string]bool{hash: true}
	for _, e := range []gate.StoredDecision{withID, withWait, both} {
		h := e.Hash()
		assert.False(t, seen[h], "%+v hashes like another", e)
		seen[h] = true
	}
	// The trailer is all or nothing: an ID moved into the wait's place (or
	// the other way round) is another encoding.
	a, b := d, d
	a.ApprovalID, b.ApprovalWaitMs = "7", 7
	assert.NotEqual(t, a.Digest(), b.Digest())
}

// The producer's digest (from the span's attributes) of a record with a
// durable approval equals the verifier's (from the row's columns): the
// approval columns are read from gate.approval.id and
// gate.approval.wait_ms as the store reads them.
func TestApprovalColumnsFromAttributes(t *testing.T) {
	rec := gate.Record{Gated: true, Action: gate.ActionAllow, Source: "inbox", Approval: gate.ApprovalApproved, Approver: "alice",
		ApprovalID: "apr-\xff|:1", ApprovalWait: 1500 * time.Millisecond}
	var d gate.StoredDecision
	d.ReadAttributes(rec.Attributes(nil, 0))
	d.Defaults()
	assert.Equal(t, "apr-\\xff|:1", d.ApprovalID)
	assert.EqualValues(t, 1500, d.ApprovalWaitMs)
	rec.ApprovalID, rec.ApprovalWait = "", 0
	var e gate.StoredDecision
	e.ReadAttributes(rec.Attributes(nil, 0))
	e.Defaults()
	assert.Zero(t, e.ApprovalID)
	assert.Zero(t, e.ApprovalWaitMs)
	f := d
	f.ApprovalID, f.ApprovalWaitMs = "", 0
	assert.Equal(t, e, f)
}
