package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// diagnoseGrace bounds the check a failed export runs when the export's
// own context has already ended (a Shutdown whose deadline passed).
const diagnoseGrace = 500 * time.Millisecond

// diagnosingExporter adds the cause of a failed export to its error: on
// failure it runs [Check] against the same collector and, when the check
// fails too, wraps both errors, so that the error handler and Shutdown say
// "TLS/plaintext mismatch ...: set ..." instead of only a handshake error
// or a deadline. An export the collector refused as Unauthenticated or
// PermissionDenied gets the ErrUnauthenticated hint (send the token)
// without a check.
type diagnosingExporter struct {
	sdktrace.SpanExporter
	cfg Config
}

func (d *diagnosingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := d.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		return nil
	}
	return d.explain(ctx, err)
}

// explain adds the result of a check to err when the check fails too (and
// err does not already carry one). When ctx has ended, the check gets
// diagnoseGrace of its own.
func (d *diagnosingExporter) explain(ctx context.Context, err error) error {
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
