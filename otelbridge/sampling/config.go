package sampling

import (
	"fmt"
	"os"

	"go.opentelemetry.io/otel/trace"
)

// Env is the environment variable a zero [Config.Setting] is read from:
// the text form of a [Setting] ("all", "decisions", "deny-only",
// "ratio:R").
const Env = "TOOLGATE_SAMPLING"

// DefaultAncestorCapacity is the default number of pending "a descendant
// was kept" marks a [Processor] holds (about 40 bytes each).
const DefaultAncestorCapacity = 1 << 16

// Config configures a [Processor], standalone ([NewProcessor]) or as the
// Sampling field of otelbridge.Config. Every zero field means "not set
// here": the environment applies, then the default.
type Config struct {
	// Setting is which finished spans are exported. Zero: [Env]
	// (TOOLGATE_SAMPLING), else [Default]() ("decisions").
	Setting Setting
	// AncestorCapacity is how many ancestor marks (parents of kept spans
	// that have not ended yet; about 40 bytes each) are held at most; the
	// oldest are evicted first and counted in [Stats].AncestorsEvicted.
	// Zero or negative: [DefaultAncestorCapacity] (65,536).
	AncestorCapacity int
	// Keep, when set, keeps every span for which it returns true whatever
	// the setting, like a denial: the span's ancestors are kept too (for
	// example the calls a write-ahead spool has committed, whose records
	// must be superseded by the ended span). It is called once per ended,
	// sampled span, concurrently, and must be fast and safe for concurrent
	// use. Zero: none.
	Keep func(trace.SpanContext) bool
}

// Resolve returns cfg with its zero fields filled in: Setting from [Env]
// when set there, else [Default](); AncestorCapacity
// [DefaultAncestorCapacity]. It returns an error wrapping [ErrInvalid]
// (naming Env when the bad value came from there) when the setting is
// invalid.
func (cfg Config) Resolve() (Config, error) {
	if cfg.Setting == (Setting{}) {
		if v := os.Getenv(Env); v != "" {
			s, err := Parse(v)
			if err != nil {
				return Config{}, fmt.Errorf("sampling: %s: %w", Env, err)
			}
			cfg.Setting = s
		}
	}
	if err := cfg.Setting.Validate(); err != nil {
		return Config{}, fmt.Errorf("sampling: %w", err)
	}
	cfg.Setting = cfg.Setting.orDefault()
	if cfg.AncestorCapacity < 1 {
		cfg.AncestorCapacity = DefaultAncestorCapacity
	}
	return cfg, nil
}
