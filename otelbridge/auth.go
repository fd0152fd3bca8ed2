package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrUnauthenticated: the collector requires a credential (a bearer token
// in the authorization header) and refused the exporter's: none was sent,
// or it was wrong (gRPC Unauthenticated or PermissionDenied).
var ErrUnauthenticated = errors.New("collector refused the exporter's credentials")

// Fixes named by CheckError for ErrUnauthenticated.
const (
	fixSendToken = "set OTEL_EXPORTER_OTLP_HEADERS='authorization=Bearer <token>' or Config.Headers " +
		"(after make demo: source .demo/env)"
	fixRightToken = "send the collector's token (its TOOLGATE_OTLP_TOKEN): " + fixSendToken
)

// checkAuth sends one empty ExportTraceServiceRequest through a client
// built from the options the exporter gets (Config, then the
// OTEL_EXPORTER_OTLP_* variables, headers included), with retries off. An
// empty request carries no span, so the collector stores nothing. It
// returns a *CheckError of kind ErrUnauthenticated when the collector
// answers Unauthenticated or PermissionDenied, and nil otherwise: any
// other answer is not about credentials, and the transport was checked
// before.
func checkAuth(ctx context.Context, cfg Config, t target) error {
	opts := append(traceExporterOptions(cfg), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	client := otlptracegrpc.NewClient(opts...)
	if err := client.Start(ctx); err != nil {
		return nil // the exporter's own start reports it
	}
	defer func() { _ = client.Stop(context.WithoutCancel(ctx)) }()
	err := client.UploadTraces(ctx, nil)
	if err == nil {
		return nil
	}
	if ce := authError(err, cfg, t); ce != nil {
		return ce
	}
	return nil // not a typed nil: a nil *CheckError in an error is not nil
}

// authError is a *CheckError of kind ErrUnauthenticated when err carries a
// gRPC Unauthenticated or PermissionDenied status, else nil.
func authError(err error, cfg Config, t target) *CheckError {
	code := status.Code(err)
	if code == codes.Unknown {
		// status.Code sees only the first wrapped status; a joined error
		// (a batch of failures) may hold one further in.
		var s interface{ GRPCStatus() *status.Status }
		if errors.As(err, &s) {
			code = s.GRPCStatus().Code()
		}
	}
	if code != codes.Unauthenticated && code != codes.PermissionDenied {
		return nil
	}
	ce := &CheckError{Endpoint: t.addr, TLS: t.tls, Kind: ErrUnauthenticated, Err: err}
	if sendsAuthorization(cfg) {
		ce.Answer = fmt.Sprintf("requires a token and refused the exporter's (%s)", code)
		ce.Fix = fixRightToken
	} else {
		ce.Answer = fmt.Sprintf("requires a token and the exporter sends none (%s)", code)
		ce.Fix = fixSendToken
	}
	return ce
}

// sendsAuthorization reports whether the exporter sends an authorization
// header: Config.Headers, else OTEL_EXPORTER_OTLP_TRACES_HEADERS or
// OTEL_EXPORTER_OTLP_HEADERS (comma-separated key=value pairs).
func sendsAuthorization(cfg Config) bool {
	if cfg.Headers != nil {
		for k, v := range cfg.Headers {
			if strings.EqualFold(k, "authorization") && strings.TrimSpace(v) != "" {
				return true
			}
		}
		return false
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"} {
		v := os.Getenv(name)
		if v == "" {
			continue
		}
		for _, kv := range strings.Split(v, ",") {
			k, val, _ := strings.Cut(kv, "=")
			if strings.EqualFold(strings.TrimSpace(k), "authorization") && strings.TrimSpace(val) != "" {
				return true
			}
		}
		return false
	}
	return false
}
