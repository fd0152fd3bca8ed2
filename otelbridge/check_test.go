package otelbridge

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// clearOTLPEnv unsets the exporter variables a developer's shell may hold.
func clearOTLPEnv(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE",
		"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"} {
		t.Setenv(k, "")
	}
}

// TestCheck runs Check against real gRPC servers (plaintext and TLS), an
// HTTP/1.1 server and a closed port, configured by Config and by the
// OTEL_* variables, and checks the kind and that the message names the
// endpoint and the fix.
func TestCheck(t *testing.T) {
	plain := startReceiver(t)
	secure, pool := startTLSReceiver(t)
	h1 := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(h1.Close)
	closed := freeAddr(t)
	trusted := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}

	tests := []struct {
		name     string
		cfg      Config
		env      map[string]string
		wantKind error // nil: Check passes
		wantMsg  []string
	}{
		{"plaintext collector, Insecure", Config{Endpoint: plain.addr, Insecure: true}, nil, nil, nil},
		{"plaintext collector, http:// URL", Config{Endpoint: "http://" + plain.addr}, nil, nil, nil},
		{"TLS collector, trusted CA", Config{Endpoint: secure.addr, TLS: trusted}, nil, nil, nil},
		{"plaintext collector, TLS client", Config{Endpoint: plain.addr}, nil, ErrTLSMismatch,
			[]string{plain.addr, "answered plaintext HTTP/2", "Insecure = true", "OTEL_EXPORTER_OTLP_INSECURE=true", "http://"}},
		{"plaintext collector, https:// URL", Config{Endpoint: "https://" + plain.addr}, nil, ErrTLSMismatch,
			[]string{"exporter uses TLS", "Insecure = true"}},
		{"plaintext collector, https:// in OTEL_EXPORTER_OTLP_ENDPOINT", Config{},
			map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://" + plain.addr}, ErrTLSMismatch,
			[]string{plain.addr, "OTEL_EXPORTER_OTLP_INSECURE=true"}},
		{"TLS collector, Insecure client", Config{Endpoint: secure.addr, Insecure: true}, nil, ErrTLSMismatch,
			[]string{secure.addr, "exporter uses plaintext gRPC (Insecure)", "speaks TLS", "remove Config.Insecure", "https://"}},
		{"TLS collector, http:// in OTEL_EXPORTER_OTLP_ENDPOINT", Config{},
			map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + secure.addr}, ErrTLSMismatch,
			[]string{"speaks TLS", "OTEL_EXPORTER_OTLP_INSECURE"}},
		{"TLS collector, OTEL_EXPORTER_OTLP_INSECURE=true", Config{Endpoint: secure.addr},
			map[string]string{"OTEL_EXPORTER_OTLP_INSECURE": "true"}, ErrTLSMismatch, []string{"speaks TLS"}},
		{"TLS collector, unknown CA", Config{Endpoint: secure.addr}, nil, ErrCertificate,
			[]string{secure.addr, "not trust", "OTEL_EXPORTER_OTLP_CERTIFICATE"}},
		{"HTTP/1.1 server, Insecure", Config{Endpoint: strings.TrimPrefix(h1.URL, "http://"), Insecure: true}, nil, ErrNotGRPC,
			[]string{"HTTP/1.x", "4317"}},
		{"HTTP/1.1 server, TLS client", Config{Endpoint: strings.TrimPrefix(h1.URL, "http://")}, nil, ErrTLSMismatch,
			[]string{"plaintext HTTP/1.x"}},
		{"nothing listening, Insecure", Config{Endpoint: closed, Insecure: true}, nil, ErrUnreachable,
			[]string{closed, "did not accept a connection", "start the collector"}},
		{"nothing listening, TLS", Config{Endpoint: closed}, nil, ErrUnreachable, []string{closed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearOTLPEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			start := time.Now()
			err := Check(context.Background(), tt.cfg)
			t.Logf("Check took %v: %v", time.Since(start), err)
			if tt.wantKind == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantKind)
			var ce *CheckError
			require.ErrorAs(t, err, &ce)
			for _, w := range tt.wantMsg {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, definite(err), !errors.Is(err, ErrUnreachable) && !errors.Is(err, ErrHandshake))
		})
	}
}

// TestSetupRefusesMismatch: Setup fails at once, naming the mismatch, in
// both directions; SkipCheck starts anyway and the export error the
// handler receives, and Shutdown returns, names the mismatch and the fix.
func TestSetupRefusesMismatch(t *testing.T) {
	plain := startReceiver(t)
	secure, _ := startTLSReceiver(t)
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"TLS client, plaintext collector", Config{Endpoint: plain.addr}, "Insecure = true"},
		{"Insecure client, TLS collector", Config{Endpoint: secure.addr, Insecure: true}, "remove Config.Insecure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearOTLPEnv(t)
			ctx := context.Background()
			tt.cfg.Sampling = sampling.Config{Setting: sampling.MustParse("all")}
			start := time.Now()
			p, err := Setup(ctx, tt.cfg)
			t.Logf("Setup refused after %v: %v", time.Since(start), err)
			require.ErrorIs(t, err, ErrTLSMismatch)
			assert.Nil(t, p)
			assert.Contains(t, err.Error(), tt.want)

			var mu sync.Mutex
			var handled []error
			tt.cfg.Timeout = 500 * time.Millisecond
			tt.cfg.SkipCheck = true
			tt.cfg.Batch.ErrorHandler = func(err error) {
				mu.Lock()
				defer mu.Unlock()
				handled = append(handled, err)
			}
			p, err = Setup(ctx, tt.cfg)
			require.NoError(t, err)
			leaf(ctx, p.Tracer("test"), "execute_tool x")
			err = p.Shutdown(ctx)
			require.ErrorIs(t, err, ErrTLSMismatch, "Shutdown names the mismatch")
			assert.Contains(t, err.Error(), tt.want)
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, handled, 1)
			assert.ErrorIs(t, handled[0], ErrTLSMismatch, "the export error handler gets the diagnosis")
			assert.Contains(t, handled[0].Error(), tt.want)
			assert.Equal(t, int64(1), p.Stats().Batch.ExportFailed)
		})
	}
}

// TestSetupStartsWithoutCollector: an unreachable collector is not a
// Setup error (it may start later), but Shutdown's error says how many
// spans were not delivered and why, whether the export gave up first or
// Shutdown's deadline passed first.
func TestSetupStartsWithoutCollector(t *testing.T) {
	tests := []struct {
		name            string
		exportTimeout   time.Duration
		shutdownTimeout time.Duration
		want            []string
	}{
		{"the export gives up first", 300 * time.Millisecond, time.Minute,
			[]string{"1 spans failed to export during shutdown"}},
		{"Shutdown's deadline first", time.Minute, 300 * time.Millisecond,
			[]string{"1 spans not exported before the shutdown deadline", "context deadline exceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearOTLPEnv(t)
			ctx := context.Background()
			addr := freeAddr(t)
			p, err := Setup(ctx, Config{Endpoint: addr, Insecure: true, Timeout: tt.exportTimeout,
				Sampling: sampling.Config{Setting: sampling.MustParse("all")}})
			require.NoError(t, err)
			leaf(ctx, p.Tracer("test"), "execute_tool x")
			sctx, cancel := context.WithTimeout(ctx, tt.shutdownTimeout)
			defer cancel()
			err = p.Shutdown(sctx)
			require.ErrorIs(t, err, ErrUnreachable)
			for _, w := range append(tt.want, addr, "did not accept a connection", "start the collector") {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestCheckAgreesWithExporter: for every combination of Config.Endpoint
// (none, host:port, http://, https://), Config.Insecure, the
// OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_INSECURE variables,
// against a plaintext and a TLS receiver, Check's verdict agrees with what
// the real exporter then does: nil iff the span is delivered, and
// otherwise the transport the exporter used (TLS or plaintext, read from
// its own error) is the one Check says it uses. So Setup never refuses a
// configuration that would deliver.
func TestCheckAgreesWithExporter(t *testing.T) {
	if testing.Short() {
		t.Skip("about 100 exports")
	}
	plain := startReceiver(t)
	secure, _ := startTLSReceiver(t)
	n := 0
	for _, server := range []*receiver{plain, secure} {
		isTLS := server == secure
		addr := server.addr
		for _, cfgEndpoint := range []string{"", addr, "http://" + addr, "https://" + addr} {
			for _, envEndpoint := range []string{"", "http://" + addr, "https://" + addr} {
				if cfgEndpoint == "" && envEndpoint == "" {
					continue // localhost:4317
				}
				for _, insecure := range []bool{false, true} {
					for _, envInsecure := range []string{"", "true"} {
						n++
						name := fmt.Sprintf("tls=%v/cfg=%q/env=%q/insecure=%v/env-insecure=%q", isTLS, cfgEndpoint, envEndpoint, insecure, envInsecure)
						t.Run(name, func(t *testing.T) {
							clearOTLPEnv(t)
							t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", envEndpoint)
							t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", envInsecure)
							service := fmt.Sprintf("agree-%d", n)
							cfg := Config{Endpoint: cfgEndpoint, Insecure: insecure, ServiceName: service,
								Timeout: 100 * time.Millisecond, Sampling: sampling.Config{Setting: sampling.MustParse("all")}}
							checkErr := Check(context.Background(), cfg)

							var exportErr error
							cfg.SkipCheck, cfg.Batch.ErrorHandler = true, func(err error) { exportErr = err }
							p, err := Setup(context.Background(), cfg)
							require.NoError(t, err)
							leaf(context.Background(), p.Tracer("test"), "execute_tool x")
							_ = p.Shutdown(context.Background())
							delivered := countService(server, service) == 1

							if checkErr == nil {
								assert.True(t, delivered, "Check passed, so the exporter delivers (%v)", exportErr)
								return
							}
							assert.False(t, delivered, "Check failed (%v) but the exporter delivered", checkErr)
							require.Error(t, exportErr)
							msg := exportErr.Error()
							usedTLS := strings.Contains(msg, "first record does not look like a TLS handshake") ||
								strings.Contains(msg, "x509")
							usedPlain := strings.Contains(msg, "server preface")
							require.True(t, usedTLS != usedPlain, "the exporter's error names its transport: %s", msg)
							var ce *CheckError
							require.ErrorAs(t, checkErr, &ce)
							assert.Equal(t, usedTLS, ce.TLS, "Check and the exporter use the same transport")
							if isTLS && usedTLS {
								assert.ErrorIs(t, checkErr, ErrCertificate)
							} else {
								assert.ErrorIs(t, checkErr, ErrTLSMismatch)
							}
						})
					}
				}
			}
		}
	}
}
