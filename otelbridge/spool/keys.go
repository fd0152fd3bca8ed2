package spool

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the OTLP messages scanKeys walks.
const (
	fieldTracesResourceSpans = 1 // TracesData.resource_spans
	fieldResourceScopeSpans  = 2 // ResourceSpans.scope_spans
	fieldScopeSpans          = 2 // ScopeSpans.spans
	fieldSpanTraceID         = 1 // Span.trace_id
	fieldSpanSpanID          = 2 // Span.span_id
)

// scanKeys returns the span keys of a record whose header was checked:
// keysOf(decodeSpans(rec)), read from the protobuf wire format without
// decoding the spans (Open reads every record of the log to rebuild its
// state, and a long collector outage leaves a long log). Errors wrap
// errBadRecord (a malformed encoding). As proto.Unmarshal, the last
// trace_id or span_id of a span wins.
func scanKeys(rec []byte) ([]spanKey, error) {
	var out []spanKey
	err := eachField(rec[headerLen:], fieldTracesResourceSpans, func(rs []byte) error {
		return eachField(rs, fieldResourceScopeSpans, func(ss []byte) error {
			return eachField(ss, fieldScopeSpans, func(sp []byte) error {
				var k spanKey
				for b := sp; len(b) > 0; {
					num, typ, n := protowire.ConsumeTag(b)
					if n < 0 {
						return protowire.ParseError(n)
					}
					b = b[n:]
					if typ == protowire.BytesType && (num == fieldSpanTraceID || num == fieldSpanSpanID) {
						v, m := protowire.ConsumeBytes(b)
						if m < 0 {
							return protowire.ParseError(m)
						}
						if num == fieldSpanTraceID {
							k.trace = [16]byte{}
							copy(k.trace[:], v)
						} else {
							k.span = [8]byte{}
							copy(k.span[:], v)
						}
						b = b[m:]
						continue
					}
					m := protowire.ConsumeFieldValue(num, typ, b)
					if m < 0 {
						return protowire.ParseError(m)
					}
					b = b[m:]
				}
				out = append(out, k)
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadRecord, err)
	}
	return out, nil
}

// eachField calls fn with the bytes of every length-delimited field num
// of the message msg, in order, and checks the wire format of the others.
func eachField(msg []byte, num protowire.Number, fn func([]byte) error) error {
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return protowire.ParseError(l)
		}
		msg = msg[l:]
		if n == num && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(msg)
			if m < 0 {
				return protowire.ParseError(m)
			}
			if err := fn(v); err != nil {
				return err
			}
			msg = msg[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(n, typ, msg)
		if m < 0 {
			return protowire.ParseError(m)
		}
		msg = msg[m:]
	}
	return nil
}
