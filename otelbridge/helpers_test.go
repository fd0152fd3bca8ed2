package otelbridge

import (
	"context"
	"sort"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.33.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// Span helpers shared by this package's tests (the sampling package has its own).
// Attribute sets as the executor records them (executor/execute.go, finish.go).
func agentAttrs(name string) []attribute.KeyValue {
	return []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(name)}
}

func toolAttrs(tool string, more ...attribute.KeyValue) []attribute.KeyValue {
	return append([]attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(tool)}, more...)
}

var (
	allowed = []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String("allow"), gate.AttrSource.String("classify.bash")}
	denied  = []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String("deny"), gate.AttrReason.String("rm -rf"),
		gate.AttrSamplingPriority.Int(1), semconv.ErrorTypeKey.String(gate.ErrorTypeGateDenied)}
	rejected = []attribute.KeyValue{gate.AttrGated.Bool(false), semconv.ErrorTypeKey.String("tool_not_found")}
	optedOut = []attribute.KeyValue{gate.AttrGated.Bool(false), gate.AttrOptOut.Bool(true)}
)

// leaf starts and ends one span under ctx.
func leaf(ctx context.Context, tr trace.Tracer, name string, attrs ...attribute.KeyValue) {
	_, s := tr.Start(ctx, name, trace.WithAttributes(attrs...))
	s.End()
}

// emitRuns records three traces the way the executor and an agent loop do:
// children end before their parents.
func emitRuns(tr trace.Tracer) {
	ctx := context.Background()
	// Trace 1: planner with every kind of call and a nested helper agent.
	c1, planner := tr.Start(ctx, "invoke_agent planner", trace.WithAttributes(agentAttrs("planner")...))
	leaf(c1, tr, "chat gpt", semconv.GenAIOperationNameChat)
	leaf(c1, tr, "execute_tool read", toolAttrs("read", allowed...)...)
	leaf(c1, tr, "execute_tool rm", toolAttrs("rm", denied...)...)
	leaf(c1, tr, "execute_tool lookup", toolAttrs("lookup", rejected...)...)
	leaf(c1, tr, "execute_tool optout", toolAttrs("optout", optedOut...)...)
	c2, helper := tr.Start(c1, "invoke_agent helper", trace.WithAttributes(agentAttrs("helper")...))
	leaf(c2, tr, "execute_tool curl", toolAttrs("curl", denied...)...)
	helper.End()
	planner.End()
	// Trace 2: only allowed calls.
	c3, coder := tr.Start(ctx, "invoke_agent coder", trace.WithAttributes(agentAttrs("coder")...))
	leaf(c3, tr, "chat gpt 2", semconv.GenAIOperationNameChat)
	leaf(c3, tr, "execute_tool ls", toolAttrs("ls", allowed...)...)
	coder.End()
	// Trace 3: an HTTP handler around an agent that only chats.
	c4, root := tr.Start(ctx, "GET /ask")
	c5, x := tr.Start(c4, "invoke_agent x") // no operation name: recognised by span name
	leaf(c5, tr, "chat gpt 3", semconv.GenAIOperationNameChat)
	x.End()
	root.End()
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, 0, len(spans))
	for _, s := range spans {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}
