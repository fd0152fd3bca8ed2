package executor

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// chainState is a run's verifiable chain (gate.Link): its random ID, the
// last position given and that position's hash. One per Run value, shared
// by its Task views.
type chainState struct {
	mu   sync.Mutex
	id   string
	seq  int64
	head string
}

// next gives the next position to a record whose stored form has content
// digest: under the lock, position seq+1 chained to the head, its hash
// keyed with key when set (WithChainKey).
func (c *chainState) next(digest [sha256.Size]byte, key []byte) gate.Link {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id == "" {
		var b [16]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
		c.id = hex.EncodeToString(b[:])
		if len(key) > 0 {
			c.id = gate.KeyedChainPrefix + c.id
		}
	}
	c.seq++
	l := gate.Link{ID: c.id, Seq: c.seq, Prev: c.head}
	l.Hash = gate.KeyedLinkHash(key, l.ID, uint64(l.Seq), l.Prev, digest)
	c.head = l.Hash
	return l
}

// state is the chain's length and head hash (0 and "" before its first
// decision) and its ID.
func (c *chainState) state() (id string, length int64, head string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id, c.seq, c.head
}

// contentPool recycles the buffers a decision's stored form is encoded in
// (gate.StoredDecision.AppendContent), holding *[]byte.
var contentPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

// maxPooledContent: larger buffers (a huge reason) are not kept.
const maxPooledContent = 64 << 10

// chainLink gives a decision recorded on span its run's next chain
// position, once its record is final: the digest of its stored form — the
// span's identity (trace and span ID, the start attributes ids: tool name
// and call ID) and attrs, the attributes the span gets at its end, read as
// the audit store reads them (gate.StoredDecision) — chained under the
// run's lock. Concurrent calls of a run get distinct, contiguous
// positions in the order their records became final.
func (r *Run) chainLink(sc trace.SpanContext, ids, attrs []attribute.KeyValue) gate.Link {
	var d gate.StoredDecision
	if sc.IsValid() {
		var tid [32]byte
		var sid [16]byte
		traceID, spanID := sc.TraceID(), sc.SpanID()
		hex.Encode(tid[:], traceID[:])
		hex.Encode(sid[:], spanID[:])
		d.TraceID, d.SpanID = string(tid[:]), string(sid[:])
	}
	d.ReadAttributes(ids)
	d.ReadAttributes(attrs)
	d.Defaults()
	buf := contentPool.Get().(*[]byte)
	content := d.AppendContent((*buf)[:0])
	digest := sha256.Sum256(content)
	if cap(content) <= maxPooledContent {
		*buf = content[:0]
		contentPool.Put(buf)
	}
	return r.state.chain.next(digest, r.agent.ex.cfg.chainKey)
}

// sealSpan gives the decision rec, recorded on span with attrs (its
// attributes at the end, the recorded arguments gen_ai.tool.call.arguments
// included when content is recorded: the hash covers them) and
// identified by toolName and callID (its start
// attributes; callID "" for none), its chain position when the store
// keeps it (gate.Record.Stored) and the span records, and returns attrs
// with the gate.chain.* attributes appended. A record that already has
// its link (sealed earlier, e.g. before a write-ahead commit of the span:
// then attrs, built by gate.Record.Attributes, carry it) keeps it: a
// decision takes one position.
func (r *Run) sealSpan(span trace.Span, rec *gate.Record, named bool, toolName, callID string, attrs []attribute.KeyValue) []attribute.KeyValue {
	if rec.Chain.ID != "" || !rec.Stored() || !span.IsRecording() {
		return attrs
	}
	var ids [2]attribute.KeyValue
	n := 0
	if named {
		ids[n] = semconv.GenAIToolName(toolName)
		n++
	}
	if callID != "" {
		ids[n] = semconv.GenAIToolCallID(callID)
		n++
	}
	rec.Chain = r.chainLink(span.SpanContext(), ids[:n], attrs)
	return rec.Chain.Attributes(attrs)
}

// ChainEnd returns the attributes that close the run's hash chain:
// gate.chain.id (string), gate.chain.length (int64, the positions taken)
// and gate.chain.head (hex SHA-256 of the last position), or nil when no
// decision of the run was chained. The run span records them at End; with
// WithRunSpan(false), set them on your own agent span after End and before
// ending that span (span.SetAttributes(run.ChainEnd()...)), or
// `auditq verify` reports the run's chain open (its tail unchecked). Call
// it after End: End records the run's last refused calls first.
func (r *Run) ChainEnd() []attribute.KeyValue { return r.chainEnd() }

// chainEnd is the run span's gate.chain.id, gate.chain.length and
// gate.chain.head at End (nothing when no decision was chained).
func (r *Run) chainEnd() []attribute.KeyValue {
	id, n, head := r.state.chain.state()
	if n == 0 {
		return nil
	}
	return []attribute.KeyValue{gate.AttrChainID.String(id), gate.AttrChainLength.Int64(n), gate.AttrChainHead.String(head)}
}
