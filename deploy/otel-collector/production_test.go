package otelcollector_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolgate/toolgate/audit"
	otelcollector "github.com/toolgate/toolgate/deploy/otel-collector"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge"
)

// These tests run the shipped config.yaml on the real collector
// (bin/otelcol-toolgate) against the embedded ClickHouse (auditq serve):
// the production rules of docs/deployment.md, "Production".

// migratedClickHouse starts the embedded ClickHouse and applies the audit
// schema as `auditq migrate` does (the collector no longer creates it).
func migratedClickHouse(t *testing.T) (*testenv.ClickHouse, *audit.Store) {
	t.Helper()
	ctx := context.Background()
	ch := testenv.StartClickHouse(t)
	w, err := audit.Open(ctx, ch.WriterDSN)
	require.NoError(t, err)
	_, err = w.Migrate(ctx)
	require.NoError(t, err, "auditq migrate")
	require.NoError(t, w.Close())
	r, err := audit.Open(ctx, ch.ReaderDSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return ch, r
}

// decisions builds n gate decisions (execute_tool spans with gate.action and
// gate.gated) of service, each in its own trace.
func decisions(service string, n int) tracetest.SpanStubs {
	res := resource.NewSchemaless(semconv.ServiceName(service))
	now := time.Now()
	out := make(tracetest.SpanStubs, n)
	for i := range out {
		var tid trace.TraceID
		var sid trace.SpanID
		_, _ = rand.Read(tid[:])
		_, _ = rand.Read(sid[:])
		action := gate.ActionAllow
		if i%3 == 0 {
			action = gate.ActionDeny
		}
		out[i] = tracetest.SpanStub{
			Name:        "execute_tool bash",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
			SpanKind:    trace.SpanKindInternal,
			StartTime:   now.Add(time.Duration(i) * time.Millisecond),
			EndTime:     now.Add(time.Duration(i)*time.Millisecond + time.Millisecond),
			Attributes: []attribute.KeyValue{
				semconv.GenAIOperationNameExecuteTool,
				semconv.GenAIToolName("bash"),
				semconv.GenAIToolCallID(fmt.Sprintf("call-%d", i)),
				gate.AttrGated.Bool(true),
				gate.AttrAction.String(string(action)),
			},
			Resource:             res,
			InstrumentationScope: instrumentation.Scope{Name: "production_test"},
		}
	}
	return out
}

// export sends spans in one OTLP/gRPC request and returns its error;
// retries are off, so a refusal comes back as it is.
func export(ctx context.Context, t *testing.T, endpoint string, headers map[string]string, spans tracetest.SpanStubs) error {
	t.Helper()
	opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
	if headers != nil {
		opts = append(opts, otlptracegrpc.WithHeaders(headers))
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	require.NoError(t, err)
	defer func() { _ = exp.Shutdown(ctx) }()
	return exp.ExportSpans(ctx, spans.Snapshots())
}

// stored counts a service's spans in otel_traces (all rows, distinct span
// IDs) and its decisions in gate_decisions (FINAL).
func stored(ctx context.Context, t *testing.T, r *audit.Store, service string) (rows, spans, decisions uint64) {
	t.Helper()
	ctx = new(audit.Params).String("s", service).Context(ctx)
	require.NoError(t, r.Conn().QueryRow(ctx,
		"SELECT count(), uniqExact(SpanId) FROM otel.otel_traces WHERE ServiceName = {s:String}").Scan(&rows, &spans))
	require.NoError(t, r.Conn().QueryRow(ctx,
		"SELECT count() FROM otel.gate_decisions FINAL WHERE ServiceName = {s:String}").Scan(&decisions))
	return rows, spans, decisions
}

// A collector (re)started while ClickHouse is down starts, accepts and
// queues decisions on disk, and delivers each exactly once when ClickHouse
// is back: create_schema is false, so the exporter does not connect at start.
func TestCollectorQueuesWhileClickHouseIsDown(t *testing.T) {
	ctx := context.Background()
	ch, r := migratedClickHouse(t)
	require.NoError(t, ch.Stop(), "ClickHouse goes away before the collector starts")

	col := testenv.StartCollector(t, testenv.WithClickHouse(ch.URL, ch.Writer.Name, ch.Writer.Password, ""))
	const service, per = "prod-outage", 40
	require.NoError(t, export(ctx, t, col.GRPCEndpoint, col.Headers(), decisions(service, per)),
		"the collector accepts while ClickHouse is down")

	// A restart while ClickHouse is still down: the queue is on disk.
	require.NoError(t, col.Restart(ctx), "the collector restarts while ClickHouse is down")
	require.NoError(t, export(ctx, t, col.GRPCEndpoint, col.Headers(), decisions(service, per)))
	log, err := os.ReadFile(col.LogPath)
	require.NoError(t, err)
	assert.Contains(t, string(log), "connection refused", "the exporter did try ClickHouse while it was down")

	require.NoError(t, ch.Start(ctx), "ClickHouse comes back")
	require.Eventually(t, func() bool {
		_, _, d := stored(ctx, t, r, service)
		return d >= 2*per
	}, 90*time.Second, 500*time.Millisecond, "the queued decisions arrive")
	time.Sleep(3 * time.Second) // a late redelivery would show now
	rows, spans, d := stored(ctx, t, r, service)
	assert.Equal(t, uint64(2*per), d, "gate_decisions: one row per decision")
	assert.Equal(t, uint64(2*per), spans, "otel_traces: every span")
	assert.Equal(t, uint64(2*per), rows, "otel_traces: each span exactly once")
}

// Only agents that present the collector's bearer token can write: no
// token and a wrong one are refused (gRPC Unauthenticated, HTTP 401) and
// nothing of theirs is stored; the standard OTEL_EXPORTER_OTLP_HEADERS
// through otelbridge gets in.
func TestOTLPRequiresToken(t *testing.T) {
	ctx := context.Background()
	ch, r := migratedClickHouse(t)
	col := testenv.StartCollector(t, testenv.WithClickHouse(ch.URL, ch.Writer.Name, ch.Writer.Password, ""))

	refused := []struct {
		name    string
		headers map[string]string
	}{
		{"no token", nil},
		{"wrong token", map[string]string{"authorization": "Bearer not-" + col.Token}},
		{"token without scheme", map[string]string{"authorization": col.Token}},
		{"token in another header", map[string]string{"x-api-key": col.Token}},
	}
	for i, tt := range refused {
		t.Run("grpc "+tt.name, func(t *testing.T) {
			err := export(ctx, t, col.GRPCEndpoint, tt.headers, decisions(fmt.Sprintf("prod-forged-%d", i), 3))
			require.Error(t, err)
			st, ok := status.FromError(err)
			if !ok {
				assert.Contains(t, err.Error(), "Unauthenticated")
				return
			}
			assert.Equal(t, codes.Unauthenticated, st.Code(), err.Error())
		})
		t.Run("http "+tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+col.HTTPEndpoint+"/v1/traces", bytes.NewReader(nil))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-protobuf")
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		})
	}

	// The agent's side: OTEL_EXPORTER_OTLP_HEADERS, read by the exporter
	// through otelbridge.Setup (Config.Headers unset).
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer "+col.Token)
	const service = "prod-authenticated"
	p, err := otelbridge.Setup(ctx, otelbridge.Config{Endpoint: col.GRPCEndpoint, Insecure: true, ServiceName: service,
		Batch: otelbridge.BatchConfig{BatchTimeout: 100 * time.Millisecond}})
	require.NoError(t, err)
	tr := p.Tracer("production_test")
	const n = 5
	for i := 0; i < n; i++ {
		_, span := tr.Start(ctx, "execute_tool bash", trace.WithAttributes(semconv.GenAIOperationNameExecuteTool,
			semconv.GenAIToolName("bash"), gate.AttrGated.Bool(true), gate.AttrAction.String(string(gate.ActionAllow))))
		span.End()
	}
	require.NoError(t, p.Shutdown(ctx))
	assert.Zero(t, p.Stats().Lost(), "every span was accepted")
	require.Eventually(t, func() bool {
		_, _, d := stored(ctx, t, r, service)
		return d == n
	}, 60*time.Second, 250*time.Millisecond, "the authenticated agent's decisions are stored")

	for i := range refused {
		rows, _, _ := stored(ctx, t, r, fmt.Sprintf("prod-forged-%d", i))
		assert.Zero(t, rows, "nothing of a refused agent is stored (%s)", refused[i].name)
	}
	var all uint64
	require.NoError(t, r.Conn().QueryRow(ctx, "SELECT count() FROM otel.otel_traces").Scan(&all))
	assert.Equal(t, uint64(n), all, "only the authenticated agent's spans")
}

// A wrong ClickHouse password: the collector's log names the
// authentication failure (not a decompression error), the decisions stay in
// the queue, and a collector restarted with the right password delivers them.
func TestWrongClickHousePasswordNamesAuthentication(t *testing.T) {
	ctx := context.Background()
	ch, r := migratedClickHouse(t)
	col := testenv.StartCollector(t, testenv.WithClickHouse(ch.URL, ch.Writer.Name, "not-"+ch.Writer.Password, ""))
	const service, n = "prod-wrong-password", 10
	require.NoError(t, export(ctx, t, col.GRPCEndpoint, col.Headers(), decisions(service, n)))

	var failure string // the exporter's first "Exporting failed" line
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(col.LogPath)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "Exporting failed") {
				failure = line
				return true
			}
		}
		return false
	}, 30*time.Second, 250*time.Millisecond, "the exporter reports the failure")
	t.Logf("exporter: %s", failure)
	assert.Contains(t, failure, "writer: Authentication failed")
	assert.Contains(t, failure, "(AUTHENTICATION_FAILED)")
	assert.NotContains(t, failure, "data size should be", "the exception must not read as a decompression error")
	rows, _, _ := stored(ctx, t, r, service)
	assert.Zero(t, rows)

	// Fix the password, keep the queue: nothing was lost.
	require.NoError(t, col.Stop())
	testenv.StartCollector(t, testenv.WithClickHouse(ch.URL, ch.Writer.Name, ch.Writer.Password, ""),
		testenv.WithCollectorEnv("TOOLGATE_OTELCOL_QUEUE_DIR="+filepath.Join(col.Dir, "queue")))
	require.Eventually(t, func() bool {
		_, _, d := stored(ctx, t, r, service)
		return d == n
	}, 60*time.Second, 500*time.Millisecond, "the queued decisions arrive with the right password")
}

// runCollector runs the collector on config.yaml with exactly env (plus
// PATH and HOME) until it exits or until the log contains until, and returns
// its output and whether it exited by itself.
func runCollector(t *testing.T, env []string, until string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	paths, err := otelcollector.WriteConfigs(dir, otelcollector.ModeDecisions)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, collectorBinary(t), "--config", paths[0])
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"TOOLGATE_OTELCOL_QUEUE_DIR=" + filepath.Join(dir, "queue"),
		"TOOLGATE_OTELCOL_GRPC=127.0.0.1:0", "TOOLGATE_OTELCOL_HTTP=127.0.0.1:0",
		"TOOLGATE_OTELCOL_HEALTH=127.0.0.1:0", "TOOLGATE_OTELCOL_METRICS_PORT=0"}, env...)
	var out testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case <-done:
			return out.String(), true
		case <-time.After(100 * time.Millisecond):
			if until != "" && strings.Contains(out.String(), until) {
				_ = cmd.Process.Kill()
				<-done
				return out.String(), false
			}
		case <-ctx.Done():
			<-done
			t.Fatalf("collector neither exited nor logged %q:\n%s", until, out.String())
		}
	}
}

// Missing settings are named: without TOOLGATE_OTLP_TOKEN the collector
// refuses to start and says which variable; without
// TOOLGATE_CLICKHOUSE_PASSWORD it warns, naming the variable.
func TestMissingSettingsAreNamed(t *testing.T) {
	out, exited := runCollector(t, []string{"TOOLGATE_CLICKHOUSE_PASSWORD=x"}, "Everything is ready")
	require.True(t, exited, "a collector without a token must not start:\n%s", out)
	assert.Contains(t, out, `"name": "TOOLGATE_OTLP_TOKEN"`)
	assert.Contains(t, out, "no bearer token provided")

	out, exited = runCollector(t, []string{"TOOLGATE_OTLP_TOKEN=t"}, "Everything is ready")
	require.False(t, exited, "a collector without a ClickHouse password starts (and queues):\n%s", out)
	assert.Contains(t, out, "Configuration references unset environment variable")
	assert.Contains(t, out, `"name": "TOOLGATE_CLICKHOUSE_PASSWORD"`)
}

// A collector pointed at a ClickHouse without the audit schema (auditq
// migrate not run) names the missing database or table in its log and keeps
// the decisions queued; once the schema is migrated they arrive.
func TestUnmigratedSchemaIsNamed(t *testing.T) {
	ctx := context.Background()
	ch := testenv.StartClickHouse(t)
	col := testenv.StartCollector(t, testenv.WithClickHouse(ch.URL, ch.Writer.Name, ch.Writer.Password, ""))
	const service, n = "prod-unmigrated", 6
	require.NoError(t, export(ctx, t, col.GRPCEndpoint, col.Headers(), decisions(service, n)))
	var failure string
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(col.LogPath)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "Exporting failed") {
				failure = line
				return true
			}
		}
		return false
	}, 30*time.Second, 250*time.Millisecond, "the exporter reports the failure")
	t.Logf("exporter: %s", failure)
	assert.Regexp(t, `UNKNOWN_DATABASE|UNKNOWN_TABLE`, failure)

	w, err := audit.Open(ctx, ch.WriterDSN)
	require.NoError(t, err)
	_, err = w.Migrate(ctx)
	require.NoError(t, err, "auditq migrate")
	require.NoError(t, w.Close())
	r, err := audit.Open(ctx, ch.ReaderDSN)
	require.NoError(t, err)
	defer r.Close()
	require.Eventually(t, func() bool {
		_, _, d := stored(ctx, t, r, service)
		return d == n
	}, 60*time.Second, 500*time.Millisecond, "the queued decisions arrive after the migration")
}

// The collector's log line at a shutdown while ClickHouse is down —
// "Exporting failed. Dropping data. … interrupted due to shutdown …
// dropped_items" — looks like loss but is not: the persistent queue keeps
// the request that was being retried, and a restarted collector delivers
// every decision, exactly once (docs/deployment.md, Troubleshooting).
func TestShutdownDropLogLosesNothing(t *testing.T) {
	ctx := context.Background()
	ch, r := migratedClickHouse(t)
	require.NoError(t, ch.Stop(), "ClickHouse is down")
	col := testenv.StartCollector(t, testenv.WithClickHouse(ch.URL, ch.Writer.Name, ch.Writer.Password, ""))
	const service, n = "prod-shutdown-drop", 30
	require.NoError(t, export(ctx, t, col.GRPCEndpoint, col.Headers(), decisions(service, n)))
	require.Eventually(t, func() bool {
		log, err := os.ReadFile(col.LogPath)
		return err == nil && bytes.Contains(log, []byte("connection refused"))
	}, 30*time.Second, 100*time.Millisecond, "the exporter is retrying ClickHouse")
	require.NoError(t, col.Stop())

	log, err := os.ReadFile(col.LogPath)
	require.NoError(t, err)
	var line string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, "interrupted due to shutdown") {
			line = l
		}
	}
	t.Logf("the shutdown line: %s", line)
	require.NotEmpty(t, line, "the collector logs the interrupted export at shutdown")
	assert.Contains(t, line, "Exporting failed. Dropping data.")
	m := regexp.MustCompile(`"dropped_items": (\d+)`).FindStringSubmatch(line)
	require.NotNil(t, m, "the line counts dropped_items")
	dropped, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	assert.Positive(t, dropped)

	require.NoError(t, ch.Start(ctx), "ClickHouse comes back")
	require.NoError(t, col.Start(ctx), "the collector restarts with its queue")
	require.Eventually(t, func() bool {
		_, _, d := stored(ctx, t, r, service)
		return d >= n
	}, 90*time.Second, 500*time.Millisecond, "the \"dropped\" decisions arrive")
	time.Sleep(3 * time.Second) // a late redelivery would show now
	rows, spans, d := stored(ctx, t, r, service)
	t.Logf("logged dropped_items=%d; stored %d decisions, %d spans, %d rows of %d sent", dropped, d, spans, rows, n)
	assert.Equal(t, uint64(n), d, "gate_decisions: every decision")
	assert.Equal(t, uint64(n), rows, "otel_traces: each span exactly once")
}
