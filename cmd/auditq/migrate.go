package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/audit"
)

func newMigrateCmd(io stdio) *cobra.Command {
	var (
		conn      connFlags
		cluster   string
		retention string
		printSQL  bool
		status    bool
	)
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the audit schema (gate_decisions and its view)",
		Long: `migrate applies the versioned schema migrations that audit needs, in order,
recording each in schema_migrations; it is idempotent and safe to re-run:

  1 otel_traces        the exporter's span table, IF NOT EXISTS (same DDL as
                       the clickhouse exporter v0.161.0 creates)
  2 gate_decisions     one typed row per decision, deduplicated by SpanId
  3 gate_decisions_mv  the view filling it from otel_traces, plus a backfill
                       of the spans already there
  4 verdicts_rewrites  columns for rewrites, rounds and every gate's verdict
                       (ALTER TABLE … ADD COLUMN), the view's new query
                       (MODIFY QUERY), and a repair of the rows of spans
                       that carried them before

It needs a user allowed to create tables (the embedded server's writer).
--cluster NAME generates ON CLUSTER statements and Replicated engines for a
ClickHouse cluster; --print shows the SQL without running it. See
docs/audit-schema.md.`,
		Example: `  AUDITQ_DSN=http://writer:PASS@127.0.0.1:8123 auditq migrate
  auditq migrate --status
  auditq migrate --cluster audit --retention 365d --print > schema.sql`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := []audit.Option{audit.WithDatabase(conn.database)}
			if cluster != "" {
				opts = append(opts, audit.WithCluster(cluster))
			}
			if retention != "" {
				d, err := parseDuration(retention)
				if err != nil || d <= 0 {
					return usagef("--retention %q: want a positive duration like 90d or 8760h", retention)
				}
				opts = append(opts, audit.WithRetention(d))
			}
			ms, err := audit.Migrations(opts...)
			if err != nil {
				return usagef("%v", err)
			}
			if printSQL {
				for _, m := range ms {
					fmt.Fprintf(io.out, "-- migration %d: %s\n", m.Version, m.Name)
					for _, s := range m.Statements {
						fmt.Fprintf(io.out, "%s;\n\n", strings.TrimSpace(s))
					}
				}
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), max(conn.timeout, 10*time.Minute))
			defer cancel()
			st, err := conn.open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			if status {
				sts, err := audit.Status(ctx, st.Conn(), opts...)
				if err != nil {
					return err
				}
				t := &table{header: []string{"VERSION", "NAME", "STATE"}}
				for _, s := range sts {
					state := "pending"
					switch {
					case s.Changed:
						// Options (--retention, --cluster, --database) never
						// count as a change; this is a step edited after it ran.
						state = "applied, but this release's SQL for it differs"
					case s.Applied:
						state = "applied"
					}
					t.add(fmt.Sprint(s.Version), s.Name, state)
				}
				return t.render(io.out, detectTerminal(io.out, false))
			}
			res, err := audit.Migrate(ctx, st.Conn(), opts...)
			if err != nil {
				return err
			}
			if len(res.Applied) == 0 {
				fmt.Fprintf(io.out, "schema is up to date (version %d)\n", res.Current)
				return nil
			}
			for _, v := range res.Applied {
				fmt.Fprintf(io.out, "applied migration %d (%s)\n", v, ms[v-1].Name)
			}
			fmt.Fprintf(io.out, "schema is at version %d\n", res.Current)
			return nil
		},
	}
	conn.add(cmd)
	f := cmd.Flags()
	f.StringVar(&cluster, "cluster", "", "ClickHouse cluster: ON CLUSTER statements and Replicated engines")
	f.StringVar(&retention, "retention", "", "drop decisions older than this (e.g. 365d); default: keep forever")
	f.BoolVar(&printSQL, "print", false, "print the SQL instead of running it")
	f.BoolVar(&status, "status", false, "show which migrations are applied")
	return cmd
}
