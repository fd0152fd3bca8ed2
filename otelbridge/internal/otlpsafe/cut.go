package otlpsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// AttrCutBytes (int) on an exported span: how many bytes of its attribute
// values were cut to keep it deliverable (Fit).
const AttrCutBytes = "toolgate.export.cut_bytes"

// cutFloor: values up to this size are kept whole.
const cutFloor = 4 << 10

// Fit cuts the largest string attribute values of the spans in td (span,
// event and link attributes, array and list elements included; never
// gate.* keys, never values up to 4 KiB) until td's encoding is at most
// max bytes or nothing more can be cut. Each cut value keeps its head and
// tail around "…[N bytes cut for export]…"; each cut span is marked with
// AttrCutBytes.
func Fit(td *tracepb.TracesData, max int) {
	if proto.Size(td) <= max {
		return
	}
	for _, limit := range []int{64 << 10, cutFloor} {
		for _, r := range td.GetResourceSpans() {
			for _, ss := range r.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					cut := cutAttrs(s.Attributes, limit)
					for _, e := range s.GetEvents() {
						cut += cutAttrs(e.Attributes, limit)
					}
					for _, l := range s.GetLinks() {
						cut += cutAttrs(l.Attributes, limit)
					}
					if cut > 0 {
						markCut(s, cut)
					}
				}
			}
		}
		if proto.Size(td) <= max {
			return
		}
	}
}

// cutAttrs cuts the string values of kvs longer than limit; it returns
// the bytes removed.
func cutAttrs(kvs []*commonpb.KeyValue, limit int) int64 {
	var cut int64
	for _, kv := range kvs {
		if strings.HasPrefix(kv.GetKey(), "gate.") {
			continue
		}
		cut += cutValue(kv.GetValue(), limit)
	}
	return cut
}

func cutValue(v *commonpb.AnyValue, limit int) int64 {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		s, n := cutString(x.StringValue, limit)
		x.StringValue = s
		return n
	case *commonpb.AnyValue_BytesValue:
		if len(x.BytesValue) > limit {
			n := int64(len(x.BytesValue) - limit)
			x.BytesValue = x.BytesValue[:limit]
			return n
		}
	case *commonpb.AnyValue_ArrayValue:
		var n int64
		for _, e := range x.ArrayValue.GetValues() {
			n += cutValue(e, limit)
		}
		return n
	case *commonpb.AnyValue_KvlistValue:
		var n int64
		for _, e := range x.KvlistValue.GetValues() {
			n += cutValue(e.GetValue(), limit)
		}
		return n
	}
	return 0
}

// cutString keeps s's head and tail (limit bytes in all, on rune
// boundaries) around a marker; it returns the bytes removed.
func cutString(s string, limit int) (string, int64) {
	if len(s) <= limit {
		return s, 0
	}
	head, tail := limit/2, len(s)-limit/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	n := int64(tail - head)
	return s[:head] + "…[" + strconv.FormatInt(n, 10) + " bytes cut for export]…" + s[tail:], n
}

func markCut(s *tracepb.Span, n int64) {
	for _, kv := range s.Attributes {
		if kv.GetKey() == AttrCutBytes {
			kv.Value = &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: kv.GetValue().GetIntValue() + n}}
			return
		}
	}
	s.Attributes = append(s.Attributes, &commonpb.KeyValue{Key: AttrCutBytes,
		Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}})
}
