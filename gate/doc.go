// Package gate is toolgate's decision model: the vocabulary shared by the
// executor, the classifiers, the approvers and the audit trail.
//
// A gate decides, for one tool call after its input has been validated and
// before it runs, whether that call may run now. The executor builds a
// [ToolCallContext], asks a [Gate] for a [Decision], resolves an ask
// through an [Approver], and keeps the outcome in the one decision record,
// [Record]: the value the executor returns, hands to trace hooks and
// encodes on the call's OpenTelemetry span with [Record.Attributes] — the
// only encoder, which otelbridge/bridge uses for bridged events too — under the
// attribute keys of attributes.go. [Fields] lists those attributes with
// their types: the audit store's gate_decisions columns are generated from
// it. Nothing else spells the keys. A call the executor refuses before
// any gate (unknown tool, unreachable tool, invalid input) is a Record too,
// of its own [Stage], denied by [SourceExecutor] without a gate running.
//
// # Guarantees (against a hostile model)
//
// The model that issues tool calls is treated as an adversary. With the
// executor (package executor) in front of the tools:
//
//   - Every gate judges the input that runs. A rewrite ends the chain's
//     round ([Chain]); the executor validates it with the same decoder and
//     schema as the model's input and runs every gate again on it, at most
//     a bounded number of times (then it denies). The tool receives input X
//     only if every gate, executor- and agent-level, judged X itself in the
//     last round and none denied it; an agent-level gate cannot weaken an
//     executor-level verdict (first deny wins; an ask survives allows).
//   - An approval applies to exactly the call the human saw. The
//     [ApprovalRequest] carries the input that will run (and the model's
//     original when a gate rewrote it) and its hash ([RequestHash]: tool,
//     exact input bytes, call ID, agent, run and a nonce new for every
//     request, [NewApprovalRequest]); an answer must be built from the request
//     ([ApprovalRequest.Approve], Decline, TimedOut) and is refused — the
//     call denied, gate.approval=invalid — when its hash is missing or
//     different or its outcome unknown. The executor enforces the approval
//     timeout whatever the approver does: a late answer is discarded and
//     recorded as a timeout.
//   - Every decision reaches the span in a form that exports: every string
//     passes through [SafeText] (valid UTF-8, invalid bytes shown as \xNN,
//     bounded), so a hostile byte cannot make OTLP reject the batch.
//   - Failure is closed: an error, a panic, a timeout ([WithTimeout]), the
//     end of the context, an invalid decision or a nil gate ([IsNil]) is a
//     deny whose ErrorKind (gate.error) says why ([Evaluate]).
//   - Who judged is recorded: [Judge] keeps every gate's [Verdict] in order
//     (gate.verdicts); an allow is credited to the gate that reported the
//     highest risk, not to whichever gate ran last.
//
// # Scopes
//
// A gate judges every tool unless it has a [Scope]: which registered tools
// it judges — by name ([Scope].Tools), name pattern (Patterns, path.Match
// globs), annotation hints (Hints) or the fields their input schema
// declares (Fields) — and which input fields it needs in them (Needs).
// Give any gate one with [Scoped], or implement [Scoper]; [ScopeOf] finds
// it through [Named] and [WithTimeout]. A gate that needs more of a tool
// than a field implements [ToolChecker]. The classify gates declare theirs:
// the tools whose schema has the field they read. The executor resolves a
// scope against the registered tool ([ToolInfo]: its name, annotations and
// schema, the developer's data), never against what the model sends, and
// runs the gate on every call to a tool in scope and on no other; a scope
// that selects no registered tool, or a tool that lacks the field the gate
// needs, is a configuration error there (executor.ErrGateScope), not a
// denial the model sees.
//
// What a gate cannot do is in docs/threat-model.md: it sees only the calls
// that pass through the executor, and judges them statically.
//
// Policies: [AllowAll], [DenyTools], [AskTools], [AskConsequential],
// [AskDestructive] (annotation hints, used only to be stricter); the
// classify package provides risk-classifying gates. Ready-made approvers
// (terminal, channel, policy file) live in package approve; run-scoped
// grants ("always allow this exact command in this run") are kept by
// run ID in a [GrantStore] ([MemoryGrants] by default).
//
// # Verifiable trail
//
// A decision's [Link] is its place in its run's hash chain (gate.chain.*):
// [LinkHash] over the previous hash and the digest of the decision as the
// audit store holds it, [StoredDecision] (the one canonical encoding,
// version [ChainVersion], computed alike by the producer from the span's
// attributes and by a verifier from the stored row). It covers the call's
// identity, its recorded arguments (the Input column) and the decision
// (its approval ID and wait included, encoded only when set so that older
// rows keep their hashes), not the tool's outcome (error, status, duration), which strict mode
// cannot know when it seals the decision before the tool runs.
//
// gate imports neither executor nor classify, nor os or a terminal
// library.
package gate
