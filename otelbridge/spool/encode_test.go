package spool

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"
)

// genAttrs draws attributes, strings with arbitrary bytes (the model
// chooses tool arguments).
func genAttrs(t *rapid.T, label string) []attribute.KeyValue {
	var out []attribute.KeyValue
	for i := range rapid.IntRange(0, 6).Draw(t, label+"-n") {
		k := fmt.Sprintf("%s.%d.%s", label, i, rapid.StringN(0, 8, -1).Draw(t, label+"-k"))
		switch rapid.IntRange(0, 3).Draw(t, label+"-type") {
		case 0:
			out = append(out, attribute.String(k, rapid.String().Draw(t, label+"-s")))
		case 1:
			out = append(out, attribute.Int64(k, rapid.Int64().Draw(t, label+"-i")))
		case 2:
			out = append(out, attribute.Bool(k, rapid.Bool().Draw(t, label+"-b")))
		default:
			out = append(out, attribute.StringSlice(k, rapid.SliceOfN(rapid.String(), 0, 3).Draw(t, label+"-ss")))
		}
	}
	return out
}

// TestPropertyEncoderFinal: the encoder's record of a span, final or
// pending (resource and scope converted once and shared), is byte for
// byte the record of the otlptrace exporter's transform of the whole
// span, over random spans of a few resources and scopes, encoded
// concurrently; a span whose encoding fails (invalid UTF-8) fails alike
// both ways.
func TestPropertyEncoderFinal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spans := genSpans(t)
		var e encoder
		now := time.Unix(0, rapid.Int64().Draw(t, "now"))
		kinds := make([]byte, len(spans))
		for i := range kinds {
			kinds[i] = rapid.SampledFrom([]byte{kindFinal, kindPending}).Draw(t, "kind")
		}
		got := make([][]byte, len(spans))
		errs := make([]error, len(spans))
		var wg sync.WaitGroup
		for i, sp := range spans {
			wg.Go(func() { got[i], _, errs[i] = e.record(kinds[i], sp, now) })
		}
		wg.Wait()
		for i, sp := range spans {
			rs, err := toOTLP([]sdktrace.ReadOnlySpan{sp})
			require.NoError(t, err)
			want, err := encodeRecord(kinds[i], 1, now, rs)
			if err != nil {
				require.Error(t, errs[i], "span %d", i)
				continue
			}
			require.NoError(t, errs[i], "span %d", i)
			require.Equal(t, want, got[i], "span %d", i)
			dec, err := decodeSpans(got[i])
			require.NoError(t, err)
			require.True(t, proto.Equal(rs[0], dec[0]), "span %d", i)
		}
	})
}

// genSpans draws spans of a few resources (nil included) and scopes.
func genSpans(t *rapid.T) []sdktrace.ReadOnlySpan {
	var resources []*resource.Resource
	for range rapid.IntRange(1, 3).Draw(t, "resources") {
		if rapid.Bool().Draw(t, "nil-resource") {
			resources = append(resources, nil)
			continue
		}
		resources = append(resources, resource.NewWithAttributes(rapid.SampledFrom([]string{"", "https://opentelemetry.io/schemas/1.26.0"}).Draw(t, "schema"),
			genAttrs(t, "res")...))
	}
	var spans []sdktrace.ReadOnlySpan
	for i := range rapid.IntRange(1, 20).Draw(t, "spans") {
		stub := tracetest.SpanStub{
			Name: rapid.String().Draw(t, "name"),
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, byte(i)},
				SpanID: trace.SpanID{2, byte(i)}, TraceFlags: trace.FlagsSampled}),
			StartTime:            time.Unix(0, rapid.Int64Range(0, 1<<62).Draw(t, "start")),
			EndTime:              time.Unix(0, rapid.Int64Range(0, 1<<62).Draw(t, "end")),
			Attributes:           genAttrs(t, "span"),
			Resource:             rapid.SampledFrom(resources).Draw(t, "resource"),
			InstrumentationScope: instrumentation.Scope{Name: rapid.SampledFrom([]string{"a", "b", ""}).Draw(t, "scope"), Version: rapid.SampledFrom([]string{"", "1"}).Draw(t, "version")},
		}
		spans = append(spans, stub.Snapshot())
	}
	return spans
}

// TestPropertyDecoder: the drainer's decoder (which reuses the previous
// record's resource message when its encoding is the same) decodes every
// record as decodeSpans does, over random sequences of records of the
// encoder, of the plain encoding, and damaged ones.
func TestPropertyDecoder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spans := genSpans(t)
		var e encoder
		var d decoder
		now := time.Unix(0, 1)
		for i, sp := range spans {
			var rec []byte
			var err error
			if rapid.Bool().Draw(t, "encoder") {
				rec, _, err = e.final(sp, now)
			} else {
				var rs []*tracepb.ResourceSpans
				rs, err = toOTLP([]sdktrace.ReadOnlySpan{sp})
				require.NoError(t, err)
				rec, err = encodeRecord(kindFinal, 1, now, rs)
			}
			if err != nil {
				continue // invalid UTF-8: not a record
			}
			if rapid.Bool().Draw(t, "damage") && len(rec) > headerLen {
				at := rapid.IntRange(headerLen, len(rec)-1).Draw(t, "at")
				rec[at] ^= rapid.ByteRange(1, 255).Draw(t, "xor")
			}
			want, werr := decodeSpans(rec)
			got, gerr := d.decode(rec)
			if werr != nil {
				require.Error(t, gerr, "record %d", i)
				continue
			}
			require.NoError(t, gerr, "record %d", i)
			require.Len(t, got, len(want), "record %d", i)
			for j := range want {
				require.True(t, proto.Equal(want[j], got[j]), "record %d: %v != %v", i, want[j], got[j])
			}
		}
	})
}
