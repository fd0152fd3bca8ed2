package executor_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// discard is a span exporter that drops spans: the benchmarks measure a
// recording span's cost, not an exporter's.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

func benchProvider() *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSyncer(discard{}))
}

var benchInput = json.RawMessage(`{"command":"ls -la /tmp"}`)

func benchTool() executor.Tool {
	return executor.Tool{
		Name: "bash", InputSchema: json.RawMessage(bashSchema),
		Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
			return executor.Text("ok"), nil
		},
	}
}

// BenchmarkDirect calls the tool function directly: the baseline.
func BenchmarkDirect(b *testing.B) {
	t := benchTool()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := t.Execute(ctx, benchInput); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareSpan is one recording span with no attributes: the unit the
// executor's overhead is measured in.
func BenchmarkBareSpan(b *testing.B) {
	tr := benchProvider().Tracer("bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, s := tr.Start(ctx, "execute_tool bash")
		s.End()
	}
}

// BenchmarkExecutor runs the call through the executor with a recording
// span and no gate, one allow gate, a chain of three allow gates, or one
// scoped allow gate.
func BenchmarkExecutor(b *testing.B) {
	allow := func(name string) gate.Gate {
		return gate.Named(name, gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
			return gate.Decision{Action: gate.ActionAllow}, nil
		}))
	}
	cases := []struct {
		name  string
		gates []gate.Gate
	}{
		{"NoGate", nil},
		{"AllowGate", []gate.Gate{allow("a")}},
		{"Chain3", []gate.Gate{allow("a"), allow("b"), allow("c")}},
		// Scopes are resolved once per tool and agent: a call pays one
		// cache lookup.
		{"ScopedGate", []gate.Gate{gate.Scoped(allow("a"), gate.Scope{Tools: []string{"bash"}})}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			reg, err := executor.NewRegistry(benchTool())
			if err != nil {
				b.Fatal(err)
			}
			ex, err := executor.New(reg, executor.WithTracerProvider(benchProvider()), executor.WithGates(tc.gates...))
			if err != nil {
				b.Fatal(err)
			}
			a, err := ex.Agent("bench", executor.AgentAllow("bash"))
			if err != nil {
				b.Fatal(err)
			}
			run := a.Run("run-1", executor.WithTask("task-1"))
			c := executor.ToolCall{ID: "call_1", Name: "bash", Input: benchInput}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if res := run.Execute(ctx, c); res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}

// BenchmarkSpanWithCallAttributes is one recording span carrying the same
// 12 attributes the executor records on an allowed call: the telemetry
// part of the executor's cost, which the attribute contract fixes.
func BenchmarkSpanWithCallAttributes(b *testing.B) {
	tr := benchProvider().Tracer("bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, s := tr.Start(ctx, "execute_tool bash", trace.WithSpanKind(trace.SpanKindInternal))
		s.SetAttributes(
			semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName("bash"), semconv.GenAIToolCallID("call_1"),
			semconv.GenAIToolType("function"), semconv.GenAIAgentName("bench"), gate.AttrGated.Bool(true),
			semconv.GenAIConversationID("run-1"), gate.AttrRunID.String("run-1"), gate.AttrTaskID.String("task-1"),
			gate.AttrAction.String("allow"), gate.AttrSource.String("a"), gate.AttrDuration.Int64(120))
		s.End()
	}
}

// BenchmarkDecodeAndValidate is the input handling every call needs, done
// the textbook way: encoding/json into a map and jsonschema/v6 validation of
// the same schema (the executor decodes with the JSON v2 decoder, which
// also rejects duplicate keys and invalid UTF-8; see BenchmarkValidate for
// the schema library's part alone).
func BenchmarkDecodeAndValidate(b *testing.B) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(bashSchema))
	if err != nil {
		b.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("urn:bench", doc); err != nil {
		b.Fatal(err)
	}
	s := c.MustCompile("urn:bench")
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(benchInput, &m); err != nil {
			b.Fatal(err)
		}
		if err := s.Validate(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate is jsonschema/v6 validation of the decoded input alone:
// the schema library's fixed part of every call.
func BenchmarkValidate(b *testing.B) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(bashSchema))
	if err != nil {
		b.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("urn:bench", doc); err != nil {
		b.Fatal(err)
	}
	s := c.MustCompile("urn:bench")
	var m map[string]any
	if err := json.Unmarshal(benchInput, &m); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRatios interleaves every variant in one loop, so that machine
// load affects them alike, and reports the goal's ratios in units of one
// bare recording span:
//
//   - nogate/span, allow/span, chain3/span: the executor's added cost over
//     calling the tool directly (the ratio);
//   - allow-attr/span: the added cost over calling the tool directly plus
//     the span the attribute contract requires (a recording span with the
//     same 12 attributes) — what the executor adds beyond its own span;
//   - logic/span: that, minus jsonschema's validation of the decoded input
//     (the part neither the span contract nor the schema library fixes:
//     decoding, the gate machinery, bookkeeping).
//
// attrspan/span and validate/span are those two components on their own.
func BenchmarkRatios(b *testing.B) {
	tp := benchProvider()
	tr := tp.Tracer("bench")
	allow := func(name string) gate.Gate {
		return gate.Named(name, gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
			return gate.Decision{Action: gate.ActionAllow}, nil
		}))
	}
	mkRun := func(gates ...gate.Gate) *executor.Run {
		reg, err := executor.NewRegistry(benchTool())
		if err != nil {
			b.Fatal(err)
		}
		ex, err := executor.New(reg, executor.WithTracerProvider(tp), executor.WithGates(gates...))
		if err != nil {
			b.Fatal(err)
		}
		a, err := ex.Agent("bench", executor.AgentAllow("bash"))
		if err != nil {
			b.Fatal(err)
		}
		return a.Run("run-1", executor.WithTask("task-1"))
	}
	noGate, oneGate, chain3 := mkRun(), mkRun(allow("a")), mkRun(allow("a"), allow("b"), allow("c"))
	tool := benchTool()
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(bashSchema))
	c := jsonschema.NewCompiler()
	_ = c.AddResource("urn:bench", doc)
	schema := c.MustCompile("urn:bench")
	var decoded map[string]any
	if err := json.Unmarshal(benchInput, &decoded); err != nil {
		b.Fatal(err)
	}
	call := executor.ToolCall{ID: "call_1", Name: "bash", Input: benchInput}
	ctx := context.Background()
	// Per-iteration samples; medians resist the outliers (GC, preemption)
	// that dominate sums on a loaded machine.
	var samples [7][]time.Duration
	for b.Loop() {
		t0 := time.Now()
		_, _ = tool.Execute(ctx, benchInput)
		t1 := time.Now()
		_, s := tr.Start(ctx, "execute_tool bash")
		s.End()
		t2 := time.Now()
		_, s = tr.Start(ctx, "execute_tool bash", trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
			semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName("bash"), semconv.GenAIToolCallID("call_1")))
		s.SetAttributes(semconv.GenAIToolType("function"), semconv.GenAIAgentName("bench"), gate.AttrGated.Bool(true),
			semconv.GenAIConversationID("run-1"), gate.AttrRunID.String("run-1"), gate.AttrTaskID.String("task-1"),
			gate.AttrAction.String("allow"), gate.AttrSource.String("a"), gate.AttrDuration.Int64(120))
		s.End()
		t3 := time.Now()
		_ = schema.Validate(decoded)
		t4 := time.Now()
		noGate.Execute(ctx, call)
		t5 := time.Now()
		oneGate.Execute(ctx, call)
		t6 := time.Now()
		chain3.Execute(ctx, call)
		t7 := time.Now()
		for i, d := range [7]time.Duration{t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3), t5.Sub(t4), t6.Sub(t5), t7.Sub(t6)} {
			samples[i] = append(samples[i], d)
		}
	}
	med := func(i int) float64 {
		s := samples[i]
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds())
	}
	direct, span, attrs, validate, no, allowed, chained := med(0), med(1), med(2), med(3), med(4), med(5), med(6)
	b.ReportMetric(direct, "direct-ns")
	b.ReportMetric(span, "span-ns")
	b.ReportMetric(allowed, "allow-ns")
	b.ReportMetric((no-direct)/span, "nogate/span")
	b.ReportMetric((allowed-direct)/span, "allow/span")
	b.ReportMetric((chained-direct)/span, "chain3/span")
	b.ReportMetric((allowed-direct-attrs)/span, "allow-attr/span")
	b.ReportMetric(attrs/span, "attrspan/span")
	b.ReportMetric(validate/span, "validate/span")
	b.ReportMetric((allowed-direct-attrs-validate)/span, "logic/span")
	b.ReportMetric(0, "ns/op")
}
