package audittest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/chdb"
	"github.com/toolgate/toolgate/audit/chserve"
)

// Env is a running embedded ClickHouse server with the audit schema
// applied in [Env.Database], started by [Start] and stopped by the test's
// cleanup. Its fields are set once by Start and read-only afterwards.
type Env struct {
	// Addr is the server's address, 127.0.0.1:port (loopback only; the
	// port is picked by the kernel).
	Addr string
	// URL is http://Addr, the base of ClickHouse's HTTP interface (/ping,
	// /?query=…), without credentials.
	URL string
	// WriterDSN is a clickhouse-go/v2 DSN
	// (http://writer:password@127.0.0.1:port/default) for the account that
	// may insert and run DDL; ReaderDSN is the read-only account's. Append
	// "?compress=lz4" or other settings as needed.
	WriterDSN, ReaderDSN string
	// DataDir is the server's data directory (a t.TempDir); it survives
	// [Env.Stop] and [Env.Start].
	DataDir string
	// Writer is a connection as the writer account (inserts, DDL), closed
	// by the test's cleanup.
	Writer driver.Conn
	// Store reads the audit trail of Database as the read-only account,
	// closed by the test's cleanup.
	Store *audit.Store
	// Database holds the audit tables: audit.DefaultDatabase ("otel").
	Database string

	mu sync.Mutex
	hs *http.Server // nil while stopped
	h  http.Handler
}

type config struct {
	libchdb     string
	sessions    int
	memoryLimit int64
}

// WithMemoryLimit caps the engine's memory at bytes (chdb.MemoryLimitArg:
// max_server_memory_usage); past it a query fails with
// MEMORY_LIMIT_EXCEEDED.
func WithMemoryLimit(bytes int64) Option {
	return func(c *config) { c.memoryLimit = bytes }
}

// Option configures [Start].
type Option func(*config)

// WithLibchdb loads libchdb.so from path instead of $TOOLGATE_LIBCHDB or
// .cache/chdb/libchdb.so. A missing file skips the test (fails it under
// TOOLGATE_INTEGRATION=1), as for the defaults.
func WithLibchdb(path string) Option {
	return func(c *config) { c.libchdb = path }
}

// WithSessions sets how many queries the server runs at once (engine
// sessions; default 2, as `auditq serve`). n < 1 means the default.
func WithSessions(n int) Option {
	return func(c *config) {
		if n >= 1 {
			c.sessions = n
		}
	}
}

// Start runs the embedded ClickHouse server in this process (chDB through
// packages chdb and chserve, the code behind `auditq serve`) on a fresh
// data directory and a free loopback port, applies the audit migrations
// to audit.DefaultDatabase and opens [Env.Writer] and [Env.Store]. The
// test's cleanup closes them and the server and releases the process's
// engine (see the package documentation: one Env per process at a time,
// so Start may wait for another test's Env).
//
// Without libchdb.so Start skips the test with the steps to install it;
// under TOOLGATE_INTEGRATION=1 it fails it instead. Any other error
// (the engine refusing the data directory, a failed migration) fails the
// test.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	cfg := config{sessions: 2}
	for _, o := range opts {
		o(&cfg)
	}
	libPath, err := findLibchdb(cfg.libchdb)
	if err != nil {
		if integration() {
			t.Fatalf("audittest: %v", err)
		}
		t.Skipf("audittest: %v", err)
	}
	lib, err := chdb.Open(libPath)
	if err != nil {
		t.Fatalf("audittest: %v", err)
	}
	release := acquireEngine(t)
	t.Cleanup(release)
	// Leave signals to the Go runtime (os/signal, the test's timeout dump).
	lib.DisableSignalHandlers()

	dir := t.TempDir()
	env := &Env{DataDir: filepath.Join(dir, "data"), Database: audit.DefaultDatabase}
	conns := make([]*chdb.Conn, 0, cfg.sessions)
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	engines := make([]chserve.Engine, 0, cfg.sessions)
	for range cfg.sessions {
		args := []string{"--path=" + env.DataDir}
		if cfg.memoryLimit > 0 {
			args = append(args, chdb.MemoryLimitArg(cfg.memoryLimit))
		}
		c, err := lib.Connect(args...)
		if err != nil {
			t.Fatalf("audittest: open the engine on %s: %v", env.DataDir, err)
		}
		conns = append(conns, c)
		engines = append(engines, c)
	}
	writer := chserve.User{Name: "writer", Password: secret(), Role: chserve.RoleReadWrite}
	reader := chserve.User{Name: "reader", Password: secret(), Role: chserve.RoleReadOnly}
	srv, err := chserve.New(engines, chserve.WithUsers(writer, reader), chserve.WithTempDir(dir))
	if err != nil {
		t.Fatalf("audittest: %v", err)
	}
	env.h = srv
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("audittest: listen on loopback: %v", err)
	}
	env.Addr = ln.Addr().String()
	env.URL = "http://" + env.Addr
	env.WriterDSN = dsn(writer, env.Addr)
	env.ReaderDSN = dsn(reader, env.Addr)
	env.serve(ln)
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("audittest: stop the server: %v", err)
		}
	})

	ctx := context.Background()
	o, err := clickhouse.ParseDSN(env.WriterDSN)
	if err != nil {
		t.Fatalf("audittest: %v", err)
	}
	w, err := clickhouse.Open(o)
	if err != nil {
		t.Fatalf("audittest: open writer: %v", err)
	}
	env.Writer = w
	t.Cleanup(func() { w.Close() })
	if _, err := audit.Migrate(ctx, w); err != nil {
		t.Fatalf("audittest: migrate: %v", err)
	}
	st, err := audit.Open(ctx, env.ReaderDSN)
	if err != nil {
		t.Fatalf("audittest: open reader store: %v", err)
	}
	env.Store = st
	t.Cleanup(func() { st.Close() })
	return env
}

// serve starts answering on ln.
func (e *Env) serve(ln net.Listener) {
	hs := &http.Server{Handler: e.h, ReadHeaderTimeout: 30 * time.Second}
	e.hs = hs
	go func() { _ = hs.Serve(ln) }()
}

// Stop stops the server answering (requests in flight finish; clients see
// connection refused afterwards), keeping the engine and its data: for
// tests of how clients live through an outage. Stopping a stopped server
// is a no-op. Errors: the shutdown did not finish within 30 s.
func (e *Env) Stop() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hs == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := e.hs.Shutdown(ctx)
	e.hs = nil
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("audittest: stop: %w", err)
	}
	return nil
}

// Start makes a stopped server answer again on the same address with the
// same data. Starting a running server is a no-op. Errors: the address
// could not be bound again within ctx (another process took the port).
func (e *Env) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hs != nil {
		return nil
	}
	for {
		ln, err := net.Listen("tcp", e.Addr)
		if err == nil {
			e.serve(ln)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("audittest: start again on %s: %w", e.Addr, errors.Join(err, ctx.Err()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func dsn(u chserve.User, addr string) string {
	return (&url.URL{Scheme: "http", User: url.UserPassword(u.Name, u.Password), Host: addr, Path: "/default"}).String()
}

func secret() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
