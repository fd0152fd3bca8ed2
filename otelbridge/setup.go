package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/credentials"

	"github.com/toolgate/toolgate/otelbridge/bridge"
	"github.com/toolgate/toolgate/otelbridge/internal/otlpsafe"
	"github.com/toolgate/toolgate/otelbridge/sampling"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// Provider is the tracer provider [Setup] returns. It embeds the SDK's
// *sdktrace.TracerProvider (so it is a trace.TracerProvider) and adds the
// pipeline's counters and a Shutdown that also stops metrics.
type Provider struct {
	*sdktrace.TracerProvider

	sampling  *sampling.Processor
	batch     *BatchProcessor // nil with the spool on
	spool     *spool.Spool    // nil with the spool off
	toolCalls *bridge.ToolCallIndex
	meters    *sdkmetric.MeterProvider // nil unless Config.Metrics
	diagnose  *diagnoser               // nil unless the OTLP exporter (or the spool's client) is ours
}

// Stats are the pipeline's counters, in spans.
type Stats struct {
	Sampling sampling.Stats
	Batch    BatchStats  // zero with the spool on
	Spool    spool.Stats // zero with the spool off
}

// Lost returns spans lost on the way to the collector (see
// [BatchStats.Lost] and spool.Stats.Lost: dropped by the budget, refused).
// Spans the sampling setting dropped are not lost.
func (s Stats) Lost() int64 { return s.Batch.Lost() + s.Spool.Lost() }

// Setup builds the trace pipeline
//
//	spans -> sampling.Processor(cfg.Sampling) -> BatchProcessor(cfg.Batch) -> otlptracegrpc
//
// with a resource (service.name, service.version, host.name, process and
// SDK attributes, OTEL_RESOURCE_ATTRIBUTES), the ID generator and the
// tool-call index the event bridge needs (bridge.IDGenerator,
// bridge.ToolCallIndex; make the bridge with bridge.New(p, bridge.Config{})).
// It does not install the provider globally; call otel.SetTracerProvider
// if wanted.
//
// Setup first runs [Check] against the collector (at most
// [DefaultCheckTimeout]; on loopback about a millisecond) and refuses to
// start, with a *[CheckError] that names the fix, when the exporter could
// never deliver: a TLS/plaintext mismatch (ErrTLSMismatch), an untrusted
// certificate (ErrCertificate) or a port that does not speak HTTP/2
// (ErrNotGRPC), or a collector that refuses the exporter's credentials
// (ErrUnauthenticated: no or a wrong bearer token). An unreachable collector is not an error here (it may
// start later; spans queue and retry) but shows in Stats (ExportFailed,
// QueueDropped). Config.SkipCheck skips the check; with Config.Exporter
// or Config.ExporterOptions it does not run. A failed export's error (the
// one Config.Batch.ErrorHandler receives and Shutdown returns) carries the
// result of a new check, so it names the cause and the fix too.
// Other errors: an invalid Config, or an exporter, resource or metrics
// set-up failure.
//
// With Config.Spool.Dir (or TOOLGATE_SPOOL_DIR) set, the durable spool
// (package spool) replaces the batch processor:
//
//	spans -> sampling.Processor(cfg.Sampling) -> spool (on-disk log) -> drainer -> otlptrace.Client
//
// the exporter makes one attempt per upload (the drainer retries), calls
// committed with [Provider.Commit] are kept by every sampling setting
// (chained before Config.Sampling.Keep), Config.Batch.ErrorHandler also
// receives the spool's errors (failed uploads grouped, see
// spool.UploadError, and with the same diagnosis as failed exports), and
// Shutdown leaves what it could not send
// on disk for the next start. Setup then fails with spool.ErrLocked when
// another process uses the directory. See docs/durability.md.
//
// Spans are exported in batches, in the background: a program must call
// [Provider.Shutdown] before it exits, or the spans still queued (up to
// Config.Batch.BatchTimeout, 5 s by default, of them) are lost without a trace.
// Shutdown flushes: it exports every queued span (bounded by its context)
// and returns the export error, if any.
func Setup(ctx context.Context, cfg Config) (*Provider, error) {
	// TOOLGATE_SAMPLING is read (and refused when invalid) before
	// anything connects.
	sc, err := cfg.Sampling.Resolve()
	if err != nil {
		return nil, fmt.Errorf("otelbridge: %w", err)
	}
	cfg.Sampling = sc
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// TOOLGATE_SPOOL_* too: the spool's settings, checked before anything
	// connects or touches the disk.
	if cfg.Spool, err = cfg.Spool.Resolve(); err != nil {
		return nil, fmt.Errorf("otelbridge: Config.Spool: %w", err)
	}
	// The check and the diagnosis know the exporter's endpoint and
	// transport only when no raw exporter options can change them.
	known := len(cfg.ExporterOptions) == 0
	var (
		next     sdktrace.SpanProcessor
		batch    *BatchProcessor
		sp       *spool.Spool
		diagnose *diagnoser
	)
	if cfg.Spool.Dir != "" {
		client := cfg.TraceClient
		ours := client == nil
		if client == nil {
			if cfg.Exporter != nil {
				return nil, errors.New("otelbridge: the spool uploads OTLP through an otlptrace.Client: set Config.TraceClient instead of Config.Exporter (or turn the spool off)")
			}
			if known && !cfg.SkipCheck {
				if err := Check(ctx, cfg); definite(err) {
					return nil, err
				}
			}
			client = otlptracegrpc.NewClient(append(traceExporterOptions(cfg), cfg.ExporterOptions...)...)
		}
		// The pipeline has one error handler, Config.Batch.ErrorHandler
		// (validate refuses Config.Spool.ErrorHandler); failed uploads
		// reach it with the same diagnosis as the batch path's exports.
		cfg.Spool.ErrorHandler = cfg.Batch.ErrorHandler
		if ours && known {
			diagnose = &diagnoser{cfg: cfg}
			if cfg.Spool.ErrorHandler != nil {
				cfg.Spool.ErrorHandler = diagnose.spoolErrors(cfg.Spool.ErrorHandler)
			}
		}
		if sp, err = spool.Open(ctx, cfg.Spool, client); err != nil {
			return nil, fmt.Errorf("otelbridge: %w", err)
		}
		next = sp
	} else {
		exp := cfg.Exporter
		if exp == nil {
			if known && !cfg.SkipCheck {
				if err := Check(ctx, cfg); definite(err) {
					return nil, err
				}
			}
			// otlptracegrpc.New, its client sanitized: one invalid UTF-8
			// string must not fail the marshalling of a whole batch.
			e, err := otlptrace.New(ctx, otlpsafe.Client{Client: otlptracegrpc.NewClient(append(traceExporterOptions(cfg), cfg.ExporterOptions...)...)})
			if err != nil {
				return nil, fmt.Errorf("otelbridge: otlptracegrpc exporter: %w", err)
			}
			exp = e
			if known {
				diagnose = &diagnoser{cfg: cfg}
				exp = &diagnosingExporter{SpanExporter: e, diagnoser: diagnose}
			}
		}
		if batch, err = NewBatchProcessor(exp, cfg.Batch); err != nil {
			return nil, err
		}
		next = batch
	}
	closeNext := func() { _ = next.Shutdown(context.WithoutCancel(ctx)) }
	res, err := newResource(ctx, cfg, cfg.ResourceAttributes)
	if err != nil {
		closeNext()
		return nil, err
	}
	if sp != nil {
		// A call committed to the spool is kept whatever the sampling
		// setting: its tool ran, and its pending record must be superseded.
		user := cfg.Sampling.Keep
		cfg.Sampling.Keep = func(sc trace.SpanContext) bool { return sp.Committed(sc) || user != nil && user(sc) }
	}
	sampler, err := sampling.NewProcessor(next, cfg.Sampling)
	if err != nil {
		closeNext()
		return nil, fmt.Errorf("otelbridge: %w", err)
	}
	toolCalls := bridge.NewToolCallIndex(0)
	tpOpts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(bridge.NewIDGenerator()),
		sdktrace.WithSpanProcessor(toolCalls),
	}
	for _, p := range cfg.SpanProcessors {
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(p))
	}
	tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(sampler))
	switch {
	case cfg.Sampler != nil:
		tpOpts = append(tpOpts, sdktrace.WithSampler(cfg.Sampler))
	case os.Getenv("OTEL_TRACES_SAMPLER") == "":
		// Record everything, whatever an upstream service decided: a
		// remote parent with the sampled flag off (traceparent ...-00)
		// must not erase gate decisions. Sampling happens at span end.
		tpOpts = append(tpOpts, sdktrace.WithSampler(sdktrace.AlwaysSample()))
	}
	p := &Provider{TracerProvider: sdktrace.NewTracerProvider(tpOpts...), sampling: sampler, batch: batch, toolCalls: toolCalls,
		diagnose: diagnose, spool: sp}

	mp := cfg.MeterProvider
	if cfg.Metrics {
		mexp, err := otlpmetricgrpc.New(ctx, metricExporterOptions(cfg)...)
		if err != nil {
			_ = p.TracerProvider.Shutdown(ctx)
			return nil, fmt.Errorf("otelbridge: otlpmetricgrpc exporter: %w", err)
		}
		var ropts []sdkmetric.PeriodicReaderOption
		if cfg.MetricsInterval > 0 {
			ropts = append(ropts, sdkmetric.WithInterval(cfg.MetricsInterval))
		}
		p.meters = sdkmetric.NewMeterProvider(
			sdkmetric.WithResource(res),
			sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp, ropts...)),
		)
		if mp == nil {
			mp = p.meters
		}
	}
	if mp != nil {
		// The callback stays registered after Shutdown, so that a last
		// collection reports the final counts.
		if _, err := RegisterMetrics(mp, p.Stats, sampler.Setting()); err != nil {
			_ = p.Shutdown(ctx)
			return nil, err
		}
		if sp != nil {
			if _, err := sp.RegisterMetrics(mp); err != nil {
				_ = p.Shutdown(ctx)
				return nil, fmt.Errorf("otelbridge: %w", err)
			}
		}
	}
	return p, nil
}

// Stats returns the pipeline's counters.
func (p *Provider) Stats() Stats {
	st := Stats{Sampling: p.sampling.Stats()}
	if p.batch != nil {
		st.Batch = p.batch.Stats()
	}
	if p.spool != nil {
		st.Spool = p.spool.Stats()
	}
	return st
}

// ToolCalls returns the index of live tool calls that keeps a bridge on
// this provider (bridge.New(p, ...) finds it) from duplicating the
// executor's spans.
func (p *Provider) ToolCalls() *bridge.ToolCallIndex { return p.toolCalls }

// Sampling returns the sampling setting in force (Config.Sampling.Setting,
// else TOOLGATE_SAMPLING, else the default).
func (p *Provider) Sampling() sampling.Setting { return p.sampling.Setting() }

// MeterProvider returns the metrics provider Config.Metrics set up, or nil.
func (p *Provider) MeterProvider() *sdkmetric.MeterProvider { return p.meters }

// Shutdown flushes and stops the trace pipeline, then the metrics
// pipeline (whose last collection includes the final counters). It
// returns the errors joined; ctx bounds the whole, except that naming the
// cause of a failed export (a [Check]) may take up to half a second more.
// Call it before the program exits — defer it in main, with a timeout
// (the spans queued when a program exits without it are lost), and note
// that os.Exit and log.Fatal skip deferred calls.
//
// When spans were not delivered, the error says how many and, for the
// OTLP exporter Setup made, why (see [Check]): for example "2 spans not
// exported before the shutdown deadline ...; collector unreachable: ...
// did not accept a connection: start the collector or set ...".
func (p *Provider) Shutdown(ctx context.Context) error {
	err := p.TracerProvider.Shutdown(ctx)
	if err != nil {
		if st := p.Stats().Batch; st.Pending+st.InFlight > 0 {
			err = fmt.Errorf("otelbridge: %d spans not exported before the shutdown deadline: %w", st.Pending+st.InFlight, err)
		}
		if p.diagnose != nil {
			err = p.diagnose.explain(ctx, err)
		}
	}
	if p.meters != nil {
		err = errors.Join(err, p.meters.Shutdown(ctx))
	}
	return err
}

// traceExporterOptions turns the set Config fields into exporter options;
// unset fields add nothing, so the exporter's environment handling applies.
func traceExporterOptions(cfg Config) []otlptracegrpc.Option {
	var opts []otlptracegrpc.Option
	if cfg.Endpoint != "" {
		if strings.Contains(cfg.Endpoint, "://") {
			opts = append(opts, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
		} else {
			opts = append(opts, otlptracegrpc.WithEndpoint(cfg.Endpoint))
		}
	}
	if cfg.Insecure {
		opts = append(opts, otlptracegrpc.WithInsecure())
	}
	if cfg.TLS != nil {
		opts = append(opts, otlptracegrpc.WithTLSCredentials(credentials.NewTLS(cfg.TLS)))
	}
	if cfg.Headers != nil {
		opts = append(opts, otlptracegrpc.WithHeaders(cfg.Headers))
	}
	if cfg.Compression != "" {
		opts = append(opts, otlptracegrpc.WithCompressor(cfg.Compression))
	}
	if cfg.Timeout > 0 {
		opts = append(opts, otlptracegrpc.WithTimeout(cfg.Timeout))
	}
	switch {
	case cfg.Retry != nil:
		opts = append(opts, otlptracegrpc.WithRetry(*cfg.Retry))
	case cfg.Spool.Dir != "":
		// The spool's drainer retries, forever: one attempt per upload.
		opts = append(opts, otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	default:
		opts = append(opts, otlptracegrpc.WithRetry(DefaultRetry))
	}
	return append(opts, otlptracegrpc.WithDialOption(reconnect()))
}

// metricExporterOptions mirrors traceExporterOptions for otlpmetricgrpc.
func metricExporterOptions(cfg Config) []otlpmetricgrpc.Option {
	var opts []otlpmetricgrpc.Option
	if cfg.Endpoint != "" {
		if strings.Contains(cfg.Endpoint, "://") {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(cfg.Endpoint))
		} else {
			opts = append(opts, otlpmetricgrpc.WithEndpoint(cfg.Endpoint))
		}
	}
	if cfg.Insecure {
		opts = append(opts, otlpmetricgrpc.WithInsecure())
	}
	if cfg.TLS != nil {
		opts = append(opts, otlpmetricgrpc.WithTLSCredentials(credentials.NewTLS(cfg.TLS)))
	}
	if cfg.Headers != nil {
		opts = append(opts, otlpmetricgrpc.WithHeaders(cfg.Headers))
	}
	if cfg.Compression != "" {
		opts = append(opts, otlpmetricgrpc.WithCompressor(cfg.Compression))
	}
	if cfg.Timeout > 0 {
		opts = append(opts, otlpmetricgrpc.WithTimeout(cfg.Timeout))
	}
	return append(opts, otlpmetricgrpc.WithDialOption(reconnect()))
}
