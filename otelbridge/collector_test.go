package otelbridge

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// collectorBinary finds our collector distribution: TOOLGATE_OTELCOL
// (relative paths from the repository root), default bin/otelcol-toolgate.
// Missing, it fails the test under TOOLGATE_INTEGRATION=1 and skips it
// otherwise.
func collectorBinary(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..")
	p := os.Getenv("TOOLGATE_OTELCOL")
	if p == "" {
		p = filepath.Join("bin", "otelcol-toolgate")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("TOOLGATE_INTEGRATION") == "1" {
			t.Fatalf("collector binary %s missing (build it with the deploy/otel-collector scripts): %v", p, err)
		}
		t.Skipf("collector binary %s missing (build it with the deploy/otel-collector scripts)", p)
	}
	return p
}

func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer lis.Close()
	return lis.Addr().String()
}

// startCollector runs the real collector with an OTLP/gRPC receiver on a
// free loopback port, the given processors, and an OTLP exporter to next.
// It returns the receiver's address once it accepts connections.
func startCollector(t *testing.T, processors, processorList, next string) string {
	t.Helper()
	return startCollectorGRPC(t, "", processors, processorList, next)
}

// startCollectorGRPC is startCollector with more settings for the gRPC
// receiver (YAML indented under grpc:, e.g. a tls: block).
func startCollectorGRPC(t *testing.T, grpcExtra, processors, processorList, next string) string {
	t.Helper()
	bin := collectorBinary(t)
	in := freeAddr(t)
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
%s
processors:
  batch:
    timeout: 100ms
%s
exporters:
  otlp_grpc:
    endpoint: %s
    tls:
      insecure: true
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [%s]
      exporters: [otlp_grpc]
  telemetry:
    metrics:
      level: none
`, in, grpcExtra, processors, next, processorList)
	// Its own ports only: never a running demo's (make demo).
	require.NoError(t, testenv.CheckLocalStackPorts([][]byte{[]byte(cfg)}, os.Environ()))
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	out := &testenv.SyncBuffer{}
	cmd := exec.Command(bin, "--config", path)
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("collector output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", in, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return in
		}
		select {
		case err := <-done:
			t.Fatalf("collector exited: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector not listening on %s after 30 s\n%s", in, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitSpans waits until the receiver holds n spans (the collector forwards
// asynchronously), then returns their sorted names.
func waitSpans(t *testing.T, r *receiver, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(r.spans()) < n && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // and nothing more arrives
	got := receivedNames(r)
	sort.Strings(got)
	return got
}

// TestThroughRealCollector sends spans from Setup (configured by OTEL_*
// variables) through our collector distribution to an OTLP receiver: the
// SDK's sampling modes and the collector's span-level filter (the audit
// pipeline's definition of a decision) keep what docs/sampling.md says.
func TestThroughRealCollector(t *testing.T) {
	const auditFilter = `  filter/audit:
    error_mode: ignore
    trace_conditions:
      - span.attributes["gate.action"] == nil and span.attributes["gate.gated"] != true and span.attributes["gate.opt_out"] != true and span.attributes["gen_ai.operation.name"] != "invoke_agent" and span.attributes["gen_ai.operation.name"] != "invoke_workflow"
`
	tests := []struct {
		name       string
		sampling   string
		processors string
		list       string
		want       []string
	}{
		{"sdk decisions, collector pass-through", "decisions", "", "batch",
			[]string{"GET /ask", "execute_tool curl", "execute_tool ls", "execute_tool optout", "execute_tool read",
				"execute_tool rm", "invoke_agent coder", "invoke_agent helper", "invoke_agent planner", "invoke_agent x"}},
		{"sdk deny-only, collector pass-through", "deny-only", "", "batch",
			[]string{"execute_tool curl", "execute_tool rm", "invoke_agent helper", "invoke_agent planner"}},
		// The collector's filter has no ancestor tracking and reads
		// gen_ai.operation.name only: it drops the HTTP root and the agent
		// span that lacks the attribute.
		{"sdk all, collector filter/audit", "all", auditFilter, "filter/audit, batch",
			[]string{"execute_tool curl", "execute_tool ls", "execute_tool optout", "execute_tool read",
				"execute_tool rm", "invoke_agent coder", "invoke_agent helper", "invoke_agent planner"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startReceiver(t)
			in := startCollector(t, tt.processors, tt.list, r.addr)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+in)
			t.Setenv(sampling.Env, tt.sampling)
			ctx := context.Background()
			p, err := Setup(ctx, Config{ServiceName: "collector-test"})
			require.NoError(t, err)
			emitRuns(p.Tracer("test"))
			require.NoError(t, p.Shutdown(ctx))
			assert.Zero(t, p.Stats().Lost())
			assert.Equal(t, tt.want, waitSpans(t, r, len(tt.want)))
			assert.Equal(t, "collector-test", r.spans()[0].resource["service.name"])
		})
	}
}
