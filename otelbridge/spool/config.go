package spool

import (
	"errors"
	"fmt"
	"time"
)

// SyncPolicy is when appended records are fsynced.
type SyncPolicy int

const (
	// SyncInterval (the zero value) writes each record to the operating
	// system as it is appended (a killed process loses nothing) and
	// fsyncs every Config.SyncInterval (a power loss loses at most that
	// interval).
	SyncInterval SyncPolicy = iota
	// SyncAlways fsyncs every appended record before OnEnd returns;
	// concurrent appends share one fsync.
	SyncAlways
)

// String is "interval" or "always".
func (p SyncPolicy) String() string {
	if p == SyncAlways {
		return "always"
	}
	return "interval"
}

// FullPolicy is what happens when the disk budget is full.
type FullPolicy int

const (
	// DropOldest (the zero value) drops the oldest unsent records, just
	// enough to make room, and counts their spans in Stats.Dropped. The
	// write-ahead records of running calls ([Spool.Commit]) are never
	// dropped; when they alone fill the budget, new records are refused
	// (ErrFull) as under Refuse.
	DropOldest FullPolicy = iota
	// Refuse refuses new records and counts their spans in Stats.Refused;
	// [Spool.Commit] returns an error wrapping [ErrFull], so that a strict
	// executor denies the call. The final record of a committed call is
	// always admitted: its pending record holds its place.
	Refuse
)

// String is "drop-oldest" or "refuse".
func (p FullPolicy) String() string {
	if p == Refuse {
		return "refuse"
	}
	return "drop-oldest"
}

// Defaults of the zero Config fields.
const (
	DefaultMaxBytes      int64 = 256 << 20
	DefaultSyncInterval        = 100 * time.Millisecond
	DefaultBatchSpans          = 1024
	DefaultUploadTimeout       = 10 * time.Second
	DefaultMaxBackoff          = 500 * time.Millisecond
)

// Config configures a [Spool]. The zero value of every field but Dir
// means its default.
type Config struct {
	// Dir is the spool directory ("" = spool off: [Open] refuses it). It
	// is created (0700) when missing. One process per directory.
	Dir string
	// MaxBytes is the disk budget in bytes for records not yet
	// acknowledged (unsent spans and pending calls); 0 = 256 MiB. The
	// directory may hold up to two log segments (MaxBytes/16 each, at most
	// 4 MiB) more of records already sent, until they are truncated.
	MaxBytes int64
	// Sync is the fsync policy: SyncInterval (zero value) or SyncAlways.
	Sync SyncPolicy
	// SyncInterval is the fsync period of SyncInterval; 0 = 100 ms.
	SyncInterval time.Duration
	// Full is the policy when the budget is full: DropOldest (zero value)
	// or Refuse.
	Full FullPolicy

	// BatchSpans is the most spans per upload request (requests also stay
	// under 2 MiB); 0 = 1024.
	BatchSpans int
	// UploadTimeout bounds one upload attempt; 0 = 10 s.
	UploadTimeout time.Duration
	// MaxBackoff caps the wait between failed uploads (the first wait is
	// 100 ms or the cap if lower, doubling); 0 = 500 ms.
	MaxBackoff time.Duration
	// ReportInterval is how often at most the same upload failure reaches
	// ErrorHandler during an outage (see [UploadError]); 0 = 30 s.
	ReportInterval time.Duration
	// Offline: the drainer uploads nothing, and the records stay in the
	// log for a later Open (the client is neither called nor needed to
	// work). For a short-lived process that knows the collector is
	// unreachable (the hook, after a refused connection): it then neither
	// reads nor decodes the backlog an outage left, which would cost it
	// time growing with the outage. ForceFlush waits for its context.
	Offline bool
	// ErrorHandler receives the spool's errors: failed uploads (the
	// drainer retries them; *[UploadError], grouped by ReportInterval, and
	// a *[RecoveredError] when uploads work again), refused or failed
	// appends, recovery findings. It must be safe for concurrent use; its panics are
	// recovered. Nil: errors are only counted (see [Stats]). Within
	// otelbridge.Setup it is set from otelbridge.Config.Batch.ErrorHandler,
	// the pipeline's one error handler.
	ErrorHandler func(error)
}

// Errors of this package; the errors returned wrap them.
var (
	// ErrFull: the disk budget is full and the policy is Refuse (or one
	// record is larger than the whole budget).
	ErrFull = errors.New("spool: disk budget full")
	// ErrClosed: the spool was shut down.
	ErrClosed = errors.New("spool: closed")
	// ErrLocked: another process (or another Spool) has the directory open.
	ErrLocked = errors.New("spool: directory in use")
	// ErrNotRecording: Commit was given a span the OTel SDK does not
	// record (a no-op or non-SDK span): there is nothing to write.
	ErrNotRecording = errors.New("spool: span is not a recording SDK span")
)

// withDefaults fills the zero fields and checks the others.
func (c Config) withDefaults() (Config, error) {
	if c.Dir == "" {
		return c, errors.New("spool: Config.Dir is empty: set it (TOOLGATE_SPOOL_DIR) to a directory only this process uses")
	}
	if c.MaxBytes < 0 || c.SyncInterval < 0 {
		return c, fmt.Errorf("spool: Config: negative MaxBytes (%d) or SyncInterval (%s)", c.MaxBytes, c.SyncInterval)
	}
	if c.BatchSpans < 0 || c.UploadTimeout < 0 || c.MaxBackoff < 0 || c.ReportInterval < 0 {
		return c, fmt.Errorf("spool: Config: negative BatchSpans (%d), UploadTimeout (%s), MaxBackoff (%s) or ReportInterval (%s); 0 means the default", c.BatchSpans, c.UploadTimeout, c.MaxBackoff, c.ReportInterval)
	}
	if c.Sync != SyncInterval && c.Sync != SyncAlways {
		return c, fmt.Errorf("spool: Config: unknown sync policy %d", c.Sync)
	}
	if c.Full != DropOldest && c.Full != Refuse {
		return c, fmt.Errorf("spool: Config: unknown full policy %d", c.Full)
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.SyncInterval == 0 {
		c.SyncInterval = DefaultSyncInterval
	}
	if c.BatchSpans == 0 {
		c.BatchSpans = DefaultBatchSpans
	}
	if c.UploadTimeout == 0 {
		c.UploadTimeout = DefaultUploadTimeout
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.ReportInterval == 0 {
		c.ReportInterval = DefaultReportInterval
	}
	return c, nil
}

// segmentSize is the log's segment size for a budget: MaxBytes/16 within
// [16 KiB, 4 MiB].
func segmentSize(maxBytes int64) int {
	return int(min(max(maxBytes/16, 16<<10), 4<<20))
}
