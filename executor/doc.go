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
//		executor.WithApprover(approve.NewTerminal()),
//		executor.WithGateTimeout(2*time.Second),
//		executor.WithOnTrace(func(ctx context.Context, ev executor.ToolCallTrace) error { ... }),
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
// Run span: a run is one trace. The run's first call opens the GenAI
// agent span "invoke_agent {gen_ai.agent.name}" (gen_ai.operation.name =
// invoke_agent, gen_ai.agent.name, gen_ai.conversation.id = the run ID,
// toolgate.run.id, toolgate.task.id; SpanKind internal) under the span
// its context carries, if any; every execute_tool span of the run is its
// child, and Run.End ends it (idempotent; calls after End stay children
// of the ended span; when End came before any call, the first call after
// it starts the run span and ends it at once, so the run is still one
// trace). A call whose context carries another span of the
// run's trace keeps that span as its parent; one whose context carries a
// span of another trace keeps that parent and links to the run span.
// WithRunSpan(false) turns it off (when you start invoke_agent yourself);
// Run.Context gives your own spans the run span as their parent.
//
// Verifiable chain: each Run value (with its Task views) chains its
// decisions (gate.Link). Every call the audit store keeps as a decision
// (gate.Record.Stored: gated, refused before the gate, opted out; each
// grouped-refusals span too) takes the run's next position when its span
// ends (under WithWriteAhead, a call that will run when it is committed,
// before its tool runs), under the run's lock, and records gate.chain.id, gate.chain.seq,
// gate.chain.prev and gate.chain.hash (SHA-256 over the previous hash and
// the decision as the store will hold it, gate.StoredDecision: the
// recorded arguments included, the tool's outcome not); the
// result's Gate.Chain carries the same link. Run.End records the chain's
// length and head on the run span (gate.chain.length, gate.chain.head).
// Spans that do not record (sampled out at their start) take no position.
// WithChainKey keys the hashes (HMAC-SHA256), so that a writer of the
// audit store cannot recompute them. Cost per chained call: one
// allocation (the hash string; one more when the span carries
// gate.verdicts, and crypto/hmac's own with a key) and two SHA-256
// computations, about 2 bare recording spans (BenchmarkChainRatio); see
// docs/durability.md for what the chain proves.
//
// Order of checks for one call: context (gate.stage cancelled) and run
// state (gate.stage run: aborted); registry lookup
// (ErrUnknownTool); reachability (ErrNotReachable — an unreachable tool
// never reaches the gate); input validation (ErrInvalidInput: a JSON
// object matching the schema that JSON parsers cannot read differently,
// see below — so the gate sees exactly what any JSON parser in the tool
// will see); the gates
// (executor-level, then agent-level, as one gate.Chain) whose scope holds
// the registered tool (see below); a second
// cancellation check; with WithWriteAhead (strict mode) the decision
// committed to the write-ahead log, a failure denying the call
// (audit_unavailable); the tool (errors and panics become error results);
// output-schema validation; truncation to the tool's maximum.
//
// Gate scopes: a gate judges every tool unless it has a gate.Scope
// (gate.Scoped, gate.Scoper; the classify gates judge the tools whose
// schema has their field). Which gates judge a call is resolved from the
// registered tool the call names — its name, annotations and input schema,
// once per registered tool and agent — never from the call's input, so no
// spelling, input or ordering lets a call skip a gate whose scope holds
// the tool; a call no gate's scope holds runs ungated (gate.gated=false;
// with WithRequireGated it is denied, and Agent refuses reachable tools
// no gate applies to), and gate.verdicts lists exactly the gates that judged. A gate.Chain
// given to WithGates or AgentGates whose members are scoped is run as
// its members, each with its scope. New and Agent
// refuse a scoped gate that selects no registered tool, names a tool
// registered only in another spelling, or selects a tool whose schema
// does not declare the field the gate needs with its type (ErrGateScope);
// Register
// after New does not check (such calls are denied by the gate, fail
// closed), so register tools first.
//
// Input that JSON parsers may read differently is invalid input, refused
// before any gate runs, for the model's input and every rewrite alike:
//   - invalid UTF-8 and duplicate keys, after unescaping, at any depth
//     (RFC 8259 §8.1 and §4; I-JSON, RFC 7493 §2.1 and §2.3);
//   - two keys of one object equal under Unicode simple case folding
//     (strings.EqualFold: "command" and "Command", "kind" and "\u212aind"
//     with the Kelvin sign, "stack" and "\u017ftack" with the long s). Go's
//     encoding/json binds both to one struct field, the last winning,
//     while a gate reads the map key;
//   - numbers with more precision or magnitude than an IEEE 754 double
//     (I-JSON, RFC 7493 §2.2). The gates and the schema see a number as
//     the float64 f it parses to; a tool may read its text exactly. A
//     number is accepted only if its text denotes exactly the value of f's
//     shortest round-trip decimal (strconv.FormatFloat(f, 'g', -1, 64)),
//     compared as decimal values, so "1.0", "1e0" and "1" are one number
//     and "-0" is 0. That admits one value for each f, so f determines the
//     value any parser reads, and that value is the one jsonschema
//     validates (it compares fmt.Sprint(f) exactly) and the one
//     encoding/json, JavaScript and Python write back for f. 0.1, 3.14,
//     1e-7, 9007199254740992, 1e300 pass; 9007199254740993,
//     10000000000000001, 100.000000000000001, 1.0000000000000000001 and
//     1e-400 (which reads as 0) are refused, and so is 1152921504606846976
//     (2^60 written out, whose shortest decimal is 1152921504606847000):
//     its neighbour 1152921504606847000 parses to the same f. Numbers out
//     of a double's range (1e400) are refused as before.
//
// Rewrites: a gate's rewrite ends the round; the rewritten input goes
// through the same decoder and schema as the model's (an invalid one
// denies), becomes the input, and every gate judges it again; more than
// WithMaxRewrites (default 3) rewrites deny (gate.error=invalid). So the
// tool receives input X only if every gate judged X itself in the last
// round and none denied it, and the approver, the span
// (gen_ai.tool.call.arguments) and CallFrom all see X. The span records
// gate.rewritten, gate.rewritten_by and the hash of the model's original
// input (gate.input.original_sha256).
//
// Asks: a run grant (GrantStore, keyed by run ID) for the exact command
// approves at once; otherwise the Approver is asked on its own goroutine
// with the input that will run (and the original), and the executor waits
// at most WithApprovalTimeout or until the call's context ends: a late
// answer is discarded and recorded as gate.approval=timeout. An answer
// must carry the request's CallHash and a known outcome, else the call is
// denied with gate.approval=invalid, gate.error=invalid.
//
// Durable approvals (approve/inbox): an approver that stores the request
// and answers gate.ApprovalPending suspends the call: it does not run, its
// result wraps ErrApprovalPending (ErrorType "approval_pending", the run
// is not aborted) and its record is a deny with gate.approval=pending and
// gate.approval.id naming the request. The application resumes it by
// executing the same call (same call ID, tool and input, on a run with the
// same agent and run ID) under gate.WithResume(ctx, id): the gates judge
// it again (a deny still denies; a rewrite that changes the input makes
// it another call), and even a call they now allow goes to the approver
// with ApprovalRequest.ResumeID = id, so it runs only on the stored answer
// for exactly this call, once; run grants are not consulted for a resume.
// The answer's RequestID and its AskedAt/AnsweredAt are recorded as
// gate.approval.id and gate.approval.wait_ms (an in-process approver's
// wait is the time the call waited), and the resumed call's span is
// linked to the asking call's span (link attribute gate.link=approval_ask).
// Resume one call per Execute: a batch under a resume context would
// present the one ID for every call.
//
// Calls refused before the gate (a context already done, an aborted run,
// unknown tool, unreachable tool, invalid input) never reach a gate, but
// they are decisions — what a model tried: ToolResult.Gate records the
// stage it stopped at (gate.stage cancelled, run, registry, reachability
// or input), action deny by source "executor", the error type as
// gate.error and a bounded reason, with sampling.priority=1, so every
// sampler keeps them and the audit stores them. A call past the checks
// records gate.stage = gate; one the executor refuses after its gates
// allowed it (cancelled, or the run aborted meanwhile) keeps its gate
// record with action deny by "executor". Every call the executor refuses
// is one decision.
//
// Refusal budget: a run may make WithRefusalBudget (default 64)
// consecutive calls that do not run — refused before the gate, denied by
// it, asks declined — and only a call whose tool runs resets the count;
// the next one aborts the run with one decision saying why (gate.error
// refusal_budget). Past it, the run's calls are aggregated per tool name
// — each tool's first gets a span, then one span per AggregateRefusals
// (64) calls to that tool, and Run.End records the rest, one span per
// tool — each span carrying the tool's name and the number of calls it
// records in gate.calls (gate.Record.Calls of the span's record); past
// AggregateToolNames (16) names, the other calls share one group without
// gen_ai.tool.name. Calls after Run.End are not held back: one span each.
// So a run of calls that do not run spends at most budget + 1 spans plus
// one per tool and one per 64 calls, the sum of gate.calls (1 when
// absent) over a run's execute_tool spans is its number of calls, and
// summed by gen_ai.tool.name it is the calls made to each tool. A model that interleaves calls that run
// spends one span per call, like any busy agent: the export queue
// (otelbridge.BatchProcessor) then keeps denials, approvals and rewrites
// last and counts every drop.
//
// A denied call is an error result (ErrDenied, ErrorType "gate_denied")
// whose Content names the tool, the policy and the reason and tells the
// model not to retry; ToolResult.Gate (a gate.Record) carries the decision. With
// WithAbortOnDeny a denial also aborts the run.
//
// Span: "execute_tool {gen_ai.tool.name}" (just "execute_tool" for a name
// that is not registered), SpanKind internal, with gen_ai.operation.name
// = execute_tool, gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type,
// gen_ai.agent.name, gen_ai.conversation.id (the run ID) and the local keys
// toolgate.run.id and toolgate.task.id (OTel semantic conventions v1.41.0
// for the gen_ai keys); on gated calls the gate.* keys of gate/attributes.go
// written by gate.Record.Attributes (gate.gated, gate.action, gate.source,
// gate.reason, gate.error, gate.approval, gate.approver, gate.risk.level,
// gate.opt_out, gate.duration_ns, gate.verdicts, gate.rounds,
// gate.rewritten, gate.rewritten_by, gate.input.original_sha256); every
// string valid UTF-8 and bounded (gate.SafeText), so a hostile byte cannot
// make the exporter drop a batch; error.type and status Error on error
// results;
// sampling.priority=1 on denials; gen_ai.tool.call.arguments and
// gen_ai.tool.call.result only with WithRecordContent (redacted and
// size-limited, like gate reasons). ToolResult carries the span's TraceID
// and SpanID. Metrics: toolgate.gate.decisions, toolgate.gate.duration and
// toolgate.executor.errors (errors of the trace hook, span recording and
// the grant store, which also go to WithErrorHandler). The executor uses
// the OTel API only.
//
// Cost: BenchmarkRatios reports a call's cost in units of one bare
// recording span of the OTel SDK, split into the span with the attributes
// above, jsonschema's validation and the executor's own work. The input is
// read with the JSON v2 tokenizer (github.com/go-json-experiment/json's
// jsontext, whose defaults reject duplicate keys and invalid UTF-8)
// straight into the map the gates see, without reflection. Measured on a
// 2-core AMD EPYC: a call with one allowing gate costs about 6.4 bare
// spans against 3.8 for the span with its 12 attributes alone (1.68×, down
// from 1.83×), of which jsonschema's validation is 1.0 and decoding about
// 0.5; it makes 23 allocations (down from 26):
// 10 of the SDK for the span, 8 of jsonschema, 3 for the decoded input
// (the map header and its slots, the boxed string value), the call's
// state and the context that carries the run span; a chain of three adds
// 3 for gate.verdicts (26, down from 31).
// The span and the validation alone are 1.25× the span and 18
// allocations. TestExecuteAllocations bounds the executor's allocations
// beyond those of the SDK, the decoding and the validation.
package executor
