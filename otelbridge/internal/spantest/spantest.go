// Package spantest holds span fixtures shared by the tests of otelbridge
// and its parts: attribute sets as the executor records them and a set of
// traces shaped like an agent's (EmitRuns).
package spantest

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.33.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// Allowed, Denied, Rejected and OptedOut are the gate attributes of an
// allowed, a denied, a rejected (tool not found) and an opted-out call.
// AgentAttrs and ToolAttrs are attribute sets as the executor records them (executor/execute.go, finish.go).
func AgentAttrs(name string) []attribute.KeyValue {
	return []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(name)}
}

func ToolAttrs(tool string, more ...attribute.KeyValue) []attribute.KeyValue {
	return append([]attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(tool)}, more...)
}

var (
	Allowed = []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String("allow"), gate.AttrSource.String("classify.bash")}
	Denied  = []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String("deny"), gate.AttrReason.String("rm -rf"),
		gate.AttrSamplingPriority.Int(1), semconv.ErrorTypeKey.String(gate.ErrorTypeGateDenied)}
	Rejected = []attribute.KeyValue{gate.AttrGated.Bool(false), semconv.ErrorTypeKey.String("tool_not_found")}
	OptedOut = []attribute.KeyValue{gate.AttrGated.Bool(false), gate.AttrOptOut.Bool(true)}
)

// Leaf starts and ends one span under ctx.
func Leaf(ctx context.Context, tr trace.Tracer, name string, attrs ...attribute.KeyValue) {
	_, s := tr.Start(ctx, name, trace.WithAttributes(attrs...))
	s.End()
}

// EmitRuns records three traces the way the executor and an agent loop do:
// children end before their parents.
func EmitRuns(tr trace.Tracer) {
	ctx := context.Background()
	// Trace 1: planner with every kind of call and a nested helper agent.
	c1, planner := tr.Start(ctx, "invoke_agent planner", trace.WithAttributes(AgentAttrs("planner")...))
	Leaf(c1, tr, "chat gpt", semconv.GenAIOperationNameChat)
	Leaf(c1, tr, "execute_tool read", ToolAttrs("read", Allowed...)...)
	Leaf(c1, tr, "execute_tool rm", ToolAttrs("rm", Denied...)...)
	Leaf(c1, tr, "execute_tool lookup", ToolAttrs("lookup", Rejected...)...)
	Leaf(c1, tr, "execute_tool optout", ToolAttrs("optout", OptedOut...)...)
	c2, helper := tr.Start(c1, "invoke_agent helper", trace.WithAttributes(AgentAttrs("helper")...))
	Leaf(c2, tr, "execute_tool curl", ToolAttrs("curl", Denied...)...)
	helper.End()
	planner.End()
	// Trace 2: only Allowed calls.
	c3, coder := tr.Start(ctx, "invoke_agent coder", trace.WithAttributes(AgentAttrs("coder")...))
	Leaf(c3, tr, "chat gpt 2", semconv.GenAIOperationNameChat)
	Leaf(c3, tr, "execute_tool ls", ToolAttrs("ls", Allowed...)...)
	coder.End()
	// Trace 3: an HTTP handler around an agent that only chats.
	c4, root := tr.Start(ctx, "GET /ask")
	c5, x := tr.Start(c4, "invoke_agent x") // no operation name: recognised by span name
	Leaf(c5, tr, "chat gpt 3", semconv.GenAIOperationNameChat)
	x.End()
	root.End()
}
