package chserve

import (
	"strings"
	"unicode/utf8"
)

// Kind is what a statement does, judged by its leading keyword.
type Kind int

// Statement kinds, from least to most privileged.
const (
	// KindEmpty is a text with no tokens (only whitespace or comments).
	KindEmpty Kind = iota
	// KindRead covers SELECT, WITH, SHOW, DESCRIBE/DESC, EXPLAIN, EXISTS,
	// CHECK and parenthesised queries: statements that return data and
	// change nothing.
	KindRead
	// KindInsert is INSERT.
	KindInsert
	// KindCreate is CREATE (tables, views, databases).
	KindCreate
	// KindSchema covers every other statement that changes state: ALTER,
	// DROP, TRUNCATE, RENAME, OPTIMIZE, DETACH, ATTACH, EXCHANGE, DELETE,
	// UPDATE, SYSTEM, KILL, GRANT, REVOKE, BACKUP, RESTORE, …
	KindSchema
	// KindSession covers SET and USE, which would change the one shared
	// chDB session and are refused.
	KindSession
)

// String names the kind for messages.
func (k Kind) String() string {
	switch k {
	case KindEmpty:
		return "empty"
	case KindRead:
		return "read"
	case KindInsert:
		return "insert"
	case KindCreate:
		return "create"
	case KindSchema:
		return "schema"
	case KindSession:
		return "session"
	}
	return "unknown"
}

// Statement is what the server needs to know about one SQL statement
// before handing it to the engine. It comes from a lexer that understands
// ClickHouse's quoting ('…', "…", `…`, backslash escapes, $$…$$ heredocs)
// and comments (--, //, "# ", nested /* */); it is not a parser and never rejects SQL the engine would
// accept, except where noted.
type Statement struct {
	// Kind is the statement's kind; Keyword its leading keyword, upper case.
	Kind    Kind
	Keyword string
	// Format is the name in a top-level FORMAT clause ("" if none); for an
	// INSERT it is the input format, "Values" for INSERT … VALUES.
	Format string
	// FormatPos is the byte offset of the FORMAT keyword (-1 if none).
	FormatPos int
	// SettingsEnd is the byte offset where the last top-level SETTINGS
	// clause of a read statement ends (-1 if none).
	SettingsEnd int
	// Settings are the assignment lists ("a = 1, b = 'x'", without the
	// SETTINGS keyword) of every top-level SETTINGS clause of a read
	// statement, in order. A clause is recognised by its tokens — the
	// keyword, not after "." or AS, followed by name = value pairs — so
	// SHOW SETTINGS, system.settings and a column named settings are not
	// clauses.
	Settings []Span
	// SettingsPos is the byte offset of an INSERT's top-level SETTINGS
	// keyword before its input (-1 if none), where FROM INFILE must go.
	SettingsPos int
	// End is the byte offset just after the statement's last token, before
	// any trailing semicolon, whitespace or comment.
	End int
	// Data is the byte offset where inline INSERT data starts (after
	// "FORMAT name" and its first newline, or after VALUES); -1 if the
	// statement carries no inline data (INSERT … SELECT, not an INSERT).
	Data int
	// Multi reports a second statement after a semicolon.
	Multi bool
	// IntoOutfile and FromInfile report the client-side file clauses, which
	// a server does not run on behalf of HTTP clients.
	IntoOutfile, FromInfile bool
}

// Span is a byte range [Start, End) of a statement's text.
type Span struct{ Start, End int }

// token is one lexeme: its text span and whether it is a bare word.
type token struct {
	start, end int
	word       bool
}

// lexer walks SQL text token by token.
type lexer struct {
	s   string
	pos int
}

// next returns the next token, or ok=false at the end of the text.
// Unterminated quotes and comments run to the end of the text.
//
// It splits text where the engine's lexer does (ClickHouse's
// src/Parsers/Lexer.cpp, 26.x): line comments start at --, // or a #
// followed by a space or !; block comments nest; heredocs ($$…$$,
// $tag$…$tag$) are strings; the UTF-8 spaces the engine skips are
// whitespace. Where the two split differently, the readonly = 1 that
// readOnlySQL appends can land, for the engine, inside a comment or a
// string (TestReadOnlyHoldsForAnyText).
func (l *lexer) next() (t token, ok bool) {
	s := l.s
	for l.pos < len(s) {
		c := s[l.pos]
		var next byte
		if l.pos+1 < len(s) {
			next = s[l.pos+1]
		}
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '-' && next == '-', c == '/' && next == '/', c == '#' && (next == ' ' || next == '!'):
			for l.pos < len(s) && s[l.pos] != '\n' {
				l.pos++
			}
		case c == '/' && next == '*':
			l.pos = blockCommentEnd(s, l.pos)
		default:
			if c >= 0x80 {
				if n := utf8Space(s[l.pos:]); n > 0 {
					l.pos += n
					continue
				}
			}
			return l.lexToken(), true
		}
	}
	return token{}, false
}

// blockCommentEnd returns the offset just after the block comment that
// starts at s[i:] ("/*"), whose inner /* … */ pairs nest (as in the SQL
// standard and the engine), or len(s) when it is not closed.
func blockCommentEnd(s string, i int) int {
	depth := 1
	for i += 2; i+2 <= len(s); {
		switch {
		case s[i] == '/' && s[i+1] == '*':
			depth++
			i += 2
		case s[i] == '*' && s[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return len(s)
}

// utf8Space returns the length of the UTF-8 space the engine skips as
// whitespace at the start of s (skipWhitespacesUTF8: U+0085, U+00A0,
// U+180E, U+2000–U+200D, U+2028, U+2029, U+202F, U+205F, U+2060, U+3000,
// U+FEFF), or 0.
func utf8Space(s string) int {
	r, n := utf8.DecodeRuneInString(s)
	switch {
	case r == 0x85, r == 0xA0, r == 0x180E, r >= 0x2000 && r <= 0x200D, r == 0x2028, r == 0x2029,
		r == 0x202F, r == 0x205F, r == 0x2060, r == 0x3000, r == 0xFEFF:
		return n
	}
	return 0
}

// heredocEnd returns the offset just after the heredoc that starts at
// s[i:] ("$", as the engine reads it: the text up to the next "$" is its
// tag, and it ends after the tag's next occurrence), or -1 when s[i:] does
// not start one.
func heredocEnd(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '$')
	if j < 0 {
		return -1
	}
	tag := s[i : i+j+2]
	k := strings.Index(s[i+len(tag):], tag)
	if k < 0 {
		return -1
	}
	return i + len(tag) + k + len(tag)
}

func (l *lexer) lexToken() token {
	s, start := l.s, l.pos
	c := s[start]
	if c == '$' {
		if end := heredocEnd(s, start); end >= 0 {
			l.pos = end
			return token{start: start, end: end}
		}
		if start+1 == len(s) || !isWordByte(s[start+1]) {
			l.pos = start + 1
			return token{start: start, end: start + 1} // a dollar sign alone
		}
	}
	switch {
	case c == '\'' || c == '"' || c == '`':
		i := start + 1
		for i < len(s) {
			if s[i] == '\\' {
				i += 2
				continue
			}
			if s[i] == c {
				if i+1 < len(s) && s[i+1] == c { // doubled quote
					i += 2
					continue
				}
				i++
				break
			}
			i++
		}
		if i > len(s) {
			i = len(s)
		}
		l.pos = i
		return token{start: start, end: i}
	case isWordByte(c) || c == '$':
		i := start + 1
		for i < len(s) && (isWordByte(s[i]) || s[i] == '$') {
			i++
		}
		l.pos = i
		return token{start: start, end: i, word: !isDigit(c)}
	default:
		l.pos = start + 1
		return token{start: start, end: start + 1}
	}
}

// isWordByte reports whether c is a word character to the engine (ASCII
// letters, digits, _; "$" also continues a word). Other bytes above 0x7F
// (outside the UTF-8 spaces) are each a token of their own: the engine
// refuses them outside quotes.
func isWordByte(c byte) bool {
	return c == '_' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (t token) text(s string) string { return s[t.start:t.end] }

func (t token) is(s, kw string) bool {
	return t.word && strings.EqualFold(t.text(s), kw)
}

// kindOf classifies a leading keyword (upper case). Unknown keywords are
// KindSchema, the most restricted kind a client may be granted.
func kindOf(keyword string) Kind {
	switch keyword {
	case "SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "EXISTS", "(":
		return KindRead
	case "INSERT":
		return KindInsert
	case "CREATE":
		return KindCreate
	case "SET", "USE":
		return KindSession
	}
	return KindSchema
}

// Analyze lexes one SQL text. It never fails: unknown leading keywords are
// KindSchema (the most restricted kind a client may be granted).
func Analyze(sql string) Statement {
	st := Statement{FormatPos: -1, SettingsEnd: -1, SettingsPos: -1, Data: -1}
	lx := lexer{s: sql}
	first, ok := lx.next()
	if !ok {
		return st
	}
	st.Keyword = strings.ToUpper(first.text(sql))
	st.Kind = kindOf(st.Keyword)
	st.End = first.end
	if st.Kind == KindInsert {
		analyzeInsert(&st, &lx)
		return st
	}
	depth := 0
	if first.text(sql) == "(" {
		depth = 1
	}
	prev := first
	for {
		t, ok := lx.next()
		if !ok {
			break
		}
		txt := t.text(sql)
		switch {
		case txt == ";" && depth == 0:
			if _, more := lx.next(); more {
				st.Multi = true
				lx.pos = len(sql)
			}
			continue
		case txt == "(" || txt == "[":
			depth++
		case txt == ")" || txt == "]":
			if depth > 0 {
				depth--
			}
		case depth == 0 && t.word && !qualifiesOrNames(sql, prev):
			clause := !expectsOperand(sql, prev)
			switch {
			case clause && t.is(sql, "FORMAT"):
				if name, ok := lx.formatName(); ok {
					st.FormatPos = t.start
					st.Format = unquoteIdent(name.text(sql))
					st.End = name.end
					prev = name
					continue
				}
			case clause && t.is(sql, "SETTINGS"):
				if list, last, ok := lx.settingsList(); ok {
					st.Settings = append(st.Settings, list)
					st.SettingsEnd = list.End
					st.End = list.End
					prev = last
					continue
				}
			case t.is(sql, "OUTFILE") && prev.is(sql, "INTO"):
				st.IntoOutfile = true
			case t.is(sql, "INFILE") && prev.is(sql, "FROM"):
				st.FromInfile = true
			}
		}
		st.End = t.end
		prev = t
	}
	return st
}

// qualifiesOrNames reports a token after which a keyword is a name: after
// "." (system.settings) or AS (an alias).
func qualifiesOrNames(sql string, prev token) bool {
	return (prev.end == prev.start+1 && sql[prev.start] == '.') || prev.is(sql, "AS")
}

// expectsOperand reports a token after which the grammar wants an
// expression or a name, so that a keyword there is that name, never a
// clause: ORDER BY format DESC sorts by a column called format, SELECT
// settings, format FROM t selects two. These are the tokens that cannot
// end an expression: an operator or opening bracket ("," "(" "=" "+" …,
// but not ")" "]" "}", which close one, nor "*", the wildcard of SELECT *), and the clause and operator
// keywords that take an operand (SELECT, BY, WHERE, AND, FROM, …). A
// FORMAT or SETTINGS clause follows a complete expression (a name, a
// literal, a closing bracket, or a keyword such as DESC, FINAL or
// TABLES).
func expectsOperand(sql string, prev token) bool {
	if prev.end == prev.start {
		return false // no previous token
	}
	if !prev.word {
		switch c := sql[prev.start]; {
		case c == ')' || c == ']' || c == '}' || c == '*':
			return false // closes an expression; * may be SELECT *
		case c == '\'' || c == '"' || c == '`' || isDigit(c):
			return false // a literal, a quoted name, a number: complete
		}
		return true
	}
	switch strings.ToUpper(prev.text(sql)) {
	case "SELECT", "DISTINCT", "FROM", "JOIN", "WHERE", "PREWHERE", "HAVING", "BY", "AND", "OR", "NOT", "ON", "USING",
		"AS", "IN", "LIKE", "ILIKE", "BETWEEN", "CASE", "WHEN", "THEN", "ELSE", "IS", "LIMIT", "OFFSET", "INTERVAL", "QUALIFY":
		return true
	}
	return false
}

// formatName reads the name of a FORMAT clause just lexed: a word or a
// quoted identifier that ends the statement (end of text, ";", or a
// SETTINGS clause after it). Otherwise FORMAT is a name (a column called
// format) and the lexer is left where it was.
func (l *lexer) formatName() (token, bool) {
	save := l.pos
	name, ok := l.next()
	if ok && (name.word || l.s[name.start] == '`' || l.s[name.start] == '"') {
		afterName := l.pos
		next, more := l.next()
		if !more || next.text(l.s) == ";" || next.is(l.s, "SETTINGS") {
			l.pos = afterName
			return name, true
		}
	}
	l.pos = save
	return token{}, false
}

// settingsList reads the assignments of a SETTINGS clause just lexed:
// name = value, separated by commas, a value being one token (with a sign,
// and a decimal fraction) or a bracketed group. It returns the list's span
// and its last token; when the keyword is not followed by an assignment it
// is no clause and the lexer is left where it was.
func (l *lexer) settingsList() (list Span, last token, ok bool) {
	save := l.pos
	list.Start = -1
	for {
		name, ok := l.next()
		if !ok || !(name.word || l.s[name.start] == '`' || l.s[name.start] == '"') {
			break
		}
		if eq, ok := l.next(); !ok || eq.text(l.s) != "=" {
			break
		}
		v, ok := l.value()
		if !ok {
			break
		}
		if list.Start < 0 {
			list.Start = name.start
		}
		list.End, last = v.end, v
		afterValue := l.pos
		if comma, ok := l.next(); ok && comma.text(l.s) == "," {
			continue
		}
		l.pos = afterValue
		return list, last, true
	}
	l.pos = save
	return Span{}, token{}, false
}

// value reads one setting value: an optionally signed token, a number with
// a fraction, or a bracketed group ((…), […], {…}); the token returned
// spans all of it.
func (l *lexer) value() (token, bool) {
	v, ok := l.next()
	if !ok {
		return token{}, false
	}
	start := v.start
	if txt := v.text(l.s); txt == "-" || txt == "+" {
		if v, ok = l.next(); !ok {
			return token{}, false
		}
	}
	switch v.text(l.s) {
	case "(", "[", "{":
		depth := 1
		for depth > 0 {
			t, ok := l.next()
			if !ok {
				return token{}, false
			}
			switch t.text(l.s) {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
			v = t
		}
	case ")", "]", "}", ",", ";", "=":
		return token{}, false
	default:
		// 0.5, 1.5e3: digits, '.', digits without spaces.
		if save := l.pos; save < len(l.s) && l.s[save] == '.' && isDigit(l.s[v.start]) {
			l.pos++
			if frac, ok := l.next(); ok && frac.start == save+1 && isDigit(l.s[frac.start]) {
				v = frac
			} else {
				l.pos = save
			}
		}
	}
	return token{start: start, end: v.end}, true
}

// readOnlySQL is the statement text[:st.End] of a read statement made to run
// with readonly = 1, which makes the engine refuse writes, table functions
// and setting changes. Where it goes:
//
//   - after a FORMAT clause, at the statement level (joining a SETTINGS
//     clause there): it binds the whole statement;
//   - for EXPLAIN without a FORMAT clause, after an added FORMAT (format,
//     the output format) for the same reason, and so that it never becomes
//     part of the query EXPLAIN shows (EXPLAIN SYNTAX, QUERY TREE);
//   - otherwise, joining the SETTINGS clause that ends the statement, or
//     in a SETTINGS clause added at its end (the last SELECT's settings,
//     which ClickHouse applies to every part of a UNION).
//
// Statement-level settings are applied before a query's own SETTINGS,
// which readonly then refuses to change; so the query's own assignments
// are repeated before readonly = 1 (applied again to the same values,
// which readonly allows).
func readOnlySQL(text string, st Statement, format string) string {
	sql := text[:st.End]
	var inner []string
	outer := -1
	for _, l := range st.Settings {
		if st.FormatPos >= 0 && l.Start > st.FormatPos {
			outer = l.End
			continue
		}
		inner = append(inner, text[l.Start:l.End])
	}
	// Each addition starts on a line of its own: a line comment the text
	// ends in, however the engine reads it, stops there.
	switch {
	case outer >= 0:
		return sql[:outer] + "\n, " + strings.Join(append(inner, "readonly = 1"), ", ") + sql[outer:]
	case st.FormatPos >= 0:
		return sql + "\nSETTINGS " + strings.Join(append(inner, "readonly = 1"), ", ")
	case st.Keyword == "EXPLAIN":
		return sql + "\nFORMAT " + quoteIdent(format) + "\nSETTINGS " + strings.Join(append(inner, "readonly = 1"), ", ")
	case len(st.Settings) > 0 && st.Settings[len(st.Settings)-1].End == st.End:
		return sql + "\n, readonly = 1"
	}
	return sql + "\nSETTINGS " + strings.Join(append(inner, "readonly = 1"), ", ")
}

// nestedSettings reports whether text has a SETTINGS keyword inside
// brackets followed by an assignment (name =): a subquery's own SETTINGS
// clause.
func nestedSettings(text string) bool {
	lx := lexer{s: text}
	var toks []token
	for {
		t, ok := lx.next()
		if !ok {
			break
		}
		toks = append(toks, t)
	}
	depth := 0
	for i, t := range toks {
		switch t.text(text) {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		}
		if depth > 0 && t.word && strings.EqualFold(t.text(text), "SETTINGS") &&
			i+2 < len(toks) && toks[i+2].text(text) == "=" {
			return true
		}
	}
	return false
}

// settingNames returns the names assigned in the SETTINGS lists spans of
// text ("a = 1, b = [1, 2]": a, b): the word at the start of the list or
// after a comma outside brackets.
func settingNames(text string, spans []Span) []string {
	var names []string
	for _, sp := range spans {
		lx := lexer{s: text[:sp.End], pos: sp.Start}
		depth, expect := 0, true
		for {
			tok, ok := lx.next()
			if !ok {
				break
			}
			switch t := tok.text(text); {
			case t == "(" || t == "[" || t == "{":
				depth++
			case t == ")" || t == "]" || t == "}":
				depth--
			case t == "," && depth == 0:
				expect = true
				continue
			case expect && depth == 0:
				names = append(names, unquoteIdent(t))
			}
			expect = false
		}
	}
	return names
}

// analyzeInsert finds an INSERT's input: FORMAT name, VALUES, or a query.
func analyzeInsert(st *Statement, lx *lexer) {
	sql := lx.s
	depth := 0
	var prev token
	// Skip INTO [TABLE|FUNCTION] and the table name, which may be a keyword
	// such as `format` when unquoted.
	for i := 0; i < 3; i++ {
		save := lx.pos
		t, ok := lx.next()
		if !ok {
			return
		}
		st.End = t.end
		if t.is(sql, "INTO") || t.is(sql, "TABLE") {
			continue
		}
		if t.is(sql, "FUNCTION") {
			break
		}
		if !t.word && t.text(sql)[0] != '`' && t.text(sql)[0] != '"' {
			lx.pos = save
		}
		break
	}
	for {
		t, ok := lx.next()
		if !ok {
			return
		}
		txt := t.text(sql)
		switch {
		case txt == "(" || txt == "[":
			depth++
		case txt == ")" || txt == "]":
			if depth > 0 {
				depth--
			}
		case depth == 0 && txt == ";":
			if _, more := lx.next(); more {
				st.Multi = true
			}
			return
		case depth == 0 && t.is(sql, "FORMAT") && !(prev.end > prev.start && prev.text(sql) == "."):
			name, ok := lx.next()
			if !ok {
				st.End = t.end
				return
			}
			st.FormatPos = t.start
			st.Format = unquoteIdent(name.text(sql))
			st.End = name.end
			st.Data = dataStart(sql, name.end)
			return
		case depth == 0 && t.is(sql, "VALUES") && !(prev.end > prev.start && prev.text(sql) == "."):
			st.FormatPos = t.start
			st.Format = "Values"
			st.End = t.end
			st.Data = t.end
			return
		case depth == 0 && (t.is(sql, "SELECT") || t.is(sql, "WITH")) && !(prev.end > prev.start && prev.text(sql) == "."):
			// INSERT … SELECT: the rest is a query, not data.
			rest := Analyze(sql[t.start:])
			st.Multi = rest.Multi
			st.IntoOutfile = rest.IntoOutfile
			st.FromInfile = st.FromInfile || rest.FromInfile
			if rest.End > 0 {
				st.End = t.start + rest.End
			}
			return
		case depth == 0 && t.is(sql, "INFILE") && prev.is(sql, "FROM"):
			st.FromInfile = true
		case depth == 0 && t.is(sql, "SETTINGS") && st.SettingsPos < 0:
			st.SettingsPos = t.start
		}
		st.End = t.end
		prev = t
	}
}

// dataStart is where inline INSERT data begins after the format name ending
// at i: spaces and tabs are skipped, then one line break; binary data that
// starts with whitespace bytes after that newline is kept intact.
func dataStart(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i < len(s) && s[i] == '\r' {
		i++
	}
	if i < len(s) && s[i] == '\n' {
		i++
	}
	return i
}

// unquoteIdent strips `…` or "…" quotes from an identifier.
func unquoteIdent(s string) string {
	if len(s) >= 2 && (s[0] == '`' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
