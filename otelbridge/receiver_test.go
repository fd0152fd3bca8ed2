package otelbridge

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// receiver is a real OTLP/gRPC peer: the trace and metrics services of the
// OTLP protocol (go.opentelemetry.io/proto/otlp), on a loopback port.
type receiver struct {
	addr string
	srv  *grpc.Server

	mu      sync.Mutex
	traces  []*coltracepb.ExportTraceServiceRequest
	md      []metadata.MD
	metrics []*colmetricpb.ExportMetricsServiceRequest
}

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *receiver
}

func (s traceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if len(req.GetResourceSpans()) == 0 {
		// Check's authentication probe: an empty request, which the
		// collector's receiver also accepts and drops.
		return &coltracepb.ExportTraceServiceResponse{}, nil
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.traces = append(s.r.traces, req)
	s.r.md = append(s.r.md, md)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type metricService struct {
	colmetricpb.UnimplementedMetricsServiceServer
	r *receiver
}

func (s metricService) Export(_ context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.metrics = append(s.r.metrics, req)
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

func startReceiver(t testing.TB) *receiver {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &receiver{addr: lis.Addr().String(), srv: grpc.NewServer()}
	coltracepb.RegisterTraceServiceServer(r.srv, traceService{r: r})
	colmetricpb.RegisterMetricsServiceServer(r.srv, metricService{r: r})
	go func() { _ = r.srv.Serve(lis) }()
	t.Cleanup(r.srv.Stop)
	return r
}

// receivedSpan is one span with its resource, flattened.
type receivedSpan struct {
	span     *tracepb.Span
	resource map[string]string
}

func (r *receiver) spans() []receivedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []receivedSpan
	for _, req := range r.traces {
		for _, rs := range req.GetResourceSpans() {
			res := kvMap(rs.GetResource().GetAttributes())
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					out = append(out, receivedSpan{span: s, resource: res})
				}
			}
		}
	}
	return out
}

func (r *receiver) metadata() []metadata.MD {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]metadata.MD(nil), r.md...)
}

// metricNames returns the names of the metrics received.
func (r *receiver) metricNames() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for _, req := range r.metrics {
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					out[m.GetName()] = true
				}
			}
		}
	}
	return out
}

// kvMap stringifies OTLP attributes.
func kvMap(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.GetKey()] = v.GetStringValue()
		case *commonpb.AnyValue_BoolValue:
			if v.GetBoolValue() {
				out[kv.GetKey()] = "true"
			} else {
				out[kv.GetKey()] = "false"
			}
		case *commonpb.AnyValue_IntValue:
			out[kv.GetKey()] = strconv.FormatInt(v.GetIntValue(), 10)
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}
