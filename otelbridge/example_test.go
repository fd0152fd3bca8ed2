package otelbridge_test

import (
	"context"
	"fmt"
	"log"
	"sort"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
)

// Setup with the settings a deployment passes explicitly; everything left
// zero comes from the OTEL_* environment variables. Here the exporter is
// replaced by an in-memory one so the example runs without a collector.
func ExampleSetup() {
	ctx := context.Background()
	sampling, err := otelbridge.ParseSampling("deny-only") // e.g. from a flag or TOOLGATE_SAMPLING
	if err != nil {
		log.Fatal(err)
	}
	mem := tracetest.NewInMemoryExporter()
	p, err := otelbridge.Setup(ctx, otelbridge.Config{
		Endpoint:    "127.0.0.1:4317", // unused with WithSpanExporter
		Insecure:    true,
		ServiceName: "agent-runner",
		Sampling:    sampling,
	}, otelbridge.WithSpanExporter(mem))
	if err != nil {
		log.Fatal(err)
	}
	tr := p.Tracer("example")
	actx, agent := tr.Start(ctx, "invoke_agent coder", trace.WithAttributes(semconv.GenAIOperationNameInvokeAgent))
	for _, action := range []string{"allow", "deny", "allow"} {
		_, call := tr.Start(actx, "execute_tool bash "+action, trace.WithAttributes(
			semconv.GenAIOperationNameExecuteTool, gate.AttrGated.Bool(true), gate.AttrAction.String(action)))
		call.End()
	}
	agent.End()
	if err := p.ForceFlush(ctx); err != nil {
		log.Fatal(err)
	}
	for _, s := range mem.GetSpans() {
		fmt.Println(s.Name)
	}
	st := p.Stats()
	fmt.Printf("kept %d of %d, lost %d\n", st.Sampling.Kept, st.Sampling.Ended, st.Lost())
	_ = p.Shutdown(ctx)
	// Output:
	// execute_tool bash deny
	// invoke_agent coder
	// kept 2 of 4, lost 0
}

// A filtering span processor in front of any other processor: keep only
// denied calls and the agent spans above them, whatever exporter follows.
func ExampleNewSamplingProcessor() {
	mem := tracetest.NewInMemoryExporter()
	sp, err := otelbridge.NewSamplingProcessor(sdktrace.NewSimpleSpanProcessor(mem), otelbridge.MustParseSampling("deny-only"))
	if err != nil {
		log.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp))
	tr := tp.Tracer("example")

	ctx, agent := tr.Start(context.Background(), "invoke_agent ops",
		trace.WithAttributes(semconv.GenAIOperationNameInvokeAgent))
	_, chat := tr.Start(ctx, "chat model")
	chat.End()
	_, ok := tr.Start(ctx, "execute_tool ls", trace.WithAttributes(gate.AttrGated.Bool(true), gate.AttrAction.String("allow")))
	ok.End()
	_, no := tr.Start(ctx, "execute_tool rm", trace.WithAttributes(gate.AttrGated.Bool(true), gate.AttrAction.String("deny")))
	no.End()
	agent.End() // ends last: it learns that a call under it was denied

	var names []string
	for _, s := range mem.GetSpans() {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	fmt.Println(names)
	fmt.Printf("%+v\n", sp.Stats())
	// Output:
	// [execute_tool rm invoke_agent ops]
	// {Ended:4 Kept:2 Filtered:2 AncestorsPending:0 AncestorsEvicted:0}
}

// Bridge after-the-fact events (open-multi-agent's onTrace JSON) into
// spans. The agent event arrives after its calls; the spans still nest.
func ExampleBridge() {
	ctx := context.Background()
	mem := tracetest.NewInMemoryExporter()
	p, err := otelbridge.Setup(ctx, otelbridge.Config{Sampling: otelbridge.MustParseSampling("all")},
		otelbridge.WithSpanExporter(mem))
	if err != nil {
		log.Fatal(err)
	}
	b := otelbridge.NewBridge(p, otelbridge.WithProviderName("openai"))
	for _, line := range []string{
		`{"runId":"r1","type":"llm_call","agent":"coder","model":"gpt-4o","turn":1,"startMs":1764000000000,"endMs":1764000000800,"tokens":{"input_tokens":900,"output_tokens":40}}`,
		`{"runId":"r1","type":"tool_call","agent":"coder","tool":"bash","toolCallId":"call_1","startMs":1764000000810,"endMs":1764000000812,"isError":true,"gated":true,"gateAction":"deny","gateReason":"sudo"}`,
		`{"runId":"r1","type":"agent","agent":"coder","turns":1,"toolCalls":1,"startMs":1764000000000,"endMs":1764000000900}`,
	} {
		if err := b.HandleJSON(ctx, []byte(line)); err != nil {
			log.Fatal(err)
		}
	}
	if err := p.ForceFlush(ctx); err != nil {
		log.Fatal(err)
	}
	spans := mem.GetSpans()
	name := map[trace.SpanID]string{}
	for _, s := range spans {
		name[s.SpanContext.SpanID()] = s.Name
	}
	for _, s := range spans {
		fmt.Printf("%-22s parent=%q %v\n", s.Name, name[s.Parent.SpanID()], s.EndTime.Sub(s.StartTime))
	}
	_ = p.Shutdown(ctx)
	// Output:
	// chat gpt-4o            parent="invoke_agent coder" 800ms
	// execute_tool bash      parent="invoke_agent coder" 2ms
	// invoke_agent coder     parent="" 900ms
}
