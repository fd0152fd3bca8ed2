package spool

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/otelbridge/internal/otlpsafe"
)

// Record kinds.
const (
	kindFinal   byte = 1 // a span that ended: upload it
	kindPending byte = 2 // a committed live span: upload only if no final follows
)

// AttrInterrupted (bool) marks the span of a committed call whose process
// ended before the call finished: uploaded from its pending record by the
// next Open, with an Error status [InterruptedMessage].
const AttrInterrupted = "toolgate.call.interrupted"

// InterruptedMessage is the status description of an interrupted call.
const InterruptedMessage = "agent process ended before the call finished"

// A record is one log entry:
//
//	kind (1 byte) | spans (uint32 BE) | append time (int64 BE, unix ns) |
//	CRC-32C (uint32 BE) of everything else | TracesData (OTLP protobuf)
const headerLen = 1 + 4 + 8 + 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is a decoded record header.
type header struct {
	kind  byte
	spans uint32
	t     int64
}

// encodeRecord makes a record of the resource spans.
func encodeRecord(kind byte, spans int, t time.Time, rs []*tracepb.ResourceSpans) ([]byte, error) {
	td := &tracepb.TracesData{ResourceSpans: rs}
	fitRecord(td)
	buf := make([]byte, headerLen, headerLen+proto.Size(td))
	// The sizes are cached by proto.Size just above.
	out, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(buf, td)
	if err != nil && otlpsafe.Sanitize(rs) {
		// A span of another instrumentation with invalid UTF-8 (the
		// executor's are valid): escaped, not refused.
		out, err = proto.MarshalOptions{}.MarshalAppend(buf[:headerLen], td)
	}
	buf = out
	if err != nil {
		return nil, fmt.Errorf("spool: encode record: %w", err)
	}
	finishRecord(buf, kind, spans, t)
	return buf, nil
}

// finishRecord fills in the header of rec, whose TracesData follows it.
func finishRecord(rec []byte, kind byte, spans int, t time.Time) {
	rec[0] = kind
	binary.BigEndian.PutUint32(rec[1:], uint32(spans))
	binary.BigEndian.PutUint64(rec[5:], uint64(t.UnixNano()))
	binary.BigEndian.PutUint32(rec[13:], checksum(rec))
}

func checksum(rec []byte) uint32 {
	c := crc32.Update(0, castagnoli, rec[:13])
	return crc32.Update(c, castagnoli, rec[headerLen:])
}

var errBadRecord = errors.New("spool: torn or corrupt record")

// decodeHeader checks a record's kind and CRC.
func decodeHeader(rec []byte) (header, error) {
	if len(rec) < headerLen {
		return header{}, errBadRecord
	}
	h := header{kind: rec[0], spans: binary.BigEndian.Uint32(rec[1:]), t: int64(binary.BigEndian.Uint64(rec[5:]))}
	if (h.kind != kindFinal && h.kind != kindPending) || binary.BigEndian.Uint32(rec[13:]) != checksum(rec) {
		return header{}, errBadRecord
	}
	return h, nil
}

// decodeSpans returns the record's resource spans.
func decodeSpans(rec []byte) ([]*tracepb.ResourceSpans, error) {
	var td tracepb.TracesData
	if err := proto.Unmarshal(rec[headerLen:], &td); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadRecord, err)
	}
	return td.GetResourceSpans(), nil
}

// captureClient is an otlptrace.Client that keeps what it is given: the
// otlptrace exporter's own transform turns ReadOnlySpans into OTLP.
type captureClient struct{ rs []*tracepb.ResourceSpans }

func (*captureClient) Start(context.Context) error { return nil }
func (*captureClient) Stop(context.Context) error  { return nil }
func (c *captureClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	c.rs = rs
	return nil
}

// toOTLP converts spans with the otlptrace exporter's transform.
func toOTLP(spans []sdktrace.ReadOnlySpan) ([]*tracepb.ResourceSpans, error) {
	c := &captureClient{}
	if err := otlptrace.NewUnstarted(c).ExportSpans(context.Background(), spans); err != nil {
		return nil, fmt.Errorf("spool: transform: %w", err)
	}
	return c.rs, nil
}

// snapshot is a live span seen as ended now (for Commit).
type snapshot struct {
	sdktrace.ReadOnlySpan
	end time.Time
}

func (s snapshot) EndTime() time.Time { return s.end }

// spanKey identifies a span.
type spanKey struct {
	trace trace.TraceID
	span  trace.SpanID
}

func keyOf(sc trace.SpanContext) spanKey { return spanKey{sc.TraceID(), sc.SpanID()} }

// keysOf lists the spans of resource spans.
func keysOf(rs []*tracepb.ResourceSpans) []spanKey {
	var out []spanKey
	for _, r := range rs {
		for _, ss := range r.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				var k spanKey
				copy(k.trace[:], s.GetTraceId())
				copy(k.span[:], s.GetSpanId())
				out = append(out, k)
			}
		}
	}
	return out
}

// interrupt marks a pending record's spans as interrupted calls.
func interrupt(rs []*tracepb.ResourceSpans) {
	for _, r := range rs {
		for _, ss := range r.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				s.Attributes = append(s.Attributes, &commonpb.KeyValue{Key: AttrInterrupted,
					Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}})
				s.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: InterruptedMessage}
			}
		}
	}
}

// merge appends b's resource spans to a, joining consecutive entries with
// equal resources and scopes so that a request repeats each resource once.
// It makes new containers and never modifies b's (which may be cached and
// sent again after a failed upload).
func merge(a, b []*tracepb.ResourceSpans) []*tracepb.ResourceSpans {
	for _, r := range b {
		n := len(a)
		if n == 0 || a[n-1].GetSchemaUrl() != r.GetSchemaUrl() || !sameMessage(a[n-1].GetResource(), r.GetResource()) {
			a = append(a, &tracepb.ResourceSpans{Resource: r.GetResource(), SchemaUrl: r.GetSchemaUrl()})
			n++
		}
		last := a[n-1]
		for _, ss := range r.GetScopeSpans() {
			if m := len(last.ScopeSpans); m > 0 && last.ScopeSpans[m-1].GetSchemaUrl() == ss.GetSchemaUrl() &&
				sameMessage(last.ScopeSpans[m-1].GetScope(), ss.GetScope()) {
				last.ScopeSpans[m-1].Spans = append(last.ScopeSpans[m-1].Spans, ss.GetSpans()...)
				continue
			}
			last.ScopeSpans = append(last.ScopeSpans, &tracepb.ScopeSpans{Scope: ss.GetScope(), SchemaUrl: ss.GetSchemaUrl(),
				Spans: append([]*tracepb.Span(nil), ss.GetSpans()...)})
		}
	}
	return a
}

// sameMessage is proto.Equal, quick for one message (the encoder shares a
// resource's and a scope's message between its spans).
func sameMessage[M interface {
	comparable
	proto.Message
}](a, b M) bool {
	return a == b || proto.Equal(a, b)
}
