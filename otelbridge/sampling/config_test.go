package sampling

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
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

// TestConfigResolveProperty: for any environment value and any setting,
// Resolve gives the set field when it is set (whatever the environment
// holds), else what Parse makes of the environment (the default when it
// is empty), else an error wrapping ErrInvalid that names the variable;
// the result is never the zero setting and always valid.
func TestConfigResolveProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		env := rapid.OneOf(
			rapid.SampledFrom([]string{"", "all", "decisions", "deny-only", " Deny-Only ", "ratio:0", "ratio:0.5", "ratio:1",
				"ratio:2", "ratio:NaN", "ratio:", "deny", "ALL"}),
			rapid.String(),
		).Draw(rt, "env")
		env = strings.ReplaceAll(env, "\x00", "") // no NUL in an environment variable
		set := rapid.Bool().Draw(rt, "set")
		var cfg Config
		if set {
			cfg.Setting = rapid.SampledFrom([]Setting{MustParse("all"), MustParse("decisions"), MustParse("deny-only"),
				{ModeRatio, rapid.Float64Range(0, 1).Draw(rt, "ratio")}}).Draw(rt, "setting")
		}
		cfg.AncestorCapacity = rapid.IntRange(-2, 1<<20).Draw(rt, "capacity")
		t.Setenv(Env, env)
		got, err := cfg.Resolve()
		want, perr := Parse(env)
		switch {
		case set:
			require.NoError(rt, err)
			assert.Equal(rt, cfg.Setting, got.Setting)
		case perr != nil:
			require.ErrorIs(rt, err, ErrInvalid)
			assert.Contains(rt, err.Error(), Env)
			return
		default:
			require.NoError(rt, err)
			assert.Equal(rt, want, got.Setting)
		}
		assert.NotEqual(rt, Setting{}, got.Setting)
		require.NoError(rt, got.Setting.Validate())
		if cfg.AncestorCapacity < 1 {
			assert.Equal(rt, DefaultAncestorCapacity, got.AncestorCapacity)
		} else {
			assert.Equal(rt, cfg.AncestorCapacity, got.AncestorCapacity)
		}
	})
}
