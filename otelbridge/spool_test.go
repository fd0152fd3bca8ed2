package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/otelbridge/sampling"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// stop takes the receiver off the network (a collector outage).
func (r *receiver) stop() { r.srv.Stop() }

// restart serves again on the same address.
func (r *receiver) restart(t testing.TB) {
	t.Helper()
	var lis net.Listener
	var err error
	for range 50 { // the old socket may linger a moment
		if lis, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, err)
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, traceService{r: r})
	colmetricpb.RegisterMetricsServiceServer(srv, metricService{r: r})
	r.srv = srv
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
}

// decide ends n allowed decision spans named prefix-i.
func decide(tr trace.Tracer, prefix string, n int) {
	for i := range n {
		_, s := tr.Start(context.Background(), fmt.Sprintf("%s-%d", prefix, i), trace.WithAttributes(toolAttrs("bash", allowed...)...))
		s.End()
	}
}

// TestSpoolCollectorDownThenBack: decisions made while the OTLP receiver
// is down are all delivered once it is back — through the real
// otlptracegrpc client and a real gRPC server — and none is lost.
func TestSpoolCollectorDownThenBack(t *testing.T) {
	r := startReceiver(t)
	r.stop()
	p, err := Setup(context.Background(), Config{Endpoint: r.addr, Insecure: true,
		Spool: spool.Config{Dir: t.TempDir()}, SkipCheck: true})
	require.NoError(t, err)
	decide(p.Tracer("t"), "down", 200)
	require.Eventually(t, func() bool { return p.Stats().Spool.UploadFailed > 0 }, 10*time.Second, 10*time.Millisecond)
	r.restart(t)
	decide(p.Tracer("t"), "up", 50)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, p.Shutdown(ctx))
	st := p.Stats()
	assert.Zero(t, st.Lost())
	assert.Equal(t, int64(250), st.Spool.Sent)
	seen := map[string]bool{}
	for _, s := range r.spans() {
		seen[s.span.GetName()] = true
	}
	assert.Len(t, seen, 250)
}

// TestSpoolCommittedCallKeptUnderDenyOnly: a committed (write-ahead) call
// is exported even when the sampling setting would drop it: its tool ran.
func TestSpoolCommittedCallKeptUnderDenyOnly(t *testing.T) {
	r := startReceiver(t)
	p, err := Setup(context.Background(), Config{Endpoint: r.addr, Insecure: true,
		Sampling: sampling.Config{Setting: sampling.MustParse("deny-only")}, Spool: spool.Config{Dir: t.TempDir(), Sync: spool.SyncAlways}})
	require.NoError(t, err)
	tr := p.Tracer("t")
	_, committed := tr.Start(context.Background(), "execute_tool committed", trace.WithAttributes(toolAttrs("bash", allowed...)...))
	require.NoError(t, p.Commit(context.Background(), committed))
	committed.End()
	_, plain := tr.Start(context.Background(), "execute_tool plain", trace.WithAttributes(toolAttrs("bash", allowed...)...))
	plain.End()
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, []string{"execute_tool committed"}, receivedNames(r))
	assert.Zero(t, p.Stats().Spool.Pending)
}

func TestCommitWithoutSpool(t *testing.T) {
	p, err := Setup(context.Background(), Config{Exporter: discardExporter{}})
	require.NoError(t, err)
	_, s := p.Tracer("t").Start(context.Background(), "x")
	require.ErrorIs(t, p.Commit(context.Background(), s), ErrNoSpool)
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestSpoolNeedsClientNotExporter(t *testing.T) {
	_, err := Setup(context.Background(), Config{Spool: spool.Config{Dir: t.TempDir()}, Exporter: discardExporter{}})
	require.ErrorContains(t, err, "Config.TraceClient")
}

// TestSpoolLostCountsDrops: spans the spool drops for its budget are lost,
// and Stats().Lost() says so.
func TestSpoolLostCountsDrops(t *testing.T) {
	r := startReceiver(t)
	r.stop()
	p, err := Setup(context.Background(), Config{Endpoint: r.addr, Insecure: true,
		Spool: spool.Config{Dir: t.TempDir(), MaxBytes: 16 << 10}, SkipCheck: true})
	require.NoError(t, err)
	decide(p.Tracer("t"), "d", 300)
	st := p.Stats()
	assert.Positive(t, st.Spool.Dropped)
	assert.Equal(t, st.Spool.Dropped, st.Lost())
	r.restart(t)
	require.NoError(t, p.Shutdown(context.Background()))
	st = p.Stats()
	assert.Equal(t, int64(300), st.Spool.Sent+st.Lost())
}

// TestSpoolMetrics: the spool's counters are recorded next to the
// pipeline's.
func TestSpoolMetrics(t *testing.T) {
	rd := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(rd))
	r := startReceiver(t)
	p, err := Setup(context.Background(), Config{Endpoint: r.addr, Insecure: true,
		Spool: spool.Config{Dir: t.TempDir()}, MeterProvider: mp})
	require.NoError(t, err)
	decide(p.Tracer("t"), "m", 5)
	require.NoError(t, p.ForceFlush(context.Background()))
	var rm metricdata.ResourceMetrics
	require.NoError(t, rd.Collect(context.Background(), &rm))
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				got[m.Name] = d.DataPoints[0].Value
			case metricdata.Gauge[int64]:
				got[m.Name] = d.DataPoints[0].Value
			case metricdata.Gauge[float64]:
				got[m.Name] = int64(d.DataPoints[0].Value)
			}
		}
	}
	assert.Equal(t, int64(5), got[spool.MetricSpooled])
	assert.Equal(t, int64(5), got[spool.MetricSent])
	assert.Contains(t, got, spool.MetricDropped)
	assert.Contains(t, got, spool.MetricBytes)
	assert.Contains(t, got, spool.MetricOldestUnsent)
	assert.Contains(t, got, "toolgate.sampling.span.kept")
	require.NoError(t, p.Shutdown(context.Background()))
}

// TestSpoolConfigFromSetup: Setup reads TOOLGATE_SPOOL_* through
// spool.Config.Resolve (a bad value is refused before anything starts,
// naming the variable) and keeps the pipeline's one error handler.
func TestSpoolConfigFromSetup(t *testing.T) {
	t.Setenv(spool.EnvDir, t.TempDir())
	t.Setenv(spool.EnvSync, "sometimes")
	_, err := Setup(context.Background(), Config{TraceClient: &failClient{}, SkipCheck: true})
	require.ErrorContains(t, err, spool.EnvSync)

	t.Setenv(spool.EnvSync, "")
	_, err = Setup(context.Background(), Config{TraceClient: &failClient{}, Spool: spool.Config{ErrorHandler: func(error) {}}})
	require.ErrorContains(t, err, "Config.Batch.ErrorHandler")

	errs := make(chan error, 16)
	p, err := Setup(context.Background(), Config{TraceClient: &failClient{}, Spool: spool.Config{MaxBackoff: time.Millisecond},
		Sampling: sampling.Config{Setting: sampling.MustParse("all")},
		Batch: BatchConfig{ErrorHandler: func(err error) {
			select {
			case errs <- err:
			default:
			}
		}}})
	require.NoError(t, err)
	_, s := p.Tracer("t").Start(context.Background(), "x")
	s.End()
	select {
	case err := <-errs:
		require.ErrorIs(t, err, errUpload, "the spool's upload error reaches Config.Batch.ErrorHandler")
	case <-time.After(30 * time.Second): // a bound against a hang, not a speed check
		t.Fatal("Config.Batch.ErrorHandler never received the spool's upload error")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_ = p.Shutdown(ctx)
}

var errUpload = errors.New("collector down")

// failClient is an otlptrace.Client whose uploads all fail.
type failClient struct{}

func (*failClient) Start(context.Context) error { return nil }
func (*failClient) Stop(context.Context) error  { return nil }
func (*failClient) UploadTraces(context.Context, []*tracepb.ResourceSpans) error {
	return errUpload
}

// TestSpoolDirLockedAcrossProviders: a second Setup on the same spool
// directory fails with a clear error.
func TestSpoolDirLockedAcrossProviders(t *testing.T) {
	dir := t.TempDir()
	r := startReceiver(t)
	cfg := Config{Endpoint: r.addr, Insecure: true, Spool: spool.Config{Dir: dir}}
	p, err := Setup(context.Background(), cfg)
	require.NoError(t, err)
	_, err = Setup(context.Background(), cfg)
	require.ErrorIs(t, err, spool.ErrLocked)
	require.NoError(t, p.Shutdown(context.Background()))
}

// discardExporter drops everything.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }
