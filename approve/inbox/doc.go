// Package inbox keeps approval requests durably, so that an ask can outlive
// the process that raised it: ask now, answer later, from another process
// (auditq approve, the HTTP API, the web page), and resume the call after a
// restart.
//
// An ask becomes a [Request]: an ID, the exact call it is for (tool, the
// input that will run, gate.CallHash of the call), the agent, run, trace and
// span IDs, the gate's reason and risk, and an expiry. An [Answer] (approve
// or decline, who, why, optionally for the rest of the run) is stored with
// it. An answer is refused for an unknown approver ([ErrUnknownApprover]), a
// request that is expired ([ErrExpired]) or already answered
// ([ErrAnswered]), and a call that is not the one the human saw
// ([ErrCallChanged]).
//
// [Approver] is the gate.Approver over an [Inbox], in one of two modes:
// [Block] waits for the answer (the executor's approval timeout bounds the
// wait), [Suspend] stores the request and answers gate.ApprovalPending at
// once; the application resumes the call later under
// gate.WithResume(ctx, id), and the approved call runs exactly once
// ([Inbox.Take] consumes the answer; a second resume gets [ErrUsed]).
//
// The default store is [Open]: one file, go.etcd.io/bbolt, held open only
// for the length of one operation so that several processes share it (the
// agent, auditq, the HTTP server). A deployment that needs a shared
// database implements [Store] (four methods) and [Approvers].
package inbox
