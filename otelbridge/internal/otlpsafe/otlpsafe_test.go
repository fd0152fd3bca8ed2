package otlpsafe_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/otelbridge/internal/otlpsafe"
)

func str(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

// request puts s in every string field of an OTLP trace request.
func request(s string) []*tracepb.ResourceSpans {
	kvs := func() []*commonpb.KeyValue {
		return []*commonpb.KeyValue{{Key: s, Value: str(s)},
			{Key: "arr", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{str(s)}}}}},
			{Key: "kv", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{{Key: s, Value: str(s)}}}}}}}
	}
	return []*tracepb.ResourceSpans{{SchemaUrl: s, Resource: &resourcepb.Resource{Attributes: kvs()},
		ScopeSpans: []*tracepb.ScopeSpans{{SchemaUrl: s, Scope: &commonpb.InstrumentationScope{Name: s, Version: s, Attributes: kvs()},
			Spans: []*tracepb.Span{{Name: s, TraceState: s, Attributes: kvs(),
				Events: []*tracepb.Span_Event{{Name: s, Attributes: kvs()}},
				Links:  []*tracepb.Span_Link{{TraceState: s, Attributes: kvs()}},
				Status: &tracepb.Status{Message: s}}}}}}}
}

// FuzzSanitize: whatever bytes every string field holds, the sanitized
// request encodes (the OTLP exporter and the spool can send it), a valid
// request is left exactly as it was, and an invalid byte is shown as \xNN.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "ok", "\xff", "a\xc3(b", "\xed\xa0\x80", "\x00\x1b[2J", "é\xe9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs := request(s)
		changed := otlpsafe.Sanitize(rs)
		assert.Equal(t, !utf8.ValidString(s), changed)
		_, err := proto.Marshal(&tracepb.TracesData{ResourceSpans: rs})
		require.NoError(t, err)
		if !changed {
			assert.True(t, proto.Equal(&tracepb.TracesData{ResourceSpans: request(s)}, &tracepb.TracesData{ResourceSpans: rs}))
		}
		if s == "\xff" {
			assert.Equal(t, `\xff`, rs[0].ScopeSpans[0].Spans[0].Name)
		}
	})
}

// TestSplitKeepsEverySpanOnce: whatever the sizes, Split's requests hold
// every span once, in order, under its resource and scope, each request
// within max unless it is one span.
func TestSplitKeepsEverySpanOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var rs []*tracepb.ResourceSpans
		type where struct{ res, scope string }
		home := map[string]where{}
		var order []string
		for ri := range rapid.IntRange(1, 3).Draw(t, "resources") {
			r := &tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "r", Value: str(fmt.Sprint(ri))}}}}
			for si := range rapid.IntRange(1, 3).Draw(t, "scopes") {
				ss := &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: fmt.Sprint(ri, "/", si)}}
				for range rapid.IntRange(0, 20).Draw(t, "spans") {
					name := fmt.Sprint(len(order))
					ss.Spans = append(ss.Spans, &tracepb.Span{Name: name,
						Attributes: []*commonpb.KeyValue{{Key: "v", Value: str(strings.Repeat("x", rapid.IntRange(0, 3000).Draw(t, "size")))}}})
					home[name] = where{fmt.Sprint(ri), ss.Scope.Name}
					order = append(order, name)
				}
				r.ScopeSpans = append(r.ScopeSpans, ss)
			}
			rs = append(rs, r)
		}
		max := rapid.IntRange(500, 20000).Draw(t, "max")
		var got []string
		for _, req := range otlpsafe.Split(rs, max) {
			n := 0
			for _, r := range req {
				for _, ss := range r.ScopeSpans {
					for _, s := range ss.Spans {
						n++
						got = append(got, s.Name)
						assert.Equal(t, home[s.Name], where{r.Resource.Attributes[0].Value.GetStringValue(), ss.Scope.Name})
					}
				}
			}
			if n > 1 {
				assert.LessOrEqual(t, proto.Size(&tracepb.TracesData{ResourceSpans: req}), max)
			}
		}
		assert.Equal(t, order, got)
	})
}
