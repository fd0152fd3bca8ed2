package sampling_test

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
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// A filtering span processor, standalone, in front of any other processor: keep only
// denied calls and the agent spans above them, whatever exporter follows.
func ExampleNewProcessor() {
	mem := tracetest.NewInMemoryExporter()
	sp, err := sampling.NewProcessor(sdktrace.NewSimpleSpanProcessor(mem), sampling.Config{Setting: sampling.MustParse("deny-only")})
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
