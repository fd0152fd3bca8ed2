package otelbridge

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// collectorProc is our collector binary on a fixed loopback address,
// forwarding to next, that a test can stop and start again.
type collectorProc struct {
	t        *testing.T
	bin, cfg string
	in       string
	cmd      *exec.Cmd
	done     chan error
	out      *testenv.SyncBuffer
}

func newCollectorProc(t *testing.T, next string) *collectorProc {
	bin := collectorBinary(t)
	in := freeAddr(t)
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
processors:
  batch:
    timeout: 100ms
exporters:
  otlp_grpc:
    endpoint: %s
    tls:
      insecure: true
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [otlp_grpc]
  telemetry:
    metrics:
      level: none
`, in, next)
	require.NoError(t, testenv.CheckLocalStackPorts([][]byte{[]byte(cfg)}, os.Environ()))
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	c := &collectorProc{t: t, bin: bin, cfg: path, in: in, out: &testenv.SyncBuffer{}}
	t.Cleanup(c.stop)
	return c
}

func (c *collectorProc) start() {
	c.cmd = exec.Command(c.bin, "--config", c.cfg)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	require.NoError(c.t, c.cmd.Start())
	c.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(c.cmd, c.done)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if conn, err := net.DialTimeout("tcp", c.in, 200*time.Millisecond); err == nil {
			_ = conn.Close()
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("collector not listening on %s:\n%s", c.in, c.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *collectorProc) stop() {
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	c.cmd = nil
}

// TestCollectorOutageRecovery measures, through our real collector, how
// long after a collector outage (TOOLGATE_OUTAGE, default 10 s) the
// decisions made during it reach the back end, and how many are lost:
// with the defaults before issue 12 (SDK retry 5 s..30 s, gRPC reconnect
// backoff up to 120 s), today's defaults without the spool, and with the
// spool. Decisions are made at 20/s throughout. Only the spool run must
// lose nothing; the times are reported (t.Log), never asserted.
func TestCollectorOutageRecovery(t *testing.T) {
	if os.Getenv("TOOLGATE_INTEGRATION") != "1" {
		t.Skip("integration test: set TOOLGATE_INTEGRATION=1")
	}
	outage := 10 * time.Second
	if v, err := strconv.Atoi(os.Getenv("TOOLGATE_OUTAGE")); err == nil && v > 0 {
		outage = time.Duration(v) * time.Second
	}
	oldRetry := otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 5 * time.Second, MaxInterval: 30 * time.Second, MaxElapsedTime: time.Minute}
	oldDial := otlptracegrpc.WithDialOption(grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: 20 * time.Second}))
	tests := []struct {
		name  string
		cfg   Config
		opts  []Option
		spool bool
	}{
		{name: "before: SDK retry, gRPC backoff to 120 s", cfg: Config{Retry: &oldRetry}, opts: []Option{WithExporterOptions(oldDial)}},
		{name: "now: spool off", cfg: Config{}},
		{name: "now: spool on", cfg: Config{Spool: spool.Config{}}, spool: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startReceiver(t)
			col := newCollectorProc(t, r.addr)
			col.start()
			cfg := tt.cfg
			cfg.Endpoint, cfg.Insecure = col.in, true
			cfg.BatchTimeout = 200 * time.Millisecond
			if tt.spool {
				cfg.Spool.Dir = t.TempDir()
			}
			p, err := Setup(context.Background(), cfg, append(tt.opts, WithoutCheck())...)
			require.NoError(t, err)
			tr := p.Tracer("outage")
			emit := func(prefix string, d time.Duration) int {
				n := 0
				for end := time.Now().Add(d); time.Now().Before(end); n++ {
					decide(tr, fmt.Sprintf("%s-%d", prefix, n), 1)
					time.Sleep(50 * time.Millisecond)
				}
				return n
			}
			total := emit("before", time.Second)
			col.stop()
			total += emit("during", outage)
			col.start()
			back := time.Now()
			// Wait until every decision not counted lost arrived (or 60 s).
			deadline := back.Add(60 * time.Second)
			var delivered time.Duration
			for time.Now().Before(deadline) {
				if int64(len(r.spans())) >= int64(total)-p.Stats().Lost() {
					delivered = time.Since(back)
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = p.Shutdown(ctx)
			got := map[string]bool{}
			for _, s := range r.spans() {
				got[s.span.GetName()] = true
			}
			missing := total - len(got)
			t.Logf("%s: outage %s, %d decisions, backlog delivered %s after the collector was back (0 = not within 60 s), %d lost (Lost()=%d)",
				tt.name, outage, total, delivered.Round(10*time.Millisecond), missing, p.Stats().Lost())
			if tt.spool {
				assert.Zero(t, missing, "the spool loses nothing")
				assert.Zero(t, p.Stats().Lost())
			}
		})
	}
}
