package audit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Store queries the audit tables of one ClickHouse server (or the embedded
// one, `auditq serve`). It is safe for concurrent use.
type Store struct {
	conn driver.Conn
	cfg  config
	addr string
	// arrivals is set once schema_migrations records version 12: from
	// then on the arrivals table is complete (its backfill has run) and
	// dirtyHours reads it. A version is never unrecorded, so it stays set.
	arrivals atomic.Bool
}

// UnreachableError is returned by Open when no ClickHouse server answers
// at the DSN's address (connection refused, no route, DNS failure, timeout).
// Authentication and query errors are not UnreachableErrors.
type UnreachableError struct {
	Addr string // host:port that was tried
	Err  error
	// Hint, when set, names a likely fix found by probing, e.g. that
	// ClickHouse's HTTP interface answers on the same host's port 8123.
	Hint string
}

func (e *UnreachableError) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("no ClickHouse server answers at %s: %v; %s", e.Addr, e.Err, e.Hint)
	}
	return fmt.Sprintf("no ClickHouse server answers at %s: %v", e.Addr, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// ErrNotMigrated is wrapped by query errors when the audit tables do not
// exist yet (ClickHouse code 60 UNKNOWN_TABLE or 81 UNKNOWN_DATABASE), or
// lack a column a later migration adds (code 47 UNKNOWN_IDENTIFIER or 16
// NO_SUCH_COLUMN_IN_TABLE naming it: the schema is older than this
// package); the *clickhouse.Exception stays reachable with errors.As.
var ErrNotMigrated = errors.New("audit tables missing or outdated: run `auditq migrate`")

// ErrBadDSN is wrapped when Open cannot parse its DSN.
var ErrBadDSN = errors.New("audit: bad DSN")

// Open connects to the ClickHouse server at dsn (a clickhouse-go/v2 DSN:
// http://user:pass@host:8123 for the HTTP interface, which the embedded
// server speaks, or clickhouse://host:9000 for the native protocol) and
// pings it. Options choose the database (default "otel").
//
// Errors name the fix: [ErrBadDSN] (no port, https:// without
// secure=true), [*UnreachableError] (nothing listens), [*ProtocolError]
// (the scheme does not match the server: found by one probe request in
// seconds, before a native ping that would wait 30 s), or the driver's
// error (e.g. *clickhouse.Exception for refused credentials).
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	o, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, explainDSNParse(dsn, err)
	}
	if err := checkPorts(dsn, o); err != nil {
		return nil, err
	}
	scheme := "clickhouse"
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		scheme = u.Scheme
	}
	if o.Protocol == clickhouse.Native && len(o.Addr) > 0 {
		if err := probeNative(ctx, dsn, scheme, o.Addr[0], o.TLS != nil); err != nil {
			return nil, err
		}
	}
	conn, err := clickhouse.Open(o)
	if err != nil {
		return nil, fmt.Errorf("audit: open %s: %w", redact(dsn), err)
	}
	addr := strings.Join(o.Addr, ",")
	if err := conn.Ping(ctx); err != nil {
		conn.Close()
		var ex *clickhouse.Exception
		if o.Protocol == clickhouse.HTTP && len(o.Addr) > 0 && !errors.As(err, &ex) {
			if pe := explainHTTPPing(ctx, dsn, scheme, o.Addr[0], err); pe != nil {
				return nil, pe
			}
		}
		if isNetError(err) {
			return nil, &UnreachableError{Addr: addr, Err: err}
		}
		return nil, fmt.Errorf("audit: connect %s: %w", addr, err)
	}
	return &Store{conn: conn, cfg: cfg, addr: addr}, nil
}

// NewStore wraps an open connection (the caller keeps ownership of conn:
// Close does not close it).
func NewStore(conn driver.Conn, opts ...Option) (*Store, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Store{conn: nopCloser{conn}, cfg: cfg}, nil
}

type nopCloser struct{ driver.Conn }

func (nopCloser) Close() error { return nil }

// Close closes the connection.
func (s *Store) Close() error { return s.conn.Close() }

// Conn is the underlying clickhouse-go connection.
func (s *Store) Conn() driver.Conn { return s.conn }

// Database is the database the store reads.
func (s *Store) Database() string { return s.cfg.database }

// Migrate applies the schema migrations with the store's options; see
// [Migrate].
func (s *Store) Migrate(ctx context.Context) (MigrationResult, error) {
	return s.cfg.migrate(ctx, s.conn)
}

// query runs sql with server-side parameters and wraps errors.
func (s *Store) query(ctx context.Context, what, sql string, params *Params) (driver.Rows, error) {
	rows, err := s.conn.Query(params.Context(ctx), sql)
	if err != nil {
		return nil, s.wrap(what, err)
	}
	return rows, nil
}

func (s *Store) wrap(what string, err error) error {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) && (ex.Code == codeUnknownTable || ex.Code == codeUnknownDatabase || missesLaterColumn(ex)) {
		return fmt.Errorf("audit: %s: %w (%w)", what, ErrNotMigrated, err)
	}
	if isNetError(err) {
		return fmt.Errorf("audit: %s: %w", what, &UnreachableError{Addr: s.addr, Err: err})
	}
	return fmt.Errorf("audit: %s: %w", what, err)
}

// missesLaterColumn reports whether ex says a gate_decisions column that a
// migration after the first table (version 2) added is unknown.
func missesLaterColumn(ex *clickhouse.Exception) bool {
	if ex.Code != codeUnknownIdentifier && ex.Code != codeNoSuchColumn {
		return false
	}
	for _, c := range decisionColumns() {
		if c.since > 2 && strings.Contains(ex.Message, "`"+c.name+"`") {
			return true
		}
	}
	return false
}

func isNetError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	var de *net.DNSError
	return errors.As(err, &oe) || errors.As(err, &de) || errors.Is(err, syscall.ECONNREFUSED) ||
		(errors.As(err, &ne) && ne.Timeout())
}

func redact(dsn string) string { return RedactDSN(dsn) }
