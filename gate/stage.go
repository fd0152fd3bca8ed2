package gate

// Stage is how far a tool call got through the executor's checks before
// its decision was made (AttrStage). The executor checks a call in this
// order: cancelled, run, registry, reachability, input, gate. A call
// refused at one of the first five never reaches a gate, but it is still a
// decision — what an agent tried and was stopped from doing (a
// prompt-injected model calling delete_everything) — recorded with Action
// deny, Gated false and Source SourceExecutor. Every call the executor
// refuses, for whatever reason, is one decision with one of these stages.
type Stage string

// Values of Stage.
const (
	// StageCancelled: the call's context was already done (cancelled or
	// past its deadline) when the call came, or ended before the tool
	// could run after an ungated call. ErrorKind "cancelled". The host's
	// doing, not the model's.
	StageCancelled Stage = "cancelled"
	// StageRun: the run refuses every call: it was aborted (WithAbortOnDeny
	// after a denial, or the run's budget of consecutive refusals before
	// the gate ran out), or it was aborted while the call's gates ran.
	// ErrorKind "run_aborted", or "refusal_budget" on the one decision that
	// aborted the run for its budget.
	StageRun Stage = "run"
	// StageRegistry: the tool name is not registered (unknown tool). The
	// record's ErrorKind is "tool_not_found".
	StageRegistry Stage = "registry"
	// StageReachability: the tool is registered but this agent may not
	// call it (not in its presets or allowlist, or denied). ErrorKind
	// "tool_not_reachable".
	StageReachability Stage = "reachability"
	// StageInput: the input is not a JSON object matching the tool's
	// schema (or JSON parsers could read it differently). ErrorKind
	// "invalid_input".
	StageInput Stage = "input"
	// StageGate: the call passed every check and reached the gate stage
	// (its gates ran, or its agent was opted out of them). Spans of older
	// producers, which do not record gate.stage, read as this stage.
	StageGate Stage = "gate"
)

// Stages lists the values of Stage in the order the executor checks them.
func Stages() []Stage {
	return []Stage{StageCancelled, StageRun, StageRegistry, StageReachability, StageInput, StageGate}
}

// PreGate reports whether s is a stage before the gate (cancelled, run,
// registry, reachability or input): a call refused by the executor itself.
func (s Stage) PreGate() bool {
	switch s {
	case StageCancelled, StageRun, StageRegistry, StageReachability, StageInput:
		return true
	}
	return false
}

// SourceExecutor is the Source of a decision the executor made itself,
// before any gate (a Record whose Stage is PreGate).
const SourceExecutor = "executor"
