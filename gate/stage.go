package gate

// Stage is how far a tool call got through the executor's checks before
// its decision was made (AttrStage). The executor checks a call in this
// order: registry, reachability, input, gate. A call refused at one of the
// first three never reaches a gate, but it is still a decision — what an
// agent tried and was stopped from doing (a prompt-injected model calling
// delete_everything) — recorded with Action deny, Gated false and Source
// SourceExecutor.
type Stage string

// Values of Stage.
const (
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
func Stages() []Stage { return []Stage{StageRegistry, StageReachability, StageInput, StageGate} }

// PreGate reports whether s is a stage before the gate (registry,
// reachability or input): a call refused by the executor itself.
func (s Stage) PreGate() bool {
	return s == StageRegistry || s == StageReachability || s == StageInput
}

// SourceExecutor is the Source of a decision the executor made itself,
// before any gate (a Record whose Stage is PreGate).
const SourceExecutor = "executor"
