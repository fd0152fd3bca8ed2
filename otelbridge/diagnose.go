package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// diagnoseGrace bounds the check a failed export runs when the export's
// own context has already ended (a Shutdown whose deadline passed).
const diagnoseGrace = 500 * time.Millisecond

// diagnoser names the cause of a failed export or upload, the one place
// both export paths (the batch exporter, the spool's uploads) take it
// from: on failure it runs [Check] against the same collector and, when
// the check fails too, wraps both errors, so that the error handler and
// Shutdown say "TLS/plaintext mismatch ...: set ..." instead of only a
// handshake error or a deadline. An export the collector refused as
// Unauthenticated or PermissionDenied gets the ErrUnauthenticated hint
// (send the token) without a check.
type diagnoser struct {
	cfg Config
}

// explain adds the result of a check to err when the check fails too (and
// err does not already carry one). When ctx has ended, the check gets
// diagnoseGrace of its own.
func (d *diagnoser) explain(ctx context.Context, err error) error {
	var ce *CheckError
	if errors.As(err, &ce) {
		return err
	}
	if ae := authError(err, d.cfg, resolveTarget(d.cfg)); ae != nil {
		// The collector said why itself: no check needed.
		ae.Err = nil
		return fmt.Errorf("%w; %w", err, ae)
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if ctx.Err() != nil {
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), diagnoseGrace)
	}
	defer cancel()
	if cerr := Check(cctx, d.cfg); cerr != nil {
		return fmt.Errorf("%w; %w", err, cerr)
	}
	return err
}

// spoolErrors wraps the spool's error handler h: a failed upload
// (*spool.UploadError, which the spool reports grouped, so the check runs
// at most once per report) gets the cause and the fix as the batch
// exporter's errors do; the spool's other errors pass unchanged.
func (d *diagnoser) spoolErrors(h func(error)) func(error) {
	return func(err error) {
		if ue, ok := errors.AsType[*spool.UploadError](err); ok {
			ue.Err = d.explain(context.Background(), ue.Err)
		}
		h(err)
	}
}

// diagnosingExporter is the batch path's exporter with the diagnoser's
// cause added to a failed export's error.
type diagnosingExporter struct {
	sdktrace.SpanExporter
	*diagnoser
}

func (d *diagnosingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := d.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		return nil
	}
	return d.explain(ctx, err)
}
