package otelbridge

import (
	"context"
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
	"google.golang.org/grpc"

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
		Spool: spool.Config{Dir: t.TempDir()}}, WithoutCheck())
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
		Sampling: MustParseSampling("deny-only"), Spool: spool.Config{Dir: t.TempDir(), Sync: spool.SyncAlways}})
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
	p, err := Setup(context.Background(), Config{}, WithSpanExporter(discardExporter{}))
	require.NoError(t, err)
	_, s := p.Tracer("t").Start(context.Background(), "x")
	require.ErrorIs(t, p.Commit(context.Background(), s), ErrNoSpool)
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestSpoolNeedsClientNotExporter(t *testing.T) {
	_, err := Setup(context.Background(), Config{Spool: spool.Config{Dir: t.TempDir()}}, WithSpanExporter(discardExporter{}))
	require.ErrorContains(t, err, "WithTraceClient")
}

// TestSpoolLostCountsDrops: spans the spool drops for its budget are lost,
// and Stats().Lost() says so.
func TestSpoolLostCountsDrops(t *testing.T) {
	r := startReceiver(t)
	r.stop()
	p, err := Setup(context.Background(), Config{Endpoint: r.addr, Insecure: true,
		Spool: spool.Config{Dir: t.TempDir(), MaxBytes: 16 << 10}}, WithoutCheck())
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
		Spool: spool.Config{Dir: t.TempDir()}}, WithMeterProvider(mp))
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

func TestSpoolFromEnv(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    spool.Config
		wantErr string
	}{
		{env: map[string]string{}, want: spool.Config{}},
		{env: map[string]string{EnvSpoolDir: "/d", EnvSpoolMaxBytes: "64MiB", EnvSpoolSync: "always", EnvSpoolFull: "refuse"},
			want: spool.Config{Dir: "/d", MaxBytes: 64 << 20, Sync: spool.SyncAlways, Full: spool.Refuse}},
		{env: map[string]string{EnvSpoolDir: "/d", EnvSpoolMaxBytes: "1000", EnvSpoolSync: "250ms", EnvSpoolFull: "drop-oldest"},
			want: spool.Config{Dir: "/d", MaxBytes: 1000, SyncInterval: 250 * time.Millisecond}},
		{env: map[string]string{EnvSpoolMaxBytes: "lots"}, wantErr: EnvSpoolMaxBytes},
		{env: map[string]string{EnvSpoolMaxBytes: "-1"}, wantErr: EnvSpoolMaxBytes},
		{env: map[string]string{EnvSpoolSync: "sometimes"}, wantErr: "always"},
		{env: map[string]string{EnvSpoolFull: "panic"}, wantErr: "refuse"},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for _, k := range []string{EnvSpoolDir, EnvSpoolMaxBytes, EnvSpoolSync, EnvSpoolFull} {
				t.Setenv(k, tt.env[k])
			}
			got, err := spoolFromEnv(spool.Config{})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	// Config fields win over the environment.
	t.Setenv(EnvSpoolDir, "/env")
	got, err := spoolFromEnv(spool.Config{Dir: "/cfg"})
	require.NoError(t, err)
	assert.Equal(t, "/cfg", got.Dir)
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
