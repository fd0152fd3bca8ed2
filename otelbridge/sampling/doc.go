// Package sampling decides which finished spans of toolgate's trace
// pipeline are exported, by the gate decision they record. It is the
// sampling part of otelbridge (otelbridge.Setup installs it; it works in
// front of any span processor too).
//
// The pieces:
//
//   - [Setting] (setting.go): the one sampling setting — a [Mode] ("all",
//     "decisions", "deny-only", "ratio:R") and the fraction of traces
//     whose allowed calls are kept — with its text form ([Parse],
//     [MustParse], flag.Value), [Default] and [ErrInvalid].
//   - [Config] (config.go): the processor's one config struct, nested as
//     otelbridge.Config.Sampling or given to [NewProcessor]; zero fields
//     mean the environment ([Env], TOOLGATE_SAMPLING), then the defaults.
//   - [Processor] (processor.go): an sdktrace.SpanProcessor that applies
//     the setting when a span ends — when the gate's decision is known —
//     keeps the ancestors of kept spans, and counts what it kept and
//     filtered ([Stats]). Filtered spans are dropped on purpose, not lost.
//
// Typical use, standalone:
//
//	sp, err := sampling.NewProcessor(sdktrace.NewBatchSpanProcessor(exp),
//		sampling.Config{Setting: sampling.MustParse("deny-only")})
//	if err != nil { ... } // wraps sampling.ErrInvalid (e.g. a bad TOOLGATE_SAMPLING)
//	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp))
//
// See docs/sampling.md for which mode to use where.
package sampling
