package otelbridge

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge/sampling"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// handled collects what Config.Batch.ErrorHandler receives.
type handled struct {
	mu   sync.Mutex
	errs []error
}

func (h *handled) handle(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, err)
}

func (h *handled) all() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs...)
}

// waitFor polls cond; the bound is against a hang, not a speed check.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startReceiverAt is startReceiver on a given address (a receiver that
// comes up where the exporter has been failing).
func startReceiverAt(t *testing.T, addr string) *receiver {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	r := &receiver{addr: lis.Addr().String(), srv: grpc.NewServer()}
	coltracepb.RegisterTraceServiceServer(r.srv, traceService{r: r})
	go func() { _ = r.srv.Serve(lis) }()
	t.Cleanup(r.srv.Stop)
	return r
}

// TestSpoolUploadErrorsGroupedAndDiagnosed is the new user's report: with
// the spool on and the collector down, Config.Batch.ErrorHandler got a raw
// gRPC error about twice a second. Now, against a real OTLP/gRPC receiver
// that is down and then comes up, the handler gets one report for the
// outage (ReportInterval an hour; the drainer retries many times meanwhile)
// that says why as the batch path does (ErrUnreachable, "start the
// collector"), then one "recovered after …, N retries" whose counts add
// up, and the span arrives.
func TestSpoolUploadErrorsGroupedAndDiagnosed(t *testing.T) {
	clearOTLPEnv(t)
	addr := freeAddr(t)
	var h handled
	p, err := Setup(context.Background(), Config{Endpoint: addr, Insecure: true, ServiceName: "spool-report",
		Sampling: sampling.Config{Setting: sampling.MustParse("all")},
		Spool:    spool.Config{Dir: t.TempDir(), MaxBackoff: 20 * time.Millisecond, ReportInterval: time.Hour},
		Batch:    BatchConfig{ErrorHandler: h.handle}})
	require.NoError(t, err, "an unreachable collector is no reason to refuse to start")
	defer func() { _ = p.Shutdown(context.Background()) }()
	leaf(context.Background(), p.Tracer("test"), "execute_tool x")

	const attempts = 10
	waitFor(t, "failed uploads", func() bool { return p.Stats().Spool.UploadFailed >= attempts })
	errs := h.all()
	require.Len(t, errs, 1, "one report for the outage, not one per retry: %v", errs)
	ue, ok := errors.AsType[*spool.UploadError](errs[0])
	require.True(t, ok, "%T: %v", errs[0], errs[0])
	assert.Equal(t, 1, ue.Attempts)
	assert.ErrorIs(t, errs[0], ErrUnreachable, "the batch path's diagnosis: %v", errs[0])
	assert.Contains(t, errs[0].Error(), "start the collector")
	assert.Contains(t, errs[0].Error(), "spans wait in the spool", "with the spool on, nothing is lost while it is down")

	r := startReceiverAt(t, addr)
	waitFor(t, "the span", func() bool { return countService(r, "spool-report") == 1 })
	waitFor(t, "the recovery notice", func() bool { return len(h.all()) == 2 })
	errs = h.all()
	t.Logf("the handler got:\n%v\n%v", errs[0], errs[1])
	rec, ok := errors.AsType[*spool.RecoveredError](errs[1])
	require.True(t, ok, "%T: %v", errs[1], errs[1])
	assert.GreaterOrEqual(t, rec.Attempts, attempts)
	assert.Equal(t, rec.Attempts-1, rec.Suppressed, "every failed attempt but the reported one")
	assert.EqualValues(t, rec.Attempts, p.Stats().Spool.UploadFailed, "one span: one span-attempt per attempt")
	assert.Contains(t, errs[1].Error(), "spool: uploads recovered after ")
}

// TestSpoolWrongTokenReportedOnceWithTheFix: our collector (bearer-token
// authenticator) refuses the spool's uploads made with a wrong token; the
// drainer keeps retrying (nothing is lost), and the handler gets one
// report naming the fix, ErrUnauthenticated as the batch path says it.
func TestSpoolWrongTokenReportedOnceWithTheFix(t *testing.T) {
	clearOTLPEnv(t)
	r := startReceiver(t)
	col := testenv.StartCollector(t, testenv.WithJaegerOTLP(r.addr), testenv.WithDecisionWait(200*time.Millisecond))
	var h handled
	p, err := Setup(context.Background(), Config{Endpoint: col.GRPCEndpoint, Insecure: true, SkipCheck: true,
		Headers:  map[string]string{"authorization": "Bearer not-" + col.Token},
		Sampling: sampling.Config{Setting: sampling.MustParse("all")},
		Spool:    spool.Config{Dir: t.TempDir(), MaxBackoff: 20 * time.Millisecond, ReportInterval: time.Hour},
		Batch:    BatchConfig{ErrorHandler: h.handle}})
	require.NoError(t, err)
	leaf(context.Background(), p.Tracer("test"), "execute_tool x")

	waitFor(t, "failed uploads", func() bool { return p.Stats().Spool.UploadFailed >= 5 })
	errs := h.all()
	require.Len(t, errs, 1, "one report, not one per retry: %v", errs)
	t.Logf("the handler got: %v", errs[0])
	require.ErrorIs(t, errs[0], ErrUnauthenticated)
	for _, w := range []string{"spool: upload of 1 spans failed", "refused the exporter's",
		"set OTEL_EXPORTER_OTLP_HEADERS='authorization=Bearer <token>' or Config.Headers"} {
		assert.Contains(t, errs[0].Error(), w)
	}
	assert.Equal(t, int64(1), p.Stats().Spool.Unsent, "kept for a retry with the right token")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = p.Shutdown(ctx)
	require.ErrorIs(t, err, ErrUnauthenticated, "Shutdown names the fix too")
	assert.Zero(t, countService(r, DefaultServiceName))
}
