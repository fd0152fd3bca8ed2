package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/internal/testenv"
)

// doctorEnv is the real pipeline doctor checks: the embedded server with
// the audit schema migrated, and the collector writing to it.
type doctorEnv struct {
	ch  *testenv.ClickHouse
	col *testenv.Collector
}

func startDoctorEnv(t *testing.T) doctorEnv {
	t.Helper()
	ch := testenv.StartClickHouse(t)
	var out bytes.Buffer
	code, stderr := execAuditq(t, context.Background(), &out, "migrate", "--dsn", ch.WriterDSN)
	require.Equal(t, 0, code, stderr)
	col := testenv.StartCollector(t, testenv.WithClickHouse(ch.URL, ch.Writer.Name, ch.Writer.Password, "otel"))
	return doctorEnv{ch: ch, col: col}
}

// runDoctorJSON runs `auditq doctor --json` and decodes the report.
func runDoctorJSON(t *testing.T, args ...string) (int, doctorReport, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	code, stderr := execAuditq(t, ctx, &out, append([]string{"doctor", "--json", "--timeout", "20s"}, args...)...)
	var rep doctorReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), "stdout: %s\nstderr: %s", out.String(), stderr)
	return code, rep, stderr
}

func checkNamed(rep doctorReport, name string) doctorCheck {
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	return doctorCheck{}
}

// TestDoctor runs doctor against the real embedded server and the real
// collector: every check OK (the test decision goes through the standard
// OTEL_EXPORTER_OTLP_ENDPOINT), then each misconfiguration fails its check
// with the fix.
func TestDoctor(t *testing.T) {
	env := startDoctorEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+env.col.GRPCEndpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer "+env.col.Token)

	t.Run("all ok", func(t *testing.T) {
		code, rep, stderr := runDoctorJSON(t, "--dsn", env.ch.ReaderDSN, "--collector-health", env.col.HealthURL)
		require.Equal(t, 0, code, "%s\n%+v", stderr, rep)
		assert.True(t, rep.OK)
		var names []string
		for _, c := range rep.Checks {
			names = append(names, c.Name)
			assert.Equal(t, statusOK, c.Status, "%s: %s", c.Name, c.Detail)
			assert.Empty(t, c.Fix)
		}
		assert.Equal(t, []string{"dsn", "server", "credentials", "schema", "collector", "decision"}, names)
		assert.Contains(t, checkNamed(rep, "credentials").Detail, `user "reader" logged in, read-only`)
		dec := checkNamed(rep, "decision")
		require.NotNil(t, dec.LatencyMS)
		assert.Positive(t, *dec.LatencyMS)
		assert.Contains(t, dec.Detail, "agent auditq-doctor")

		// The test decision is a real row of gate_decisions.
		var out bytes.Buffer
		code, stderr = execAuditq(t, context.Background(), &out, "decisions", "--dsn", env.ch.ReaderDSN, "--agent", doctorAgent, "--format", "jsonl")
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, 1, strings.Count(out.String(), "\n"), out.String())
		assert.Contains(t, out.String(), doctorTool)
	})

	t.Run("writer and text output", func(t *testing.T) {
		var out bytes.Buffer
		code, stderr := execAuditq(t, context.Background(), &out, "doctor", "--dsn", env.ch.WriterDSN, "--collector-health", env.col.HealthURL)
		require.Equal(t, 0, code, "%s\n%s", stderr, out.String())
		ok := 0
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "OK ") {
				ok++
			}
		}
		assert.Equal(t, 6, ok, out.String())
		assert.Contains(t, out.String(), `user "writer" logged in, can write`)
		assert.Empty(t, stderr)
	})

	bad := "http://" + env.ch.Reader.Name + ":wrong@" + env.ch.Addr
	native := "clickhouse://" + env.ch.Reader.Name + ":" + env.ch.Reader.Password + "@" + env.ch.Addr
	tlsToPlain := "https://" + env.ch.Reader.Name + ":" + env.ch.Reader.Password + "@" + env.ch.Addr + "?secure=true"
	tests := []struct {
		name      string
		args      []string
		failed    string // the check that fails
		fix       string // in its fix
		skipAfter []string
		headers   string // OTEL_EXPORTER_OTLP_HEADERS for this case, when set
	}{
		{name: "wrong password", args: []string{"--dsn", bad, "--collector-health", env.col.HealthURL},
			failed: "credentials", fix: "put the right user and password in --dsn or AUDITQ_DSN", skipAfter: []string{"schema", "decision"}},
		{name: "native scheme at the HTTP server", args: []string{"--dsn", native, "--collector-health", env.col.HealthURL},
			failed: "server", fix: "use an http:// DSN, http://reader:xxxxx@" + env.ch.Addr, skipAfter: []string{"credentials", "schema", "decision"}},
		{name: "https at the plain-HTTP server", args: []string{"--dsn", tlsToPlain, "--collector-health", env.col.HealthURL},
			failed: "server", fix: "use an http:// DSN without secure=true", skipAfter: []string{"credentials", "decision"}},
		{name: "DSN at the collector's health port", args: []string{"--dsn", "http://reader:x@" + strings.TrimSuffix(strings.TrimPrefix(env.col.HealthURL, "http://"), "/"), "--collector-health", "none"},
			failed: "server", fix: "ClickHouse's HTTP interface (and `auditq serve`) is usually on 8123"},
		{name: "schema not migrated", args: []string{"--dsn", env.ch.ReaderDSN, "--database", "never_migrated", "--collector-health", env.col.HealthURL},
			failed: "schema", fix: "run `auditq migrate --dsn WRITER_DSN --database never_migrated`", skipAfter: []string{"decision"}},
		{name: "collector down", args: []string{"--dsn", env.ch.ReaderDSN, "--collector-health", "http://127.0.0.1:1/"},
			failed: "collector", fix: "start the collector", skipAfter: []string{"decision"}},
		{name: "OTLP endpoint wrong", args: []string{"--dsn", env.ch.ReaderDSN, "--collector-health", env.col.HealthURL, "--otlp-endpoint", "http://127.0.0.1:1"},
			failed: "decision", fix: "check the OTLP/gRPC endpoint"},
		{name: "OTLP TLS to a plaintext collector", args: []string{"--dsn", env.ch.ReaderDSN, "--collector-health", env.col.HealthURL, "--otlp-endpoint", "https://" + env.col.GRPCEndpoint},
			failed: "decision", fix: "TLS mismatch"},
		{name: "OTLP token missing", args: []string{"--dsn", env.ch.ReaderDSN, "--collector-health", env.col.HealthURL},
			headers: "x-unrelated=1", failed: "decision", fix: "the collector wants credentials: set OTEL_EXPORTER_OTLP_HEADERS='authorization=Bearer TOKEN'"},
		{name: "OTLP token wrong", args: []string{"--dsn", env.ch.ReaderDSN, "--collector-health", env.col.HealthURL},
			headers: "authorization=Bearer not-the-token", failed: "decision", fix: "the collector wants credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.headers != "" {
				t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", tt.headers)
			}
			code, rep, stderr := runDoctorJSON(t, tt.args...)
			assert.Equal(t, 1, code, stderr)
			assert.False(t, rep.OK)
			assert.Contains(t, stderr, "checks failed")
			c := checkNamed(rep, tt.failed)
			assert.Equal(t, statusFail, c.Status, "%+v", rep)
			assert.Contains(t, c.Fix, tt.fix, "%+v", c)
			for _, n := range tt.skipAfter {
				assert.Equal(t, statusSkip, checkNamed(rep, n).Status, "%s after %s failed: %+v", n, tt.failed, rep)
			}
			out, _ := json.Marshal(rep)
			assert.NotContains(t, string(out), env.ch.Reader.Password, "no password in the report")
		})
	}
}

// Each check names its target and where it came from; a check against a
// built-in default that the rest of the configuration contradicts WARNs
// with the fix, instead of passing against something the user did not
// configure: the demo's collector checked while OTLP goes elsewhere, or the
// demo's server checked because the DSN is unset.
func TestDoctorNamesWhatItChecked(t *testing.T) {
	env := startDoctorEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer "+env.col.Token)
	// A healthy collector listens at the default health URL's place in
	// none of these cases but the first, whose decision goes to the real
	// collector: the health check must not be the demo's.
	otherHost := "http://" + env.col.GRPCEndpoint
	tests := []struct {
		name   string
		env    map[string]string // set for the case ("" unsets)
		args   []string
		check  string
		status string
		detail []string
		fix    string
	}{
		{name: "OTLP endpoint elsewhere, health URL the default: WARN, not the demo's collector",
			env:   map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otherHost, collectorHealthEnv: ""},
			args:  []string{"--dsn", env.ch.ReaderDSN},
			check: "collector", status: statusWarn,
			detail: []string{"not checked", defaultCollectorHealth + " (from the built-in default)", otherHost + " (from $OTEL_EXPORTER_OTLP_ENDPOINT)"},
			fix:    "pass --collector-health http://127.0.0.1:13133/ (or set AUDITQ_COLLECTOR_HEALTH) for the collector at " + otherHost},
		{name: "health URL from the environment",
			env:   map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otherHost, collectorHealthEnv: env.col.HealthURL},
			args:  []string{"--dsn", env.ch.ReaderDSN},
			check: "collector", status: statusOK,
			detail: []string{env.col.HealthURL + " (from $AUDITQ_COLLECTOR_HEALTH)"}},
		{name: "health URL from the flag beats the environment",
			env:   map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otherHost, collectorHealthEnv: "http://127.0.0.1:1/"},
			args:  []string{"--dsn", env.ch.ReaderDSN, "--collector-health", env.col.HealthURL},
			check: "collector", status: statusOK,
			detail: []string{env.col.HealthURL + " (from --collector-health)"}},
		{name: "a wrong health URL from the environment fails naming it",
			env:   map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otherHost, collectorHealthEnv: "http://127.0.0.1:1/"},
			args:  []string{"--dsn", env.ch.ReaderDSN},
			check: "collector", status: statusFail,
			detail: []string{"http://127.0.0.1:1/ (from $AUDITQ_COLLECTOR_HEALTH)"}, fix: "$AUDITQ_COLLECTOR_HEALTH"},
		{name: "the test decision names its endpoint's source",
			env:   map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "", collectorHealthEnv: env.col.HealthURL},
			args:  []string{"--dsn", env.ch.ReaderDSN, "--otlp-endpoint", otherHost},
			check: "decision", status: statusOK,
			detail: []string{otherHost + " (from --otlp-endpoint)"}},
		{name: "DSN unset: WARN that the demo's server is checked",
			env:   map[string]string{dsnEnv: "", collectorHealthEnv: "none"},
			check: "dsn", status: statusWarn,
			detail: []string{defaultDSN + " (from the built-in default: neither --dsn nor $AUDITQ_DSN is set, so this checks the local demo's server)"},
			fix:    "pass --dsn or set AUDITQ_DSN"},
		{name: "DSN from the environment",
			env:   map[string]string{dsnEnv: env.ch.ReaderDSN, collectorHealthEnv: "none"},
			check: "dsn", status: statusOK,
			detail: []string{"(from $AUDITQ_DSN)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, rep, stderr := runDoctorJSON(t, tt.args...)
			c := checkNamed(rep, tt.check)
			assert.Equal(t, tt.status, c.Status, "%s\n%+v", stderr, rep)
			for _, d := range tt.detail {
				assert.Contains(t, c.Detail, d)
			}
			if tt.fix != "" {
				assert.Contains(t, c.Fix, tt.fix)
			}
			if tt.status == statusWarn {
				assert.Equal(t, !checkFailedAny(rep), rep.OK, "a warning alone does not fail the report")
			}
		})
	}

	// With OTLP elsewhere and the health URL unset, the test decision is
	// what checks the configured collector: it runs, and passes.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otherHost)
	t.Setenv(collectorHealthEnv, "")
	code, rep, stderr := runDoctorJSON(t, "--dsn", env.ch.ReaderDSN)
	assert.Equal(t, 0, code, "%s\n%+v", stderr, rep)
	assert.Equal(t, statusOK, checkNamed(rep, "decision").Status, "%+v", rep)
}

// checkFailedAny reports whether any check failed.
func checkFailedAny(rep doctorReport) bool {
	for _, c := range rep.Checks {
		if c.Status == statusFail {
			return true
		}
	}
	return false
}

// The sample output in docs/auditq.md (#doctor) is a real run's: the same
// checks, statuses and details as doctor prints against the real server
// and collector set up the way .demo/env sets them, with the numbers
// (ports, versions, durations, run IDs) and the parts the doc elides (…)
// left out of the comparison; its schema line names this auditq's number
// of migrations.
func TestDoctorDocSample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/auditq.md")
	require.NoError(t, err)
	const prompt = "    $ source .demo/env && auditq doctor\n"
	i := strings.Index(string(doc), prompt)
	require.GreaterOrEqual(t, i, 0, "docs/auditq.md has the doctor sample")
	var sample []string
	for _, line := range strings.Split(string(doc)[i+len(prompt):], "\n") {
		if !strings.HasPrefix(line, "    ") {
			break
		}
		sample = append(sample, strings.TrimPrefix(line, "    "))
	}
	ms, err := audit.Migrations()
	require.NoError(t, err)
	assert.Contains(t, strings.Join(sample, "\n"), fmt.Sprintf(`database "otel" at schema version %d (all %d migrations applied)`, len(ms), len(ms)))

	env := startDoctorEnv(t)
	t.Setenv(dsnEnv, strings.TrimSuffix(env.ch.ReaderDSN, "/default")) // as .demo/env writes it
	t.Setenv(collectorHealthEnv, env.col.HealthURL)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+env.col.GRPCEndpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer "+env.col.Token)
	var out bytes.Buffer
	code, stderr := execAuditq(t, context.Background(), &out, "doctor")
	require.Equal(t, 0, code, stderr)
	real := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, sample, len(real), "the doc's sample has one line per check; this run printed:\n%s", out.String())
	for i := range real {
		got, want := sampleShape(real[i]), sampleShape(sample[i])
		rest := got
		for _, part := range strings.Split(want, "…") {
			j := strings.Index(rest, part)
			if !assert.GreaterOrEqual(t, j, 0, "doc line %q does not match this run's %q (this run printed:\n%s)", sample[i], real[i], out.String()) {
				break
			}
			rest = rest[j+len(part):]
		}
	}
}

// sampleShape is a doctor line with what differs between runs replaced:
// run IDs, durations and other numbers.
func sampleShape(line string) string {
	line = regexp.MustCompile(`doctor-[0-9a-f]{16}`).ReplaceAllString(line, "doctor-RUN")
	line = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s)\b`).ReplaceAllString(line, "DURATION")
	return regexp.MustCompile(`\d+`).ReplaceAllString(line, "N")
}

// TestDSNSecretsNeverPrinted: a password in any spelling clickhouse-go
// accepts — user-info, a query parameter, a DSN without a scheme — is never
// printed by doctor (text or JSON) or by a failing command, whether the
// password is right or wrong.
func TestDSNSecretsNeverPrinted(t *testing.T) {
	env := startDoctorEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+env.col.GRPCEndpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer "+env.col.Token)
	const wrong = "Wr0ng/Pa55?XYZ" // unencoded / and ?: the DSN does not parse
	reader, pass := env.ch.Reader.Name, env.ch.Reader.Password
	dsns := map[string]string{
		"query password":           "http://" + env.ch.Addr + "/?username=" + reader + "&password=" + pass,
		"query password, wrong":    "http://" + env.ch.Addr + "/?username=" + reader + "&password=" + wrong,
		"query PASSWORD, secure":   "http://" + env.ch.Addr + "/?secure=true&username=" + reader + "&PASSWORD=" + wrong,
		"user-info, wrong":         "http://" + reader + ":" + wrong + "@" + env.ch.Addr,
		"no scheme":                reader + ":" + wrong + "@" + env.ch.Addr,
		"native scheme, user-info": "clickhouse://" + reader + ":" + wrong + "@" + env.ch.Addr,
	}
	for name, dsn := range dsns {
		t.Run(name, func(t *testing.T) {
			for _, args := range [][]string{
				{"doctor", "--dsn", dsn, "--collector-health", env.col.HealthURL},
				{"doctor", "--json", "--dsn", dsn, "--collector-health", env.col.HealthURL},
				{"decisions", "--dsn", dsn, "--limit", "1"},
				{"stats", "--dsn=" + dsn},
			} {
				var out bytes.Buffer
				_, stderr := execAuditq(t, context.Background(), &out, args...)
				for _, secret := range []string{pass, wrong} {
					assert.NotContains(t, out.String(), secret, "%v", args)
					assert.NotContains(t, stderr, secret, "%v", args)
				}
			}
		})
	}
	// AUDITQ_DSN, not only the flag.
	t.Setenv("AUDITQ_DSN", dsns["no scheme"])
	var out bytes.Buffer
	_, stderr := execAuditq(t, context.Background(), &out, "decisions", "--limit", "1")
	assert.NotContains(t, out.String()+stderr, wrong)
}
