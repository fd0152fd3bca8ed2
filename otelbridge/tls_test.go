package otelbridge

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// selfSigned is a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	c := testenv.SelfSignedCert(t, "otelbridge test")
	return c.TLS, c.Pool
}

// startTLSReceiver is startReceiver with a TLS listener (certificate for
// 127.0.0.1); it returns the receiver and a pool that trusts it.
func startTLSReceiver(t *testing.T) (*receiver, *x509.CertPool) {
	t.Helper()
	cert, pool := selfSigned(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &receiver{addr: lis.Addr().String(),
		srv: grpc.NewServer(grpc.Creds(credentials.NewServerTLSFromCert(&cert)))}
	coltracepb.RegisterTraceServiceServer(r.srv, traceService{r: r})
	go func() { _ = r.srv.Serve(lis) }()
	t.Cleanup(r.srv.Stop)
	return r, pool
}

// TestSetupTLS exports over TLS to a receiver with a self-signed
// certificate: a trusted CA delivers; an unknown CA makes Setup refuse to
// start (ErrCertificate, naming the fix), and with SkipCheck the
// handshake fails at export: the span is lost, counted, and the error
// names the certificate too.
func TestSetupTLS(t *testing.T) {
	r, pool := startTLSReceiver(t)
	tests := []struct {
		name    string
		tls     *tls.Config
		skip    bool  // Config.SkipCheck
		wantErr error // from Setup; nil: Setup succeeds
		wantOK  bool  // the span arrives
	}{
		{"trusted CA", &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, false, nil, true},
		{"unknown CA", &tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12}, false, ErrCertificate, false},
		{"unknown CA, SkipCheck", &tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12},
			true, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			before := len(r.spans())
			p, err := Setup(ctx, Config{Endpoint: r.addr, TLS: tt.tls, Timeout: 2 * time.Second,
				Sampling: sampling.Config{Setting: sampling.MustParse("all")}, SkipCheck: tt.skip})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), "OTEL_EXPORTER_OTLP_CERTIFICATE")
				return
			}
			require.NoError(t, err)
			leaf(ctx, p.Tracer("test"), "execute_tool x")
			err = p.Shutdown(ctx)
			if tt.wantOK {
				require.NoError(t, err)
				assert.Len(t, r.spans(), before+1)
				assert.Equal(t, int64(1), p.Stats().Batch.Exported)
			} else {
				require.ErrorIs(t, err, ErrCertificate, "the handshake fails: the span is lost, counted, and the error says why")
				assert.Len(t, r.spans(), before)
				assert.Equal(t, int64(1), p.Stats().Batch.ExportFailed)
			}
		})
	}
}
