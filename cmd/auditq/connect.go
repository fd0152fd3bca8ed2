package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/audit"
)

// Connection defaults: the embedded server (`auditq serve`) on its default
// address, and the database the collector's exporter writes.
const (
	dsnEnv      = "AUDITQ_DSN"
	databaseEnv = "AUDITQ_DATABASE"
	defaultDSN  = "http://127.0.0.1:8123"
)

// connFlags are the flags every command that talks to ClickHouse has.
type connFlags struct {
	dsn      string
	database string
	timeout  time.Duration
}

func (c *connFlags) add(cmd *cobra.Command) {
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		dsn = defaultDSN
	}
	db := os.Getenv(databaseEnv)
	if db == "" {
		db = audit.DefaultDatabase
	}
	f := cmd.Flags()
	f.StringVar(&c.dsn, "dsn", dsn, "ClickHouse DSN, http:// (embedded server, HTTP interface) or clickhouse:// (native); env "+dsnEnv)
	f.StringVar(&c.database, "database", db, "database holding otel_traces and gate_decisions; env "+databaseEnv)
	f.DurationVar(&c.timeout, "timeout", 60*time.Second, "give up on a query after this long")
}

// open connects and pings. An unreachable server gives one line naming
// what was tried and how to start the embedded server.
func (c *connFlags) open(ctx context.Context) (*audit.Store, error) {
	st, err := audit.Open(ctx, c.dsn, audit.WithDatabase(c.database))
	var ue *audit.UnreachableError
	if errors.As(err, &ue) {
		return nil, fmt.Errorf("no ClickHouse server at %s (tried --dsn %s): %v; start the embedded one with `make demo` or `auditq serve --data-dir DIR`, or set --dsn / %s",
			ue.Addr, redactDSN(c.dsn), rootCause(ue.Err), dsnEnv)
	}
	return st, err
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
		return fmt.Errorf("the audit tables are missing in database %q: run `auditq migrate` (with the writer's --dsn): %w", database, err)
	}
	return err
}
