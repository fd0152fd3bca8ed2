package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	otelcollector "github.com/toolgate/toolgate/deploy/otel-collector"
)

// Collector is an otelcol-toolgate process started by StartCollector with
// deploy/otel-collector/config.yaml (plus the audit-mode overlay) on free
// loopback ports, with its own temporary directory for configs, the
// persistent queue and the log.
type Collector struct {
	// GRPCEndpoint and HTTPEndpoint are the OTLP receiver's host:port.
	GRPCEndpoint, HTTPEndpoint string
	// HealthURL answers 200 when the collector is ready (health_check).
	HealthURL string
	// MetricsURL serves the collector's own metrics (Prometheus text).
	MetricsURL string
	// Dir holds the configs, the file_storage queue and collector.log.
	Dir string
	// LogPath is the collector's combined stdout/stderr, kept across restarts.
	LogPath string
	// Token is the bearer token the OTLP receivers require
	// (TOOLGATE_OTLP_TOKEN): send Headers() with every export.
	Token string

	proc *managedProcess
}

// collectorConfig is what CollectorOptions set.
type collectorConfig struct {
	chEndpoint, chUser, chPassword, chDatabase string
	jaegerOTLP                                 string
	mode                                       string
	decisionWait                               time.Duration
	samplePercent                              float64
	env                                        []string
	token                                      string
	bin                                        string
	configs                                    [][]byte
}

// CollectorOption configures StartCollector.
type CollectorOption func(*collectorConfig)

// WithClickHouse points the audit pipeline's clickhouse exporter at endpoint
// (http://host:port) with the writer's credentials and database (empty =
// "otel"). Without it the audit pipeline exports to the debug exporter.
func WithClickHouse(endpoint, user, password, database string) CollectorOption {
	return func(c *collectorConfig) {
		c.chEndpoint, c.chUser, c.chPassword, c.chDatabase = endpoint, user, password, database
	}
}

// WithJaegerOTLP sends the traces pipeline to a Jaeger OTLP/gRPC receiver
// (host:port). Without it the traces pipeline exports to the debug exporter.
func WithJaegerOTLP(addr string) CollectorOption {
	return func(c *collectorConfig) { c.jaegerOTLP = addr }
}

// WithAuditMode selects the audit pipeline's mode: otelcollector.ModeDecisions
// (default), ModeDenyOnly or ModeAll.
func WithAuditMode(mode string) CollectorOption {
	return func(c *collectorConfig) { c.mode = mode }
}

// WithDecisionWait sets tail_sampling's decision_wait (default 2s here; the
// shipped config's default is 10s).
func WithDecisionWait(d time.Duration) CollectorOption {
	return func(c *collectorConfig) { c.decisionWait = d }
}

// WithSamplePercent sets the share of traces without a denial that the
// traces pipeline keeps (0–100; default 100).
func WithSamplePercent(p float64) CollectorOption {
	return func(c *collectorConfig) { c.samplePercent = p }
}

// WithCollectorEnv adds an environment variable (KEY=value) for the
// collector process, e.g. to override another TOOLGATE_* setting.
func WithCollectorEnv(kv string) CollectorOption {
	return func(c *collectorConfig) { c.env = append(c.env, kv) }
}

// WithOTLPToken sets the bearer token the receivers require
// (TOOLGATE_OTLP_TOKEN) instead of a random one, e.g. to give a
// load-balancing tier and its samplers the same token.
func WithOTLPToken(token string) CollectorOption {
	return func(c *collectorConfig) { c.token = token }
}

// WithCollectorBinary runs another collector binary (e.g.
// bin/otelcol-toolgate-cluster) instead of TOOLGATE_OTELCOL.
func WithCollectorBinary(path string) CollectorOption {
	return func(c *collectorConfig) { c.bin = path }
}

// WithConfigs replaces config.yaml (and the mode overlay and debug sinks)
// with these configuration files, given in order as --config. The port
// variables (TOOLGATE_OTELCOL_GRPC, _HTTP, _HEALTH, _METRICS_PORT) are set as
// usual, so the files should read their listeners from them.
func WithConfigs(files ...[]byte) CollectorOption {
	return func(c *collectorConfig) { c.configs = append(c.configs, files...) }
}

// debugSinksOverlay replaces missing back ends with the debug exporter.
func debugSinksOverlay(audit, traces bool) string {
	var b strings.Builder
	b.WriteString("service:\n  pipelines:\n")
	if audit {
		b.WriteString("    traces/audit:\n      exporters: [debug]\n")
	}
	if traces {
		b.WriteString("    traces/jaeger:\n      exporters: [debug]\n")
	}
	return b.String()
}

// StartCollector starts the collector binary (TOOLGATE_OTELCOL, default
// bin/otelcol-toolgate; missing: skip, or fail under TOOLGATE_INTEGRATION=1)
// and waits until its health check answers. The process is stopped when the
// test ends.
func StartCollector(t testing.TB, opts ...CollectorOption) *Collector {
	t.Helper()
	bin := lookupComponent(t, "TOOLGATE_OTELCOL", "bin/otelcol-toolgate", "scripts/build-collector.sh")
	cfg := collectorConfig{mode: otelcollector.ModeDecisions, decisionWait: 2 * time.Second, samplePercent: 100}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.bin != "" {
		bin = cfg.bin
	}
	if cfg.token == "" {
		cfg.token = randomSecret()
	}
	dir := t.TempDir()
	var paths []string
	for i, b := range cfg.configs {
		p := filepath.Join(dir, fmt.Sprintf("config-%d.yaml", i))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatalf("testenv: %v", err)
		}
		paths = append(paths, p)
	}
	if len(cfg.configs) == 0 {
		var err error
		if paths, err = otelcollector.WriteConfigs(dir, cfg.mode); err != nil {
			t.Fatalf("testenv: collector configs: %v", err)
		}
	}
	if len(cfg.configs) == 0 && (cfg.chEndpoint == "" || cfg.jaegerOTLP == "") {
		p := filepath.Join(dir, "debug-sinks.yaml")
		if err := os.WriteFile(p, []byte(debugSinksOverlay(cfg.chEndpoint == "", cfg.jaegerOTLP == "")), 0o600); err != nil {
			t.Fatalf("testenv: %v", err)
		}
		paths = append(paths, p)
	}
	args := []string{}
	var configFiles [][]byte
	for _, p := range paths {
		args = append(args, "--config", p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("testenv: %v", err)
		}
		configFiles = append(configFiles, b)
	}
	var c *Collector
	for attempt := 1; ; attempt++ {
		c = &Collector{
			GRPCEndpoint: pickLoopbackAddr(t),
			HTTPEndpoint: pickLoopbackAddr(t),
			Dir:          dir,
			LogPath:      filepath.Join(dir, "collector.log"),
			Token:        cfg.token,
		}
		health, metrics := pickLoopbackAddr(t), pickLoopbackAddr(t)
		_, metricsPort, _ := net.SplitHostPort(metrics)
		c.HealthURL = "http://" + health + "/"
		c.MetricsURL = "http://" + metrics + "/metrics"
		env := []string{
			"TOOLGATE_OTELCOL_GRPC=" + c.GRPCEndpoint,
			"TOOLGATE_OTELCOL_HTTP=" + c.HTTPEndpoint,
			"TOOLGATE_OTELCOL_HEALTH=" + health,
			"TOOLGATE_OTELCOL_METRICS_PORT=" + metricsPort,
			"TOOLGATE_OTELCOL_QUEUE_DIR=" + filepath.Join(dir, "queue"),
			"TOOLGATE_TAIL_DECISION_WAIT=" + cfg.decisionWait.String(),
			"TOOLGATE_TRACE_SAMPLE_PERCENT=" + strconv.FormatFloat(cfg.samplePercent, 'f', -1, 64),
			"TOOLGATE_OTLP_TOKEN=" + cfg.token,
			"TOOLGATE_CLICKHOUSE_PASSWORD=" + cfg.chPassword, // no default in config.yaml
		}
		// Unset values keep config.yaml's defaults (an empty variable would
		// replace them with ""), except the back ends': their defaults are
		// the local stack's ports (a running make demo would receive the
		// test's data), so an exporter without one (replaced by the debug
		// sink, or used as is by WithConfigs) points at a closed port.
		chEndpoint, jaegerOTLP := cfg.chEndpoint, cfg.jaegerOTLP
		if chEndpoint == "" {
			chEndpoint = "http://" + pickLoopbackAddr(t)
		}
		if jaegerOTLP == "" {
			jaegerOTLP = pickLoopbackAddr(t)
		}
		for k, v := range map[string]string{
			"TOOLGATE_CLICKHOUSE_ENDPOINT": chEndpoint,
			"TOOLGATE_CLICKHOUSE_USER":     cfg.chUser,
			"TOOLGATE_CLICKHOUSE_DATABASE": cfg.chDatabase,
			"TOOLGATE_JAEGER_OTLP_GRPC":    jaegerOTLP,
		} {
			if v != "" {
				env = append(env, k+"="+v)
			}
		}
		env = append(env, cfg.env...)
		if err := CheckLocalStackPorts(configFiles, append(os.Environ(), env...)); err != nil {
			t.Fatal(err)
		}
		c.proc = &managedProcess{name: "collector", bin: bin, args: args, env: env, logPath: c.LogPath}
		err := c.start(context.Background())
		if err == nil {
			break
		}
		inUse := c.proc.addrInUse()
		_ = c.proc.stop(syscall.SIGKILL, 5*time.Second)
		if !inUse || attempt == 3 {
			t.Fatal(err)
		}
		_ = os.Remove(c.LogPath) // a port was taken between pick and bind: try other ports
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return c
}

// Headers are the OTLP request headers that authenticate with the
// collector: {"authorization": "Bearer <Token>"}, for otelbridge.Config.Headers
// or otlptracegrpc.WithHeaders. OTEL_EXPORTER_OTLP_HEADERS carries the same as
// HeadersEnv().
func (c *Collector) Headers() map[string]string {
	return map[string]string{"authorization": "Bearer " + c.Token}
}

// HeadersEnv is the OTEL_EXPORTER_OTLP_HEADERS=… entry for a child process
// (an agent binary) that reads the standard OTel variables.
func (c *Collector) HeadersEnv() string {
	return "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer " + c.Token
}

func (c *Collector) start(ctx context.Context) error {
	if err := c.proc.start(); err != nil {
		return err
	}
	return c.proc.waitReady(ctx, c.HealthURL, 60*time.Second)
}

// Stop shuts the collector down gracefully (SIGTERM; killed after 30 s). The
// persistent queue stays in Dir, so Restart resumes it. Stopping a stopped
// collector does nothing.
func (c *Collector) Stop() error { return c.proc.stop(syscall.SIGTERM, 30*time.Second) }

// Kill ends the collector with SIGKILL (a crash), without a graceful flush.
func (c *Collector) Kill() error { return c.proc.stop(syscall.SIGKILL, 10*time.Second) }

// Restart starts a stopped collector again with the same ports, configs and
// queue directory, and waits until it is healthy.
func (c *Collector) Restart(ctx context.Context) error {
	if err := c.Stop(); err != nil {
		return err
	}
	return c.start(ctx)
}

// Start starts a collector stopped with Stop or Kill again (same ports,
// configs and queue) and waits until it is healthy.
func (c *Collector) Start(ctx context.Context) error { return c.start(ctx) }

// PID is the running process's id, or 0 when stopped.
func (c *Collector) PID() int { return c.proc.pid() }

// CPUTime is the user+system CPU time the running collector has used, read
// from /proc/<pid>/stat (utime and stime, in USER_HZ ticks of 10 ms).
func (c *Collector) CPUTime() (time.Duration, error) { return c.proc.cpuTime() }

// Metric sums the collector's own metric name (Prometheus exposition name,
// e.g. "otelcol_receiver_accepted_spans") over every series whose labels
// include all of labels (label="value" pairs, e.g. `exporter="clickhouse"`).
// A metric with no series yet reads 0.
func (c *Collector) Metric(ctx context.Context, name string, labels ...string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.MetricsURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("testenv: collector metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("testenv: collector metrics: %s", resp.Status)
	}
	return sumPromMetric(resp.Body, name, labels)
}

// sumPromMetric sums the samples of one metric in Prometheus text format.
func sumPromMetric(r io.Reader, name string, labels []string) (float64, error) {
	var sum float64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		var lbl string
		switch {
		case strings.HasPrefix(rest, "{"):
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			lbl, rest = rest[1:end], rest[end+1:]
		case strings.HasPrefix(rest, " "):
		default:
			continue // a longer metric name with this prefix
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(","+lbl+",", ","+l+",") {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("testenv: metric %s: %w", name, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// ---- process management shared by the collector and Jaeger harnesses ----
// clockTicksPerSecond is Linux's USER_HZ, the unit of utime and stime in
// /proc/<pid>/stat (proc(5)); it is 100 on every architecture Go supports.
const clockTicksPerSecond = 100

// lookupComponent returns the path of an external binary: the value of the
// environment variable envVar, or rel under the repository root. When the file
// is missing the test fails if TOOLGATE_INTEGRATION=1 and is skipped otherwise.
func lookupComponent(t testing.TB, envVar, rel, buildHint string) string {
	t.Helper()
	p := os.Getenv(envVar)
	if p == "" {
		p = filepath.Join(moduleRoot(), rel)
	}
	if st, err := os.Stat(p); err != nil || st.IsDir() {
		msg := fmt.Sprintf("%s: %s not found (set %s or run %s)", envVar, p, envVar, buildHint)
		if os.Getenv("TOOLGATE_INTEGRATION") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// moduleRoot is the repository root, found from this source file's location.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// pickLoopbackAddr returns a 127.0.0.1:port that was free a moment ago.
func pickLoopbackAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: pick a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// managedProcess is one external server process with a log file; it can be
// stopped and started again with the same arguments (same ports and data).
type managedProcess struct {
	name    string
	bin     string
	args    []string
	env     []string
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func (p *managedProcess) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("testenv: %s already running (pid %d)", p.name, p.cmd.Process.Pid)
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("testenv: %s log: %w", p.name, err)
	}
	fmt.Fprintf(logf, "==== %s start %s\n", time.Now().UTC().Format(time.RFC3339Nano), strings.Join(append([]string{p.bin}, p.args...), " "))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("testenv: start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// exited reports whether the process has ended, and how.
func (p *managedProcess) exited() (bool, error) {
	p.mu.Lock()
	done, err := p.done, p.err
	p.mu.Unlock()
	if done == nil {
		return true, nil
	}
	select {
	case <-done:
		return true, err
	default:
		return false, nil
	}
}

// stop sends sig, waits up to grace, then kills. It is a no-op when stopped.
func (p *managedProcess) stop(sig syscall.Signal, grace time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(sig)
	var err error
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
		err = fmt.Errorf("testenv: %s did not stop within %s after %s; killed", p.name, grace, sig)
	}
	p.mu.Lock()
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
	return err
}

func (p *managedProcess) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// cpuTime is the CPU time (user+system) the running process has used so far,
// from /proc/<pid>/stat fields 14 and 15 (proc(5)).
func (p *managedProcess) cpuTime() (time.Duration, error) {
	pid := p.pid()
	if pid == 0 {
		return 0, fmt.Errorf("testenv: %s is not running", p.name)
	}
	return procCPUTime(pid)
}

func procCPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("testenv: read stat: %w", err)
	}
	// The command name (field 2) is in parentheses and may contain spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("testenv: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("testenv: short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("testenv: parse /proc/%d/stat: %w", pid, err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicksPerSecond, nil
}

// logTail returns the last n lines of the process log, for error messages.
func (p *managedProcess) logTail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitReady polls url until it answers 200, the process exits, or timeout.
func (p *managedProcess) waitReady(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if gone, err := p.exited(); gone {
			return fmt.Errorf("testenv: %s exited during start-up (%v); log %s:\n%s", p.name, err, p.logPath, p.logTail(30))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: %s not healthy at %s within %s; log %s:\n%s", p.name, url, timeout, p.logPath, p.logTail(30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// addrInUse reports whether the log says a listener could not bind, the one
// start-up failure worth retrying on other ports.
func (p *managedProcess) addrInUse() bool {
	b, _ := os.ReadFile(p.logPath)
	return bytes.Contains(b, []byte("address already in use"))
}
