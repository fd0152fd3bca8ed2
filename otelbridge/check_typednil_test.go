package otelbridge

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// failingTraces answers every export with one gRPC status.
type failingTraces struct {
	coltracepb.UnimplementedTraceServiceServer
	code codes.Code
}

func (f failingTraces) Export(context.Context, *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	return nil, status.Error(f.code, "test: "+f.code.String())
}

// A collector whose answer to the credentials probe is an error that is
// not about credentials (busy, failing, timing out): Check is nil — a true
// nil, not a nil *CheckError inside a non-nil error, which made Setup
// refuse a configuration that delivers (found flaky under -race, when the
// probe timed out).
func TestCheckIsNilWhenTheProbeFailsOtherwise(t *testing.T) {
	for _, code := range []codes.Code{codes.Unavailable, codes.Internal, codes.DeadlineExceeded, codes.ResourceExhausted} {
		t.Run(code.String(), func(t *testing.T) {
			clearOTLPEnv(t)
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			srv := grpc.NewServer()
			coltracepb.RegisterTraceServiceServer(srv, failingTraces{code: code})
			go func() { _ = srv.Serve(lis) }()
			t.Cleanup(srv.Stop)
			err = Check(context.Background(), Config{Endpoint: lis.Addr().String(), Insecure: true})
			require.True(t, err == nil, "Check: %#v", err)
		})
	}
}
