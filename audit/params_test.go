package audit_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
)

// allControls is every control byte, in order, around the escape
// sequences ClickHouse knows (\N reads as nothing, \x41 as A).
const allControls = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f" +
	`\N\n\t\0\x41\\\'`

// paramString draws the values a model may put in a name, an ID or a
// reason: escape sequences of ClickHouse's text formats, every byte
// (control bytes, invalid UTF-8), quotes, braces of {name:Type}
// placeholders, and long values.
func paramString(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.SampledFrom([]string{`\`, `\\`, `a\`, `\N`, `\n`, `\x41`, `\0`, `\'`, "'", `"`, "{run:String}", "}{", "\x00", "\t",
			"\n", "\r\n", "\x7f", "\xff\xfe", "é\u0301", "\u2028", "\x1b[31m", "[", "['a']", "NULL", allControls}),
		rapid.String(),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
		rapid.StringOf(rapid.SampledFrom([]rune{'\\', '\'', '"', '{', '}', '[', ']', ',', '\x00', '\t', '\n', '\r', 'N', 'x', '0', '4', 'a', 'é', '\x7f', '\uFFFD'})),
		rapid.Map(rapid.IntRange(300, 20000), func(n int) string { return strings.Repeat("\\\x01{'é\xff\n", n/9) }),
	).Draw(t, label)
}

// No query binds a raw clickhouse.Parameters (or calls
// clickhouse.WithParameters) outside audit.Params: a String value would
// reach ClickHouse unescaped. The scan covers every Go file of the module,
// tests included, whatever name clickhouse-go is imported as.
func TestNoRawQueryParameters(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the module root is the parent of audit/")
	helper := filepath.Join(root, "audit", "params.go")
	fset := token.NewFileSet()
	scanned, found := 0, 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		names := map[string]bool{}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/ClickHouse/clickhouse-go/v2" {
				name := "clickhouse"
				if imp.Name != nil {
					name = imp.Name.Name
				}
				names[name] = true
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if ok && names[x.Name] && (sel.Sel.Name == "Parameters" || sel.Sel.Name == "WithParameters") {
				found++
				if path != helper {
					rel, _ := filepath.Rel(root, path)
					t.Errorf("%s:%d: %s.%s: bind query parameters with audit.Params (String escapes the value as ClickHouse reads it)",
						rel, fset.Position(sel.Pos()).Line, x.Name, sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, scanned, 100, "the scan read the module")
	assert.Positive(t, found, "the scan finds the helper's own use (so it can find others)")
}

// Any string, and any list of strings, bound through Params reads back
// from the real ClickHouse engine byte for byte: as a String, inside an
// Array(String), and in the same query as an Int64.
func TestParamsReadBackExactly(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		s := paramString(rt, "s")
		list := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) string { return paramString(t, "e") }), 0, 4).Draw(rt, "list")
		n := rapid.Int64().Draw(rt, "n")
		var p audit.Params
		p.String("s", s).Strings("a", list).Int64("n", n)
		var (
			gotS string
			gotA []string
			gotN int64
		)
		require.NoError(rt, env.Store.Conn().QueryRow(p.Context(ctx), "SELECT {s:String}, {a:Array(String)}, {n:Int64}").Scan(&gotS, &gotA, &gotN))
		assert.Equal(rt, s, gotS)
		if len(list) == 0 {
			list = []string{}
		}
		assert.Equal(rt, list, gotA)
		assert.Equal(rt, n, gotN)
	})
}

// hostileRow is one decision whose names are model-chosen, in their
// stored forms (gate.SafeText, as the executor records them).
type hostileRow struct {
	traceID, spanID           string
	agent, run, tool, service string
	reason                    string
}

func (h hostileRow) span() audittest.Span {
	rec := gate.Record{Gated: true, Action: gate.ActionDeny, Source: "policy", Reason: h.reason, Stage: gate.StageGate}
	attrs := rec.Attributes([]attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(h.tool), semconv.GenAIToolCallID("call_" + h.spanID),
		semconv.GenAIAgentName(h.agent), gate.AttrRunID.String(h.run),
	}, 0)
	return audittest.Span{Timestamp: time.Now().Add(-time.Minute), TraceID: h.traceID, SpanID: h.spanID, Name: "execute_tool",
		Service: h.service, Attrs: audittest.SpanAttrs(attrs), Duration: time.Millisecond}
}

// substring draws a non-empty substring of s cut at rune boundaries ("" when
// s is empty).
func substring(t *rapid.T, s string) string {
	var cuts []int
	for i := range s {
		cuts = append(cuts, i)
	}
	cuts = append(cuts, len(s))
	if len(cuts) < 2 {
		return ""
	}
	i := rapid.IntRange(0, len(cuts)-2).Draw(t, "from")
	j := rapid.IntRange(i+1, len(cuts)-1).Draw(t, "to")
	return s[cuts[i]:cuts[j]]
}

// The audit trail's filters find what the model wrote, whatever it wrote:
// for hostile agent names, run IDs, tool names, services and reasons (any
// bytes, stored as gate.SafeText leaves them), a Filter field equal to the
// stored value returns exactly that decision, and not a decoy whose value
// differs by one suffix; a substring of the reason finds it too; Stats
// counts it and a Follower delivers it under the same filter; and hostile
// values in the other fields are no error.
func TestFiltersFindHostileValues(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		for _, table := range []string{"otel_traces", audit.DecisionsTable} {
			require.NoError(rt, env.Writer.Exec(ctx, fmt.Sprintf("TRUNCATE TABLE `%s`.`%s`", env.Database, table)))
		}
		name := func(label string) string { return gate.SafeText(paramString(rt, label), gate.MaxNameBytes) }
		h := hostileRow{traceID: fmt.Sprintf("%032x", 2*n), spanID: fmt.Sprintf("%016x", 2*n),
			agent: name("agent"), run: name("run"), tool: name("tool"), service: name("service"),
			reason: gate.SafeText(paramString(rt, "reason"), gate.MaxTextBytes)}
		if h.agent == "" {
			h.agent = "-" // so that the combined filters below filter
		}
		// The decoy's names extend the hostile ones; its reason is empty.
		decoy := hostileRow{traceID: fmt.Sprintf("%032x", 2*n+1), spanID: fmt.Sprintf("%016x", 2*n+1),
			agent: h.agent + "~", run: h.run + "~", tool: h.tool + "~", service: h.service + "~"}

		live := env.Store.NewFollower(audit.Filter{Agent: h.agent, RunID: h.run})
		got, err := live.Poll(ctx) // the starting point
		require.NoError(rt, err)
		require.Empty(rt, got)
		require.NoError(rt, audittest.InsertSpans(ctx, env.Writer, env.Database, []audittest.Span{h.span(), decoy.span()}))

		since := time.Now().Add(-30 * time.Minute) // one window: one query
		find := func(what string, f audit.Filter) []string {
			f.Since = since
			page, err := env.Store.Decisions(ctx, f, audit.Page{})
			require.NoError(rt, err, what)
			var spans []string
			for _, d := range page.Decisions {
				spans = append(spans, d.SpanID)
			}
			return spans
		}
		one := []string{h.spanID}
		if h.agent != "" {
			assert.Equal(rt, one, find("agent", audit.Filter{Agent: h.agent}), "agent %q", h.agent)
		}
		if h.run != "" {
			assert.Equal(rt, one, find("run", audit.Filter{RunID: h.run}), "run %q", h.run)
		}
		if h.tool != "" {
			assert.Equal(rt, one, find("tool", audit.Filter{Tool: h.tool}), "tool %q", h.tool)
		}
		if h.service != "" {
			assert.Equal(rt, one, find("service", audit.Filter{Service: h.service}), "service %q", h.service)
		}
		if h.reason != "" {
			assert.Equal(rt, one, find("reason", audit.Filter{Reason: h.reason}), "reason %q", h.reason)
			sub := substring(rt, h.reason)
			assert.Equal(rt, one, find("reason substring", audit.Filter{Reason: sub}), "reason %q in %q", sub, h.reason)
		}
		all := audit.Filter{Agent: h.agent, RunID: h.run, Tool: h.tool, Service: h.service, Reason: h.reason}
		assert.Equal(rt, one, find("all", all))
		assert.Equal(rt, []string{decoy.spanID}, find("decoy", audit.Filter{Agent: decoy.agent, RunID: decoy.run, Tool: decoy.tool, Service: decoy.service}))

		st, err := env.Store.Stats(ctx, audit.StatsQuery{Filter: all})
		require.NoError(rt, err)
		assert.EqualValues(rt, 1, st.Total, "stats")
		var followed []string
		for range 50 { // the insert is synchronous; a few polls at most
			got, err := live.Poll(ctx)
			require.NoError(rt, err)
			for _, d := range got {
				followed = append(followed, d.SpanID)
			}
			if len(followed) > 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		assert.Equal(rt, one, followed, "follow")

		// Hostile values where none is stored: no error, nothing wrong.
		other := paramString(rt, "other") + "!" // not empty: a filter
		page, err := env.Store.Decisions(ctx, audit.Filter{TraceID: other, Action: other, Risk: other, Stage: other}, audit.Page{})
		require.NoError(rt, err)
		for _, d := range page.Decisions {
			assert.Equal(rt, strings.ToLower(other), d.TraceID)
		}
		_, err = env.Store.Trace(ctx, other)
		if err != nil && !errors.Is(err, audit.ErrTraceNotFound) {
			rt.Fatalf("trace %q: %v", other, err)
		}
		_, err = env.Store.Chains(ctx, audit.ChainQuery{RunID: other})
		require.NoError(rt, err)
	})
}

// The examples ClickHouse would have read differently without escaping:
// each as the whole of a run ID, and every control byte in one.
func TestFilterEscapeExamples(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	values := []string{`\`, `\\`, `\n`, `\N`, `\x41`, `\0`, `a\`, `\'`, "tab\there", "line\nbreak", "nul\x00byte", "\r", allControls,
		`\xff`, gate.SafeText("\xff\xfe", 0), strings.Repeat(`\`, gate.MaxNameBytes)}
	var spans []audittest.Span
	for i, v := range values {
		require.True(t, utf8.ValidString(gate.SafeText(v, gate.MaxNameBytes)))
		spans = append(spans, hostileRow{traceID: fmt.Sprintf("%032x", i+1), spanID: fmt.Sprintf("%016x", i+1),
			agent: "a", run: gate.SafeText(v, gate.MaxNameBytes), tool: "t", service: "s", reason: "r"}.span())
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, spans))
	for i, v := range values {
		page, err := env.Store.Decisions(ctx, audit.Filter{RunID: gate.SafeText(v, gate.MaxNameBytes)}, audit.Page{})
		require.NoError(t, err, "%q", v)
		require.Len(t, page.Decisions, 1, "%q", v)
		assert.Equal(t, fmt.Sprintf("%016x", i+1), page.Decisions[0].SpanID, "%q", v)
	}
}
