package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/audittest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fakeTTY is a terminal stand-in of a fixed width (see ttyWriter).
type fakeTTY struct {
	bytes.Buffer
	width int
}

func (f *fakeTTY) TerminalWidth() int { return f.width }

// execAuditq runs auditq in-process with out as stdout.
func execAuditq(t *testing.T, ctx context.Context, out *bytes.Buffer, args ...string) (code int, stderr string) {
	t.Helper()
	var errb bytes.Buffer
	code = run(ctx, args, stdio{in: strings.NewReader(""), out: out, err: &errb})
	return code, errb.String()
}

// masks hide values that change from run to run: when a row was inserted.
var (
	maskJSONInserted = regexp.MustCompile(`"inserted_at": ?"[^"]*"`)
	maskCSVInserted  = regexp.MustCompile(`(?m)^([^,\n]*),[^,\n]*,`)
)

func normalize(format, s string) string {
	s = maskJSONInserted.ReplaceAllStringFunc(s, func(m string) string {
		if strings.Contains(m, `": "`) {
			return `"inserted_at": "<inserted_at>"`
		}
		return `"inserted_at":"<inserted_at>"`
	})
	if format == "csv" && strings.HasPrefix(s, "timestamp,inserted_at,") {
		lines := strings.SplitAfter(s, "\n")
		for i := 1; i < len(lines); i++ {
			lines[i] = maskCSVInserted.ReplaceAllString(lines[i], "$1,<inserted_at>,")
		}
		s = strings.Join(lines, "")
	}
	return s
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./cmd/auditq -run Golden -update")
	assert.Equal(t, string(want), got, "golden %s differs; if intended, run go test ./cmd/auditq -run Golden -update", name)
}

// fixtureRange covers every fixture decision (2026-11-28, 10:00–12:15 UTC).
var fixtureRange = []string{"--since", "2026-11-28T00:00:00Z", "--until", "2026-11-29T00:00:00Z", "--utc"}

func TestGolden(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, audittest.Fixture()))
	dsn := []string{"--dsn", env.ReaderDSN}
	q := func(args ...string) []string {
		return append(append(append([]string{}, args...), dsn...), fixtureRange...)
	}
	traceArgs := func(args ...string) []string {
		return append(append(append([]string{}, args...), dsn...), "--utc")
	}
	tests := []struct {
		name   string
		args   []string
		format string
	}{
		{"decisions.table", q("decisions"), "table"},
		{"decisions.json", q("decisions", "--format", "json"), "json"},
		{"decisions.jsonl", q("decisions", "--format", "jsonl"), "jsonl"},
		{"decisions.csv", q("decisions", "--format", "csv"), "csv"},
		{"decisions-deny.table", q("decisions", "--action", "deny"), "table"},
		{"decisions-filters.table", q("decisions", "--agent", "coder", "--tool", "bash", "--risk", "high"), "table"},
		{"decisions-reason.json", q("decisions", "--reason", "EGRESS", "-o", "json"), "json"},
		{"decisions-page1.table", q("decisions", "--limit", "4"), "table"},
		{"decisions-page2.table", q("decisions", "--limit", "4", "--after", "MTc5NTg2MzkwMTEwMDAwMDAwMDpiMmIyYjJiMmIyYjJiMjAz"), "table"},
		{"decisions-none.json", q("decisions", "--tool", "nope", "--format", "json"), "json"},
		{"stats.table", q("stats"), "table"},
		{"stats-tool-action.table", q("stats", "--by", "tool,action"), "table"},
		{"stats-agent-risk.csv", q("stats", "--by", "agent,risk", "--format", "csv"), "csv"},
		{"stats-every.table", q("stats", "--by", "action", "--every", "1h"), "table"},
		{"stats-every.json", q("stats", "--by", "action", "--every", "1h", "--format", "json"), "json"},
		{"stats-reason.jsonl", q("stats", "--by", "reason", "--action", "deny", "--format", "jsonl"), "jsonl"},
		{"stats-gate.table", q("stats", "--by", "gate"), "table"},
		{"stats-gate-action.csv", q("stats", "--by", "gate,action", "--format", "csv"), "csv"},
		{"decisions-rewritten.json", q("decisions", "--rewritten", "-o", "json"), "json"},
		{"trace.table", traceArgs("trace", audittest.TraceOps, "--jaeger-url", "http://127.0.0.1:16686/", "--jaeger-link", "ui"), "table"},
		{"trace-coder.table", traceArgs("trace", audittest.TraceCoder), "table"},
		{"trace.json", traceArgs("trace", audittest.TraceReviewer, "--format", "json"), "json"},
		{"trace.jsonl", traceArgs("trace", audittest.TraceOps, "--format", "jsonl"), "jsonl"},
		{"trace.csv", traceArgs("trace", audittest.TraceCoder, "--format", "csv"), "csv"},
		{"migrate-status.table", append([]string{"migrate", "--status"}, dsn...), "table"},
		{"migrate-print-cluster.sql", []string{"migrate", "--print", "--cluster", "audit", "--retention", "365d"}, "sql"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			code, stderr := execAuditq(t, ctx, &out, tc.args...)
			require.Equal(t, 0, code, "stderr: %s", stderr)
			got := normalize(tc.format, out.String())
			if stderr != "" {
				got += "--- stderr\n" + stderr
			}
			checkGolden(t, tc.name, got)
		})
	}

	t.Run("export", func(t *testing.T) {
		for _, format := range []string{"csv", "jsonl"} {
			dir := t.TempDir()
			file := filepath.Join(dir, "out."+format)
			var out bytes.Buffer
			code, stderr := execAuditq(t, ctx, &out, q("export", "--format", format, "--output", file)...)
			require.Equal(t, 0, code, stderr)
			assert.Empty(t, out.String())
			assert.Equal(t, "auditq: exported 10 decisions to "+file+"\n", stderr)
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			checkGolden(t, "export."+format, normalize(format, string(b)))
			// Same rows as decisions in the same format.
			var dec bytes.Buffer
			code, _ = execAuditq(t, ctx, &dec, q("decisions", "--format", format)...)
			require.Equal(t, 0, code)
			assert.Equal(t, normalize(format, dec.String()), normalize(format, string(b)))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no temporary file left behind")
		}
	})

	t.Run("export progress on a terminal", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "out.csv")
		tty := &fakeTTY{width: 80}
		code := run(ctx, q("export", "--output", file), stdio{in: strings.NewReader(""), out: &bytes.Buffer{}, err: tty})
		require.Equal(t, 0, code, tty.String())
		assert.Contains(t, tty.String(), "\r[##############################] 10/10 (100%)\n")
	})

	t.Run("tail", func(t *testing.T) {
		for _, format := range []string{"jsonl", "table"} {
			tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			var out bytes.Buffer
			args := append([]string{"tail", "--since", "87600h", "--action", "deny", "--interval", "200ms", "--utc", "--format", format}, dsn...)
			code, stderr := execAuditq(t, tctx, &out, args...)
			cancel()
			require.Equal(t, 0, code, stderr)
			checkGolden(t, "tail-deny."+format, normalize(format, out.String()))
		}
	})
}

func TestTableOutputWithoutTTY(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, audittest.Fixture()))
	args := append([]string{"decisions", "--dsn", env.ReaderDSN}, fixtureRange...)

	// Piped (a buffer): same bytes whatever the terminal settings say.
	var plain bytes.Buffer
	code, _ := execAuditq(t, ctx, &plain, args...)
	require.Equal(t, 0, code)
	t.Setenv("COLUMNS", "40")
	t.Setenv("CLICOLOR_FORCE", "1")
	var again bytes.Buffer
	code, _ = execAuditq(t, ctx, &again, args...)
	require.Equal(t, 0, code)
	assert.Equal(t, plain.String(), again.String())
	assert.NotContains(t, plain.String(), "\x1b[", "no colour when piped")
	assert.NotContains(t, plain.String(), "…", "nothing cut when piped")

	// On a terminal: fits the width and colours action and risk.
	tty := &fakeTTY{width: 100}
	code, stderr := run(ctx, args, stdio{in: strings.NewReader(""), out: tty, err: &bytes.Buffer{}}), ""
	require.Equal(t, 0, code, stderr)
	ansi := regexp.MustCompile("\x1b\\[[0-9;]*m")
	assert.Contains(t, tty.String(), ansiRed+ansiBold+"deny"+ansiReset)
	for _, line := range strings.Split(strings.TrimRight(tty.String(), "\n"), "\n") {
		visible := ansi.ReplaceAllString(line, "")
		assert.LessOrEqual(t, len([]rune(visible)), 100, visible)
	}
	assert.Contains(t, tty.String(), "…", "reason cut to fit")

	// A classic 80-column terminal: the trace column gives way.
	tty = &fakeTTY{width: 80}
	require.Equal(t, 0, run(ctx, append(args, "--no-color"), stdio{in: strings.NewReader(""), out: tty, err: &bytes.Buffer{}}))
	assert.NotContains(t, tty.String(), "TRACE")
	for _, line := range strings.Split(strings.TrimRight(tty.String(), "\n"), "\n") {
		assert.LessOrEqual(t, len([]rune(line)), 80, line)
	}

	// --no-color and NO_COLOR turn colours off on a terminal.
	tty = &fakeTTY{width: 200}
	require.Equal(t, 0, run(ctx, append(args, "--no-color"), stdio{in: strings.NewReader(""), out: tty, err: &bytes.Buffer{}}))
	assert.NotContains(t, tty.String(), "\x1b[")
	t.Setenv("NO_COLOR", "1")
	tty = &fakeTTY{width: 200}
	require.Equal(t, 0, run(ctx, args, stdio{in: strings.NewReader(""), out: tty, err: &bytes.Buffer{}}))
	assert.NotContains(t, tty.String(), "\x1b[")
}

func TestStatsOnTerminal(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, audittest.Fixture()))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bars", []string{"stats", "--by", "tool", "--no-color"}, "bash        3      1       ████████████████████\n"},
		{"sparklines", []string{"stats", "--by", "action", "--every", "1h", "--no-color"}, "allow   6      0       █▃▅\ndeny    4      4       ▄█▄\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tty := &fakeTTY{width: 120}
			args := append(append(tc.args, "--dsn", env.ReaderDSN), fixtureRange...)
			require.Equal(t, 0, run(ctx, args, stdio{in: strings.NewReader(""), out: tty, err: &bytes.Buffer{}}))
			assert.Contains(t, tty.String(), tc.want, tty.String())
		})
	}
}
