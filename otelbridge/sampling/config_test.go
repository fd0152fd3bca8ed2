package sampling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigResolve: a zero field means the environment, then the
// default; a set field overrides the environment; a bad value, given or
// from the environment, is an error that names where it came from.
func TestConfigResolve(t *testing.T) {
	tests := []struct {
		name    string
		env     string // TOOLGATE_SAMPLING; "" unset
		cfg     Config
		want    Config
		wantErr string // substring; "" no error
	}{
		{"all zero", "", Config{}, Config{Setting: Default(), AncestorCapacity: DefaultAncestorCapacity}, ""},
		{"env", "deny-only", Config{}, Config{Setting: MustParse("deny-only"), AncestorCapacity: DefaultAncestorCapacity}, ""},
		{"env ratio", " RATIO:0.25 ", Config{}, Config{Setting: Setting{ModeRatio, 0.25}, AncestorCapacity: DefaultAncestorCapacity}, ""},
		{"field wins", "deny-only", Config{Setting: MustParse("all"), AncestorCapacity: 7},
			Config{Setting: MustParse("all"), AncestorCapacity: 7}, ""},
		{"negative capacity", "", Config{AncestorCapacity: -3}, Config{Setting: Default(), AncestorCapacity: DefaultAncestorCapacity}, ""},
		{"bad env", "sometimes", Config{}, Config{}, "TOOLGATE_SAMPLING"},
		{"bad env ignored under a set field", "sometimes", Config{Setting: MustParse("all")},
			Config{Setting: MustParse("all"), AncestorCapacity: DefaultAncestorCapacity}, ""},
		{"bad field", "", Config{Setting: Setting{Mode: ModeAll, AllowRatio: 0.5}}, Config{}, "ratio 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(Env, tt.env)
			got, err := tt.cfg.Resolve()
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalid)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestNewProcessorReadsEnvironment: a processor made standalone with a
// zero Config applies TOOLGATE_SAMPLING, as Setup's does.
func TestNewProcessorReadsEnvironment(t *testing.T) {
	t.Setenv(Env, "deny-only")
	tr, mem, sp := sampled(t, Setting{}, 0)
	assert.Equal(t, MustParse("deny-only"), sp.Setting())
	leaf(t.Context(), tr, "execute_tool ls", toolAttrs("ls", allowed...)...)
	leaf(t.Context(), tr, "execute_tool rm", toolAttrs("rm", denied...)...)
	assert.Equal(t, []string{"execute_tool rm"}, names(mem.GetSpans()))
}
