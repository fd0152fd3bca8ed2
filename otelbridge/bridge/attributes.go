package bridge

import "go.opentelemetry.io/otel/attribute"

// Span attribute keys that no semantic convention defines. Bridged events
// carry the framework's identifiers under these keys so that a bridged span
// can be joined with the framework's own logs. The run and task identifiers
// use gate.AttrRunID and gate.AttrTaskID, as the executor's spans do.
const (
	// AttrTaskTitle (string) is the task's title (TaskTrace.taskTitle).
	AttrTaskTitle attribute.Key = "toolgate.task.title"
	// AttrTaskRetries (int) is how often the task was retried
	// (TaskTrace.retries).
	AttrTaskRetries attribute.Key = "toolgate.task.retries"
	// AttrAgentTurns (int) is the number of LLM turns of an agent run
	// (AgentTrace.turns).
	AttrAgentTurns attribute.Key = "toolgate.agent.turns"
	// AttrAgentToolCalls (int) is the number of tool calls of an agent run
	// (AgentTrace.toolCalls). The GenAI repository's newer metric
	// gen_ai.invoke_agent.tool_calls counts the same thing.
	AttrAgentToolCalls attribute.Key = "toolgate.agent.tool_calls"
	// AttrLLMTurn (int) is the turn number of an LLM call (LLMCallTrace.turn).
	AttrLLMTurn attribute.Key = "toolgate.llm.turn"
	// AttrBridged (bool) is true on every span made by [Bridge] from an
	// after-the-fact event (as opposed to a span timed live).
	AttrBridged attribute.Key = "toolgate.bridged"
)
