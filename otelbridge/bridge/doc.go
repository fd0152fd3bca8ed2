// Package bridge turns after-the-fact agent-framework trace events
// (open-multi-agent's onTrace: llm_call, tool_call, task, agent) into OTel
// spans with the events' own start and end times and the parentage
// task -> invoke_agent {agent} -> chat {model} | execute_tool {tool},
// without duplicating the execute_tool spans toolgate's executor already
// made. It is the event-bridge part of otelbridge.
//
// The pieces:
//
//   - [Bridge] and [Config] (bridge.go): [New] makes a bridge on a tracer
//     provider; [Bridge.Handle] / [Bridge.HandleJSON] emit one event's
//     span; [Bridge.AgentContext] lets live executor spans join a bridged
//     agent span.
//   - [Event] (event.go): the event, its JSON form ([ParseEvent]) and its
//     decision record (gate.Record, encoded exactly as the executor
//     encodes its own calls); [EventFromTrace] (fromexecutor.go) converts
//     the executor's per-call trace event.
//   - [IDGenerator] (idgen.go): gives a parent span the ID its children,
//     bridged earlier, already point to (events arrive children first).
//   - [ToolCallIndex] (toolcalls.go): the span processor that remembers
//     tool calls already traced, by [ToolCallKey] and [DecisionKey].
//   - Attribute keys of the bridge's own (attributes.go).
//
// otelbridge.Setup installs the ID generator and a tool-call index on its
// provider; New finds that index through the provider's ToolCalls method.
// On a provider built elsewhere, install both:
//
//	index := bridge.NewToolCallIndex(0)
//	tp := sdktrace.NewTracerProvider(
//		sdktrace.WithIDGenerator(bridge.NewIDGenerator()),
//		sdktrace.WithSpanProcessor(index),
//		sdktrace.WithBatcher(exp))
//	b := bridge.New(tp, bridge.Config{ToolCalls: index, ProviderName: "openai"})
//	for _, line := range lines {
//		if err := b.HandleJSON(ctx, line); err != nil { ... } // wraps bridge.ErrInvalidEvent
//	}
package bridge
