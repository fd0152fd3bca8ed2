package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
)

// argString draws a model-chosen value that a command line can carry:
// any bytes but NUL (which no argument can hold), with ClickHouse's
// escape sequences, every other control byte, quotes, braces and invalid
// UTF-8 likely, and long values.
func argString(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.SampledFrom([]string{`\`, `\\`, `a\`, `\N`, `\n`, `\x41`, `\0`, `\'`, "'", "{run:String}", "\t", "\n", "\r\n",
			"\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f",
			"\xff\xfe", "-x", "--run", "é\u0301", "\u2028", "\x1b[31m"}),
		rapid.String(),
		rapid.Map(rapid.SliceOf(rapid.ByteRange(1, 255)), func(b []byte) string { return string(b) }),
		rapid.StringOf(rapid.SampledFrom([]rune{'\\', '\'', '"', '{', '}', '\t', '\n', '\r', 'N', 'x', '0', 'a', 'é', '\x7f', '\uFFFD'})),
		rapid.Map(rapid.IntRange(300, 5000), func(n int) string { return strings.Repeat("\\\x01{'é\xff\n", n/9) }),
	).Filter(func(s string) bool { return !strings.Contains(s, "\x00") }).Draw(t, label)
}

// `auditq decisions --run <value>` exits 0 and lists exactly the decision
// of that run, for any run ID a model can choose (as the executor stores
// it: gate.SafeText) that a command line can carry, run through the
// binary; and what json prints round-trips: the agent, tool and reason
// it prints, passed back as --agent, --tool and --reason, find that
// decision again (and not a decoy whose values extend them). stats and
// export take --run the same way.
func TestDecisionsFilterRoundTripsHostileValues(t *testing.T) {
	env := audittest.Start(t)
	bin := testenv.AuditqBinary(t)
	ctx := context.Background()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		for _, table := range []string{"otel_traces", audit.DecisionsTable} {
			require.NoError(rt, env.Writer.Exec(ctx, fmt.Sprintf("TRUNCATE TABLE `%s`.`%s`", env.Database, table)))
		}
		name := func(label string) string { return gate.SafeText(argString(rt, label), gate.MaxNameBytes) }
		agent, run, tool := name("agent"), name("run"), name("tool")
		if agent == "" {
			agent = "-"
		}
		reason := gate.SafeText(argString(rt, "reason"), gate.MaxTextBytes)
		span := func(i int, agent, run, tool, reason string) audittest.Span {
			rec := gate.Record{Gated: true, Action: gate.ActionDeny, Source: "policy", Reason: reason, Stage: gate.StageGate}
			attrs := rec.Attributes([]attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(tool),
				semconv.GenAIAgentName(agent), gate.AttrRunID.String(run)}, 0)
			return audittest.Span{Timestamp: time.Now().Add(-time.Minute), TraceID: fmt.Sprintf("%032x", i), SpanID: fmt.Sprintf("%016x", i),
				Name: "execute_tool", Service: "params", Attrs: audittest.SpanAttrs(attrs), Duration: time.Millisecond}
		}
		want := fmt.Sprintf("%016x", 2*n)
		require.NoError(rt, audittest.InsertSpans(ctx, env.Writer, env.Database, []audittest.Span{
			span(2*n, agent, run, tool, reason), span(2*n+1, agent+"~", run+"~", tool+"~", "")}))

		// record is the json output's fields this test reads.
		type record struct {
			SpanID   string `json:"span_id"`
			Agent    string `json:"agent"`
			RunID    string `json:"run_id"`
			ToolName string `json:"tool_name"`
			Reason   string `json:"reason"`
		}
		auditq := func(args ...string) []record {
			cmd := exec.CommandContext(ctx, bin, append(args, "--dsn", env.ReaderDSN, "--since", "1h", "-o", "json")...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(rt, cmd.Run(), "auditq %q: %s", args, stderr.String())
			var got []record
			require.NoError(rt, json.Unmarshal(stdout.Bytes(), &got), stdout.String())
			return got
		}
		got := auditq("decisions", "--run", run)
		if run == "" { // no filter: both
			require.Len(rt, got, 2)
			return
		}
		require.Len(rt, got, 1, "--run %q", run)
		d := got[0]
		assert.Equal(rt, want, d.SpanID)
		assert.Equal(rt, run, d.RunID, "json prints the stored run ID")
		assert.Equal(rt, agent, d.Agent)
		assert.Equal(rt, tool, d.ToolName)
		assert.Equal(rt, reason, d.Reason)

		again := auditq("decisions", "--agent", d.Agent, "--tool", d.ToolName, "--reason", d.Reason)
		require.Len(rt, again, 1, "--agent %q --tool %q --reason %q", d.Agent, d.ToolName, d.Reason)
		assert.Equal(rt, want, again[0].SpanID)

		// stats counts it, export writes it, under the same filter.
		stats := exec.CommandContext(ctx, bin, "stats", "--run", run, "--dsn", env.ReaderDSN, "--since", "1h", "-o", "csv")
		out, err := stats.Output()
		require.NoError(rt, err)
		assert.Equal(rt, "action,count,denied\ndeny,1,1\n", string(out), "stats --run %q", run)
		file := filepath.Join(t.TempDir(), fmt.Sprint("export-", n, ".jsonl"))
		export := exec.CommandContext(ctx, bin, "export", "--run", run, "--dsn", env.ReaderDSN, "--since", "1h", "--format", "jsonl", "--output", file)
		require.NoError(rt, export.Run())
		exported, err := os.ReadFile(file)
		require.NoError(rt, err)
		var rec record
		require.Equal(rt, 1, bytes.Count(exported, []byte("\n")), "export --run %q: one line", run)
		require.NoError(rt, json.Unmarshal(exported, &rec))
		assert.Equal(rt, want, rec.SpanID)

		// The table, for reading, exits 0 too and keeps control bytes off
		// the terminal.
		cmd := exec.CommandContext(ctx, bin, "decisions", "--run", run, "--dsn", env.ReaderDSN, "--since", "1h", "--no-color")
		out, err = cmd.Output()
		require.NoError(rt, err)
		for _, c := range strings.TrimSuffix(string(out), "\n") {
			if c != '\n' && (c < 0x20 || c == 0x7f) {
				rt.Fatalf("the table prints control byte %#x: %q", c, out)
			}
		}
	})
}
