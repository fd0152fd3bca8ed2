package bridge_test

import (
	"context"
	"fmt"
	"log"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/bridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// Bridge after-the-fact events (open-multi-agent's onTrace JSON) into
// spans. The agent event arrives after its calls; the spans still nest.
func ExampleNew() {
	ctx := context.Background()
	mem := tracetest.NewInMemoryExporter()
	p, err := otelbridge.Setup(ctx, otelbridge.Config{Sampling: sampling.Config{Setting: sampling.MustParse("all")}, Exporter: mem})
	if err != nil {
		log.Fatal(err)
	}
	b := bridge.New(p, bridge.Config{ProviderName: "openai"}) // finds p's tool-call index
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
