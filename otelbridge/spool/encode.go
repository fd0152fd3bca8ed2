package spool

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	"github.com/toolgate/toolgate/otelbridge/internal/otlpsafe"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// maxScopes bounds encoder.scopes (instrumentation scopes remembered).
const maxScopes = 64

// encoder turns ended spans into final records. A span's resource is the
// same *resource.Resource for every span of a TracerProvider, so the
// encoder converts and marshals it once (not once per span, which cost
// about as much as the span itself), and gives every span of a resource,
// and of an instrumentation scope, the same OTLP message, so that the
// drainer merges records by comparing pointers. Safe for concurrent use.
type encoder struct {
	mu     sync.Mutex
	ok     bool               // res, resPB, schema and resField are set
	res    *resource.Resource // of the last span
	resPB  *resourcepb.Resource
	schema string
	// resField is resPB encoded as field 1 of ResourceSpans (tag, length,
	// message).
	resField []byte
	scopes   map[instrumentation.Scope]*commonpb.InstrumentationScope
}

// noResource is a span seen without its resource (added by the encoder).
type noResource struct{ sdktrace.ReadOnlySpan }

func (noResource) Resource() *resource.Resource { return nil }

// resource returns sp's resource in OTLP form, its schema URL and its
// encoding as field 1 of ResourceSpans.
func (e *encoder) resource(sp sdktrace.ReadOnlySpan) (*resourcepb.Resource, string, []byte, error) {
	r := sp.Resource()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ok && e.res == r {
		return e.resPB, e.schema, e.resField, nil
	}
	rs, err := toOTLP([]sdktrace.ReadOnlySpan{sp})
	if err != nil {
		return nil, "", nil, err
	}
	pb := rs[0].GetResource()
	var field []byte
	if pb != nil {
		msg, err := proto.Marshal(pb)
		if err != nil {
			return nil, "", nil, fmt.Errorf("spool: encode resource: %w", err)
		}
		field = protowire.AppendTag(nil, 1, protowire.BytesType)
		field = protowire.AppendBytes(field, msg)
	}
	e.ok, e.res, e.resPB, e.schema, e.resField = true, r, pb, rs[0].GetSchemaUrl(), field
	return pb, e.schema, field, nil
}

// scope returns the shared OTLP message of sc (pb, the one just converted,
// when sc is new).
func (e *encoder) scope(sc instrumentation.Scope, pb *commonpb.InstrumentationScope) *commonpb.InstrumentationScope {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.scopes[sc]; ok {
		return c
	}
	if e.scopes == nil || len(e.scopes) >= maxScopes {
		e.scopes = map[instrumentation.Scope]*commonpb.InstrumentationScope{}
	}
	e.scopes[sc] = pb
	return pb
}

// final encodes sp as a final record appended at t, and returns it with
// its OTLP form (for the drainer's cache). The record is byte for byte
// what encodeRecord makes of the OTLP form.
func (e *encoder) final(sp sdktrace.ReadOnlySpan, t time.Time) ([]byte, []*tracepb.ResourceSpans, error) {
	return e.record(kindFinal, sp, t)
}

// record encodes sp as a record of kind appended at t; see final.
func (e *encoder) record(kind byte, sp sdktrace.ReadOnlySpan, t time.Time) ([]byte, []*tracepb.ResourceSpans, error) {
	resPB, schema, resField, err := e.resource(sp)
	if err != nil {
		return nil, nil, err
	}
	rs, err := toOTLP([]sdktrace.ReadOnlySpan{noResource{sp}})
	if err != nil {
		return nil, nil, err
	}
	if len(rs) != 1 || len(rs[0].GetScopeSpans()) != 1 {
		return nil, nil, fmt.Errorf("spool: transform: %d resource spans for one span", len(rs))
	}
	// As encodeRecord: invalid UTF-8 (of another instrumentation) escaped,
	// and the span within MaxRecordBytes (the resource, spliced in below,
	// is small and counted apart).
	otlpsafe.Sanitize(rs)
	otlpsafe.Fit(&tracepb.TracesData{ResourceSpans: rs}, MaxRecordBytes-len(resField))
	r := rs[0]
	r.SchemaUrl = schema
	ss := r.ScopeSpans[0]
	ss.Scope = e.scope(sp.InstrumentationScope(), ss.Scope)
	// TracesData{ResourceSpans: [r]} with r's resource spliced in as
	// already encoded: field 1 of TracesData, whose message is resField
	// followed by the rest of r.
	n := proto.Size(r)
	inner := len(resField) + n
	buf := make([]byte, headerLen, headerLen+1+protowire.SizeVarint(uint64(inner))+inner)
	buf = protowire.AppendTag(buf, 1, protowire.BytesType)
	buf = protowire.AppendVarint(buf, uint64(inner))
	buf = append(buf, resField...)
	buf, err = proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(buf, r)
	if err != nil {
		return nil, nil, fmt.Errorf("spool: encode record: %w", err)
	}
	r.Resource = resPB
	finishRecord(buf, kind, 1, t)
	return buf, rs, nil
}

// decoder decodes records for the drainer. It reuses the resource message
// of the previous record whose encoding is the same (one provider's spans
// all carry one resource), so that it is neither decoded again nor compared
// field by field when merged. Not safe for concurrent use.
type decoder struct {
	resMsg []byte // the encoded resource of resPB
	resPB  *resourcepb.Resource
}

// decode is decodeSpans(rec) (rec's header checked).
func (d *decoder) decode(rec []byte) ([]*tracepb.ResourceSpans, error) {
	resMsg, rest, ok := splitResource(rec[headerLen:])
	if ok && d.resPB != nil && bytes.Equal(resMsg, d.resMsg) {
		r := &tracepb.ResourceSpans{}
		if err := proto.Unmarshal(rest, r); err != nil {
			return nil, fmt.Errorf("%w: %w", errBadRecord, err)
		}
		if r.Resource == nil { // else a second resource field to merge: decode it all
			r.Resource = d.resPB
			return []*tracepb.ResourceSpans{r}, nil
		}
	}
	rs, err := decodeSpans(rec)
	if err != nil {
		return nil, err
	}
	if ok && len(rs) == 1 && rs[0].Resource != nil {
		d.resMsg, d.resPB = append(d.resMsg[:0], resMsg...), rs[0].Resource
	}
	return rs, nil
}

// splitResource splits the encoding of a TracesData of one ResourceSpans
// whose first field is its resource into the resource's encoding and the
// ResourceSpans' other fields; ok false for any other encoding.
func splitResource(td []byte) (res, rest []byte, ok bool) {
	num, typ, n := protowire.ConsumeTag(td)
	if n < 0 || num != 1 || typ != protowire.BytesType {
		return nil, nil, false
	}
	rs, m := protowire.ConsumeBytes(td[n:])
	if m < 0 || n+m != len(td) {
		return nil, nil, false
	}
	num, typ, n = protowire.ConsumeTag(rs)
	if n < 0 || num != 1 || typ != protowire.BytesType {
		return nil, nil, false
	}
	res, m = protowire.ConsumeBytes(rs[n:])
	if m < 0 {
		return nil, nil, false
	}
	return res, rs[n+m:], true
}
