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

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// Config configures [Setup]. Every zero field means "not set here": the
// exporter's and SDK's own OTEL_* environment variables apply, then their
// defaults. A set field overrides the environment.
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
	// Spool.Dir is set (or TOOLGATE_SPOOL_DIR; see [EnvSpoolDir]): then it
	// replaces the batch processor, and the QueueSize, BatchSize,
	// BatchTimeout and ExportTimeout fields do not apply.
	Spool spool.Config

	// QueueSize bounds the spans waiting for export; more are dropped and
	// counted (see [BatchProcessor]). Unset: OTEL_BSP_MAX_QUEUE_SIZE, else 2048.
	QueueSize int
	// BatchSize is the largest export request in spans. Unset:
	// OTEL_BSP_MAX_EXPORT_BATCH_SIZE, else 512.
	BatchSize int
	// BatchTimeout is how long a span waits for its batch. Unset:
	// OTEL_BSP_SCHEDULE_DELAY, else 5 s.
	BatchTimeout time.Duration
	// ExportTimeout bounds the batch processor's export call. Unset:
	// OTEL_BSP_EXPORT_TIMEOUT, else 30 s.
	ExportTimeout time.Duration

	// ServiceName and ServiceVersion become service.name and
	// service.version. Unset: OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES,
	// else DefaultServiceName and no version.
	ServiceName    string
	ServiceVersion string

	// Sampling is the sampling setting. Unset: TOOLGATE_SAMPLING
	// ([EnvSampling]), else [DefaultSampling]() ("decisions").
	Sampling Sampling

	// Metrics also sets up a MeterProvider exporting with otlpmetricgrpc to
	// the same endpoint (same Insecure, TLS, Headers, Compression, Timeout;
	// OTEL_EXPORTER_OTLP_METRICS_* apply when unset) and records the
	// pipeline's counters on it (see [RegisterMetrics]).
	Metrics bool
	// MetricsInterval is the metrics export interval. Unset:
	// OTEL_METRIC_EXPORT_INTERVAL, else 60 s.
	MetricsInterval time.Duration
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
	if c.QueueSize < 0 || c.BatchSize < 0 || c.Timeout < 0 || c.BatchTimeout < 0 ||
		c.ExportTimeout < 0 || c.MetricsInterval < 0 {
		return fmt.Errorf("otelbridge: Config: negative size or duration")
	}
	if err := c.Sampling.Validate(); err != nil {
		return fmt.Errorf("otelbridge: Config: %w", err)
	}
	return nil
}

// Option configures [Setup] beyond Config: things that are not settings
// but objects.
type Option func(*options)

type options struct {
	exporter      sdktrace.SpanExporter
	traceClient   otlptrace.Client
	spoolOpts     []spool.Option
	exporterOpts  []otlptracegrpc.Option
	resourceAttrs []attribute.KeyValue
	meterProvider metric.MeterProvider
	sampler       sdktrace.Sampler
	processors    []sdktrace.SpanProcessor
	samplingOpts  []SamplingOption
	onError       func(error)
	noCheck       bool
}

// WithoutCheck skips the connection check [Setup] runs (see [Check]):
// Setup then does not connect, and a TLS/plaintext mismatch shows only
// when exports fail (their errors still name it).
func WithoutCheck() Option {
	return func(o *options) { o.noCheck = true }
}

// WithErrorHandler receives the provider's export errors (see
// [WithExportErrorHandler]) instead of leaving them to OTel's global
// handler only; they are counted in Stats().Batch.ExportFailed either way.
// With the OTLP exporter Setup makes, each error also carries the result
// of a [Check] when it fails (errors.Is(err, ErrTLSMismatch), ...), whose
// message names the fix.
func WithErrorHandler(f func(error)) Option {
	return func(o *options) { o.onError = f }
}

// WithSpanExporter replaces the OTLP exporter (tests, stdout). The
// exporter-related Config fields are then ignored.
func WithSpanExporter(e sdktrace.SpanExporter) Option {
	return func(o *options) { o.exporter = e }
}

// WithExporterOptions appends otlptracegrpc options after those derived
// from Config (e.g. otlptracegrpc.WithDialOption); later options win.
func WithExporterOptions(opts ...otlptracegrpc.Option) Option {
	return func(o *options) { o.exporterOpts = append(o.exporterOpts, opts...) }
}

// WithResourceAttributes adds resource attributes; they override the
// environment's and are overridden by ServiceName / ServiceVersion.
func WithResourceAttributes(kv ...attribute.KeyValue) Option {
	return func(o *options) { o.resourceAttrs = append(o.resourceAttrs, kv...) }
}

// WithMeterProvider records the pipeline's counters on mp (see
// [RegisterMetrics]) instead of, or when Config.Metrics is off, without a
// metrics exporter of our own.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.meterProvider = mp }
}

// WithSampler sets the head sampler. Unset: OTEL_TRACES_SAMPLER, else
// AlwaysSample — not the SDK's ParentBased(AlwaysSample), so that an
// upstream service's "not sampled" (traceparent flags 00) cannot erase gate
// decisions. Keep it so: a head sampler cannot see the gate's decision and
// its drops cascade to children; sample at span end with [Sampling].
func WithSampler(s sdktrace.Sampler) Option {
	return func(o *options) { o.sampler = s }
}

// WithSpanProcessor registers an extra processor that sees every span,
// before sampling (e.g. an in-memory recorder in tests).
func WithSpanProcessor(p sdktrace.SpanProcessor) Option {
	return func(o *options) { o.processors = append(o.processors, p) }
}

// WithSamplingOptions passes options to the [SamplingProcessor].
func WithSamplingOptions(opts ...SamplingOption) Option {
	return func(o *options) { o.samplingOpts = append(o.samplingOpts, opts...) }
}
