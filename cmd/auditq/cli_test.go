package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

func TestEveryCommandHasAnExample(t *testing.T) {
	root := newRootCmd(stdio{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &bytes.Buffer{}})
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		assert.Contains(t, c.Example, "auditq "+c.Name(), "%s --help needs a real example", c.Name())
	}
}

func TestQueryCommandUsageErrors(t *testing.T) {
	// Nothing listens on port 1; a usage error must be caught before
	// connecting (exit 2), a connection failure is exit 1.
	dsn := []string{"--dsn", "http://127.0.0.1:1"}
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"bad action", []string{"decisions", "--action", "maybe"}, 2, `--action "maybe": want allow or deny`},
		{"bad risk", []string{"decisions", "--risk", "extreme"}, 2, "--risk"},
		{"bad stage", []string{"decisions", "--stage", "policy"}, 2, `--stage "policy": want cancelled, run, registry, reachability, input, gate`},
		{"bad since", []string{"decisions", "--since", "yesterday"}, 2, "--since"},
		{"since after until", []string{"decisions", "--since", "1h", "--until", "2h"}, 2, "must be before"},
		{"bad format", []string{"decisions", "--format", "xml"}, 2, "--format"},
		{"bad limit", []string{"decisions", "--limit", "0"}, 2, "--limit"},
		{"bad page token", []string{"decisions", "--after", "!!"}, 2, "--after"},
		{"bad dimension", []string{"stats", "--by", "colour"}, 2, "unknown dimension"},
		{"bad bucket", []string{"stats", "--every", "500ms"}, 2, "--every"},
		{"trace needs an id", []string{"trace"}, 2, "exactly one trace ID"},
		{"trace id shape", []string{"trace", "xyz"}, 2, "32 hex digits"},
		{"tail json array", []string{"tail", "--format", "json"}, 2, "--format"},
		{"export needs output", []string{"export"}, 2, "--output"},
		{"export format", []string{"export", "--format", "table", "--output", "x"}, 2, "--format"},
		{"migrate bad cluster", []string{"migrate", "--cluster", "a b", "--print"}, 2, "invalid cluster"},
		{"migrate bad retention", []string{"migrate", "--retention", "soon", "--print"}, 2, "--retention"},
		{"bad dsn", []string{"decisions", "--dsn", "127.0.0.1:8123"}, 2, "--dsn: audit: bad DSN"},
		{"bad database name", []string{"stats", "--database", "a;b"}, 1, "invalid database name"},
		{"unreachable", []string{"decisions"}, 1, "no ClickHouse server at 127.0.0.1:1 (tried --dsn http://127.0.0.1:1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var out bytes.Buffer
			args := tc.args
			if !slices.Contains(args, "--dsn") {
				args = append(args, dsn...)
			}
			code, stderr := execAuditq(t, ctx, &out, args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.msg)
			assert.Empty(t, out.String(), "errors go to stderr only")
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}

func TestUnreachableSaysHowToStart(t *testing.T) {
	var out bytes.Buffer
	code, stderr := execAuditq(t, context.Background(), &out, "stats", "--dsn", "http://127.0.0.1:1")
	require.Equal(t, 1, code)
	assert.Contains(t, stderr, "make demo")
	assert.Contains(t, stderr, "auditq serve")
	assert.Contains(t, stderr, "AUDITQ_DSN")
}

func TestShellCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		var out bytes.Buffer
		code, stderr := execAuditq(t, context.Background(), &out, "completion", shell)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, out.String(), "auditq")
	}
	// Flag values complete too.
	var out bytes.Buffer
	code, _ := execAuditq(t, context.Background(), &out, "__complete", "decisions", "--action", "")
	require.Equal(t, 0, code)
	assert.Contains(t, out.String(), "allow\ndeny\n")
}

func TestParseTimeFlag(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", time.Time{}, false},
		{"24h", now.Add(-24 * time.Hour), false},
		{"90m", now.Add(-90 * time.Minute), false},
		{"7d", now.Add(-7 * 24 * time.Hour), false},
		{"2w", now.Add(-14 * 24 * time.Hour), false},
		{"2026-11-28T10:00:00Z", time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), false},
		{"2026-11-28T10:00:00+09:00", time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC), false},
		{"-1h", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"1.5d", time.Time{}, true},
	}
	for _, tc := range tests {
		got, err := parseTimeFlag("since", tc.in, now)
		if tc.err {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.True(t, tc.want.Equal(got), "%s: %v", tc.in, got)
	}
}

func TestHelpNeverShowsTheDSNPassword(t *testing.T) {
	t.Setenv(dsnEnv, "http://reader:s3cr3t-pw@127.0.0.1:1")
	for _, c := range []string{"decisions", "stats", "trace", "tail", "export", "migrate"} {
		var out bytes.Buffer
		code, stderr := execAuditq(t, context.Background(), &out, c, "--help")
		require.Equal(t, 0, code, stderr)
		assert.NotContains(t, out.String(), "s3cr3t-pw", c)
	}
	// The environment's DSN is used, and redacted in messages.
	var out bytes.Buffer
	code, stderr := execAuditq(t, context.Background(), &out, "stats")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "http://reader:xxxxx@127.0.0.1:1")
	assert.NotContains(t, stderr, "s3cr3t-pw")
}

// TestShortPasswordKeepsTheMessage: a one-letter password that occurs
// inside the message's words ("writer", "with") is scrubbed from the DSN
// only; the message reads as written.
func TestShortPasswordKeepsTheMessage(t *testing.T) {
	for _, dsn := range []string{"http://writer:w@127.0.0.1:1", "http://127.0.0.1:1/?username=writer&password=w"} {
		t.Setenv(dsnEnv, dsn)
		var out bytes.Buffer
		code, stderr := execAuditq(t, context.Background(), &out, "stats")
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "start the embedded one with `make demo` or `auditq serve --data-dir DIR`", dsn)
		assert.Contains(t, stderr, audit.RedactDSN(dsn), dsn)
		assert.NotContains(t, stderr, "xxxxxriter", dsn)
		assert.NotContains(t, stderr, ":w@", dsn)
		assert.NotContains(t, stderr, "password=w", dsn)
	}
}

func TestOneLineEscapesControlCharacters(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain reason", "plain reason"},
		{"two\nlines\tand  spaces", "two lines and spaces"},
		{"\x1b]0;pwned\x07red \x1b[31mtext", `\x1b]0;pwned\ared \x1b[31mtext`},
		{"del\x7f and c1 \u009b", `del\x7f and c1 \u009b`},
		{"unicode ✓ stays", "unicode ✓ stays"},
		// Invisible runes a model can put in a tool name or input: a second
		// "bash" in `stats --by tool` must not look like the first.
		{"bash\u200b", `bash\u200b`},
		{"ba\u202esh", `ba\u202esh`},
		{"bash\ufe0f", `bash\ufe0f`},
		{"b\u0336ash", "b\u0336ash"}, // a combining mark after a letter stays
		{"invalid \xff byte", `invalid \xff byte`},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, oneLine(tc.in), "%q", tc.in)
	}
}

// A schema older than this auditq: queries say to migrate, migrate
// upgrades it in place, and the decisions stored before read afterwards.
func TestOutdatedSchemaSaysMigrate(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.CreateAtVersion3(ctx, env.Writer, "old"))
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, "old", audittest.Fixture()))
	reader := append([]string{"--dsn", env.ReaderDSN, "--database", "old"}, fixtureRange...)

	// Decisions and counts need the new columns (stats count calls, the
	// Calls column of version 7: without it a grouped refusal would count
	// as one call), so both say to migrate rather than undercount.
	var out bytes.Buffer
	for _, args := range [][]string{{"decisions"}, {"stats", "-o", "csv"}} {
		code, stderr := execAuditq(t, ctx, &out, append(args, reader...)...)
		assert.Equal(t, 1, code, args)
		assert.Contains(t, stderr, `the audit tables are missing or older than this auditq in database "old"`, args)
		assert.Contains(t, stderr, "`auditq migrate`", args)
		assert.Empty(t, out.String(), args)
	}

	code, stderr := execAuditq(t, ctx, &out, "migrate", "--dsn", env.WriterDSN, "--database", "old")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "applied migration 4 (verdicts_rewrites)\napplied migration 5 (stage)\napplied migration 6 (rule)\napplied migration 7 (calls)\napplied migration 8 (chain)\napplied migration 9 (approvals)\napplied migration 10 (hourly_rollup)\napplied migration 11 (daily_rollups)\napplied migration 12 (arrivals)\nschema is at version 12\n", out.String())

	out.Reset()
	code, stderr = execAuditq(t, ctx, &out, append([]string{"stats", "-o", "csv"}, reader...)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "action,count,denied\nallow,6,0\ndeny,4,4\n", out.String(), "rows stored before count one call each")
	out.Reset()
	code, stderr = execAuditq(t, ctx, &out, append([]string{"stats", "--by", "gate", "--action", "deny", "-o", "csv"}, reader...)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "gate,count,denied\nchain[0]:approval,1,1\nclassify.bash,1,1\npolicy.consequential,1,1\npolicy.network,1,1\n", out.String())
}
