package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/audit"
)

// Connection defaults: the embedded server (`auditq serve`) on its default
// address, and the database the collector's exporter writes.
const (
	dsnEnv      = "AUDITQ_DSN"
	databaseEnv = "AUDITQ_DATABASE"
	// clusterEnv names the ClickHouse cluster of a sharded deployment:
	// queries then read its Distributed tables (gate_decisions_all, …;
	// audit.WithCluster, created by auditq migrate --cluster).
	clusterEnv = "AUDITQ_CLUSTER"
	defaultDSN = "http://127.0.0.1:8123"
	// defaultDSNFrom is connFlags.from for defaultDSN.
	defaultDSNFrom = "the default DSN"
)

// connFlags are the flags every command that talks to ClickHouse has.
type connFlags struct {
	dsn      string
	database string
	timeout  time.Duration
	// from says where dsn came from ("--dsn", "$AUDITQ_DSN", the default),
	// for error messages; set by open.
	from string
}

func (c *connFlags) add(cmd *cobra.Command) {
	db := os.Getenv(databaseEnv)
	if db == "" {
		db = audit.DefaultDatabase
	}
	f := cmd.Flags()
	// The default is resolved at connect time so that --help never prints
	// a password from the environment.
	f.StringVar(&c.dsn, "dsn", "", "ClickHouse DSN, http://user:pass@host:8123 (HTTP interface, as the embedded server) or clickhouse://… (native) (default $"+dsnEnv+", else "+defaultDSN+")")
	f.StringVar(&c.database, "database", db, "database holding otel_traces and gate_decisions; env "+databaseEnv)
	f.DurationVar(&c.timeout, "timeout", 60*time.Second, "give up on a query after this long")
}

// open connects and pings. An unreachable server gives one line naming
// what was tried and how to start the embedded server.
func (c *connFlags) open(ctx context.Context) (*audit.Store, error) {
	c.resolve()
	from := c.from
	opts := []audit.Option{audit.WithDatabase(c.database)}
	if cl := os.Getenv(clusterEnv); cl != "" {
		opts = append(opts, audit.WithCluster(cl))
	}
	st, err := audit.Open(ctx, c.dsn, opts...)
	if errors.Is(err, audit.ErrBadDSN) {
		if strings.Contains(err.Error(), "e.g.") {
			return nil, usagef("%s: %v", from, err)
		}
		return nil, usagef("%s: %v (want e.g. http://reader:PASS@127.0.0.1:8123)", from, err)
	}
	if err != nil {
		return nil, c.explain(err)
	}
	return st, nil
}

// resolve picks the DSN (--dsn, else $AUDITQ_DSN, else the default) and
// records where it came from in c.from.
func (c *connFlags) resolve() {
	if c.from != "" {
		return
	}
	c.from = "--dsn"
	if c.dsn == "" {
		c.dsn, c.from = os.Getenv(dsnEnv), "$"+dsnEnv
	}
	if c.dsn == "" {
		c.dsn, c.from = defaultDSN, defaultDSNFrom
	}
}

// explain turns a connection failure (server gone, credentials refused,
// tables missing) into one line that says what was tried and what to do;
// other errors pass through.
func (c *connFlags) explain(err error) error {
	var pe *audit.ProtocolError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %v", c.from, redactDSN(c.dsn), pe)
	}
	var ue *audit.UnreachableError
	if errors.As(err, &ue) && ue.Hint != "" {
		return fmt.Errorf("no ClickHouse server at %s (tried %s %s): %v; %s",
			ue.Addr, c.from, redactDSN(c.dsn), rootCause(ue.Err), ue.Hint)
	}
	if errors.As(err, &ue) {
		native := ""
		if !strings.HasPrefix(c.dsn, "http://") && !strings.HasPrefix(c.dsn, "https://") {
			native = " (with http://HOST:PORT: the DSN asks for ClickHouse's native protocol, and the embedded server speaks HTTP only)"
		}
		return fmt.Errorf("no ClickHouse server at %s (tried %s %s): %v; start the embedded one with `make demo` or `auditq serve --data-dir DIR`, or set --dsn / %s%s",
			ue.Addr, c.from, redactDSN(c.dsn), rootCause(ue.Err), dsnEnv, native)
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) && (ex.Code == codeAuthenticationFailed || ex.Code == codeRequiredPassword) {
		return fmt.Errorf("ClickHouse at %s refused the credentials in %s %s (code %d: %s); set the user and password in --dsn or %s, e.g. http://reader:PASS@%s (after `make demo`, `source .demo/env` sets it)",
			addrOf(c.dsn), c.from, redactDSN(c.dsn), ex.Code, ex.Message, dsnEnv, addrOf(c.dsn))
	}
	return explain(err, c.database)
}

// ClickHouse error codes auditq explains (src/Common/ErrorCodes.cpp).
const (
	codeRequiredPassword     = 194
	codeAuthenticationFailed = 516
)

// addrOf is the host:port of a DSN, or the DSN itself.
func addrOf(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Host != "" {
		return u.Host
	}
	return dsn
}

// rootCause is the innermost error's text (e.g. "connection refused").
func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// explain adds the next step to errors a user can fix.
func explain(err error, database string) error {
	if errors.Is(err, audit.ErrNotMigrated) {
		detail := err.Error()
		var ex *clickhouse.Exception
		if errors.As(err, &ex) {
			detail = fmt.Sprintf("code %d: %s", ex.Code, ex.Message)
		}
		return fmt.Errorf("the audit tables are missing or older than this auditq in database %q (%s); create or upgrade them with `auditq migrate` and the writer's --dsn", database, detail)
	}
	return err
}
