package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit/audittest"
)

var ansiSeq = regexp.MustCompile("\x1b\\[[0-9;]*m")

// The table renderer lays out by display width: colour codes count zero
// and wide runes two. So, for any cells, the coloured table without its
// escape sequences is the plain table byte for byte; every column starts at
// the same display column on every line; and on a terminal of width W no
// line is wider than W when the shrinkable columns can give way.
func TestTableLayoutProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cell := rapid.OneOf(
			rapid.SampledFrom([]string{"allow", "deny", "safe", "review", "high", "", "日本語のツール", "é"}),
			rapid.StringMatching(`[a-z0-9 ._:\[\]-]{0,30}`),
		)
		header := []string{"TIME", "ACTION", "RISK", "REASON"}
		rows := rapid.SliceOfN(rapid.SliceOfN(rapid.Map(cell, oneLine), 4, 4), 1, 8).Draw(t, "rows")
		width := rapid.IntRange(0, 120).Draw(t, "width")
		render := func(color bool) string {
			tb := &table{header: header, shrink: []string{"REASON"}}
			for _, r := range rows {
				tb.add(r...)
			}
			var b bytes.Buffer
			require.NoError(t, tb.render(&b, terminal{tty: true, width: width, color: color}))
			return b.String()
		}
		plain, colored := render(false), render(true)
		if ansiSeq.ReplaceAllString(colored, "") != plain {
			t.Fatalf("colours moved the layout:\nplain:\n%s\ncoloured:\n%s", plain, colored)
		}
		lines := strings.Split(strings.TrimSuffix(plain, "\n"), "\n")
		require.Len(t, lines, 1+len(rows))
		all := append([][]string{header}, rows...)
		widths := make([]int, len(header))
		for _, r := range all {
			for i, c := range r {
				widths[i] = max(widths[i], text.StringWidthWithoutEscSequences(c))
			}
		}
		if width == 0 {
			// Uncut: every cell sits at its column, padded to its width.
			for n, l := range lines {
				at := 0
				for i, c := range all[n] {
					got := strings.TrimRight(displaySlice(l, at, at+widths[i]), " ")
					if got != c {
						t.Fatalf("line %d column %d: %q, want %q in\n%s", n, i, got, c, plain)
					}
					at += widths[i] + 2
				}
			}
			return
		}
		if fixed := widths[0] + widths[1] + widths[2] + 6; fixed+8 <= width { // REASON can shrink to 8
			for _, l := range lines {
				if got := text.StringWidthWithoutEscSequences(l); got > width {
					t.Fatalf("line %q is %d wide on a %d-column terminal", l, got, width)
				}
			}
		}
	})
}

// displaySlice is the part of s between display columns from and to.
func displaySlice(s string, from, to int) string {
	var b strings.Builder
	col := 0
	for _, r := range s {
		w := text.RuneWidth(r)
		if col >= from && col+w <= to {
			b.WriteRune(r)
		}
		col += w
	}
	return b.String()
}

// The decisions table has the SOURCE column (the gate that decided), with
// the same value json and csv give each decision.
func TestDecisionsSourceInEveryFormat(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, audittest.Fixture()))
	args := append([]string{"decisions", "--dsn", env.ReaderDSN}, fixtureRange...)
	run := func(extra ...string) string {
		var out bytes.Buffer
		code, stderr := execAuditq(t, ctx, &out, append(args, extra...)...)
		require.Equal(t, 0, code, stderr)
		return out.String()
	}
	var recs []struct {
		SpanID string `json:"span_id"`
		Source string `json:"source"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("-o", "json")), &recs))
	require.NotEmpty(t, recs)
	var want []string
	for _, r := range recs {
		require.NotEmpty(t, r.Source, r.SpanID)
		want = append(want, r.Source)
	}

	rows, err := csv.NewReader(strings.NewReader(run("-o", "csv"))).ReadAll()
	require.NoError(t, err)
	col := indexOf(rows[0], "source")
	require.GreaterOrEqual(t, col, 0, "csv has a source column")
	var fromCSV []string
	for _, r := range rows[1:] {
		fromCSV = append(fromCSV, r[col])
	}
	assert.Equal(t, want, fromCSV)

	lines := strings.Split(strings.TrimSpace(run()), "\n")
	hdr := lines[0]
	at := strings.Index(hdr, "SOURCE")
	require.GreaterOrEqual(t, at, 0, "table has a SOURCE column: %s", hdr)
	end := strings.Index(hdr, "REASON")
	var fromTable []string
	for _, l := range lines[1:] {
		fromTable = append(fromTable, strings.TrimSpace(l[at:end]))
	}
	assert.Equal(t, want, fromTable)
}

// BenchmarkTableRender renders a default page (100 decisions, 9 columns) as
// on a 120-column colour terminal, where cutting and colouring both run.
func BenchmarkTableRender(b *testing.B) {
	rows := make([][]string, 100)
	for i := range rows {
		rows[i] = []string{"2026-11-28 10:00:00.400", "coder", "bash", []string{"allow", "deny"}[i%2], "high", "classify.bash",
			strings.Repeat("rm -rf outside the workspace ", 1+i%4), "2.0ms", "0af7651916cd43dd8448eb211c80319c"}
	}
	for b.Loop() {
		t := &table{header: decisionHeader(false), shrink: []string{"REASON", "SOURCE", "AGENT", "TOOL", "TRACE"}, drop: []string{"TRACE", "DURATION", "SOURCE"}}
		for _, r := range rows {
			t.add(r...)
		}
		if err := t.render(io.Discard, terminal{tty: true, width: 120, color: true}); err != nil {
			b.Fatal(err)
		}
	}
}
