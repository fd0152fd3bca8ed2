package sampling

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// Mode is a sampling mode: which finished spans the [Processor]
// forwards to the exporter.
type Mode string

// Sampling modes. A "decision span" is a span with gate.gated = true or
// gate.action set (package gate) — the execute_tool span of a gated call,
// live or bridged — or with gate.opt_out = true (a call that ran without the
// executor's gates: the audit shows the bypass). It is denied when
// gate.action = "deny" or sampling.priority > 0; otherwise allowed. Calls
// the executor refused before any gate (unknown tool, unreachable, invalid
// input: gate.stage registry, reachability or input) carry gate.action =
// "deny" and sampling.priority = 1 with gate.gated = false: denied decision
// spans, kept in every mode.
const (
	// ModeAll forwards every span.
	ModeAll Mode = "all"
	// ModeDecisions forwards every decision span (allow and deny), every
	// invoke_agent / invoke_workflow span, and every ancestor of a
	// forwarded span that ends after it: the audit log. This is the default.
	ModeDecisions Mode = "decisions"
	// ModeDenyOnly forwards denied decision spans and their ancestors
	// (the invoke_agent span that made the call, and its parents) when
	// they end after the denial.
	ModeDenyOnly Mode = "deny-only"
	// ModeRatio forwards every denied decision span, allowed decision spans
	// of a fraction of traces (by trace ID, like sdktrace.TraceIDRatioBased),
	// and the ancestors of forwarded spans.
	ModeRatio Mode = "ratio"
)

// Default returns the default setting: [ModeDecisions].
func Default() Setting { return Setting{Mode: ModeDecisions, AllowRatio: 1} }

// ErrInvalid is wrapped by the errors of [Parse], [Setting.Validate],
// [Config.Resolve] and [NewProcessor] for an invalid setting.
var ErrInvalid = errors.New("invalid sampling setting")

// Setting is the one sampling setting. Its text form is "all",
// "decisions", "deny-only" or "ratio:R" with R in [0, 1], the fraction of
// traces whose allowed calls are kept ("ratio:1" keeps every decision like
// "decisions" but keeps agent spans only as ancestors of kept calls;
// "ratio:0" is "deny-only"). The zero value means [Default]().
type Setting struct {
	Mode Mode
	// AllowRatio is the fraction of traces, in [0, 1], whose allowed
	// decision spans are kept. It is 1 for ModeAll and ModeDecisions and 0
	// for ModeDenyOnly; only ModeRatio takes other values.
	AllowRatio float64
}

// Parse parses the text form described at [Setting]. Surrounding
// space is ignored and mode names are case-insensitive; "" gives
// [Default](). Errors wrap [ErrInvalid].
func Parse(s string) (Setting, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch Mode(s) {
	case "":
		return Default(), nil
	case ModeAll:
		return Setting{Mode: ModeAll, AllowRatio: 1}, nil
	case ModeDecisions:
		return Default(), nil
	case ModeDenyOnly:
		return Setting{Mode: ModeDenyOnly}, nil
	}
	if r, ok := strings.CutPrefix(s, string(ModeRatio)+":"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil {
			return Setting{}, fmt.Errorf("%w: ratio %q: %w", ErrInvalid, r, err)
		}
		out := Setting{Mode: ModeRatio, AllowRatio: f}
		return out, out.Validate()
	}
	return Setting{}, fmt.Errorf("%w: %q (want all, decisions, deny-only or ratio:R with 0 <= R <= 1)", ErrInvalid, s)
}

// MustParse is Parse for constants; it panics on error.
func MustParse(s string) Setting {
	out, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return out
}

// Validate reports whether s is a known mode with a ratio that fits it.
func (s Setting) Validate() error {
	switch s.Mode {
	case "":
		if s.AllowRatio != 0 {
			return fmt.Errorf("%w: ratio %v without a mode", ErrInvalid, s.AllowRatio)
		}
	case ModeAll, ModeDecisions:
		if s.AllowRatio != 1 {
			return fmt.Errorf("%w: mode %s keeps every allowed call (ratio 1, got %v)", ErrInvalid, s.Mode, s.AllowRatio)
		}
	case ModeDenyOnly:
		if s.AllowRatio != 0 {
			return fmt.Errorf("%w: mode deny-only keeps no allowed call (ratio 0, got %v)", ErrInvalid, s.AllowRatio)
		}
	case ModeRatio:
		// The negated form also rejects NaN.
		if !(s.AllowRatio >= 0 && s.AllowRatio <= 1) {
			return fmt.Errorf("%w: ratio %v out of [0, 1]", ErrInvalid, s.AllowRatio)
		}
	default:
		return fmt.Errorf("%w: unknown mode %q", ErrInvalid, s.Mode)
	}
	return nil
}

// orDefault returns Default() for the zero value.
func (s Setting) orDefault() Setting {
	if s.Mode == "" {
		return Default()
	}
	return s
}

// String returns the text form Parse accepts.
func (s Setting) String() string {
	s = s.orDefault()
	if s.Mode == ModeRatio {
		return string(ModeRatio) + ":" + strconv.FormatFloat(s.AllowRatio, 'g', -1, 64)
	}
	return string(s.Mode)
}

// MarshalText implements encoding.TextMarshaler.
func (s Setting) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with Parse.
func (s *Setting) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Set implements flag.Value (and spf13/pflag.Value) with Parse.
func (s *Setting) Set(v string) error { return s.UnmarshalText([]byte(v)) }

// Type implements spf13/pflag.Value.
func (*Setting) Type() string { return "sampling" }

// ratioBound converts a ratio into the 63-bit bound used by keepsTrace.
func ratioBound(r float64) uint64 {
	switch {
	case r >= 1:
		return 1 << 63
	case r <= 0:
		return 0
	}
	return uint64(r * (1 << 63))
}

// keepsTrace is the trace-ID ratio test of sdktrace.TraceIDRatioBased: the
// low 8 bytes of the trace ID, shifted right by one, below the bound. All
// allowed calls of one trace get the same answer, in every process.
func keepsTrace(id trace.TraceID, bound uint64) bool {
	if bound >= 1<<63 {
		return true
	}
	return binary.BigEndian.Uint64(id[8:16])>>1 < bound
}
