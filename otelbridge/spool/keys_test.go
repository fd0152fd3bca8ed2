package spool

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"pgregory.net/rapid"
)

// checkScanKeys: wherever proto.Unmarshal decodes a record, scanKeys
// returns the same keys, in the same order (Open rebuilds the pending
// state from them).
func checkScanKeys(t require.TestingT, rec []byte) {
	rs, derr := decodeSpans(rec)
	keys, serr := scanKeys(rec)
	if derr != nil {
		return // scanKeys may accept what Unmarshal refuses (invalid UTF-8): the drainer finds it
	}
	require.NoError(t, serr)
	require.Equal(t, keysOf(rs), keys)
}

// TestPropertyScanKeys: over records of several spans (several resources
// and scopes, ids of any length as another instrumentation may send), and
// damaged ones, scanKeys agrees with keysOf(decodeSpans).
func TestPropertyScanKeys(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs, err := toOTLP(genSpans(t))
		require.NoError(t, err)
		for _, r := range rs {
			for _, ss := range r.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					if rapid.Bool().Draw(t, "odd-ids") {
						s.TraceId = rapid.SliceOfN(rapid.Byte(), 0, 20).Draw(t, "trace")
						s.SpanId = rapid.SliceOfN(rapid.Byte(), 0, 10).Draw(t, "span")
					}
				}
			}
		}
		rec, err := encodeRecord(rapid.SampledFrom([]byte{kindFinal, kindPending}).Draw(t, "kind"), 1, time.Unix(0, 1), rs)
		if err != nil {
			return
		}
		if rapid.Bool().Draw(t, "damage") && len(rec) > headerLen {
			at := rapid.IntRange(headerLen, len(rec)-1).Draw(t, "at")
			rec[at] ^= rapid.ByteRange(1, 255).Draw(t, "xor")
		}
		checkScanKeys(t, rec)
	})
}

// FuzzScanKeys: on any bytes, scanKeys never panics and agrees with
// keysOf(decodeSpans) where the latter decodes.
func FuzzScanKeys(f *testing.F) {
	rs, err := toOTLP([]sdktrace.ReadOnlySpan{})
	if err == nil {
		if rec, err := encodeRecord(kindFinal, 0, time.Unix(0, 1), append(rs, &tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{TraceId: []byte{1}, SpanId: []byte{2}}}}}})); err == nil {
			f.Add(rec[headerLen:])
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := append(make([]byte, headerLen), body...)
		_, _ = scanKeys(rec)
		checkScanKeys(t, rec)
	})
}
