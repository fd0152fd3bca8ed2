// Package gate is toolgate's decision model: the vocabulary shared by the
// executor, the classifiers and the audit trail.
//
// A gate decides, for one tool call after its input has been validated and
// before it runs, whether that call may run now. The executor builds a
// [ToolCallContext], asks a [Gate] for a [Decision], resolves an ask through
// an [Approver], and records the outcome on the call's OpenTelemetry span
// under the attribute keys defined in attributes.go. Those keys are the
// project's contract with the collector configs, the ClickHouse schema and
// the docs: nothing else spells them.
//
// gate imports neither executor nor classify.
package gate
