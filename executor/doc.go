// Package executor is the library agents embed to run tool calls through
// one chokepoint: registry, per-agent reachability, JSON-Schema validation
// (github.com/santhosh-tekuri/jsonschema/v6, schemas compiled at
// registration), the gate, execution, output validation and truncation —
// one ToolResult per call, never a panic — each call recorded as an
// OpenTelemetry span and a ToolCallTrace event.
//
// Usage:
//
//	reg, _ := executor.NewRegistry(executor.Tool{
//		Name:        "bash",
//		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
//		Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) { ... },
//	})
//	ex, _ := executor.New(reg,
//		executor.WithGates(orgPolicy),                  // run for every agent
//		executor.WithApprover(gate.NewTerminalApprover()),
//		executor.WithGateTimeout(2*time.Second),
//		executor.OnTrace(func(ctx context.Context, ev executor.ToolCallTrace) error { ... }),
//	)
//	coder, _ := ex.Agent("coder",
//		executor.AgentPresets(executor.PresetAll),      // or AgentAllow("bash", ...)
//		executor.AgentDeny("deploy"),
//		executor.AgentGates(gate.Named("bash-risk", classifierGate)))
//	run := coder.Run("run-42", executor.WithTask("task-1"))
//	res := run.Execute(ctx, executor.ToolCall{ID: "call_1", Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)})
//	results := run.ExecuteBatch(ctx, calls) // one result per call, in order
//	// send res.Content with res.IsError back to the model as the tool result
//
// Order of checks for one call: context and run state; registry lookup
// (ErrUnknownTool); reachability (ErrNotReachable — an unreachable tool
// never reaches the gate); input validation (ErrInvalidInput: a JSON
// object matching the schema, valid UTF-8, no duplicate keys — so the gate
// sees exactly what any JSON parser in the tool will see); the gate
// (executor-level gates, then agent-level, as one gate.Chain; an ask goes
// to the Approver unless a run grant covers the exact command; a rewrite
// is validated against the schema again and an invalid one denies); a
// second cancellation check; the tool (errors and panics become error
// results); output-schema validation; truncation to the tool's maximum.
//
// A denied call is an error result (ErrDenied, ErrorType "gate_denied")
// whose Content names the tool, the policy and the reason and tells the
// model not to retry; GateInfo carries the structured decision. With
// WithAbortOnDeny a denial also aborts the run.
//
// Span: "execute_tool {gen_ai.tool.name}" (just "execute_tool" for a name
// that is not registered), SpanKind internal, with gen_ai.operation.name
// = execute_tool, gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type,
// gen_ai.agent.name, gen_ai.conversation.id (the run ID) and the local keys
// toolgate.run.id and toolgate.task.id (OTel semantic conventions v1.41.0
// for the gen_ai keys); on gated calls the gate.* keys of gate/attributes.go
// (gate.gated, gate.action, gate.source, gate.reason, gate.error,
// gate.approval, gate.approver, gate.risk.level, gate.opt_out,
// gate.duration_ns); error.type and status Error on error results;
// sampling.priority=1 on denials; gen_ai.tool.call.arguments and
// gen_ai.tool.call.result only with WithRecordContent (redacted and
// size-limited, like gate reasons). Metrics: toolgate.gate.decisions and
// toolgate.gate.duration. The executor uses the OTel API only.
//
// Cost: BenchmarkRatios reports a call's cost in units of one bare
// recording span of the OTel SDK, split into the span with the attributes
// above, jsonschema's validation and the executor's own work; the input is
// decoded with the JSON v2 decoder (github.com/go-json-experiment/json),
// whose defaults reject duplicate keys and invalid UTF-8, and
// TestExecuteAllocations bounds the allocations the executor adds to those
// of the SDK and the two libraries.
package executor
