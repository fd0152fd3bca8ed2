package e2e_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
)

// load runs agent runs of 10 calls at a steady rate until stopped.
type load struct {
	stop chan struct{}
	done chan struct{}
	o    *outcome
}

func startLoad(t *testing.T, p *otelbridge.Provider, service string, callsPerSecond int) *load {
	t.Helper()
	ex := newExecutor(t, p, 0)
	cmds := commands(t)
	l := &load{stop: make(chan struct{}), done: make(chan struct{}), o: newOutcome()}
	const per = 10
	every := time.Second * per / time.Duration(callsPerSecond)
	go func() {
		defer close(l.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for r := 0; ; r++ {
			off := (r * per) % (len(cmds) - per)
			runAgent(context.Background(), t, p, ex, l.o, fmt.Sprintf("agent-%d", r%3), fmt.Sprintf("%s-run%d", service, r), cmds[off:off+per])
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return l
}

func (l *load) finish() *outcome {
	close(l.stop)
	<-l.done
	return l.o
}

// outage scales the outage lengths of the fault tests (TOOLGATE_E2E_SHORT).
func outage(d time.Duration) time.Duration {
	if short() {
		return d / 5
	}
	return d
}

// faultReport waits for the audit to catch up and reports what was lost:
// decisions the executor made that gate_decisions does not hold.
func faultReport(t *testing.T, s *stack, p *otelbridge.Provider, o *outcome, service string) (missing int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		// A failed final export is a counted loss (Stats), reported below.
		t.Logf("SDK shutdown: %v", err)
	}
	want := len(o.ids(gate.ActionAllow, gate.ActionDeny))
	got := s.waitSettled(t, service, want, 120*time.Second)
	st := p.Stats()
	failed, _ := s.collector.Metric(context.Background(), "otelcol_exporter_send_failed_spans", `exporter="clickhouse"`)
	enqFailed, _ := s.collector.Metric(context.Background(), "otelcol_exporter_enqueue_failed_spans", `exporter="clickhouse"`)
	t.Logf("REPORT %s: decisions made %d (deny %d), stored %d, lost %d; SDK: exported %d spans, lost %d (queue dropped %d, export failed %d); collector clickhouse exporter: send failed %.0f, enqueue failed %.0f",
		t.Name(), want, o.count(gate.ActionDeny), got, want-got, st.Batch.Exported, st.Lost(), st.Batch.QueueDropped, st.Batch.ExportFailed, failed, enqFailed)
	// Never more rows than decisions: no duplicate survived.
	rows := s.decisions(context.Background(), t, service)
	ids := map[string]bool{}
	for _, r := range rows {
		assert.Falsef(t, ids[r.ToolCallID], "decision %s stored twice", r.ToolCallID)
		ids[r.ToolCallID] = true
		assert.Equal(t, string(o.calls[r.ToolCallID]), r.Action, r.ToolCallID)
	}
	return want - got
}

// waitSettled waits until gate_decisions holds want rows, or the collector's
// clickhouse queue is empty and the count has not moved for 3 s (the rest
// is lost), or timeout; it returns the count.
func (s *stack) waitSettled(t *testing.T, service string, want int, timeout time.Duration) int {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	last, since := -1, time.Now()
	for {
		n := int(s.countRows(ctx, t, "SELECT count() FROM otel.gate_decisions FINAL WHERE ServiceName = {s:String}", service))
		if n >= want || time.Now().After(deadline) {
			return n
		}
		if n != last {
			last, since = n, time.Now()
		}
		queued, err := s.collector.Metric(ctx, "otelcol_exporter_queue_size", `exporter="clickhouse"`)
		if err == nil && queued == 0 && time.Since(since) > 3*time.Second {
			return n
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestFaultClickHouseOutage stops ClickHouse for 30 s while the executor
// keeps deciding: the exporter's persistent queue and unlimited retries must
// deliver every decision once ClickHouse is back.
func TestFaultClickHouseOutage(t *testing.T) {
	s := startStack(t, withoutJaeger())
	service := "e2e-fault-clickhouse"
	p := s.providerCfg(t, otelbridge.Config{ServiceName: service})
	l := startLoad(t, p, service, 100)
	time.Sleep(outage(10 * time.Second))
	t.Logf("stopping ClickHouse for %s", outage(30*time.Second))
	require.NoError(t, s.ch.Stop())
	time.Sleep(outage(30 * time.Second))
	require.NoError(t, s.ch.Start(context.Background()))
	t.Log("ClickHouse is back")
	time.Sleep(outage(10 * time.Second))
	o := l.finish()
	missing := faultReport(t, s, p, o, service)
	assert.Zero(t, missing, "decisions lost to a ClickHouse outage")
	assert.Zero(t, p.Stats().Lost(), "the SDK lost nothing: the collector accepted every span during the outage")
}

// exportLog wraps the SDK's exporter and records, for every successful
// export, when it finished and how many calls the workload had made by then.
type exportLog struct {
	sdktrace.SpanExporter
	o  func() int
	mu sync.Mutex
	ok []exportMark
}

type exportMark struct {
	at    time.Time
	calls int
}

func (e *exportLog) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		return err
	}
	e.mu.Lock()
	calls := e.o
	e.mu.Unlock()
	if calls != nil {
		n := calls()
		e.mu.Lock()
		e.ok = append(e.ok, exportMark{time.Now(), n})
		e.mu.Unlock()
	}
	return nil
}

// callsBy returns the workload's call count at the first successful export
// after t.
func (e *exportLog) callsBy(t time.Time) (int, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range e.ok {
		if m.at.After(t) {
			return m.calls, true
		}
	}
	return 0, false
}

// TestFaultCollectorOutage stops the collector for 10 s while the executor
// keeps deciding (100 calls/s). The SDK retries and queues; what it cannot
// hold is lost and counted by otelbridge's batch processor. Every missing
// decision must be one the SDK counted (none lost unseen) and made while
// the SDK could not export (from the stop to its first successful export
// after the restart). With an export timeout longer than the outage and a
// short gRPC reconnect backoff nothing is lost; otelbridge's defaults (10 s
// per export, retries included; gRPC's reconnect backoff up to 120 s) lose
// the batches in flight; a small queue loses what overflows it.
func TestFaultCollectorOutage(t *testing.T) {
	fast := []otlptracegrpc.Option{
		otlptracegrpc.WithTimeout(time.Minute),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 250 * time.Millisecond,
			MaxInterval: time.Second, MaxElapsedTime: time.Minute}),
		otlptracegrpc.WithDialOption(grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 250 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second})),
	}
	tests := []struct {
		name     string
		exporter []otlptracegrpc.Option
		queue    int
		wantZero bool
	}{
		{"long export timeout", fast, 0, true},
		{"otelbridge defaults", nil, 0, false},
		{"small queue", fast, 128, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startStack(t, withoutJaeger())
			service := fmt.Sprintf("e2e-fault-collector-%d", i)
			exp, err := otlptracegrpc.New(context.Background(), append([]otlptracegrpc.Option{
				otlptracegrpc.WithEndpoint(s.collector.GRPCEndpoint), otlptracegrpc.WithInsecure(),
				otlptracegrpc.WithHeaders(s.collector.Headers())}, tt.exporter...)...)
			require.NoError(t, err)
			log := &exportLog{SpanExporter: exp}
			p := s.providerCfg(t, otelbridge.Config{ServiceName: service, Batch: otelbridge.BatchConfig{QueueSize: tt.queue}, Exporter: log})
			l := startLoad(t, p, service, 100)
			log.mu.Lock()
			log.o = l.o.size
			log.mu.Unlock()
			time.Sleep(outage(5 * time.Second))
			t.Logf("stopping the collector for %s", outage(10*time.Second))
			require.NoError(t, s.collector.Stop())
			stopped, before := time.Now(), l.o.size()
			time.Sleep(outage(10 * time.Second))
			require.NoError(t, s.collector.Start(context.Background()))
			restarted := time.Now()
			t.Logf("collector is back; %d calls were made while it was down", l.o.size()-before)
			time.Sleep(outage(5 * time.Second))
			o := l.finish()
			missing := faultReport(t, s, p, o, service)
			lost := p.Stats().Lost()
			assert.LessOrEqual(t, int64(missing), lost, "every lost decision is counted by the SDK")
			by, ok := log.callsBy(restarted)
			require.True(t, ok, "the SDK exported again after the restart")
			first := restarted
			for _, m := range log.ok {
				if m.at.After(restarted) {
					first = m.at
					break
				}
			}
			t.Logf("SDK blind for %s (stop to first export after restart): %d calls made in that window",
				first.Sub(stopped).Round(100*time.Millisecond), by-before)
			assert.LessOrEqual(t, missing, by-before, "only calls made while the SDK could not export are lost")
			if tt.wantZero {
				assert.Zero(t, missing, "decisions lost")
			}
		})
	}
}
