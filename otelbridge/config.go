package otelbridge

import (
	"crypto/tls"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolgate/toolgate/otelbridge/sampling"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// Config configures [Setup]: the whole pipeline, through one struct tree.
// Each part has a config struct of its own, nested here and usable alone
// with the part's constructor: Sampling ([sampling.Config],
// sampling.NewProcessor) and Batch ([BatchConfig], [NewBatchProcessor]);
// the event bridge ([bridge.Config], bridge.New) is made after Setup, on
// the Provider. Every zero field means "not set here": the exporter's and
// SDK's own OTEL_* environment variables (TOOLGATE_* for ours) apply, then
// their defaults. A set field overrides the environment.
type Config struct {
	// Endpoint is the OTLP/gRPC collector: "host:port", or a URL
	// ("http://host:port" is plaintext, "https://host:port" is TLS).
	// Unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT,
	// else localhost:4317.
	Endpoint string
	// Insecure uses plaintext gRPC (loopback, sidecar). Unset:
	// OTEL_EXPORTER_OTLP_[TRACES_]INSECURE or the endpoint URL's scheme,
	// else TLS.
	Insecure bool
	// TLS is the client TLS configuration (CA pool, client certificate).
	// Unset: OTEL_EXPORTER_OTLP_[TRACES_]CERTIFICATE and CLIENT_* variables.
	// Setting both TLS and Insecure is an error.
	TLS *tls.Config
	// Headers are sent with every export (e.g. authorization). They replace
	// OTEL_EXPORTER_OTLP_[TRACES_]HEADERS.
	Headers map[string]string
	// Compression is "gzip" or "none". Unset:
	// OTEL_EXPORTER_OTLP_[TRACES_]COMPRESSION, else none.
	Compression string
	// Timeout bounds one export request, retries included. Unset:
	// OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT, else 10 s.
	Timeout time.Duration
	// Retry is the exporter's retry policy for retryable gRPC errors
	// (Unavailable, ResourceExhausted with retry info, ...). Unset: with
	// the spool off, enabled, 250 ms initial, 1 s max interval, 1 min
	// elapsed (bounded by Timeout); with the spool on, one attempt (the
	// spool's drainer retries, forever). See [DefaultRetry].
	Retry *otlptracegrpc.RetryConfig

	// Spool is the durable on-disk spool (package spool). Off unless
	// Spool.Dir is set (or TOOLGATE_SPOOL_DIR; zero fields are read from
	// the TOOLGATE_SPOOL_* variables, see spool.Config.Resolve): then it
	// replaces the batch processor, and of the Batch fields only
	// ErrorHandler applies (it receives the spool's errors too; leave
	// Spool.ErrorHandler nil).
	Spool spool.Config

	// Batch configures the batch processor that queues kept spans for
	// export (queue and batch sizes, timeouts, the export error handler);
	// see [BatchConfig]. Zero fields: OTEL_BSP_* variables, else the SDK's
	// defaults. Not used with the spool on.
	Batch BatchConfig

	// ServiceName and ServiceVersion become service.name and
	// service.version. Unset: OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES,
	// else DefaultServiceName and no version.
	ServiceName    string
	ServiceVersion string

	// Sampling configures the sampling processor (see [sampling.Config]):
	// its Setting unset means TOOLGATE_SAMPLING ([sampling.Env]), else
	// [sampling.Default]() ("decisions").
	Sampling sampling.Config

	// Metrics also sets up a MeterProvider exporting with otlpmetricgrpc to
	// the same endpoint (same Insecure, TLS, Headers, Compression, Timeout;
	// OTEL_EXPORTER_OTLP_METRICS_* apply when unset) and records the
	// pipeline's counters on it (see [RegisterMetrics]).
	Metrics bool
	// MetricsInterval is the metrics export interval. Unset:
	// OTEL_METRIC_EXPORT_INTERVAL, else 60 s.
	MetricsInterval time.Duration

	// The fields below are objects rather than settings: no environment
	// variable stands for them, and their zero value means "none".

	// Exporter replaces the OTLP exporter (tests, stdout). The
	// exporter-related fields above (Endpoint ... Retry) are then ignored
	// and Setup runs no [Check].
	Exporter sdktrace.SpanExporter
	// ExporterOptions are appended to the otlptracegrpc options derived
	// from the fields above (e.g. otlptracegrpc.WithDialOption); later
	// options win. With any, Setup runs no [Check] and failed exports carry
	// no diagnosis (the options may change the endpoint or transport).
	ExporterOptions []otlptracegrpc.Option
	// ResourceAttributes are added to the resource; they override the
	// environment's (OTEL_RESOURCE_ATTRIBUTES) and are overridden by
	// ServiceName / ServiceVersion.
	ResourceAttributes []attribute.KeyValue
	// MeterProvider receives the pipeline's counters (see
	// [RegisterMetrics]) instead of the one Metrics sets up, or without a
	// metrics exporter of our own when Metrics is off.
	MeterProvider metric.MeterProvider
	// Sampler is the head sampler. Unset: OTEL_TRACES_SAMPLER, else
	// AlwaysSample — not the SDK's ParentBased(AlwaysSample), so that an
	// upstream service's "not sampled" (traceparent flags 00) cannot erase
	// gate decisions. Keep it so: a head sampler cannot see the gate's
	// decision and its drops cascade to children; sample at span end with
	// the Sampling field.
	Sampler sdktrace.Sampler
	// SpanProcessors are extra processors that see every span, in order,
	// before sampling (e.g. an in-memory recorder in tests).
	SpanProcessors []sdktrace.SpanProcessor
	// SkipCheck skips the connection check Setup runs (see [Check]): Setup
	// then does not connect, and a TLS/plaintext mismatch shows only when
	// exports fail (their errors still name it).
	SkipCheck bool
	// TraceClient is the OTLP client the spool uploads through, instead of
	// the otlptracegrpc client Setup builds from the fields above (with the
	// spool on, use it rather than Exporter). Unused with the spool off.
	TraceClient otlptrace.Client
}

// DefaultServiceName is service.name when neither Config nor the
// environment names the service.
const DefaultServiceName = "toolgate"

// validate checks what the exporter would otherwise reject late.
func (c Config) validate() error {
	if c.Insecure && c.TLS != nil {
		return fmt.Errorf("otelbridge: Config: both Insecure and TLS are set")
	}
	switch c.Compression {
	case "", "gzip", "none":
	default:
		return fmt.Errorf("otelbridge: Config: compression %q (want gzip or none)", c.Compression)
	}
	if c.Timeout < 0 || c.MetricsInterval < 0 {
		return fmt.Errorf("otelbridge: Config: negative duration")
	}
	if err := c.Batch.validate(); err != nil {
		return fmt.Errorf("otelbridge: Config.Batch: %w", err)
	}
	if c.Spool.ErrorHandler != nil {
		return fmt.Errorf("otelbridge: Config.Spool.ErrorHandler is set: set Config.Batch.ErrorHandler instead, the pipeline's one error handler (it receives the spool's errors too)")
	}
	if err := c.Sampling.Setting.Validate(); err != nil {
		return fmt.Errorf("otelbridge: Config.Sampling: %w", err)
	}
	return nil
}
