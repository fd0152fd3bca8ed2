package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestDemoEndToEnd is the main job for real: all 1,091 recorded calls
// through the gated executor → OTLP → our collector → the embedded
// ClickHouse and Jaeger, each its own process. The demo itself verifies
// that ClickHouse holds exactly one decision per call with the replay's
// counts by action, risk and tool, and that Jaeger holds the most-denied
// run's whole trace; this test checks that it said so, and compares the
// summary's numbers with what `auditq stats` computes.
func TestDemoEndToEnd(t *testing.T) {
	ctx := context.Background()
	ch, jaeger, col := startStack(t)

	var out, errw bytes.Buffer
	code := run(ctx, []string{
		"--transcript", "../../testdata/real/trajectories.jsonl",
		"--otlp-endpoint", "http://" + col.GRPCEndpoint,
		"--dsn", ch.ReaderDSN,
		"--jaeger-url", jaeger.QueryURL,
		"--wait", "90s",
	}, &out, &errw)
	t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errw.String())
	require.Equal(t, 0, code)

	o := out.String()
	assert.Contains(t, o, "1091 tool calls from 38 recorded agent runs")
	assert.Contains(t, o, "ClickHouse: 1091 decisions in otel.gate_decisions")
	assert.Regexp(t, `http://\S+/api/traces/[0-9a-f]{32} \(\d+ spans`, o)
	// The verifiable trail: each replayed run is one hash chain, complete
	// to the length its run span recorded at the run's end.
	assert.Contains(t, o, "Verifiable trail: 38 of 38 runs' hash chains complete (1091 decisions")
	m := regexp.MustCompile(`verified in (\S+),`).FindStringSubmatch(o)
	require.NotNil(t, m)
	t.Logf("REPORT verify over the demo's 1091 decisions (38 chains, in process): %s", m[1])

	// The same through the auditq binary, as `make demo` runs it: every
	// chain complete (--require-end: none open), exit 0.
	began := time.Now()
	vout, err := exec.CommandContext(ctx, testenv.AuditqBinary(t), "verify", "--since", "1h", "--require-end",
		"--dsn", ch.ReaderDSN, "-o", "json").Output()
	took := time.Since(began)
	require.NoError(t, err, "auditq verify: %s", vout)
	var vres struct {
		Complete       bool `json:"complete"`
		Chains         int  `json:"chains"`
		CompleteChains int  `json:"complete_chains"`
		Reports        []struct {
			RunID  string `json:"run_id"`
			Rows   uint64 `json:"rows"`
			Length uint64 `json:"length"`
			Status string `json:"status"`
		} `json:"reports"`
	}
	require.NoError(t, json.Unmarshal(vout, &vres))
	assert.True(t, vres.Complete)
	assert.Equal(t, 38, vres.CompleteChains)
	var rows uint64
	for _, r := range vres.Reports {
		assert.Equal(t, audit.StatusComplete, r.Status, r.RunID)
		assert.Equal(t, r.Rows, r.Length, "run %s: the run span recorded every position", r.RunID)
		rows += r.Rows
	}
	assert.EqualValues(t, 1091, rows)
	t.Logf("REPORT auditq verify (the binary, process start included) over the demo's 1091 decisions: %s", took.Round(time.Millisecond))

	// Inputs are recorded (redacted): the audit shows what was denied.
	rd, err := audit.Open(ctx, ch.ReaderDSN)
	require.NoError(t, err)
	page, err := rd.Decisions(ctx, audit.Filter{Action: "deny", Tool: "bash"}, audit.Page{Limit: 5})
	require.NoError(t, err)
	require.NotEmpty(t, page.Decisions)
	for _, d := range page.Decisions {
		assert.Contains(t, d.Input, "command", "recorded input of %s", d.SpanID)
	}
	require.NoError(t, rd.Close())

	// The summary's numbers equal `auditq stats` over the same store.
	r, err := audit.Open(ctx, ch.ReaderDSN)
	require.NoError(t, err)
	defer r.Close()
	st, err := r.Stats(ctx, audit.StatsQuery{By: []audit.Dimension{audit.ByAction}})
	require.NoError(t, err)
	stored := map[string]uint64{}
	for _, row := range st.Rows {
		stored[row.Keys[0]] = row.Count
	}
	assert.Equal(t, uint64(1091), st.Total)
	for _, action := range []string{"allowed", "denied"} {
		m := regexp.MustCompile(`(?m)^\s+` + action + `\s+(\d+)`).FindStringSubmatch(o)
		require.NotNil(t, m, "summary line %q", action)
		n, _ := strconv.ParseUint(m[1], 10, 64)
		key := map[string]string{"allowed": "allow", "denied": "deny"}[action]
		assert.Equal(t, stored[key], n, fmt.Sprintf("%s in the summary vs auditq stats", action))
	}
}

// startStack starts the real pipeline the demo talks to, each component
// its own process on free loopback ports: the embedded ClickHouse with the
// audit schema, Jaeger, and our collector sending to both.
func startStack(t *testing.T) (*testenv.ClickHouse, *testenv.Jaeger, *testenv.Collector) {
	t.Helper()
	ctx := context.Background()
	ch := testenv.StartClickHouse(t)
	w, err := audit.Open(ctx, ch.WriterDSN)
	require.NoError(t, err)
	_, err = w.Migrate(ctx)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	jaeger := testenv.StartJaeger(t)
	col := testenv.StartCollector(t,
		testenv.WithClickHouse(ch.URL, ch.Writer.Name, ch.Writer.Password, ""),
		testenv.WithJaegerOTLP(jaeger.OTLPGRPC),
		testenv.WithDecisionWait(time.Second),
	)
	// The demo's exporter reads the standard variable, as in make demo.
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer "+col.Token)
	return ch, jaeger, col
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"--bogus"}, 2},
		{[]string{"extra"}, 2},
		{[]string{"-h"}, 0},
		{[]string{"--sampling", "sometimes", "--transcript", "../../testdata/real/trajectories.jsonl"}, 1},
		{[]string{"--transcript", "does-not-exist.jsonl"}, 1},
		{[]string{"--profile", "yolo"}, 2},
	}
	for _, tt := range tests {
		var out, errw bytes.Buffer
		assert.Equal(t, tt.code, run(context.Background(), tt.args, &out, &errw), "%v: %s", tt.args, errw.String())
	}
}

// TestDemoDenyOnly runs the demo with SDK-side deny-only sampling: only the
// denials (and their agent spans) leave the process, and the demo checks
// exactly those.
func TestDemoDenyOnly(t *testing.T) {
	ctx := context.Background()
	ch, jaeger, col := startStack(t)
	var out, errw bytes.Buffer
	code := run(ctx, []string{
		"--transcript", "../../testdata/real/trajectories.jsonl",
		"--otlp-endpoint", "http://" + col.GRPCEndpoint,
		"--dsn", ch.ReaderDSN,
		"--jaeger-url", jaeger.QueryURL,
		"--sampling", "deny-only",
		"--wait", "90s",
	}, &out, &errw)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errw.String())
	m := regexp.MustCompile(`(?m)^\s+denied\s+(\d+)`).FindStringSubmatch(out.String())
	require.NotNil(t, m)
	assert.Contains(t, out.String(), "ClickHouse: "+m[1]+" denials in otel.gate_decisions")

	r, err := audit.Open(ctx, ch.ReaderDSN)
	require.NoError(t, err)
	defer r.Close()
	st, err := r.Stats(ctx, audit.StatsQuery{})
	require.NoError(t, err)
	assert.Equal(t, st.Total, st.TotalDenied, "deny-only stores no allowed call")
	assert.NotContains(t, out.String(), "Verifiable trail", "a sample of the decisions leaves positions missing: not verified")
	assert.Equal(t, m[1], strconv.FormatUint(st.TotalDenied, 10))
}
