package otelbridge_test

import (
	"context"
	"fmt"
	"log"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// Setup with the settings a deployment passes explicitly, all in one
// Config tree (the sampling and batch parts nested); everything left zero
// comes from the OTEL_* / TOOLGATE_* environment variables. Here the exporter is
// replaced by an in-memory one so the example runs without a collector.
func ExampleSetup() {
	ctx := context.Background()
	setting, err := sampling.Parse("deny-only") // e.g. from a flag; unset: TOOLGATE_SAMPLING
	if err != nil {
		log.Fatal(err)
	}
	mem := tracetest.NewInMemoryExporter()
	p, err := otelbridge.Setup(ctx, otelbridge.Config{
		Endpoint:    "127.0.0.1:4317", // unused with an Exporter of our own
		Insecure:    true,
		ServiceName: "agent-runner",
		Sampling:    sampling.Config{Setting: setting},
		Batch:       otelbridge.BatchConfig{QueueSize: 4096}, // unset: OTEL_BSP_MAX_QUEUE_SIZE, else 2048
		Exporter:    mem,
	})
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
