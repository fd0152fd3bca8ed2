package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// Environment variables of the spool settings, read by [Setup] for the
// Config.Spool fields left zero.
const (
	// EnvSpoolDir is the spool directory (Config.Spool.Dir); unset or
	// empty: the spool is off.
	EnvSpoolDir = "TOOLGATE_SPOOL_DIR"
	// EnvSpoolMaxBytes is the disk budget: bytes, or with a KiB, MiB or
	// GiB suffix ("512MiB").
	EnvSpoolMaxBytes = "TOOLGATE_SPOOL_MAX_BYTES"
	// EnvSpoolSync is "always" (fsync each decision) or a Go duration, the
	// fsync interval ("100ms").
	EnvSpoolSync = "TOOLGATE_SPOOL_SYNC"
	// EnvSpoolFull is "drop-oldest" or "refuse".
	EnvSpoolFull = "TOOLGATE_SPOOL_FULL"
)

// ErrNoSpool is wrapped by [Provider.Commit] when the spool is off.
var ErrNoSpool = errors.New("otelbridge: no spool: set Config.Spool.Dir or TOOLGATE_SPOOL_DIR to record decisions before the tool runs")

// WithTraceClient sets the OTLP client the spool uploads through instead
// of the otlptracegrpc client Setup makes from Config (tests, another
// transport). It applies only with the spool on.
func WithTraceClient(c otlptrace.Client) Option {
	return func(o *options) { o.traceClient = c }
}

// WithSpoolOptions passes options to spool.Open (batch size, upload
// timeout, backoff cap, error handler).
func WithSpoolOptions(opts ...spool.Option) Option {
	return func(o *options) { o.spoolOpts = append(o.spoolOpts, opts...) }
}

// spoolFromEnv fills the zero fields of c from the TOOLGATE_SPOOL_*
// variables.
func spoolFromEnv(c spool.Config) (spool.Config, error) {
	if c.Dir == "" {
		c.Dir = os.Getenv(EnvSpoolDir)
	}
	if v := strings.TrimSpace(os.Getenv(EnvSpoolMaxBytes)); v != "" && c.MaxBytes == 0 {
		n, err := parseBytes(v)
		if err != nil {
			return c, fmt.Errorf("otelbridge: %s=%q: %w (want bytes, e.g. 268435456 or 256MiB)", EnvSpoolMaxBytes, v, err)
		}
		c.MaxBytes = n
	}
	if v := strings.TrimSpace(os.Getenv(EnvSpoolSync)); v != "" && c.Sync == spool.SyncInterval && c.SyncInterval == 0 {
		if strings.EqualFold(v, "always") {
			c.Sync = spool.SyncAlways
		} else {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return c, fmt.Errorf("otelbridge: %s=%q: want \"always\" or a positive Go duration such as 100ms", EnvSpoolSync, v)
			}
			c.SyncInterval = d
		}
	}
	if v := strings.TrimSpace(os.Getenv(EnvSpoolFull)); v != "" && c.Full == spool.DropOldest {
		switch strings.ToLower(v) {
		case "drop-oldest":
		case "refuse":
			c.Full = spool.Refuse
		default:
			return c, fmt.Errorf("otelbridge: %s=%q: want drop-oldest or refuse", EnvSpoolFull, v)
		}
	}
	return c, nil
}

// parseBytes reads "123", "64KiB", "256MiB", "1GiB".
func parseBytes(v string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if s, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = strings.TrimSpace(s), u.n
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, err
	}
	if n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("out of range")
	}
	return n * mult, nil
}

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
