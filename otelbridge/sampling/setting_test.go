package sampling

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Setting
		wantErr bool
	}{
		{"", Setting{ModeDecisions, 1}, false},
		{"decisions", Setting{ModeDecisions, 1}, false},
		{" Deny-Only ", Setting{ModeDenyOnly, 0}, false},
		{"all", Setting{ModeAll, 1}, false},
		{"ratio:0.25", Setting{ModeRatio, 0.25}, false},
		{"ratio: 1", Setting{ModeRatio, 1}, false},
		{"ratio:0", Setting{ModeRatio, 0}, false},
		{"ratio:1.5", Setting{}, true},
		{"ratio:-0.1", Setting{}, true},
		{"ratio:NaN", Setting{}, true},
		{"ratio:", Setting{}, true},
		{"ratio", Setting{}, true},
		{"deny", Setting{}, true},
		{"sometimes", Setting{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			// The text form round-trips.
			back, err := Parse(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back)
		})
	}
}

func TestSamplingValidate(t *testing.T) {
	tests := []struct {
		s  Setting
		ok bool
	}{
		{Setting{}, true},
		{Setting{ModeAll, 1}, true},
		{Setting{ModeAll, 0.5}, false},
		{Setting{ModeDecisions, 0}, false},
		{Setting{ModeDenyOnly, 1}, false},
		{Setting{ModeRatio, math.NaN()}, false},
		{Setting{"often", 1}, false},
		{Setting{"", 0.3}, false},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		if tt.ok {
			assert.NoError(t, err, "%+v", tt.s)
		} else {
			assert.ErrorIs(t, err, ErrInvalid, "%+v", tt.s)
		}
	}
	var s Setting
	require.NoError(t, s.Set("deny-only"))
	assert.Equal(t, ModeDenyOnly, s.Mode)
	require.Error(t, s.Set("nope"))
	assert.Equal(t, ModeDenyOnly, s.Mode, "a bad value leaves the setting unchanged")
	assert.Equal(t, "decisions", Setting{}.String())
}

func TestKeepsTraceRatio(t *testing.T) {
	// Trace IDs spread evenly over the 63-bit space: the kept fraction is
	// the ratio, and the answer is a pure function of the trace ID.
	const n = 10000
	for _, r := range []float64{0, 0.1, 0.5, 1} {
		bound := ratioBound(r)
		kept := 0
		for i := range n {
			var id trace.TraceID
			binary.BigEndian.PutUint64(id[8:], uint64(i)*(math.MaxUint64/n))
			if keepsTrace(id, bound) {
				kept++
			}
			assert.Equal(t, keepsTrace(id, bound), keepsTrace(id, bound))
		}
		assert.InDelta(t, r, float64(kept)/n, 0.001, "ratio %v", r)
	}
}
