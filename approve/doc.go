// Package approve holds toolgate's ready-made approvers: implementations of
// [gate.Approver] that resolve a gate's ask.
//
//   - [Terminal] asks a human on a terminal: it shows the call (with the
//     model's original input next to a rewritten one), escaping everything
//     the model controls so that no input can hide or rewrite the prompt
//     (controls, invisible and blank runes, odd spaces, unassigned code
//     points, stacked combining marks); it asks only about a call it can
//     show whole, and declines one too long to show; no TTY, a closed
//     input or no answer in time declines.
//   - [Channel] hands asks to a UI over a channel; the UI answers by call
//     hash, and the answer is built from the pending request, so it is
//     bound to that exact call and used once.
//   - [Policy] answers asks from a YAML policy file, without a human (the
//     replay and the demo use it).
//
// Every answer is built from its request (gate.ApprovalRequest.Approve,
// ApproveForRun, Decline, TimedOut) and so carries the request's CallHash;
// the executor refuses any other.
//
// The package exists so that gate imports neither os nor a terminal
// library; approve imports gate, never executor.
package approve
