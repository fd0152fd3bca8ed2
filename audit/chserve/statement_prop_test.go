package chserve

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// keywordNames are identifiers spelled like the clauses the lexer looks
// for (and other keywords), in the cases a user may write them; the
// reserved ones (SELECT, FROM, LIMIT, DESC) only quoted, as ClickHouse
// needs them.
var (
	keywordNames  = []string{"settings", "SETTINGS", "Settings", "format", "FORMAT", "values", "outfile", "infile", "t", "x", "max_threads", "select", "from", "limit", "desc"}
	reservedNames = map[string]bool{"select": true, "from": true, "limit": true, "desc": true}
)

// endsWantingOperand reports a text whose last token is one after which the
// grammar wants an operand (expectsOperand): anything appended reads as
// that operand.
func endsWantingOperand(sql string) bool {
	var last token
	for lx := (lexer{s: sql}); ; {
		tok, ok := lx.next()
		if !ok {
			break
		}
		last = tok
	}
	return expectsOperand(sql, last)
}

// TestKeywordNamesAreNotClauses is the lexer's guarantee as a property: in
// a generated SELECT whose tables, databases, columns and aliases are named
// like keywords (settings, format, …), quoted or bare, qualified or not,
// in the select list, WHERE, GROUP BY and ORDER BY (ASC/DESC), the only
// clauses found are the SETTINGS and FORMAT clauses the generator wrote,
// at their exact offsets; and readOnlySQL puts readonly = 1 last.
func TestKeywordNamesAreNotClauses(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := func(label string) string {
			n := rapid.SampledFrom(keywordNames).Draw(t, label)
			q := rapid.IntRange(0, 3).Draw(t, label+"-quote")
			if reservedNames[n] && q != 2 {
				q = 1
			}
			switch q {
			case 1:
				return "`" + n + "`"
			case 2:
				return `"` + n + `"`
			}
			return n
		}
		var b strings.Builder
		b.WriteString("SELECT ")
		ncols := rapid.IntRange(1, 3).Draw(t, "cols")
		for i := range ncols {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(name("col"))
			if rapid.Bool().Draw(t, "alias") {
				b.WriteString(" AS " + name("alias"))
			}
		}
		b.WriteString(" FROM ")
		if rapid.Bool().Draw(t, "qualified") {
			b.WriteString(name("db") + ".")
		}
		b.WriteString(name("table"))
		if rapid.Bool().Draw(t, "where") {
			b.WriteString(" WHERE " + name("wcol") + " = " + rapid.SampledFrom([]string{"1", "'settings'", name("rhs")}).Draw(t, "rhs"))
			if rapid.Bool().Draw(t, "and") {
				b.WriteString(" AND " + name("acol") + " IN (" + name("in") + ", 2)")
			}
		}
		if rapid.Bool().Draw(t, "group") {
			b.WriteString(" GROUP BY " + name("gcol"))
		}
		if rapid.Bool().Draw(t, "order") {
			b.WriteString(" ORDER BY " + name("ocol") + rapid.SampledFrom([]string{"", " ASC", " DESC"}).Draw(t, "dir"))
		}
		if rapid.Bool().Draw(t, "limit") {
			b.WriteString(" LIMIT 10")
		}
		want := Statement{Kind: KindRead, Keyword: "SELECT", FormatPos: -1, SettingsEnd: -1, SettingsPos: -1, Data: -1}
		if rapid.Bool().Draw(t, "settings") {
			b.WriteString(" SETTINGS ")
			start := b.Len()
			b.WriteString("max_threads = 1")
			want.Settings = append(want.Settings, Span{start, b.Len()})
			want.SettingsEnd = b.Len()
		}
		if rapid.Bool().Draw(t, "format") {
			b.WriteString(" ")
			want.FormatPos = b.Len()
			f := rapid.SampledFrom([]string{"JSON", "TSV", "Native", "settings"}).Draw(t, "fmt")
			b.WriteString("FORMAT " + f)
			want.Format = f
		}
		sql := b.String()
		want.End = len(sql)
		got := Analyze(sql)
		if got.Format != want.Format || got.FormatPos != want.FormatPos || got.End != want.End || got.Kind != want.Kind ||
			len(got.Settings) != len(want.Settings) || (len(want.Settings) == 1 && got.Settings[0] != want.Settings[0]) || got.SettingsEnd != want.SettingsEnd {
			t.Fatalf("%q:\n got %+v\nwant %+v", sql, got, want)
		}
		out := readOnlySQL(sql, got, "TabSeparated")
		checkStatementLevelReadonly(t, sql, out)
	})
}
