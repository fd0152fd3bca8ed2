// Package tracing is the trace set-up every example shares, in the shape
// of the README's "Embed it" program: when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, [Setup] builds the pipeline
// with otelbridge.Setup (which reads the other OTEL_EXPORTER_OTLP_*
// variables too, OTEL_EXPORTER_OTLP_HEADERS with the collector's token
// included, and refuses to start, naming the fix, when the collector could
// never accept the spans) and the returned shutdown function flushes it;
// without the variable the examples only print and export nothing.
package tracing

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/otelbridge"
)

// ShutdownTimeout bounds the flush of the spans still queued at exit.
const ShutdownTimeout = 5 * time.Second

// Enabled reports whether an OTLP endpoint is set in the environment.
func Enabled() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup returns the tracer provider for executor.WithTracerProvider that
// sends the example's spans (service.name = service) to the collector the
// OTEL_EXPORTER_OTLP_* variables name, and shutdown, which
// the caller defers after every run has ended: it flushes (at most
// ShutdownTimeout), prints "spans: N exported, M lost" to out and returns
// the reason spans were lost, if any. Without an endpoint, tp is nil (the
// executor then uses the global provider, a no-op unless the program
// installs one) and shutdown does nothing. err is otelbridge.Setup's (e.g. a missing
// token, a TLS/plaintext mismatch, each with its fix).
func Setup(ctx context.Context, service string, out io.Writer) (tp trace.TracerProvider, shutdown func() error, err error) {
	if !Enabled() {
		return nil, func() error { return nil }, nil
	}
	p, err := otelbridge.Setup(ctx, otelbridge.Config{ServiceName: service})
	if err != nil {
		return nil, nil, err
	}
	shutdown = func() error {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
		defer cancel()
		serr := p.Shutdown(sctx)
		st := p.Stats()
		fmt.Fprintf(out, "spans: %d exported, %d lost\n", st.Batch.Exported, st.Lost())
		if serr != nil {
			return fmt.Errorf("spans lost: %w", serr)
		}
		return nil
	}
	return p, shutdown, nil
}
