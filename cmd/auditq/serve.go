package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/audit/chdb"
	"github.com/toolgate/toolgate/audit/chserve"
)

// serveUsersEnv holds the server's accounts: writer:PASS:rw,reader:PASS:ro.
const serveUsersEnv = "AUDITQ_SERVE_USERS"

// defaultLibchdb is where scripts/install-libchdb.sh puts the library,
// relative to the repository root.
const defaultLibchdb = ".cache/chdb/libchdb.so"

func newServeCmd(io stdio) *cobra.Command {
	var (
		listen         string
		dataDir        string
		libPath        string
		tempDir        string
		allowAnonymous bool
		tlsCert        string
		tlsKey         string
		insecurePlain  bool
		maxBody        int64
		sessions       int
		verbose        bool
		memoryLimit    int64
	)
	cmd := &cobra.Command{
		Use:   "serve --data-dir DIR [--listen 127.0.0.1:8123]",
		Short: "Run the embedded ClickHouse server (chDB) on ClickHouse's HTTP interface",
		Long: `serve runs ClickHouse 26.5 (chDB, loaded from libchdb.so) behind ClickHouse's
HTTP interface, so clickhouse-go/v2 (http:// DSN), the collector's clickhouse
exporter and curl work against it as against a ClickHouse server.

Accounts come from ` + serveUsersEnv + `, a list of name:password:role with role
rw (inserts and schema) or ro (read-only), e.g.
  ` + serveUsersEnv + `=writer:s3cret:rw,reader:0ther:ro
Requests without credentials are refused unless --allow-anonymous is given
(throwaway local use; anonymous users can read, INSERT and CREATE but never
DROP or ALTER).

The server is loopback-safe by default: on an address other machines can
reach (anything but 127.0.0.0/8 and ::1, including 0.0.0.0), anonymous
access is refused, and users need TLS (--tls-cert and --tls-key, PEM files:
the server then speaks HTTPS only; clients use https://…?secure=true) or the
explicit --insecure-plaintext-passwords. The first line printed names the
address and the access mode (users or anonymous, TLS or plaintext, loopback
or network). The server speaks ClickHouse's HTTP interface only, not the
native protocol: clients use http:// or https:// DSNs, never clickhouse://.

libchdb.so is looked up at --libchdb, then $TOOLGATE_LIBCHDB, then
` + defaultLibchdb + `; install it with 'make deps' or scripts/install-libchdb.sh.
The server stops gracefully on SIGINT/SIGTERM; the data stays in --data-dir.
See docs/embedded-clickhouse.md for the limits.`,
		Example: `  ` + serveUsersEnv + `=writer:w:rw,reader:r:ro auditq serve --data-dir .demo/clickhouse
  auditq serve --data-dir /tmp/ch --allow-anonymous --listen 127.0.0.1:18123
  curl 'http://reader:r@127.0.0.1:8123/?query=SELECT+version()'
  auditq serve --data-dir /var/lib/auditq --listen 0.0.0.0:8443 --tls-cert server.pem --tls-key server-key.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dataDir == "" {
				return usagef("serve: --data-dir is required")
			}
			if sessions < 1 {
				return usagef("serve: --sessions must be at least 1")
			}
			users, err := chserve.ParseUsers(os.Getenv(serveUsersEnv))
			if err != nil {
				return usagef("serve: %s: %v", serveUsersEnv, err)
			}
			if len(users) == 0 && !allowAnonymous {
				return usagef("serve: no users: set %s (e.g. writer:PASS:rw,reader:PASS:ro) or pass --allow-anonymous", serveUsersEnv)
			}
			if (tlsCert == "") != (tlsKey == "") {
				return usagef("serve: --tls-cert and --tls-key go together (the certificate chain and its private key, PEM)")
			}
			exposure := chserve.Exposure{TLS: tlsCert != "", Anonymous: allowAnonymous, Users: len(users), InsecurePlaintext: insecurePlain}
			if addr, err := net.ResolveTCPAddr("tcp", listen); err == nil {
				exposure.Network = !chserve.IsLoopback(addr)
				if err := exposure.Check(); err != nil {
					return usagef("serve: --listen %s: %v", listen, err)
				}
			}
			var tlsConfig *tls.Config
			if tlsCert != "" {
				cert, err := tls.LoadX509KeyPair(tlsCert, tlsKey)
				if err != nil {
					return usagef("serve: --tls-cert %s / --tls-key %s: %v (want a PEM certificate chain and its PEM private key)", tlsCert, tlsKey, err)
				}
				tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
			}
			level := slog.LevelInfo
			if verbose {
				level = slog.LevelDebug
			}
			logger := slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{Level: level}))
			return runServe(cmd.Context(), io, serveConfig{
				listen: listen, dataDir: dataDir, libPath: resolveLibchdb(libPath), tempDir: tempDir,
				sessions: sessions, logger: logger, tls: tlsConfig, exposure: exposure, memoryLimit: memoryLimit,
				opts: []chserve.Option{
					chserve.WithUsers(users...), chserve.WithAnonymous(allowAnonymous),
					chserve.WithMaxBodyBytes(maxBody), chserve.WithLogger(logger),
				},
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8123", "address to serve ClickHouse's HTTP interface on (port 0 picks a free port)")
	f.StringVar(&dataDir, "data-dir", "", "directory of the databases (created if missing; kept across restarts)")
	f.StringVar(&libPath, "libchdb", "", "path of libchdb.so (default $TOOLGATE_LIBCHDB, else "+defaultLibchdb+")")
	f.StringVar(&tempDir, "temp-dir", "", "where INSERT bodies are spooled before the engine reads them (default: the system temp dir)")
	f.BoolVar(&allowAnonymous, "allow-anonymous", false, "accept requests without credentials (read, INSERT, CREATE; never DROP); loopback addresses only")
	f.StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain); needs --tls-key")
	f.StringVar(&tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	f.BoolVar(&insecurePlain, "insecure-plaintext-passwords", false, "allow users on a non-loopback address without TLS: their passwords cross the network in plain HTTP")
	f.Int64Var(&maxBody, "max-body-bytes", chserve.DefaultMaxBodyBytes, "largest request body accepted, after decompression")
	f.IntVar(&sessions, "sessions", 2, "chDB sessions, i.e. queries that run at the same time")
	f.BoolVar(&verbose, "verbose", false, "log every failed query")
	f.Int64Var(&memoryLimit, "max-memory-bytes", 0, "the engine's memory budget in bytes (max_server_memory_usage: queries, inserts and merges together; past it a query fails with MEMORY_LIMIT_EXCEEDED); 0: 90% of RAM. See docs/deployment.md for sizes")
	return cmd
}

type serveConfig struct {
	listen, dataDir, libPath, tempDir string
	sessions                          int
	memoryLimit                       int64
	logger                            *slog.Logger
	tls                               *tls.Config // nil: plain HTTP
	exposure                          chserve.Exposure
	opts                              []chserve.Option
}

// resolveLibchdb picks the library path: flag, $TOOLGATE_LIBCHDB, the
// project-local default (relative to the working directory, then to the
// executable's parent directory, where bin/auditq sits).
func resolveLibchdb(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv("TOOLGATE_LIBCHDB"); env != "" {
		return env
	}
	if _, err := os.Stat(defaultLibchdb); err == nil {
		return defaultLibchdb
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(filepath.Dir(exe)), defaultLibchdb)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return defaultLibchdb
}

func runServe(ctx context.Context, io stdio, cfg serveConfig) error {
	dataDir, err := filepath.Abs(cfg.dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return fmt.Errorf("serve: data dir: %w", err)
	}
	tempDir := cfg.tempDir
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	lib, err := chdb.Open(cfg.libPath)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// Leave SIGINT/SIGTERM to Go so that shutdown is graceful.
	lib.DisableSignalHandlers()
	var conns []*chdb.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	engines := make([]chserve.Engine, 0, cfg.sessions)
	for i := 0; i < cfg.sessions; i++ {
		args := []string{"--path=" + dataDir}
		if cfg.memoryLimit > 0 {
			args = append(args, chdb.MemoryLimitArg(cfg.memoryLimit))
		}
		c, err := lib.Connect(args...)
		if err != nil {
			return fmt.Errorf("serve: open data dir %s: %w", dataDir, err)
		}
		conns = append(conns, c)
		engines = append(engines, c)
	}
	srv, err := chserve.New(engines, append(cfg.opts, chserve.WithTempDir(tempDir))...)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	exposure := cfg.exposure
	exposure.Network = !chserve.IsLoopback(ln.Addr())
	if err := exposure.Check(); err != nil {
		ln.Close()
		return usagef("serve: --listen %s (%s): %v", cfg.listen, ln.Addr(), err)
	}
	scheme := "http"
	if cfg.tls != nil {
		scheme = "https"
		ln = tls.NewListener(ln, cfg.tls)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, TLSConfig: cfg.tls,
		// TLS handshake failures (a plain-HTTP client, an untrusting one) are the
		// client's problem: logged with --verbose only.
		ErrorLog: slog.NewLogLogger(cfg.logger.Handler(), slog.LevelDebug)}
	fmt.Fprintf(io.out, "auditq serve: listening on %s://%s (%s; data dir %s)\n", scheme, ln.Addr(), exposure, dataDir)
	if exposure.Network && !exposure.TLS {
		cfg.logger.Warn("INSECURE: passwords cross the network in plain HTTP (--insecure-plaintext-passwords); use --tls-cert/--tls-key")
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	cfg.logger.Info("shutting down: finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	fmt.Fprintln(io.out, "auditq serve: stopped")
	return nil
}
