package testenv

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ClickHouse is an `auditq serve` process — the embedded ClickHouse server
// (chDB behind ClickHouse's HTTP interface) — started by StartClickHouse on
// a free loopback port with its own temporary data directory. It is stopped
// when the test ends.
//
// Usage:
//
//	ch := testenv.StartClickHouse(t)              // skips, or fails under TOOLGATE_INTEGRATION=1, without libchdb
//	db, err := sql.Open("clickhouse", ch.WriterDSN) // or clickhouse.ParseDSN(ch.WriterDSN+"?compress=lz4")
//	...                                            // DDL and inserts as writer, queries as ch.ReaderDSN
//	if err := ch.Restart(ctx); err != nil { … }    // same port, same data: persistence checks
//
// The DSNs are clickhouse-go/v2 DSNs, http://user:password@127.0.0.1:port/default;
// append "?compress=lz4" (or zstd, gzip) or other settings as needed. URL is
// the base for plain HTTP (curl-style) requests, with no credentials.
//
// Components: libchdb.so from $TOOLGATE_LIBCHDB (default .cache/chdb/libchdb.so,
// `make deps`); the auditq binary from $TOOLGATE_AUDITQ, or built from
// ./cmd/auditq into a per-checkout cache directory (go build is a no-op when
// it is up to date).
type ClickHouse struct {
	// URL is http://127.0.0.1:port, the server's HTTP interface.
	URL string
	// Addr is 127.0.0.1:port.
	Addr string
	// WriterDSN and ReaderDSN are clickhouse-go/v2 DSNs for the rw user
	// (inserts, DDL) and the ro user (read-only).
	WriterDSN, ReaderDSN string
	// Writer and Reader are the accounts behind the DSNs.
	Writer, Reader ClickHouseUser
	// DataDir holds the databases; it survives Restart.
	DataDir string
	// LogPath is the server's combined stdout/stderr, kept across restarts.
	LogPath string

	proc *managedProcess
}

// ClickHouseUser is one account of the embedded server.
type ClickHouseUser struct {
	Name, Password string
}

// DSN returns a clickhouse-go/v2 DSN for user u and database db, with the
// extra URL query (e.g. "compress=lz4"; may be empty).
func (c *ClickHouse) DSN(u ClickHouseUser, db, query string) string {
	d := (&url.URL{Scheme: "http", User: url.UserPassword(u.Name, u.Password), Host: c.Addr, Path: "/" + db}).String()
	if query != "" {
		d += "?" + query
	}
	return d
}

type clickhouseConfig struct {
	anonymous bool
	args      []string
	dataDir   string
}

// ClickHouseOption configures StartClickHouse.
type ClickHouseOption func(*clickhouseConfig)

// WithClickHouseAnonymous starts the server with --allow-anonymous.
func WithClickHouseAnonymous() ClickHouseOption {
	return func(c *clickhouseConfig) { c.anonymous = true }
}

// WithClickHouseArgs adds `auditq serve` flags, e.g. "--max-body-bytes=1048576".
func WithClickHouseArgs(args ...string) ClickHouseOption {
	return func(c *clickhouseConfig) { c.args = append(c.args, args...) }
}

// WithClickHouseDataDir uses dir as the data directory instead of a fresh
// temporary one.
func WithClickHouseDataDir(dir string) ClickHouseOption {
	return func(c *clickhouseConfig) { c.dataDir = dir }
}

// StartClickHouse builds (if needed) and starts `auditq serve` and waits
// until it answers /ping. A missing libchdb.so fails the test when
// TOOLGATE_INTEGRATION=1 and skips it otherwise.
func StartClickHouse(t testing.TB, opts ...ClickHouseOption) *ClickHouse {
	t.Helper()
	var cfg clickhouseConfig
	for _, o := range opts {
		o(&cfg)
	}
	lib := lookupComponent(t, "TOOLGATE_LIBCHDB", ".cache/chdb/libchdb.so", "make deps (scripts/install-libchdb.sh)")
	if abs, err := filepath.Abs(lib); err == nil {
		lib = abs
	}
	bin := auditqBinary(t)
	dir := t.TempDir()
	if cfg.dataDir == "" {
		cfg.dataDir = filepath.Join(dir, "data")
	}
	c := &ClickHouse{
		DataDir: cfg.dataDir,
		LogPath: filepath.Join(dir, "auditq-serve.log"),
		Writer:  ClickHouseUser{Name: "writer", Password: randomSecret()},
		Reader:  ClickHouseUser{Name: "reader", Password: randomSecret()},
	}
	users := fmt.Sprintf("%s:%s:rw,%s:%s:ro", c.Writer.Name, c.Writer.Password, c.Reader.Name, c.Reader.Password)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		c.Addr = pickLoopbackAddr(t)
		args := []string{"serve", "--listen", c.Addr, "--data-dir", c.DataDir, "--libchdb", lib,
			"--temp-dir", dir}
		if cfg.anonymous {
			args = append(args, "--allow-anonymous")
		}
		args = append(args, cfg.args...)
		c.proc = &managedProcess{name: "auditq serve", bin: bin, args: args,
			env: []string{"AUDITQ_SERVE_USERS=" + users}, logPath: c.LogPath}
		c.URL = "http://" + c.Addr
		if lastErr = c.Start(context.Background()); lastErr == nil {
			break
		}
		_ = c.proc.stop(syscall.SIGKILL, 5*time.Second)
		if !c.proc.addrInUse() {
			break
		}
	}
	if lastErr != nil {
		t.Fatal(lastErr)
	}
	c.WriterDSN = c.DSN(c.Writer, "default", "")
	c.ReaderDSN = c.DSN(c.Reader, "default", "")
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("testenv: stop auditq serve: %v", err)
		}
		if t.Failed() {
			t.Logf("auditq serve log (%s):\n%s", c.LogPath, c.proc.logTail(40))
		}
	})
	return c
}

// Start starts a stopped server again with the same port and data and
// waits for /ping.
func (c *ClickHouse) Start(ctx context.Context) error {
	if err := c.proc.start(); err != nil {
		return err
	}
	return c.proc.waitReady(ctx, c.URL+"/ping", 90*time.Second)
}

// Stop sends SIGTERM and waits for the graceful shutdown (killing after
// 30 s). Stopping a stopped server is a no-op.
func (c *ClickHouse) Stop() error { return c.proc.stop(syscall.SIGTERM, 30*time.Second) }

// Kill ends the server with SIGKILL (no graceful shutdown).
func (c *ClickHouse) Kill() error { return c.proc.stop(syscall.SIGKILL, 10*time.Second) }

// Restart stops the server gracefully and starts it again on the same port
// with the same data directory.
func (c *ClickHouse) Restart(ctx context.Context) error {
	if err := c.Stop(); err != nil {
		return err
	}
	return c.Start(ctx)
}

// PID is the server's process id, 0 when stopped.
func (c *ClickHouse) PID() int { return c.proc.pid() }

// RSS is the server's resident set size in bytes (/proc/<pid>/status VmRSS).
func (c *ClickHouse) RSS() (int64, error) {
	return procStatusBytes(c.PID(), "VmRSS:")
}

// PeakRSS is the server's peak resident set size in bytes (VmHWM).
func (c *ClickHouse) PeakRSS() (int64, error) {
	return procStatusBytes(c.PID(), "VmHWM:")
}

func procStatusBytes(pid int, field string) (int64, error) {
	if pid == 0 {
		return 0, fmt.Errorf("testenv: auditq serve is not running")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("testenv: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("testenv: parse %s: %w", field, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("testenv: no %s in /proc/%d/status", field, pid)
}

// AuditqBinary returns the auditq binary the test environment runs:
// $TOOLGATE_AUDITQ, or ./cmd/auditq built into a cache directory.
func AuditqBinary(t testing.TB) string { return auditqBinary(t) }

// auditqBinary returns $TOOLGATE_AUDITQ, or ./cmd/auditq built by
// GoBinary.
func auditqBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TOOLGATE_AUDITQ"); p != "" {
		return p
	}
	return GoBinary(t, "./cmd/auditq")
}

// GoBinary builds the main package pkg of this module (a path such as
// "./examples/unattended") into a cache directory shared by the test
// processes of this checkout, under a file lock (go build leaves an
// up-to-date binary alone), and returns the binary's path.
func GoBinary(t testing.TB, pkg string) string {
	t.Helper()
	root := moduleRoot()
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "toolgate-testenv-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "build.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("testenv: lock %s: %v", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
	bin := filepath.Join(dir, filepath.Base(pkg))
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	cmd := exec.Command(goTool, "build", "-o", bin, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testenv: go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

func randomSecret() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
