package gate

import "go.opentelemetry.io/otel/attribute"

// Span attribute keys recorded on every execute_tool span by the executor.
// They are the project's contract: the collector's filter and tail-sampling
// configs, the ClickHouse gate_decisions view, the Grafana dashboard and the
// docs use exactly these names, and nothing else defines them.
const (
	// AttrGated (bool) is true when at least one gate ran for the call.
	AttrGated attribute.Key = "gate.gated"
	// AttrAction (string) is the final action: "allow" or "deny". An ask
	// always ends as one of the two; see AttrApproval.
	AttrAction attribute.Key = "gate.action"
	// AttrReason (string) is the human-readable reason, redacted and
	// size-limited like recorded inputs.
	AttrReason attribute.Key = "gate.reason"
	// AttrSource (string) names the policy that decided (for example
	// "classify.bash" or "chain[1]:deny-network").
	AttrSource attribute.Key = "gate.source"
	// AttrRule (string) is the rule of the deciding gate's policy
	// (Decision.Rule, Record.Rule: for example a classifier rule ID such
	// as "delete.root-home", or a custom gate's own rule name), recorded
	// when the gate names one. Spans of older producers lack it; the audit
	// store then reads the rule from the reason's "[rule]" (audit.ByRule).
	AttrRule attribute.Key = "gate.rule"
	// AttrApproval (string) is set when the decision was an ask:
	// one of ApprovalApproved, ApprovalDeclined, ApprovalTimeout,
	// ApprovalInvalid, ApprovalPending (a suspended call: action deny).
	AttrApproval attribute.Key = "gate.approval"
	// AttrApprover (string) names the approver that answered an ask.
	AttrApprover attribute.Key = "gate.approver"
	// AttrApprovalID (string) is the ID of the durable approval request an
	// ask was stored as (approve/inbox): the pending decision and the
	// resumed call's decision carry the same ID.
	AttrApprovalID attribute.Key = "gate.approval.id"
	// AttrApprovalWait (int, milliseconds) is the time from the ask to the
	// answer (Record.ApprovalWait).
	AttrApprovalWait attribute.Key = "gate.approval.wait_ms"
	// AttrError (string) is set on a fail-closed denial: one of
	// ErrorKind*; on a call refused before the gate (AttrStage), the
	// executor's error.type: tool_not_found, tool_not_reachable or
	// invalid_input.
	AttrError attribute.Key = "gate.error"
	// AttrRiskLevel (string) is "safe", "review" or "high" when a
	// classifier ran.
	AttrRiskLevel attribute.Key = "gate.risk.level"
	// AttrOptOut (bool) is true when the executor's owner explicitly opted
	// this agent out of the executor-level gates.
	AttrOptOut attribute.Key = "gate.opt_out"
	// AttrDuration (int, nanoseconds) is the time spent deciding, approval
	// included.
	AttrDuration attribute.Key = "gate.duration_ns"
	// AttrVerdicts (string[]) is every gate's verdict, in the order the
	// gates ran (all rounds, see AttrRounds): one "gate|action|risk|rule"
	// entry each, action one of allow, deny, ask, rewrite; risk and rule
	// may be empty. The final decision is gate.action; this is who judged.
	AttrVerdicts attribute.Key = "gate.verdicts"
	// AttrRounds (int) is how many times the gates ran: 1, plus one per
	// accepted rewrite (every gate judges the rewritten input again).
	// Recorded when greater than 1.
	AttrRounds attribute.Key = "gate.rounds"
	// AttrRewritten (bool) is true when the call ran (or was judged) with
	// input a gate rewrote.
	AttrRewritten attribute.Key = "gate.rewritten"
	// AttrRewrittenBy (string) names the gate whose rewrite was last
	// accepted.
	AttrRewrittenBy attribute.Key = "gate.rewritten_by"
	// AttrOriginalInputHash (string, hex SHA-256 of the raw bytes) is the
	// hash of the input as the model sent it, recorded when it was
	// rewritten.
	AttrOriginalInputHash attribute.Key = "gate.input.original_sha256"
	// AttrStage (string) is how far the call got: "registry" (unknown
	// tool), "reachability" (tool not reachable for the agent), "input"
	// (invalid input) — refused by the executor before any gate, recorded
	// with gate.gated = false, gate.action = "deny" and gate.source =
	// "executor" — or "gate" (the call reached the gate stage). Recorded
	// on every decision span; absent (read as "gate") on spans of older
	// producers. See Stage.
	AttrStage attribute.Key = "gate.stage"
	// AttrCalls (int) is how many tool calls the decision records
	// (Record.Calls), recorded only when greater than 1: the executor
	// groups a flood of calls refused at gate.stage = run past a run's
	// refusal budget into one span per up to 64 calls. A span without it
	// records one call, so the sum of gate.calls (1 when absent) over
	// execute_tool spans is the number of calls made.
	AttrCalls attribute.Key = "gate.calls"
	// AttrChainID (string) names the decision's chain (see Link): one per
	// executor Run value, random. Recorded with the other gate.chain.*
	// keys when the producer chains its decisions.
	AttrChainID attribute.Key = "gate.chain.id"
	// AttrChainSeq (int) is the decision's 1-based position in its chain.
	AttrChainSeq attribute.Key = "gate.chain.seq"
	// AttrChainPrev (string, hex SHA-256) is the previous decision's
	// gate.chain.hash; absent ("") for position 1.
	AttrChainPrev attribute.Key = "gate.chain.prev"
	// AttrChainHash (string, hex SHA-256) is the decision's link hash:
	// LinkHash over its chain ID, position, gate.chain.prev and the digest
	// of its stored form (StoredDecision.Digest).
	AttrChainHash attribute.Key = "gate.chain.hash"
)

// Keys the executor records on a run's invoke_agent span when the run
// ends (not decision fields: the run span is not a decision), so that a
// verifier can tell a chain whose last positions were lost from a complete
// one.
const (
	// AttrChainLength (int) is how many decisions the run's chain held
	// when the run ended.
	AttrChainLength attribute.Key = "gate.chain.length"
	// AttrChainHead (string, hex SHA-256) is the gate.chain.hash of the
	// chain's last decision when the run ended.
	AttrChainHead attribute.Key = "gate.chain.head"
)

// Run and task identifiers recorded on every execute_tool span. The run is
// also recorded as gen_ai.conversation.id (OTel semantic conventions
// v1.41.0, gen_ai registry); these local keys are toolgate's own, defined
// here because the GenAI conventions have no run or task attribute.
const (
	// AttrRunID (string) is the agent run the call belongs to.
	AttrRunID attribute.Key = "toolgate.run.id"
	// AttrTaskID (string) is the task within the run, when there is one.
	AttrTaskID attribute.Key = "toolgate.task.id"
)

// AttrSamplingPriority is the OpenTracing-era key that downstream
// probabilistic samplers (the collector's probabilistic_sampler and
// tail_sampling) honour; the executor sets it to 1 on denied calls.
const AttrSamplingPriority attribute.Key = "sampling.priority"

// Values of AttrError: why a call was denied by failing closed.
const (
	ErrorKindError     = "error"     // the gate returned an error
	ErrorKindPanic     = "panic"     // the gate panicked
	ErrorKindTimeout   = "timeout"   // the gate exceeded its timeout
	ErrorKindInvalid   = "invalid"   // the gate returned an invalid decision
	ErrorKindCancelled = "cancelled" // the call's context ended
)

// ErrorTypeGateDenied is the value of the OTel error.type attribute on a
// denied call's span.
const ErrorTypeGateDenied = "gate_denied"
