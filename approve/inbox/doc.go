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
// agent, auditq, the HTTP server): reads take a shared lock on the file,
// writes an exclusive one, and an operation waits at most
// OpenConfig.LockTimeout for it. Every change of a request (Answer, Take,
// Abandon) is one [Store.Update], so of two concurrent Takes of one
// approved request, also from two processes, exactly one gets it. The DB
// also keeps the approvers (only SHA-256 hashes of their tokens) and is a
// gate.GrantStore, so that "for the rest of this run" grants survive a
// restart. A deployment that needs a shared database implements [Store]
// (four methods) and [Approvers].
//
// Expiry is lazy: a pending request whose ExpiresAt has passed (by
// Config.Now) reads as [StatusExpired], and is stored so by the next
// Answer, Take or Abandon. An approved request does not expire; it stays
// usable by one resume. Request IDs have the shape of [NewID]
// ("apr_" and 26 lowercase base32 characters); any other ID is
// [ErrNotFound] without a look-up. Stored names are bounded to
// gate.MaxNameBytes and texts (reasons, notes) to gate.MaxTextBytes by
// gate.SafeText; inputs larger than [MaxInputBytes] are refused at Ask.
package inbox
