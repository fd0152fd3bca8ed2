package spool

import (
	"fmt"
	"time"
)

// DefaultReportInterval is Config.ReportInterval's default.
const DefaultReportInterval = 30 * time.Second

// UploadError is a failed upload as [Config.ErrorHandler] receives it. The
// drainer retries every few hundred milliseconds during an outage; the
// handler gets the first failure after uploads worked, then the same
// failure (the same error text) at most once per Config.ReportInterval,
// with the count of attempts not reported in between; a different failure
// is reported at once. When an upload succeeds again the handler gets a
// [*RecoveredError].
type UploadError struct {
	Spans      int           // spans in the failed request
	Retry      time.Duration // wait before the next attempt
	Attempts   int           // failed attempts since the last successful upload, this one included
	Suppressed int           // failed attempts not reported since the previous report
	Since      time.Time     // the first failed attempt since the last successful upload
	// Err is the client's error. Under otelbridge.Setup it carries the
	// cause and the fix too (otelbridge.Check's diagnosis, as for the
	// batch exporter's errors: ErrUnauthenticated, ErrTLSMismatch, …).
	Err error
}

func (e *UploadError) Error() string {
	msg := fmt.Sprintf("spool: upload of %d spans failed (retrying in %s", e.Spans, e.Retry)
	if e.Attempts > 1 {
		msg += fmt.Sprintf("; failing for %s, %d attempts", time.Since(e.Since).Round(time.Millisecond), e.Attempts)
	}
	if e.Suppressed > 0 {
		msg += fmt.Sprintf(", %d like it not reported since the last report", e.Suppressed)
	}
	return msg + "): " + e.Err.Error()
}

// Unwrap returns the client's error.
func (e *UploadError) Unwrap() error { return e.Err }

// RecoveredError is no failure but the end of one: [Config.ErrorHandler]
// receives it when an upload succeeds after failed ones, so that a log of
// the handler's errors says when the outage ended.
type RecoveredError struct {
	Outage     time.Duration // from the first failed attempt to the successful upload
	Attempts   int           // failed attempts (retries) in between
	Suppressed int           // of them, not reported to the handler
}

func (e *RecoveredError) Error() string {
	return fmt.Sprintf("spool: uploads recovered after %s, %d retries (%d failures not reported)",
		e.Outage.Round(time.Millisecond), e.Attempts, e.Suppressed)
}

// uploadReporter decides which upload outcomes reach the error handler
// (see [UploadError]). Only the drainer uses it.
type uploadReporter struct {
	every      time.Duration
	failing    bool
	since      time.Time // first failed attempt of the outage
	attempts   int       // failed attempts of the outage
	suppressed int       // since the last report
	unreported int       // in the outage
	lastKey    string    // error text of the last report
	lastAt     time.Time // time of the last report
}

// failed returns the error to report for an upload of spans that failed
// at now with err (retried after retry), or nil to report nothing.
func (r *uploadReporter) failed(now time.Time, spans int, retry time.Duration, err error) error {
	if !r.failing {
		*r = uploadReporter{every: r.every, failing: true, since: now}
	}
	r.attempts++
	key := err.Error()
	if r.attempts > 1 && key == r.lastKey && now.Sub(r.lastAt) < r.every {
		r.suppressed++
		r.unreported++
		return nil
	}
	e := &UploadError{Spans: spans, Retry: retry, Attempts: r.attempts, Suppressed: r.suppressed, Since: r.since, Err: err}
	r.suppressed, r.lastKey, r.lastAt = 0, key, now
	return e
}

// succeeded returns the notice to report for a successful upload at now:
// a *RecoveredError after failed attempts, else nil.
func (r *uploadReporter) succeeded(now time.Time) error {
	if !r.failing {
		return nil
	}
	e := &RecoveredError{Outage: now.Sub(r.since), Attempts: r.attempts, Suppressed: r.unreported}
	*r = uploadReporter{every: r.every}
	return e
}
