// Package spool is a durable, on-disk span spool for the agent's side of
// the audit trail: an sdktrace.SpanProcessor that appends every span it is
// given to a local write-ahead log (github.com/tidwall/wal) as OTLP
// protobuf, and a drainer goroutine that uploads the log to the collector
// through an otlptrace.Client, truncating what was acknowledged.
//
// What it guarantees:
//
//   - A span whose OnEnd returned is in the log: under [SyncAlways] on
//     disk (fsynced; concurrent appends share one fsync), under
//     [SyncInterval] written to the operating system at once (a SIGKILL of
//     the process loses nothing) and fsynced every SyncInterval (a power
//     loss loses at most that interval). Spans ending concurrently share
//     one write(): one caller appends the records of all that are waiting,
//     and each returns once its own is written.
//   - The drainer never gives up on a record the spool holds: it retries
//     with a capped backoff (100 ms doubling to 500 ms by default) until the
//     upload succeeds or the spool shuts down; Shutdown leaves what it
//     could not send on disk and the next [Open] of the directory sends
//     it. Records are sent at least once: after a crash, what was sent but
//     not yet recorded as acknowledged is sent again (the store collapses
//     duplicates by SpanId, keeping the first copy). Its failed attempts
//     reach Config.ErrorHandler grouped ([UploadError]: the first, then
//     the same failure at most once per Config.ReportInterval with the
//     count not reported; [RecoveredError] when uploads work again).
//   - A torn or corrupt record (a crash in the middle of a write, a power
//     loss) is found by its CRC-32C when the log is opened, cut off and
//     counted in [Stats].TornRecovered; it never stops Open.
//   - The disk budget (Config.MaxBytes) holds: when it is full the
//     [FullPolicy] applies and is counted, DropOldest (drop the oldest
//     unsent records) or Refuse (refuse new ones; [Spool.Commit] then
//     returns an error wrapping [ErrFull]).
//
// Write-ahead ([Spool.Commit]): the live span of a tool call is recorded,
// fsynced, as a "pending" record before the tool runs. A pending record is
// never uploaded while the process lives: the span's final record (OnEnd)
// supersedes it. Only a pending record without a final — the process died
// while the tool ran — is uploaded, by the next Open, marked with
// toolgate.call.interrupted=true and an Error status ("agent process ended
// before the call finished"). The log is never truncated past an
// unresolved pending record (a long-running call's record is copied to the
// log's end instead, so that it pins no disk).
//
// One process per directory: Open locks the directory (flock on
// Dir/LOCK) and a second Open fails with [ErrLocked].
//
// Configuration: one [Config] struct, Open(ctx, cfg, client), no option
// functions; zero fields mean the defaults. [Config.Resolve] first fills
// zero fields from the TOOLGATE_SPOOL_* variables ([EnvDir], [EnvMaxBytes],
// [EnvSync], [EnvFull]); otelbridge.Setup calls it for Config.Spool.
//
// Layout of Dir: wal/ (the log's segment files), ACK (the index below
// which every record was acknowledged or dropped), LOCK.
package spool
