package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/spool"
	"github.com/toolgate/toolgate/policy"
)

// Environment of the hook's export (Claude Code strips OTEL_* from its
// hooks' environment, so the hook reads toolgate's own variables first).
const (
	// envEndpoint is the collector's OTLP/gRPC host:port (or URL), after
	// the policy's export.endpoint and before OTEL_EXPORTER_OTLP_ENDPOINT.
	envEndpoint = "TOOLGATE_OTLP_ENDPOINT"
	// envToken is the collector's bearer token (the collector's own
	// TOOLGATE_OTLP_TOKEN): sent as "authorization: Bearer <token>".
	envToken = "TOOLGATE_OTLP_TOKEN"
)

// spoolSlots is how many spool directories hooks share: one process holds
// a directory at a time (spool.ErrLocked), so concurrent hooks (an agent
// running tool calls in parallel) take the next free one. Slot 0 is tried
// first, so that a later hook drains what an earlier one left there.
const spoolSlots = 16

// slotMaxBytes is each slot's disk budget.
const slotMaxBytes = 64 << 20

// exportTarget is where the hook's spans go.
type exportTarget struct {
	endpoint string // as given to otelbridge (host:port or URL)
	dialAddr string // host:port, for the reachability probe
	insecure bool
	headers  map[string]string
	spoolDir string // the slots' parent directory
}

// resolveExport reads the policy's export section and the environment.
func resolveExport(p *policy.Policy) (exportTarget, error) {
	t := exportTarget{endpoint: p.Export.Endpoint}
	for _, v := range []string{envEndpoint, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if t.endpoint == "" {
			t.endpoint = strings.TrimSpace(os.Getenv(v))
		}
	}
	if t.endpoint == "" {
		t.endpoint = "127.0.0.1:4317"
	}
	host := t.endpoint
	switch {
	case strings.HasPrefix(t.endpoint, "http://"), strings.HasPrefix(t.endpoint, "https://"):
		u, err := url.Parse(t.endpoint)
		if err != nil || u.Host == "" {
			return t, fmt.Errorf("export endpoint %q is not host:port or a URL", t.endpoint)
		}
		host = u.Host
		t.insecure = u.Scheme == "http"
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), map[bool]string{true: "80", false: "443"}[t.insecure])
		}
	default:
		h, _, err := net.SplitHostPort(t.endpoint)
		if err != nil {
			return t, fmt.Errorf("export endpoint %q is not host:port: %w", t.endpoint, err)
		}
		// Plaintext on loopback (the local collector), TLS elsewhere.
		ip := net.ParseIP(h)
		t.insecure = h == "localhost" || ip != nil && ip.IsLoopback()
	}
	t.dialAddr = host
	tok := strings.TrimSpace(os.Getenv(envToken))
	if tok == "" {
		// Clients that start the gateway with a minimal environment (the
		// Inspector CLI, desktop apps) and agents' hooks find the token
		// where docs/hooks.md puts it.
		if p, err := tokenFile(); err == nil {
			if b, err := os.ReadFile(p); err == nil {
				tok = strings.TrimSpace(string(b))
			}
		}
	}
	if tok != "" {
		t.headers = map[string]string{"authorization": "Bearer " + tok}
	}
	t.spoolDir = p.Export.Spool
	if t.spoolDir == "" {
		t.spoolDir = os.Getenv(spool.EnvDir)
	}
	if t.spoolDir == "" {
		d, err := defaultSpoolDir()
		if err != nil {
			return t, err
		}
		t.spoolDir = d
	}
	return t, nil
}

// tokenFile is the collector's bearer token file, read when
// TOOLGATE_OTLP_TOKEN is unset: ~/.config/toolgate/otlp-token (one line;
// the path rules make reading it high, so a gated model cannot).
func tokenFile() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("the home directory is unknown")
	}
	return filepath.Join(home, ".config", "toolgate", "otlp-token"), nil
}

// defaultSpoolDir is $XDG_STATE_HOME/toolgate/spool, else
// ~/.local/state/toolgate/spool: outside any workspace.
func defaultSpoolDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "toolgate", "spool"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("no spool directory: set export.spool in the policy or TOOLGATE_SPOOL_DIR (the home directory is unknown)")
	}
	return filepath.Join(home, ".local", "state", "toolgate", "spool"), nil
}

// slotDir is the directory of slot i.
func slotDir(base string, i int) string { return filepath.Join(base, fmt.Sprintf("slot-%02d", i)) }

// telemetry is one hook process's trace pipeline: otelbridge with the
// durable spool on the first free slot.
type telemetry struct {
	p      *otelbridge.Provider
	target exportTarget
	slot   int
	up     bool // the collector's port accepted a connection at the start
	// lastErr is the pipeline's last error (a failed upload: the
	// collector refused the token, say), for the warning on stderr.
	lastErr atomic.Pointer[error]
}

// offlineClient is the spool's upload client when the collector's port
// refused the probe: every upload fails at once (retryable), so that the
// spool keeps the spans and closes without waiting on a connection.
type offlineClient struct{ endpoint string }

func (offlineClient) Start(context.Context) error { return nil }
func (offlineClient) Stop(context.Context) error  { return nil }
func (c offlineClient) UploadTraces(context.Context, []*tracepb.ResourceSpans) error {
	return status.Errorf(codes.Unavailable, "collector at %s did not accept a connection when the hook started", c.endpoint)
}

// openTelemetry sets up the pipeline on the first slot no other process
// holds. uploadTimeout bounds one upload attempt (the hook's export wait).
func openTelemetry(ctx context.Context, t exportTarget, service string, uploadTimeout time.Duration) (*telemetry, error) {
	// A refused loopback port answers in microseconds: with the collector
	// down, the spool gets a client that fails at once, and nothing waits.
	up := reachable(t.dialAddr, min(uploadTimeout, 50*time.Millisecond))
	var client otlptrace.Client
	if !up {
		client = offlineClient{endpoint: t.endpoint}
	}
	var lastErr error
	for i := range spoolSlots {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tel := &telemetry{target: t, slot: i, up: up}
		p, err := otelbridge.Setup(ctx, otelbridge.Config{
			Batch:          otelbridge.BatchConfig{ErrorHandler: func(err error) { tel.lastErr.Store(&err) }},
			Endpoint:       t.endpoint,
			Insecure:       t.insecure,
			Headers:        t.headers,
			ServiceName:    service,
			ServiceVersion: versionString(),
			SkipCheck:      true, // the hook probes the port itself (reachable), in microseconds
			TraceClient:    client,
			Spool: spool.Config{
				Dir:           slotDir(t.spoolDir, i),
				MaxBytes:      slotMaxBytes,
				UploadTimeout: uploadTimeout,
				MaxBackoff:    50 * time.Millisecond,
				// Collector down: the spool neither reads nor decodes
				// the backlog an outage left (nothing would be sent).
				Offline: !up,
			},
		})
		if err == nil {
			tel.p = p
			return tel, nil
		}
		lastErr = err
		if !errors.Is(err, spool.ErrLocked) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("all %d spool slots under %s are in use: %w", spoolSlots, t.spoolDir, lastErr)
}

// reachable reports whether the collector's port accepts a connection
// within d (a refused loopback port answers at once).
func reachable(addr string, d time.Duration) bool {
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// drainOthers uploads what other slots hold (left by a hook whose
// upload timed out, or that ran beside another), until deadline: each slot
// that exists and that no process holds is opened, flushed and closed.
func (t *telemetry) drainOthers(deadline time.Time) {
	for i := range spoolSlots {
		if i == t.slot || time.Until(deadline) < 20*time.Millisecond {
			continue
		}
		dir := slotDir(t.target.spoolDir, i)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		p, err := otelbridge.Setup(ctx, otelbridge.Config{
			Endpoint: t.target.endpoint, Insecure: t.target.insecure, Headers: t.target.headers,
			ServiceName: ServiceName, SkipCheck: true,
			Spool: spool.Config{Dir: dir, MaxBytes: slotMaxBytes, UploadTimeout: time.Until(deadline), MaxBackoff: 50 * time.Millisecond},
		})
		if err != nil {
			cancel()
			continue // held by a running hook, or unreadable: its owner drains it
		}
		if p.Stats().Spool.Unsent > 0 {
			_ = p.ForceFlush(ctx)
		}
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), max(time.Until(deadline), time.Millisecond))
		_ = p.Shutdown(sctx)
		scancel()
	}
}

// finish uploads what the slot holds — this hook's spans and any an
// earlier hook left — for at most wait when the collector is reachable,
// then closes the spool: what was not sent stays on disk for the next hook
// on this slot (or `toolgate flush`). It returns the spool's unsent span
// count at the end.
func (t *telemetry) finish(wait time.Duration) (unsent int64) {
	deadline := time.Now().Add(wait)
	up := t.up
	if up {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		_ = t.p.ForceFlush(ctx)
		cancel()
		defer t.drainOthers(deadline)
	}
	// Shutdown uploads until the log is empty or its context ends: with
	// the collector down, end at once (the spans are on disk already).
	grace := time.Millisecond
	if up {
		grace = max(time.Until(deadline), time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	_ = t.p.Shutdown(ctx)
	return t.p.Stats().Spool.Unsent
}

// warnUnsent writes to w why spans are still in the spool, when they are.
func (t *telemetry) warnUnsent(w io.Writer, unsent int64) {
	if unsent == 0 {
		return
	}
	why := "the collector did not accept a connection"
	if t.up {
		why = "the upload did not finish in time"
	}
	if p := t.lastErr.Load(); p != nil && *p != nil {
		why = (*p).Error()
	}
	fmt.Fprintf(w, "toolgate hook: %d decision spans wait in the spool %s for the collector at %s (%s); the next hook or `toolgate flush` sends them\n",
		unsent, slotDir(t.target.spoolDir, t.slot), t.target.endpoint, gate.SafeText(why, 500))
}
