package gate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// ChainVersion names the canonical encoding the chain hashes are computed
// over (StoredDecision.AppendContent and LinkHash). It is part of every
// preimage; a change to the encoding or to the columns it covers is a new
// version.
const ChainVersion = "toolgate-chain-v1"

// Link is a decision's place in a verifiable chain: the decisions of one
// executor Run value (its Task views included), in the order their records
// became final, each holding the hash of the one before, so that a
// decision deleted, edited, inserted or reordered in the audit store after
// the fact is detected (`auditq verify`).
type Link struct {
	// ID names the chain (gate.chain.id): random, one per Run value.
	ID string `json:"id"`
	// Seq is the decision's 1-based position (gate.chain.seq).
	Seq int64 `json:"seq"`
	// Prev is the previous decision's Hash; "" for position 1
	// (gate.chain.prev).
	Prev string `json:"prev,omitempty"`
	// Hash is LinkHash(ID, Seq, Prev, digest of the decision's
	// StoredDecision) as lowercase hex (gate.chain.hash).
	Hash string `json:"hash"`
}

// Attributes appends l's gate.chain.* attributes to attrs (nothing when
// l.ID is empty): gate.chain.id, gate.chain.seq (int64), gate.chain.prev
// (when not empty) and gate.chain.hash.
func (l Link) Attributes(attrs []attribute.KeyValue) []attribute.KeyValue {
	if l.ID == "" {
		return attrs
	}
	attrs = append(attrs, AttrChainID.String(SafeText(l.ID, MaxNameBytes)), AttrChainSeq.Int64(l.Seq))
	if l.Prev != "" {
		attrs = append(attrs, AttrChainPrev.String(SafeText(l.Prev, MaxNameBytes)))
	}
	return append(attrs, AttrChainHash.String(SafeText(l.Hash, MaxNameBytes)))
}

// Stored reports whether the audit store keeps r as a decision (a
// gate_decisions row): a gated call, a call refused before the gate, or
// an opted-out agent's call. Only such records take a chain position. The
// audit store's condition over span attributes is the same: gate.action
// present (Attributes writes it for gated and pre-gate records), or
// gate.gated or gate.opt_out true.
func (r *Record) Stored() bool {
	return r.Gated || r.OptOut || r.Stage.PreGate()
}

// StoredDecision is one decision as the audit store's gate_decisions row
// holds it: the call's identity columns, every column of Fields() (the
// decision fields), in their stored forms — every string as the span
// carried it (already SafeText'ed by the encoder), an absent attribute as
// its column's default (Field.Default, else the type's zero value), bools
// as bools, ints as UInt64, gate.verdicts as its list. It is what the
// chain hash covers, computed alike by the producer (from the span's
// attributes: ReadAttributes) and by a verifier (from the row: Columns).
//
// Covered (in this order, by ChainVersion): TraceId, SpanId, Agent, RunId,
// TaskId, ToolName, ToolCallId, Input (the recorded arguments as stored,
// "" when content is not recorded: a store writer cannot turn a recorded
// `rm -rf /` into `ls`), then every decision field of Fields() except the
// chain's own columns (ChainId, ChainSeq and ChainPrev enter the link
// hash, ChainHash is its result).
//
// The approval columns (ApprovalId, ApprovalWaitMs: gate.approval.id and
// gate.approval.wait_ms, schema version 9), which came after the chain,
// are covered as a trailer: encoded after Calls, both of them, only when
// either is set (StoredColumn.Trailer). A decision without them — every
// row a producer wrote before they existed — has the encoding, and so
// the hash, it had; a decision with them cannot be told from one without
// (the trailer's presence is part of the encoding), so clearing an
// approval ID or a wait is an edit like any other.
//
// Not covered: what the row records of the call after the decision or
// outside it — Timestamp, InsertedAt, ParentSpanId, ServiceName (a
// resource attribute the producer's tracer sets); the tool's outcome:
// ErrorType, IsError, StatusMessage, Duration and the recorded result
// (gen_ai.tool.call.result, not a gate_decisions column); and the derived
// columns the store computes from covered ones (VerdictGates,
// VerdictActions). The outcome cannot be covered by a hash taken at
// decision time: in strict mode (executor.WithWriteAhead) the decision is
// sealed and committed before the tool runs, so a store writer can still
// change whether a call failed, its error and its duration undetected.
type StoredDecision struct {
	// Identity (TraceId, SpanId as lowercase hex, "" when invalid; Agent
	// gen_ai.agent.name, RunId toolgate.run.id, TaskId toolgate.task.id,
	// ToolName gen_ai.tool.name, ToolCallId gen_ai.tool.call.id).
	TraceID, SpanID, Agent, RunID, TaskID, ToolName, ToolCallID string
	// Input is the Input column: the call's recorded arguments
	// (gen_ai.tool.call.arguments, as the span carried them: redacted and
	// bounded by the producer), "" when content is not recorded.
	Input string
	// The decision fields, named as their columns (see Fields).
	Gated, OptOut                                                    bool
	Action, Reason, Source, RiskLevel, Approval, Approver, ErrorKind string
	GateDuration                                                     uint64
	Rewritten                                                        bool
	RewrittenBy, OriginalInputHash                                   string
	Rounds                                                           uint64
	Verdicts                                                         []string
	Stage, Rule                                                      string
	Calls                                                            uint64
	// The approval columns (a trailer of the content: see above).
	ApprovalID     string
	ApprovalWaitMs uint64
	// The chain columns (ChainId, ChainSeq, ChainPrev, ChainHash).
	ChainID   string
	ChainSeq  uint64
	ChainPrev string
	ChainHash string
}

// StoredColumn is one gate_decisions column of a StoredDecision: its name
// and a pointer to the field that holds it (*string, *bool, *uint64 or
// *[]string), to scan a row into.
type StoredColumn struct {
	Name string
	Ptr  any
	// Chain: one of the chain's own columns (not in the content the
	// digest covers).
	Chain bool
	// Trailer: one of the content's trailing columns (the approval
	// columns), encoded — all of them, in order — only when one of them
	// is not its zero value.
	Trailer bool
}

// storedColumns is the number of StoredDecision columns: the content
// columns in encoding order (AppendContent, the trailer last), then the
// four chain columns.
const storedColumns = 32

func (d *StoredDecision) columns() [storedColumns]StoredColumn {
	return [storedColumns]StoredColumn{
		{"TraceId", &d.TraceID, false, false},
		{"SpanId", &d.SpanID, false, false},
		{"Agent", &d.Agent, false, false},
		{"RunId", &d.RunID, false, false},
		{"TaskId", &d.TaskID, false, false},
		{"ToolName", &d.ToolName, false, false},
		{"ToolCallId", &d.ToolCallID, false, false},
		{"Input", &d.Input, false, false},
		{"Gated", &d.Gated, false, false},
		{"OptOut", &d.OptOut, false, false},
		{"Action", &d.Action, false, false},
		{"Reason", &d.Reason, false, false},
		{"Source", &d.Source, false, false},
		{"RiskLevel", &d.RiskLevel, false, false},
		{"Approval", &d.Approval, false, false},
		{"Approver", &d.Approver, false, false},
		{"ErrorKind", &d.ErrorKind, false, false},
		{"GateDuration", &d.GateDuration, false, false},
		{"Rewritten", &d.Rewritten, false, false},
		{"RewrittenBy", &d.RewrittenBy, false, false},
		{"OriginalInputHash", &d.OriginalInputHash, false, false},
		{"Rounds", &d.Rounds, false, false},
		{"Verdicts", &d.Verdicts, false, false},
		{"Stage", &d.Stage, false, false},
		{"Rule", &d.Rule, false, false},
		{"Calls", &d.Calls, false, false},
		{"ApprovalId", &d.ApprovalID, false, true},
		{"ApprovalWaitMs", &d.ApprovalWaitMs, false, true},
		{"ChainId", &d.ChainID, true, false},
		{"ChainSeq", &d.ChainSeq, true, false},
		{"ChainPrev", &d.ChainPrev, true, false},
		{"ChainHash", &d.ChainHash, true, false},
	}
}

// Columns lists d's gate_decisions columns with pointers to d's fields:
// the content columns in encoding order (the trailer last), then the four
// chain columns. A
// verifier selects these columns from a row and scans into the pointers.
func (d *StoredDecision) Columns() []StoredColumn {
	cs := d.columns()
	return cs[:]
}

// AppendContent appends the canonical encoding of d's content (every
// column but the chain's) to dst: the field ChainVersion, then each
// content column's value in Columns order — a string as one field, a bool
// as the field "true" or "false", an int as the field of its decimal
// digits, a list as the field of its length in decimal then one field per
// element —, where a field is its length in bytes in decimal, ':', and its
// bytes; the trailer columns (ApprovalId, ApprovalWaitMs) only when one of
// them is set. Every value is length-prefixed, the columns before the
// trailer are fixed by the version and the trailer is all or nothing at
// the end, so two different contents never share an encoding, whatever
// bytes ('|', ':', NUL, invalid UTF-8) their strings hold.
func (d *StoredDecision) AppendContent(dst []byte) []byte {
	dst = appendField(dst, ChainVersion)
	for _, s := range [...]*string{&d.TraceID, &d.SpanID, &d.Agent, &d.RunID, &d.TaskID, &d.ToolName, &d.ToolCallID, &d.Input} {
		dst = appendField(dst, *s)
	}
	dst = appendBool(dst, d.Gated)
	dst = appendBool(dst, d.OptOut)
	for _, s := range [...]*string{&d.Action, &d.Reason, &d.Source, &d.RiskLevel, &d.Approval, &d.Approver, &d.ErrorKind} {
		dst = appendField(dst, *s)
	}
	dst = appendUint(dst, d.GateDuration)
	dst = appendBool(dst, d.Rewritten)
	dst = appendField(dst, d.RewrittenBy)
	dst = appendField(dst, d.OriginalInputHash)
	dst = appendUint(dst, d.Rounds)
	dst = appendUint(dst, uint64(len(d.Verdicts)))
	for _, v := range d.Verdicts {
		dst = appendField(dst, v)
	}
	dst = appendField(dst, d.Stage)
	dst = appendField(dst, d.Rule)
	dst = appendUint(dst, d.Calls)
	if d.ApprovalID != "" || d.ApprovalWaitMs != 0 {
		dst = appendField(dst, d.ApprovalID)
		dst = appendUint(dst, d.ApprovalWaitMs)
	}
	return dst
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "4:true"...)
	}
	return append(dst, "5:false"...)
}

// Digest is the SHA-256 of d's content (AppendContent).
func (d *StoredDecision) Digest() [sha256.Size]byte {
	return sha256.Sum256(d.AppendContent(make([]byte, 0, 1024)))
}

// Hash recomputes d's link hash from its columns: LinkHash(ChainId,
// ChainSeq, ChainPrev, Digest()). A row whose Hash differs from its
// ChainHash was changed after it was recorded (or was recorded by a
// producer with another encoding, or with a key: KeyedChain).
func (d *StoredDecision) Hash() string {
	return LinkHash(d.ChainID, d.ChainSeq, d.ChainPrev, d.Digest())
}

// HashKeyed is Hash for a keyed chain (KeyedChain): KeyedLinkHash with
// key; Hash when key is empty.
func (d *StoredDecision) HashKeyed(key []byte) string {
	return KeyedLinkHash(key, d.ChainID, d.ChainSeq, d.ChainPrev, d.Digest())
}

// KeyedChainPrefix starts the ID of a keyed chain: one whose link hashes
// are HMAC-SHA256 under a secret key (KeyedLinkHash), so that only a
// holder of the key — the producer and the auditor, not the store — can
// compute them.
const KeyedChainPrefix = "hmac-"

// KeyedChain reports whether chainID names a keyed chain.
func KeyedChain(chainID string) bool { return strings.HasPrefix(chainID, KeyedChainPrefix) }

// KeyedLinkHash is LinkHash under a secret key: the lowercase hex
// HMAC-SHA256 (crypto/hmac) of the same preimage; LinkHash when key is
// empty. Whoever lacks the key cannot make a row's hash match its
// content, so a store writer cannot re-chain an edit.
func KeyedLinkHash(key []byte, chainID string, seq uint64, prev string, digest [sha256.Size]byte) string {
	if len(key) == 0 {
		return LinkHash(chainID, seq, prev, digest)
	}
	m := hmac.New(sha256.New, key)
	m.Write(linkPreimage(make([]byte, 0, 256), chainID, seq, prev, digest))
	var sum [sha256.Size]byte
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], m.Sum(sum[:0]))
	return string(h[:])
}

func linkPreimage(b []byte, chainID string, seq uint64, prev string, digest [sha256.Size]byte) []byte {
	b = appendField(b, ChainVersion)
	b = appendField(b, chainID)
	b = appendUint(b, seq)
	b = appendField(b, prev)
	return appendField(b, string(digest[:]))
}

// LinkHash is a decision's gate.chain.hash: the lowercase hex SHA-256 of
// the fields ChainVersion, the chain ID, the position in decimal, the
// previous hash and the content digest (32 bytes), each length-prefixed
// as in AppendContent.
func LinkHash(chainID string, seq uint64, prev string, digest [sha256.Size]byte) string {
	var buf [512]byte
	sum := sha256.Sum256(linkPreimage(buf[:0], chainID, seq, prev, digest))
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

func appendField(dst []byte, s string) []byte {
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, ':')
	return append(dst, s...)
}

func appendUint(dst []byte, n uint64) []byte {
	var b [20]byte
	digits := strconv.AppendUint(b[:0], n, 10)
	dst = strconv.AppendInt(dst, int64(len(digits)), 10)
	dst = append(dst, ':')
	return append(dst, digits...)
}

// ReadAttributes sets d's columns from span attributes as the audit store
// reads them into a row (the gate_decisions view over the exporter's
// string form of each value): the identity keys (gen_ai.agent.name,
// toolgate.run.id, toolgate.task.id, gen_ai.tool.name,
// gen_ai.tool.call.id) and every Fields() key; other keys are ignored, a
// later value of a key replaces an earlier one. Columns whose key is
// absent keep their values: start from a zero StoredDecision, call
// ReadAttributes with every attribute list the span carries, then
// Defaults. TraceID and SpanID are not attributes: set them yourself.
func (d *StoredDecision) ReadAttributes(attrs []attribute.KeyValue) {
	for i := range attrs {
		kv := &attrs[i]
		switch kv.Key {
		case semconv.GenAIAgentNameKey:
			d.Agent = storedString(kv.Value)
		case AttrRunID:
			d.RunID = storedString(kv.Value)
		case AttrTaskID:
			d.TaskID = storedString(kv.Value)
		case semconv.GenAIToolNameKey:
			d.ToolName = storedString(kv.Value)
		case semconv.GenAIToolCallIDKey:
			d.ToolCallID = storedString(kv.Value)
		case semconv.GenAIToolCallArgumentsKey:
			d.Input = storedString(kv.Value)
		case AttrGated:
			d.Gated = storedBool(kv.Value)
		case AttrOptOut:
			d.OptOut = storedBool(kv.Value)
		case AttrAction:
			d.Action = storedString(kv.Value)
		case AttrReason:
			d.Reason = storedString(kv.Value)
		case AttrSource:
			d.Source = storedString(kv.Value)
		case AttrRiskLevel:
			d.RiskLevel = storedString(kv.Value)
		case AttrApproval:
			d.Approval = storedString(kv.Value)
		case AttrApprover:
			d.Approver = storedString(kv.Value)
		case AttrError:
			d.ErrorKind = storedString(kv.Value)
		case AttrDuration:
			d.GateDuration = storedUint(kv.Value)
		case AttrRewritten:
			d.Rewritten = storedBool(kv.Value)
		case AttrRewrittenBy:
			d.RewrittenBy = storedString(kv.Value)
		case AttrOriginalInputHash:
			d.OriginalInputHash = storedString(kv.Value)
		case AttrRounds:
			d.Rounds = storedUint(kv.Value)
		case AttrVerdicts:
			d.Verdicts = storedList(kv.Value)
		case AttrStage:
			d.Stage = storedString(kv.Value)
		case AttrRule:
			d.Rule = storedString(kv.Value)
		case AttrCalls:
			d.Calls = storedUint(kv.Value)
		case AttrApprovalID:
			d.ApprovalID = storedString(kv.Value)
		case AttrApprovalWait:
			d.ApprovalWaitMs = storedUint(kv.Value)
		case AttrChainID:
			d.ChainID = storedString(kv.Value)
		case AttrChainSeq:
			d.ChainSeq = storedUint(kv.Value)
		case AttrChainPrev:
			d.ChainPrev = storedString(kv.Value)
		case AttrChainHash:
			d.ChainHash = storedString(kv.Value)
		}
	}
}

// Defaults applies the column defaults of Fields() (Field.Default) to the
// columns still at their zero value, as the store reads a span without
// the attribute: Stage "gate", Calls 1 (for an int with a default, a
// recorded 0 too).
func (d *StoredDecision) Defaults() {
	if d.Stage == "" {
		d.Stage = string(StageGate)
	}
	if d.Calls == 0 {
		d.Calls = 1
	}
}

// storedString is the exporter's string form of v (pcommon's
// Value.AsString: a string as it is, a bool "true"/"false", an int in
// decimal).
func storedString(v attribute.Value) string {
	if v.Type() == attribute.STRING {
		return v.AsString()
	}
	return v.Emit()
}

// storedBool is a Bool column: the string form is "true".
func storedBool(v attribute.Value) bool {
	if v.Type() == attribute.BOOL {
		return v.AsBool()
	}
	return storedString(v) == "true"
}

// storedUint is ClickHouse's toUInt64OrZero of the string form: a
// negative or non-numeric value is 0.
func storedUint(v attribute.Value) uint64 {
	if v.Type() == attribute.INT64 {
		if n := v.AsInt64(); n > 0 {
			return uint64(n)
		}
		return 0
	}
	n, err := strconv.ParseUint(storedString(v), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// storedList is an Array(String) column of a string-list attribute: the
// list; a string that is a JSON array, its elements; another non-empty
// string, a one-element list; else empty.
func storedList(v attribute.Value) []string {
	if v.Type() == attribute.STRINGSLICE {
		l := v.AsStringSlice()
		if len(l) == 0 {
			return nil
		}
		return l
	}
	s := storedString(v)
	switch {
	case s == "":
		return nil
	case strings.HasPrefix(s, "["):
		var l []string
		if json.Unmarshal([]byte(s), &l) != nil || len(l) == 0 {
			return nil
		}
		return l
	}
	return []string{s}
}
