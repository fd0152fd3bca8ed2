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
// Composition and failure:
//   - [Chain] runs gates in order; the first deny wins, an ask is resolved
//     only when no later gate denies, a rewrite feeds later gates, and every
//     decision names its Source (see [Named] and [Namer]).
//   - [Evaluate] runs any gate fail-closed: an error, a panic, a timeout
//     ([WithTimeout]), the end of the context or an invalid decision is a
//     deny whose ErrorKind (gate.error) says why.
//
// Policies: [AllowAll], [DenyTools], [AskTools], [AskConsequential],
// [AskDestructive] (annotation hints, used only to be stricter); the
// classify package provides risk-classifying gates.
//
// Approvers: [TerminalApprover] (prompt on a TTY; no TTY or no answer in
// time declines), [ChannelApprover] (a UI answers by call hash) and
// [ApproverFunc] (a callback). An approval is bound to one exact call by
// [CallHash] and used once; [ApprovalResult].Remember with [GrantScopeRun]
// lets the executor remember "always allow this exact command" ([GrantKey])
// for the rest of the run.
//
// gate imports neither executor nor classify.
package gate
