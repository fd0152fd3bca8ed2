package otelbridge

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// ErrNoSpool is wrapped by [Provider.Commit] when the spool is off.
var ErrNoSpool = errors.New("otelbridge: no spool: set Config.Spool.Dir or TOOLGATE_SPOOL_DIR to record decisions before the tool runs")

// DefaultRetry is the exporter's retry policy when Config.Retry is unset
// and the spool is off: retry soon after an outage ends (the SDK's own
// default waits 5 s first).
var DefaultRetry = otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 250 * time.Millisecond,
	MaxInterval: time.Second, MaxElapsedTime: time.Minute}

// reconnect is the gRPC connection backoff of the exporters Setup makes:
// grpc-go's default grows to 120 s between attempts, so that a collector
// back after a minute's outage was found only minutes later; capped at
// 1 s here.
func reconnect() grpc.DialOption {
	return grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
		MinConnectTimeout: 5 * time.Second,
	})
}

// Commit durably records span — the call's execute_tool span, with its
// gate.* decision attributes set — before the tool runs (see
// spool.Spool.Commit). It satisfies executor.WriteAheadLog. Errors wrap
// [ErrNoSpool] when the spool is off, else spool.ErrFull, spool.ErrClosed,
// spool.ErrNotRecording or an I/O error; the caller must then not run the
// tool.
func (p *Provider) Commit(ctx context.Context, span trace.Span) error {
	if p.spool == nil {
		return ErrNoSpool
	}
	return p.spool.Commit(ctx, span)
}
