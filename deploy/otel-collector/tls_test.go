package otelcollector_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	otelcollector "github.com/toolgate/toolgate/deploy/otel-collector"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge"
)

// pki is a test CA with a server certificate for 127.0.0.1 and a client
// certificate, all written as PEM files.
type pki struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
	pool                                                 *x509.CertPool
	client                                               tls.Certificate
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
		return p
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "toolgate test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage, ips []net.IP) (certFile, keyFile string, pair tls.Certificate) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		require.NoError(t, err)
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "PRIVATE KEY", keyDER),
			tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	p := pki{caFile: write("ca.crt", "CERTIFICATE", caDER), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.serverCert, p.serverKey, _ = leaf(2, "collector", x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	p.clientCert, p.clientKey, p.client = leaf(3, "agent", x509.ExtKeyUsageClientAuth, nil)
	return p
}

// exportWith sends three decisions with the given transport and headers and
// returns the export's error (retries off).
func exportWith(ctx context.Context, t *testing.T, endpoint string, transport otlptracegrpc.Option, headers map[string]string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(endpoint), transport,
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
	if headers != nil {
		opts = append(opts, otlptracegrpc.WithHeaders(headers))
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	require.NoError(t, err)
	defer func() { _ = exp.Shutdown(context.Background()) }()
	return exp.ExportSpans(ctx, decisions("prod-tls", 3).Snapshots())
}

// tls.yaml on the real collector: TLS with the token, and with
// TOOLGATE_OTELCOL_TLS_CLIENT_CA mutual TLS; the agent side through
// otelbridge's standard OTEL_EXPORTER_OTLP_* certificate variables.
func TestTLSOverlay(t *testing.T) {
	ctx := context.Background()
	p := newPKI(t)
	tlsTo := func(client bool) otlptracegrpc.Option {
		cfg := &tls.Config{RootCAs: p.pool, MinVersion: tls.VersionTLS12}
		if client {
			cfg.Certificates = []tls.Certificate{p.client}
		}
		return otlptracegrpc.WithTLSCredentials(credentials.NewTLS(cfg))
	}
	tests := []struct {
		name     string
		mTLS     bool
		client   bool // present the client certificate
		plain    bool // no TLS at all
		token    bool
		wantCode codes.Code // codes.OK: accepted
	}{
		{"TLS + token", false, false, false, true, codes.OK},
		{"TLS without token", false, false, false, false, codes.Unauthenticated},
		{"plaintext to a TLS receiver", false, false, true, true, codes.Unavailable},
		{"mTLS: client certificate + token", true, true, false, true, codes.OK},
		{"mTLS: no client certificate", true, false, false, true, codes.Unavailable},
		{"mTLS: client certificate, no token", true, true, false, false, codes.Unauthenticated},
	}
	collectors := map[bool]*testenv.Collector{}
	for _, mTLS := range []bool{false, true} {
		opts := []testenv.CollectorOption{
			testenv.WithConfigs(otelcollector.Config(), otelcollector.TLSOverlay()),
			testenv.WithCollectorEnv("TOOLGATE_OTELCOL_TLS_CERT=" + p.serverCert),
			testenv.WithCollectorEnv("TOOLGATE_OTELCOL_TLS_KEY=" + p.serverKey),
		}
		if mTLS {
			opts = append(opts, testenv.WithCollectorEnv("TOOLGATE_OTELCOL_TLS_CLIENT_CA="+p.caFile))
		}
		collectors[mTLS] = testenv.StartCollector(t, opts...)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			col := collectors[tt.mTLS]
			transport := tlsTo(tt.client)
			if tt.plain {
				transport = otlptracegrpc.WithInsecure()
			}
			var headers map[string]string
			if tt.token {
				headers = col.Headers()
			}
			err := exportWith(ctx, t, col.GRPCEndpoint, transport, headers)
			if tt.wantCode == codes.OK {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			st, ok := status.FromError(err)
			require.True(t, ok, "not a gRPC status: %v", err)
			assert.Equal(t, tt.wantCode, st.Code(), err.Error())
		})
	}

	// The agent configured only by the standard variables, through otelbridge.
	col := collectors[true]
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://"+col.GRPCEndpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", p.caFile)
	t.Setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", p.clientCert)
	t.Setenv("OTEL_EXPORTER_OTLP_CLIENT_KEY", p.clientKey)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer "+col.Token)
	bp, err := otelbridge.Setup(ctx, otelbridge.Config{ServiceName: "prod-tls-env", Batch: otelbridge.BatchConfig{BatchTimeout: 50 * time.Millisecond}})
	require.NoError(t, err)
	_, span := bp.Tracer("tls_test").Start(ctx, "execute_tool bash", trace.WithAttributes(
		semconv.GenAIOperationNameExecuteTool, gate.AttrGated.Bool(true), gate.AttrAction.String(string(gate.ActionAllow))))
	span.End()
	require.NoError(t, bp.Shutdown(ctx))
	assert.Zero(t, bp.Stats().Lost(), "accepted over mTLS with the token")
	require.Eventually(t, func() bool {
		accepted, err := col.Metric(ctx, "otelcol_receiver_accepted_spans")
		return err == nil && accepted == 4
	}, 10*time.Second, 100*time.Millisecond, "3 decisions from the table's accepted case and 1 from otelbridge")
}
