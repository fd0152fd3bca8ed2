package chserve

import (
	"strings"
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
// ClickHouse's quoting ('…', "…", `…`, backslash escapes) and comments
// (--, #, /* */); it is not a parser and never rejects SQL the engine would
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
	// SettingsEnd is the byte offset where a top-level SETTINGS clause of a
	// read statement ends (-1 if none), where more settings can be added.
	SettingsEnd int
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
func (l *lexer) next() (t token, ok bool) {
	s := l.s
	for l.pos < len(s) {
		c := s[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '-' && l.pos+1 < len(s) && s[l.pos+1] == '-', c == '#':
			for l.pos < len(s) && s[l.pos] != '\n' {
				l.pos++
			}
		case c == '/' && l.pos+1 < len(s) && s[l.pos+1] == '*':
			end := strings.Index(s[l.pos+2:], "*/")
			if end < 0 {
				l.pos = len(s)
			} else {
				l.pos += 2 + end + 2
			}
		default:
			return l.lexToken(), true
		}
	}
	return token{}, false
}

func (l *lexer) lexToken() token {
	s, start := l.s, l.pos
	c := s[start]
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
	case isWordByte(c):
		i := start + 1
		for i < len(s) && isWordByte(s[i]) {
			i++
		}
		l.pos = i
		return token{start: start, end: i, word: !isDigit(c)}
	default:
		l.pos = start + 1
		return token{start: start, end: start + 1}
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
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
	var prev token
	settingsOpen := false
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
		case depth == 0 && t.word:
			switch {
			case t.is(sql, "FORMAT") && !prev.is(sql, "FORMAT"):
				if name, ok := lx.next(); ok {
					st.FormatPos = t.start
					st.Format = unquoteIdent(name.text(sql))
					if settingsOpen {
						st.SettingsEnd = t.start
						settingsOpen = false
					}
					st.End = name.end
					prev = name
					continue
				}
			case t.is(sql, "SETTINGS"):
				settingsOpen = true
			case t.is(sql, "OUTFILE") && prev.is(sql, "INTO"):
				st.IntoOutfile = true
			case t.is(sql, "INFILE") && prev.is(sql, "FROM"):
				st.FromInfile = true
			}
		}
		st.End = t.end
		prev = t
	}
	if settingsOpen {
		st.SettingsEnd = st.End
	}
	return st
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
