package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
)

// Doctor defaults: the local stack's collector (scripts/stack.sh).
const (
	defaultCollectorHealth = "http://127.0.0.1:13133/"
	defaultOTLPEndpoint    = "http://127.0.0.1:4317"
	// collectorHealthEnv is the environment variable of the collector's
	// health URL (--collector-health wins; scripts/stack.sh env sets it).
	collectorHealthEnv = "AUDITQ_COLLECTOR_HEALTH"
	// collectorHealthPort is the health_check extension's usual port, for
	// the URL doctor suggests.
	collectorHealthPort = "13133"
	// doctorAgent is gen_ai.agent.name of doctor's test decision.
	doctorAgent = "auditq-doctor"
	// doctorTool is gen_ai.tool.name of doctor's test decision.
	doctorTool = "auditq_doctor"
)

// ClickHouse error codes the credentials check reads.
const (
	codeUnknownTable    = 60
	codeUnknownDatabase = 81
	codeReadonly        = 164
	codeAccessDenied    = 497
)

// Check statuses.
const (
	statusOK   = "ok"
	statusFail = "fail"
	statusSkip = "skip"
	// statusWarn: the check passed or was not run, but what it checked may
	// not be what the user meant (a built-in default); the fix says how to
	// name the target. It does not fail the report.
	statusWarn = "warn"
)

// Where a doctor target came from, as the checks' details name it.
const (
	fromDefault = "the built-in default"
)

// target is what a check talks to and where that came from: a flag
// ("--collector-health"), an environment variable ("$AUDITQ_COLLECTOR_HEALTH")
// or fromDefault.
type target struct {
	value, from string
}

// isDefault reports whether t is the built-in default.
func (t target) isDefault() bool { return t.from == fromDefault }

// String renders "VALUE (from SOURCE)".
func (t target) String() string { return t.value + " (from " + t.from + ")" }

// doctorCheck is one line of the report.
type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// LatencyMS is the test decision's time from export to gate_decisions.
	LatencyMS *float64 `json:"latency_ms,omitempty"`
}

// doctorReport is the whole report (--json).
type doctorReport struct {
	OK     bool          `json:"ok"`
	Checks []doctorCheck `json:"checks"`
}

type doctorFlags struct {
	conn            connFlags
	collectorHealth string
	otlpEndpoint    string
	decisionTimeout time.Duration
	jsonOut         bool
}

func newDoctorCmd(io stdio) *cobra.Command {
	var f doctorFlags
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the audit pipeline end to end: DSN, server, credentials, schema, collector, a test decision",
		Long: `doctor checks, in one command, what the audit trail needs and prints one line
per check, OK or FAIL, with the fix under each failure:

  dsn          the DSN (--dsn, else $` + dsnEnv + `, else ` + defaultDSN + `) and its scheme
  server       a ClickHouse server answers at the DSN's address in the DSN's protocol
  credentials  the user logs in, and what it may do (read-only reader or writer)
  schema       the audit migrations: all applied, some pending, or a newer schema
  collector    the collector's health_check extension (--collector-health, else
               $` + collectorHealthEnv + `, else ` + defaultCollectorHealth + `)
  decision     one test decision sent over OTLP/gRPC to the collector appears in
               gate_decisions (agent "` + doctorAgent + `", a random run ID); its latency

Every check names the target it checked and where that came from (a flag, an
environment variable, or the built-in default, which is the local demo's
stack). A check against a built-in default the rest of the configuration
contradicts says so: WARN with the fix. With the DSN unset, the dsn check
WARNs that it checks the demo's server; with OTEL_EXPORTER_OTLP_ENDPOINT (or
--otlp-endpoint) naming another collector but no health URL given, the
collector check WARNs instead of asking the demo's collector, and the test
decision checks the configured collector.

The test decision uses the standard OTLP exporter variables:
OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT (default ` + defaultOTLPEndpoint + `, or --otlp-endpoint),
OTEL_EXPORTER_OTLP_[TRACES_]HEADERS (e.g. 'authorization=Bearer TOKEN'),
OTEL_EXPORTER_OTLP_[TRACES_]INSECURE and _CERTIFICATE. It is a real, allowed
decision of agent ` + doctorAgent + ` (tool ` + doctorTool + `); filter it out with
--agent if needed. --collector-health none skips the collector and the test
decision (a reader-only check); --decision-timeout 0 skips the decision.

Exit code: 0 when no check fails (warnings included), 1 when one fails, 2 on
bad usage.`,
		Example: `  auditq doctor
  auditq doctor --dsn http://reader:PASS@127.0.0.1:8123 --json
  auditq doctor --collector-health none
  AUDITQ_COLLECTOR_HEALTH=http://collector:13133/ OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4317 auditq doctor
  OTEL_EXPORTER_OTLP_HEADERS='authorization=Bearer TOKEN' auditq doctor --otlp-endpoint https://collector:4317`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.decisionTimeout < 0 {
				return usagef("doctor: --decision-timeout must not be negative")
			}
			rep := runDoctor(cmd.Context(), &f)
			if f.jsonOut {
				enc := json.NewEncoder(io.out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				writeDoctorText(io.out, rep)
			}
			if !rep.OK {
				failed := 0
				for _, c := range rep.Checks {
					if c.Status == statusFail {
						failed++
					}
				}
				return fmt.Errorf("doctor: %d of %d checks failed", failed, len(rep.Checks))
			}
			return nil
		},
	}
	f.conn.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.collectorHealth, "collector-health", "", "URL of the collector's health_check extension (default $"+collectorHealthEnv+", else "+defaultCollectorHealth+"); none skips the collector and the test decision")
	fl.StringVar(&f.otlpEndpoint, "otlp-endpoint", "", "OTLP/gRPC endpoint for the test decision (default $OTEL_EXPORTER_OTLP_ENDPOINT, else "+defaultOTLPEndpoint+")")
	fl.DurationVar(&f.decisionTimeout, "decision-timeout", 30*time.Second, "how long the test decision may take to reach gate_decisions; 0 skips it")
	fl.BoolVar(&f.jsonOut, "json", false, "print the report as JSON")
	return cmd
}

// writeDoctorText prints one line per check and the fix under failures.
func writeDoctorText(w io.Writer, rep doctorReport) {
	for _, c := range rep.Checks {
		fmt.Fprintf(w, "%-4s  %-11s  %s\n", strings.ToUpper(c.Status), c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "      %-11s  fix: %s\n", "", c.Fix)
		}
	}
}

// runDoctor runs the checks in order; a check whose prerequisite failed is
// skipped, naming it.
func runDoctor(ctx context.Context, f *doctorFlags) doctorReport {
	var rep doctorReport
	add := func(c doctorCheck) { rep.Checks = append(rep.Checks, c) }
	dbCtx, cancel := context.WithTimeout(ctx, f.conn.timeout)
	defer cancel()

	st, dbChecks := doctorDatabase(dbCtx, &f.conn)
	for _, c := range dbChecks {
		add(c)
	}
	if st != nil {
		defer st.Close()
	}

	health := collectorHealthTarget(f.collectorHealth)
	otlp := otlpTarget(f.otlpEndpoint)
	skipCollector := strings.EqualFold(health.value, "none")
	collectorOK := false
	switch {
	case skipCollector:
		add(doctorCheck{Name: "collector", Status: statusSkip, Detail: "none given (from " + health.from + ")"})
	case health.isDefault() && !otlp.isDefault() && !sameHostPort(otlp.value, defaultOTLPEndpoint):
		// Asking the demo's collector would pass or fail for a collector
		// the user did not configure: name the one they did.
		host := hostOf(otlp.value)
		add(doctorCheck{Name: "collector", Status: statusWarn,
			Detail: fmt.Sprintf("not checked: the health URL is %s, the local demo's collector, but the test decision goes to the collector at %s",
				health, otlp),
			Fix: fmt.Sprintf("pass --collector-health http://%s/ (or set %s) for the collector at %s",
				net.JoinHostPort(host, collectorHealthPort), collectorHealthEnv, otlp.value)})
		collectorOK = true // the test decision checks the configured collector
	default:
		c := checkCollector(ctx, health)
		collectorOK = c.Status == statusOK
		add(c)
	}

	switch {
	case skipCollector:
		add(doctorCheck{Name: "decision", Status: statusSkip, Detail: "no collector to send it to: the health URL is none (from " + health.from + ")"})
	case f.decisionTimeout == 0:
		add(doctorCheck{Name: "decision", Status: statusSkip, Detail: "--decision-timeout 0"})
	case st == nil || !collectorOK || checkFailed(rep.Checks, "schema"):
		add(doctorCheck{Name: "decision", Status: statusSkip, Detail: "needs a reachable server, working credentials, the audit schema and a healthy collector (see above)"})
	default:
		add(checkDecision(ctx, st, f, otlp))
	}

	// A library's error may quote the DSN it was given: no check shows its secrets.
	for i := range rep.Checks {
		rep.Checks[i].Detail = audit.ScrubDSN(rep.Checks[i].Detail, f.conn.dsn)
		rep.Checks[i].Fix = audit.ScrubDSN(rep.Checks[i].Fix, f.conn.dsn)
	}
	rep.OK = true
	for _, c := range rep.Checks {
		if c.Status == statusFail {
			rep.OK = false
		}
	}
	return rep
}

// checkFailed reports whether the check called name failed.
func checkFailed(checks []doctorCheck, name string) bool {
	for _, c := range checks {
		if c.Name == name && c.Status == statusFail {
			return true
		}
	}
	return false
}

// doctorDatabase runs the dsn, server, credentials and schema checks; it
// returns the open store when the server accepted the credentials.
func doctorDatabase(ctx context.Context, cf *connFlags) (*audit.Store, []doctorCheck) {
	var out []doctorCheck
	skipRest := func(from int, why string) {
		for _, n := range []string{"dsn", "server", "credentials", "schema"}[from:] {
			out = append(out, doctorCheck{Name: n, Status: statusSkip, Detail: why})
		}
	}
	cf.resolve()
	start := time.Now()
	st, err := audit.Open(ctx, cf.dsn, audit.WithDatabase(cf.database))
	elapsed := time.Since(start)
	dsn := redactDSN(cf.dsn)
	scheme := "clickhouse"
	if u, perr := url.Parse(cf.dsn); perr == nil && u.Scheme != "" {
		scheme = u.Scheme
	}
	if errors.Is(err, audit.ErrBadDSN) {
		out = append(out, doctorCheck{Name: "dsn", Status: statusFail, Detail: fmt.Sprintf("%s (from %s) is not a usable DSN", dsn, cf.from),
			Fix: err.Error()})
		skipRest(1, "needs a usable DSN")
		return nil, out
	}
	if cf.from == defaultDSNFrom {
		// The demo's server may well answer: say that it is the one checked.
		out = append(out, doctorCheck{Name: "dsn", Status: statusWarn,
			Detail: fmt.Sprintf("%s (from %s: neither --dsn nor $%s is set, so this checks the local demo's server): %s", dsn, fromDefault, dsnEnv, protocolName(scheme)),
			Fix:    fmt.Sprintf("to check your server, pass --dsn or set %s, e.g. http://reader:PASS@HOST:8123 (after `make demo`, `source .demo/env` sets it)", dsnEnv)})
	} else {
		out = append(out, doctorCheck{Name: "dsn", Status: statusOK, Detail: fmt.Sprintf("%s (from %s): %s", dsn, cf.from, protocolName(scheme))})
	}

	var pe *audit.ProtocolError
	var ue *audit.UnreachableError
	var ex *clickhouse.Exception
	switch {
	case errors.As(err, &pe):
		out = append(out, doctorCheck{Name: "server", Status: statusFail,
			Detail: fmt.Sprintf("%s answers at %s, not %s", pe.Server, pe.Addr, protocolName(scheme)), Fix: pe.Fix})
		skipRest(2, "needs a ClickHouse server speaking the DSN's protocol")
		return nil, out
	case errors.As(err, &ue):
		fix := fmt.Sprintf("start the server (`make demo`, or `auditq serve --data-dir DIR`), or point --dsn / %s at it", dsnEnv)
		if ue.Hint != "" {
			fix = ue.Hint
		}
		out = append(out, doctorCheck{Name: "server", Status: statusFail,
			Detail: fmt.Sprintf("nothing answers at %s: %v", ue.Addr, rootCause(ue.Err)), Fix: fix})
		skipRest(2, "needs a reachable server")
		return nil, out
	case errors.As(err, &ex) && (ex.Code == codeAuthenticationFailed || ex.Code == codeRequiredPassword):
		out = append(out, doctorCheck{Name: "server", Status: statusOK, Detail: fmt.Sprintf("a ClickHouse server answers at %s (%s)", addrOf(cf.dsn), protocolName(scheme))})
		out = append(out, doctorCheck{Name: "credentials", Status: statusFail,
			Detail: fmt.Sprintf("user %q refused (code %d: %s)", dsnUser(cf.dsn), ex.Code, ex.Message),
			Fix:    fmt.Sprintf("put the right user and password in --dsn or %s, e.g. http://reader:PASS@%s (after `make demo`, `source .demo/env` sets it; the embedded server's accounts are AUDITQ_SERVE_USERS)", dsnEnv, addrOf(cf.dsn))})
		skipRest(3, "needs working credentials")
		return nil, out
	case err != nil:
		out = append(out, doctorCheck{Name: "server", Status: statusFail, Detail: err.Error(),
			Fix: "check the DSN's host, port and scheme: ClickHouse's HTTP interface (and `auditq serve`) is usually http://HOST:8123, its native protocol clickhouse://HOST:9000"})
		skipRest(2, "needs a reachable server")
		return nil, out
	}

	var version string
	if row := st.Conn().QueryRow(ctx, "SELECT version()"); row.Err() == nil {
		_ = row.Scan(&version)
	}
	out = append(out, doctorCheck{Name: "server", Status: statusOK,
		Detail: fmt.Sprintf("ClickHouse %s answers at %s (%s) in %s", version, addrOf(cf.dsn), protocolName(scheme), elapsed.Round(time.Millisecond))})
	out = append(out, checkCredentials(ctx, st, cf.dsn, cf.database))
	out = append(out, checkSchema(ctx, st, cf.database))
	return st, out
}

// protocolName names a DSN scheme's protocol.
func protocolName(scheme string) string {
	switch scheme {
	case "http":
		return "HTTP interface"
	case "https":
		return "HTTP interface over TLS"
	}
	return "native protocol"
}

// dsnUser is the DSN's user name, or "default" (what ClickHouse clients
// send without one).
func dsnUser(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil && u.User.Username() != "" {
		return u.User.Username()
	}
	return "default"
}

// checkCredentials reports what the logged-in user may do. It runs an
// INSERT of no rows into schema_migrations (INSERT … SELECT … WHERE 0,
// which writes nothing): a read-only user (the embedded server's ro
// accounts, ClickHouse's readonly profiles) is refused with READONLY (164),
// a user without the INSERT grant with ACCESS_DENIED (497); a writer is
// not (a missing table, code 60 or 81, is the schema check's business).
func checkCredentials(ctx context.Context, st *audit.Store, dsn, database string) doctorCheck {
	user := dsnUser(dsn)
	var one uint8
	if err := st.Conn().QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return doctorCheck{Name: "credentials", Status: statusFail, Detail: fmt.Sprintf("user %q logged in, but SELECT 1 failed: %v", user, err),
			Fix: "give the user SELECT on the audit database (GRANT SELECT ON " + database + ".* TO " + user + ")"}
	}
	err := st.Conn().Exec(ctx, fmt.Sprintf("INSERT INTO `%s`.`%s` (Version, Name, Checksum) SELECT 0, '', '' WHERE 0", database, audit.MigrationsTable))
	var ex *clickhouse.Exception
	switch {
	case errors.As(err, &ex) && (ex.Code == codeReadonly || ex.Code == codeAccessDenied):
		return doctorCheck{Name: "credentials", Status: statusOK,
			Detail: fmt.Sprintf("user %q logged in, read-only: can run auditq's queries; cannot migrate or write decisions (the collector and `auditq migrate` need a writer)", user)}
	case err == nil, errors.As(err, &ex) && (ex.Code == codeUnknownTable || ex.Code == codeUnknownDatabase):
		return doctorCheck{Name: "credentials", Status: statusOK,
			Detail: fmt.Sprintf("user %q logged in, can write: can run `auditq migrate` and be the collector's user; for auditq's queries a read-only user is enough", user)}
	}
	return doctorCheck{Name: "credentials", Status: statusOK,
		Detail: fmt.Sprintf("user %q logged in (write access unknown: %v)", user, err)}
}

// checkSchema compares the applied migrations with this auditq's.
func checkSchema(ctx context.Context, st *audit.Store, database string) doctorCheck {
	statuses, err := audit.Status(ctx, st.Conn(), audit.WithDatabase(database))
	if err != nil {
		return doctorCheck{Name: "schema", Status: statusFail, Detail: fmt.Sprintf("cannot read %s.%s: %v", database, audit.MigrationsTable, err),
			Fix: "give the user SELECT on the audit database, or check --database / " + databaseEnv}
	}
	known := len(statuses)
	var pending []string
	applied, changed := 0, 0
	for _, s := range statuses {
		switch {
		case !s.Applied:
			pending = append(pending, fmt.Sprintf("%d %s", s.Version, s.Name))
		case s.Changed:
			applied++
			changed++
		default:
			applied++
		}
	}
	fix := fmt.Sprintf("run `auditq migrate --dsn WRITER_DSN --database %s` with a writer (rw) user", database)
	if applied == 0 {
		return doctorCheck{Name: "schema", Status: statusFail,
			Detail: fmt.Sprintf("database %q is not migrated: none of the %d audit migrations is applied", database, known), Fix: fix}
	}
	if len(pending) > 0 {
		return doctorCheck{Name: "schema", Status: statusFail,
			Detail: fmt.Sprintf("database %q: %d of %d migrations applied, pending: %s", database, applied, known, strings.Join(pending, ", ")), Fix: fix}
	}
	var newest uint32
	_ = st.Conn().QueryRow(ctx, fmt.Sprintf("SELECT max(Version) FROM `%s`.`%s`", database, audit.MigrationsTable)).Scan(&newest)
	if int(newest) > known {
		return doctorCheck{Name: "schema", Status: statusFail,
			Detail: fmt.Sprintf("database %q has schema version %d, newer than this auditq knows (%d)", database, newest, known),
			Fix:    "use the auditq of the release that migrated it (`auditq version`)"}
	}
	detail := fmt.Sprintf("database %q at schema version %d (all %d migrations applied)", database, known, known)
	if changed > 0 {
		detail += fmt.Sprintf("; %d recorded with other SQL (other migrate options such as --retention; `auditq migrate --status` lists them)", changed)
	}
	return doctorCheck{Name: "schema", Status: statusOK, Detail: detail}
}

// checkCollector asks the collector's health_check extension at health.
func checkCollector(ctx context.Context, health target) doctorCheck {
	healthURL := health.value
	fix := "start the collector (`make demo` or scripts/stack.sh start; or otelcol-toolgate --config deploy/otel-collector/config.yaml) and point --collector-health (or $" + collectorHealthEnv + ") at its health_check extension (TOOLGATE_OTELCOL_HEALTH, default 127.0.0.1:13133); --collector-health none skips this"
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, healthURL, nil)
	if err != nil {
		return doctorCheck{Name: "collector", Status: statusFail, Detail: fmt.Sprintf("%q (from %s): %v", healthURL, health.from, err), Fix: "give the URL of the health_check extension, e.g. " + defaultCollectorHealth}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return doctorCheck{Name: "collector", Status: statusFail, Detail: fmt.Sprintf("no answer from %s: %v", health, rootCause(err)), Fix: fix}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var h struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(body, &h)
	if h.Status == "" {
		h.Status = strings.TrimSpace(string(body))
	}
	if resp.StatusCode != http.StatusOK {
		return doctorCheck{Name: "collector", Status: statusFail, Detail: fmt.Sprintf("%s answers %s (%s)", health, resp.Status, h.Status),
			Fix: "the collector is not ready: read its log (a pipeline failed to start, or it is shutting down); " + fix}
	}
	return doctorCheck{Name: "collector", Status: statusOK, Detail: fmt.Sprintf("%s: %s", health, h.Status)}
}

// collectorHealthTarget is the health URL: the flag, else
// $AUDITQ_COLLECTOR_HEALTH, else the local stack's.
func collectorHealthTarget(flag string) target {
	if v := strings.TrimSpace(flag); v != "" {
		return target{v, "--collector-health"}
	}
	if v := strings.TrimSpace(os.Getenv(collectorHealthEnv)); v != "" {
		return target{v, "$" + collectorHealthEnv}
	}
	return target{defaultCollectorHealth, fromDefault}
}

// otlpTarget is the test decision's OTLP/gRPC endpoint: --otlp-endpoint,
// else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT
// (which otlptracegrpc reads itself), else the local stack's plaintext
// endpoint.
func otlpTarget(flag string) target {
	if v := strings.TrimSpace(flag); v != "" {
		return target{v, "--otlp-endpoint"}
	}
	for _, env := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v := strings.TrimSpace(os.Getenv(env)); v != "" {
			return target{v, "$" + env}
		}
	}
	return target{defaultOTLPEndpoint, fromDefault}
}

// otlpExporterOptions builds the exporter's options for endpoint (see
// otlpTarget): an environment endpoint is left to otlptracegrpc, which
// reads it with the rest of the OTEL_EXPORTER_OTLP_* variables.
func otlpExporterOptions(endpoint target) []otlptracegrpc.Option {
	opts := []otlptracegrpc.Option{otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
	switch {
	case strings.HasPrefix(endpoint.from, "$"):
		return opts
	case strings.Contains(endpoint.value, "://"):
		return append(opts, otlptracegrpc.WithEndpointURL(endpoint.value))
	}
	return append(opts, otlptracegrpc.WithEndpoint(endpoint.value))
}

// hostPort is the host:port of an endpoint given as a URL or as
// host:port, with localhost read as 127.0.0.1 and a missing port as
// OTLP/gRPC's 4317.
func hostPort(endpoint string) string {
	hp := endpoint
	if u, err := url.Parse(endpoint); err == nil && strings.Contains(endpoint, "://") {
		hp = u.Host
	}
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		host, port = hp, "4317"
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// hostOf is the host of an endpoint (see hostPort).
func hostOf(endpoint string) string {
	host, _, _ := net.SplitHostPort(hostPort(endpoint))
	return host
}

// sameHostPort reports whether two endpoints name the same host and port.
func sameHostPort(a, b string) bool { return hostPort(a) == hostPort(b) }

// checkDecision sends one decision span to the collector and waits until
// it appears in gate_decisions.
func checkDecision(ctx context.Context, st *audit.Store, f *doctorFlags, otlp target) doctorCheck {
	runID := newRunID()
	opts, endpoint := otlpExporterOptions(otlp), otlp.String()
	exportCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	exp, err := otlptracegrpc.New(exportCtx, opts...)
	if err != nil {
		return doctorCheck{Name: "decision", Status: statusFail, Detail: fmt.Sprintf("OTLP exporter for %s: %v", endpoint, err),
			Fix: "check OTEL_EXPORTER_OTLP_ENDPOINT / --otlp-endpoint (host:port or http(s)://host:port) and OTEL_EXPORTER_OTLP_HEADERS (key=value,…)"}
	}
	defer func() { _ = exp.Shutdown(context.Background()) }()
	// The exporter's own view of the collector (otelbridge.Check reads the
	// endpoint and the OTEL_EXPORTER_OTLP_* variables as the exporter does):
	// a TLS mismatch, an unreachable port or a refused token, with its fix.
	checkCfg := otelbridge.Config{}
	if !strings.HasPrefix(otlp.from, "$") {
		checkCfg.Endpoint = otlp.value
	}
	if err := otelbridge.Check(exportCtx, checkCfg); err != nil {
		return doctorCheck{Name: "decision", Status: statusFail, Detail: fmt.Sprintf("the collector at %s cannot take the test decision: %v", endpoint, err), Fix: exportFix(err)}
	}

	rec := tracetest.NewSpanRecorder()
	res := resource.NewSchemaless(semconv.ServiceName(doctorAgent))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	// The decision record's own encoder, as the executor writes it.
	rec0 := gate.Record{Stage: gate.StageGate, Gated: true, Action: gate.ActionAllow,
		Reason: "auditq doctor: end-to-end test decision", Risk: gate.RiskSafe}
	attrs := rec0.Attributes([]attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(doctorTool),
		semconv.GenAIAgentName(doctorAgent),
		gate.AttrRunID.String(runID),
		attribute.String(string(semconv.GenAIToolCallArgumentsKey), `{}`),
	}, 0)
	_, span := tp.Tracer("github.com/toolgate/toolgate/cmd/auditq").Start(ctx, "execute_tool "+doctorTool,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	span.End()
	_ = tp.Shutdown(ctx)

	sent := time.Now()
	if err := exp.ExportSpans(exportCtx, rec.Ended()); err != nil {
		return doctorCheck{Name: "decision", Status: statusFail, Detail: fmt.Sprintf("the collector at %s did not accept the test decision: %v", endpoint, err), Fix: exportFix(err)}
	}
	deadline := time.NewTimer(f.decisionTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	q := fmt.Sprintf("SELECT count() FROM `%s`.`%s` WHERE RunId = {run:String} AND Agent = {agent:String}", st.Database(), audit.DecisionsTable)
	var p audit.Params
	qctx := p.String("run", runID).String("agent", doctorAgent).Context(ctx)
	var lastErr error
	for {
		var n uint64
		err := st.Conn().QueryRow(qctx, q).Scan(&n)
		lastErr = err
		if err == nil && n > 0 {
			latency := time.Since(sent)
			ms := float64(latency.Microseconds()) / 1000
			return doctorCheck{Name: "decision", Status: statusOK, LatencyMS: &ms,
				Detail: fmt.Sprintf("test decision (agent %s, run %s) sent to %s reached %s.%s in %s", doctorAgent, runID, endpoint, st.Database(), audit.DecisionsTable, latency.Round(time.Millisecond))}
		}
		select {
		case <-ctx.Done():
			return doctorCheck{Name: "decision", Status: statusFail, Detail: "interrupted: " + ctx.Err().Error()}
		case <-deadline.C:
			detail := fmt.Sprintf("the collector at %s accepted the test decision (run %s), but it did not reach %s.%s within %s", endpoint, runID, st.Database(), audit.DecisionsTable, f.decisionTimeout)
			if lastErr != nil {
				detail += fmt.Sprintf(" (last query: %v)", lastErr)
			}
			return doctorCheck{Name: "decision", Status: statusFail, Detail: detail,
				Fix: fmt.Sprintf("read the collector's log for clickhouse exporter errors: its ClickHouse endpoint, user and password (TOOLGATE_CLICKHOUSE_ENDPOINT, TOOLGATE_CLICKHOUSE_USER, TOOLGATE_CLICKHOUSE_PASSWORD) must reach this server as a writer and its database (TOOLGATE_CLICKHOUSE_DATABASE) must be %q; or raise --decision-timeout", st.Database())}
		case <-tick.C:
		}
	}
}

// exportFix names the fix for an OTLP failure: otelbridge.Check's kind of
// failure, or the gRPC status of a failed export.
func exportFix(err error) string {
	const credentials = "the collector wants credentials: set OTEL_EXPORTER_OTLP_HEADERS='authorization=Bearer TOKEN' (the collector's bearer token, TOOLGATE_OTLP_TOKEN) or the client certificate (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE / _CLIENT_KEY)"
	switch {
	case errors.Is(err, otelbridge.ErrUnauthenticated):
		return credentials
	case errors.Is(err, otelbridge.ErrTLSMismatch), errors.Is(err, otelbridge.ErrCertificate), errors.Is(err, otelbridge.ErrHandshake):
		return "TLS mismatch: for a plaintext collector use an http:// endpoint or OTEL_EXPORTER_OTLP_INSECURE=true; for a TLS collector use https:// and trust its CA (OTEL_EXPORTER_OTLP_CERTIFICATE=ca.pem)"
	case errors.Is(err, otelbridge.ErrUnreachable), errors.Is(err, otelbridge.ErrNotGRPC):
		return "check the OTLP/gRPC endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or --otlp-endpoint; the local stack's is " + defaultOTLPEndpoint + ", TOOLGATE_OTELCOL_GRPC) and whether it is plaintext (http://, OTEL_EXPORTER_OTLP_INSECURE=true) or TLS (https://)"
	}
	switch status.Code(errors.Unwrap(err)) {
	case codes.Unauthenticated, codes.PermissionDenied:
		return credentials
	}
	return "check OTEL_EXPORTER_OTLP_ENDPOINT / --otlp-endpoint, OTEL_EXPORTER_OTLP_HEADERS and the collector's log"
}

// newRunID is a random run ID for the test decision.
func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "doctor-" + hex.EncodeToString(b[:])
}
