package chserve

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		want Statement
		// data is the inline INSERT data expected at Data ("" when none).
		data string
	}{
		{name: "empty", sql: "  -- nothing\n /* at all */ ", want: Statement{Kind: KindEmpty}},
		{name: "select", sql: "SELECT 1", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 8}},
		{name: "lowercase with trailing semicolon and comment", sql: "select 1; -- done", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 8}},
		{name: "format clause", sql: "SELECT * FROM t FORMAT JSONEachRow", want: Statement{Kind: KindRead, Keyword: "SELECT", Format: "JSONEachRow", FormatPos: 16, End: 34}},
		{name: "format in string is not a clause", sql: "SELECT 'x FORMAT CSV'", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 21}},
		// Split where the engine splits (src/Parsers/Lexer.cpp): heredocs
		// are strings, "//" and "# " start line comments, block comments
		// nest, UTF-8 spaces separate words.
		{name: "heredoc is a string", sql: "SELECT $$ ' FORMAT CSV $$ -- '", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 25}},
		{name: "heredoc with a tag", sql: "SELECT $t$ $$ ' $t$ AS a", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 24}},
		{name: "heredoc tag with a quote", sql: "SELECT $ ' $, 1 -- ' $ ' $", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 26}},
		{name: "a lone dollar is no heredoc", sql: "SELECT $, 'x FORMAT CSV'", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 24}},
		{name: "dollar inside a word", sql: "SELECT a$b", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 10}},
		{name: "slash slash comment", sql: "SELECT 1 // FORMAT CSV", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 8}},
		{name: "hash space comment", sql: "SELECT 1 # FORMAT CSV", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 8}},
		{name: "hash bang comment", sql: "SELECT 1 #!FORMAT CSV", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 8}},
		{name: "hash without a space is a token", sql: "SELECT 1 #x", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 11}},
		{name: "block comments nest", sql: "SELECT 1 /* /* */ FORMAT CSV */", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 8}},
		{name: "utf-8 space separates the format", sql: "SELECT 1 FORMAT\u00a0CSV", want: Statement{Kind: KindRead, Keyword: "SELECT", Format: "CSV", FormatPos: 9, End: 20}},
		{name: "format in subquery is not the output", sql: "SELECT * FROM (SELECT 1 FORMAT CSV)", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 35}},
		{name: "settings then format", sql: "SELECT 1 SETTINGS max_threads=1 FORMAT TSV", want: Statement{Kind: KindRead, Keyword: "SELECT", Format: "TSV", FormatPos: 32, SettingsEnd: 31, Settings: []Span{{18, 31}}, End: 42}},
		{name: "format then settings", sql: "SELECT 1 FORMAT TSV SETTINGS a=1", want: Statement{Kind: KindRead, Keyword: "SELECT", Format: "TSV", FormatPos: 9, SettingsEnd: 32, Settings: []Span{{29, 32}}, End: 32}},
		{name: "settings values of every shape", sql: "SELECT 1 SETTINGS a = -1, b = 0.5, c = 'x,y', d = [1, 2], e = {'k': 1}, f = true",
			want: Statement{Kind: KindRead, Keyword: "SELECT", SettingsEnd: 80, Settings: []Span{{18, 80}}, End: 80}},
		{name: "settings inside a union", sql: "SELECT 1 SETTINGS a=1 UNION ALL SELECT 2", want: Statement{Kind: KindRead, Keyword: "SELECT", SettingsEnd: 21, Settings: []Span{{18, 21}}, End: 40}},
		{name: "show settings is no clause", sql: "SHOW SETTINGS LIKE 'max_thr%'", want: Statement{Kind: KindRead, Keyword: "SHOW", End: 29}},
		{name: "show changed settings", sql: "SHOW CHANGED SETTINGS", want: Statement{Kind: KindRead, Keyword: "SHOW", End: 21}},
		{name: "system.settings is a table", sql: "SELECT name FROM system.settings WHERE name = 'x'", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 49}},
		{name: "alias settings", sql: "SELECT 1 AS settings", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 20}},
		{name: "column named format", sql: "SELECT format FROM t", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 20}},
		{name: "order by a column named format", sql: "SELECT a FROM t ORDER BY format DESC", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 36}},
		{name: "columns named settings and format", sql: "SELECT settings, format FROM t WHERE x = settings", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 49}},
		{name: "count from system.settings", sql: "SELECT count() FROM system.settings", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 35}},
		{name: "select star then format", sql: "SELECT * FORMAT CSV", want: Statement{Kind: KindRead, Keyword: "SELECT", Format: "CSV", FormatPos: 9, End: 19}},
		{name: "alias format then the clause", sql: "SELECT 1 AS format FORMAT CSV", want: Statement{Kind: KindRead, Keyword: "SELECT", Format: "CSV", FormatPos: 19, End: 29}},
		{name: "explain with its own settings", sql: "EXPLAIN PLAN indexes = 1 SELECT 1 SETTINGS max_threads = 2", want: Statement{Kind: KindRead, Keyword: "EXPLAIN", SettingsEnd: 58, Settings: []Span{{43, 58}}, End: 58}},
		{name: "multi statement", sql: "SELECT 1; DROP TABLE t", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 8, Multi: true}},
		{name: "describe", sql: "DESCRIBE TABLE `t`", want: Statement{Kind: KindRead, Keyword: "DESCRIBE", End: 18}},
		{name: "parenthesised query", sql: "(SELECT 1) UNION ALL (SELECT 2)", want: Statement{Kind: KindRead, Keyword: "(", End: 31}},
		{name: "set", sql: "SET max_threads = 1", want: Statement{Kind: KindSession, Keyword: "SET", End: 19}},
		{name: "use", sql: "use otel", want: Statement{Kind: KindSession, Keyword: "USE", End: 8}},
		{name: "drop", sql: "DROP TABLE t", want: Statement{Kind: KindSchema, Keyword: "DROP", End: 12}},
		{name: "create", sql: "CREATE TABLE t (a UInt8) ENGINE = Memory", want: Statement{Kind: KindCreate, Keyword: "CREATE", End: 40}},
		{name: "into outfile", sql: "SELECT 1 INTO OUTFILE '/tmp/x'", want: Statement{Kind: KindRead, Keyword: "SELECT", End: 30, IntoOutfile: true}},
		{name: "escaped quote", sql: `SELECT 'it\'s; FORMAT x' FORMAT CSV`, want: Statement{Kind: KindRead, Keyword: "SELECT", Format: "CSV", FormatPos: 25, End: 35}},
		{name: "doubled quote", sql: `SELECT 'it''s' FORMAT CSV`, want: Statement{Kind: KindRead, Keyword: "SELECT", Format: "CSV", FormatPos: 15, End: 25}},
		{
			name: "insert format with data on the next line",
			sql:  "INSERT INTO t FORMAT JSONEachRow\n{\"a\":1}\n",
			want: Statement{Kind: KindInsert, Keyword: "INSERT", Format: "JSONEachRow", FormatPos: 14, End: 32, Data: 33},
			data: "{\"a\":1}\n",
		},
		{
			name: "insert native keeps leading whitespace bytes of binary data",
			sql:  "INSERT INTO t FORMAT Native\n\t\n\x00",
			want: Statement{Kind: KindInsert, Keyword: "INSERT", Format: "Native", FormatPos: 14, End: 27, Data: 28},
			data: "\t\n\x00",
		},
		{
			name: "insert into a table named format with columns and settings",
			sql:  "INSERT INTO format (a, b) SETTINGS async_insert=1 FORMAT CSV 1,2",
			want: Statement{Kind: KindInsert, Keyword: "INSERT", Format: "CSV", FormatPos: 50, SettingsPos: 26, End: 60, Data: 61},
			data: "1,2",
		},
		{
			name: "insert quoted db.table with dotted columns",
			sql:  `INSERT INTO "otel"."t" (Events.Name, x) FORMAT Native`,
			want: Statement{Kind: KindInsert, Keyword: "INSERT", Format: "Native", FormatPos: 40, End: 53, Data: 53},
		},
		{
			name: "insert values",
			sql:  "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
			want: Statement{Kind: KindInsert, Keyword: "INSERT", Format: "Values", FormatPos: 14, End: 20, Data: 20},
			data: " (1, 'a'), (2, 'b')",
		},
		{
			name: "insert select",
			sql:  "INSERT INTO t SELECT * FROM u WHERE x = 'FORMAT'",
			want: Statement{Kind: KindInsert, Keyword: "INSERT", End: 48},
		},
		{
			name: "insert from infile",
			sql:  "INSERT INTO t FROM INFILE '/etc/passwd' FORMAT LineAsString",
			want: Statement{Kind: KindInsert, Keyword: "INSERT", Format: "LineAsString", FormatPos: 40, End: 59, Data: 59, FromInfile: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			for _, p := range []*int{&want.FormatPos, &want.SettingsEnd, &want.SettingsPos, &want.Data} {
				if *p == 0 {
					*p = -1
				}
			}
			got := Analyze(tt.sql)
			assert.Equal(t, want, got)
			if got.Data >= 0 {
				assert.Equal(t, tt.data, tt.sql[got.Data:])
			}
		})
	}
}

func TestCompose(t *testing.T) {
	s := &Server{opts: defaultOptions()}
	tests := []struct {
		name, sql string
		readOnly  bool
		spool     string
		want      string
	}{
		{name: "plain", sql: "SELECT 1;  -- x", want: "SELECT 1"},
		{name: "readonly appends settings", sql: "SELECT 1 FORMAT JSON -- c", readOnly: true, want: "SELECT 1 FORMAT JSON\nSETTINGS readonly = 1"},
		{name: "readonly appended", sql: "SELECT 1", readOnly: true, want: "SELECT 1\nSETTINGS readonly = 1"},
		{name: "readonly joins the settings that end the query", sql: "SELECT 1 SETTINGS max_threads = 1", readOnly: true, want: "SELECT 1 SETTINGS max_threads = 1\n, readonly = 1"},
		{name: "readonly repeats the query's settings", sql: "SELECT 1 SETTINGS max_threads = 1 FORMAT JSON", readOnly: true, want: "SELECT 1 SETTINGS max_threads = 1 FORMAT JSON\nSETTINGS max_threads = 1, readonly = 1"},
		{name: "readonly joins settings after the format", sql: "SELECT 1 FORMAT JSON SETTINGS a = 1", readOnly: true, want: "SELECT 1 FORMAT JSON SETTINGS a = 1\n, readonly = 1"},
		{name: "explain keeps the explained query", sql: "EXPLAIN SYNTAX SELECT 1", readOnly: true, want: "EXPLAIN SYNTAX SELECT 1\nFORMAT `TabSeparated`\nSETTINGS readonly = 1"},
		{name: "show settings", sql: "SHOW SETTINGS LIKE 'x'", readOnly: true, want: "SHOW SETTINGS LIKE 'x'\nSETTINGS readonly = 1"},
		{name: "union with settings in the middle", sql: "SELECT 1 SETTINGS a=1 UNION ALL SELECT 2", readOnly: true, want: "SELECT 1 SETTINGS a=1 UNION ALL SELECT 2\nSETTINGS a=1, readonly = 1"},
		{name: "explain with the query's settings", sql: "EXPLAIN SYNTAX SELECT 1 SETTINGS a=1", readOnly: true, want: "EXPLAIN SYNTAX SELECT 1 SETTINGS a=1\nFORMAT `TabSeparated`\nSETTINGS a=1, readonly = 1"},
		{name: "insert through infile", sql: "INSERT INTO t (a) FORMAT Native", spool: "/tmp/x'y", want: `INSERT INTO t (a) FROM INFILE '/tmp/x\'y' FORMAT Native`},
		{name: "insert settings after infile", sql: "INSERT INTO t SETTINGS async_insert=1 FORMAT CSV\n1", spool: "/f", want: "INSERT INTO t FROM INFILE '/f' SETTINGS async_insert=1 FORMAT CSV"},
		{name: "insert values through infile", sql: "INSERT INTO t VALUES (1)", spool: "/f", want: "INSERT INTO t FROM INFILE '/f' FORMAT Values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &request{text: tt.sql, st: Analyze(tt.sql), readOnly: tt.readOnly, spoolFile: tt.spool}
			assert.Equal(t, tt.want, s.compose(req))
		})
	}
}

func TestParseUsers(t *testing.T) {
	tests := []struct {
		spec    string
		want    []User
		wantErr string
	}{
		{spec: "", want: nil},
		{spec: "writer:w:rw, reader:a:b:c:ro", want: []User{{"writer", "w", RoleReadWrite}, {"reader", "a:b:c", RoleReadOnly}}},
		{spec: "writer:w", wantErr: "not name:password:role"},
		{spec: "writer:w:admin", wantErr: `role "admin"`},
		{spec: "writer::rw", wantErr: "empty password"},
		{spec: "a:1:rw,a:2:ro", wantErr: "listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := ParseUsers(tt.spec)
			if tt.wantErr != "" {
				assert.ErrorIs(t, err, ErrBadUsers)
				assert.ErrorContains(t, err, tt.wantErr)
				assert.NotContains(t, err.Error(), ":1:", "passwords stay out of messages")
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseParams(t *testing.T) {
	q, _ := url.ParseQuery("query=SELECT+1&database=otel&default_format=Native&client_protocol_version=54460&compress=1&decompress=1&network_compression_method=zstd&async_insert=1&param_n=42&query_id=q1&user=u&password=p")
	p, ex := parseParams(q)
	if !assert.Nil(t, ex) {
		return
	}
	assert.Equal(t, "SELECT 1", p.query)
	assert.Equal(t, "otel", p.database)
	assert.Equal(t, uint64(54460), p.revision)
	assert.True(t, p.compress && p.decompress)
	assert.Equal(t, "ZSTD", p.method)
	assert.Equal(t, map[string]string{"async_insert": "1"}, p.settings, "handler parameters are not settings")
	assert.Equal(t, map[string]string{"n": "42"}, p.bind)

	for raw, code := range map[string]int{
		"session_id=abc":                    codeNotImplemented,
		"max_threads%3D1%3BDROP=1":          115,
		"client_protocol_version=x":         36,
		"network_compression_method=snappy": 36,
	} {
		q, _ := url.ParseQuery(raw)
		_, ex := parseParams(q)
		if assert.NotNil(t, ex, raw) {
			assert.Equal(t, code, ex.Code, raw)
		}
	}
}

// FuzzAnalyze checks that the statement lexer never panics and that every
// offset it reports lies inside the text, in order, so that compose can cut
// the text at them.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "INSERT INTO t FORMAT Native\n\x01\x02", "INSERT INTO t VALUES (1)", "SELECT 1 FORMAT", "INSERT INTO t FORMAT",
		"SELECT 'unterminated", "/* open comment", "SELECT 1 SETTINGS a=1 FORMAT JSON SETTINGS b=2", "(((", ")))",
		"INSERT INTO `t` (a) SETTINGS x=1 FORMAT CSV\n1\n", "SET x=1; SELECT 2", "INSERT INTO t SELECT 1 FORMAT Native",
		"WITH 1 AS x SELECT x INTO OUTFILE 'f'", "insert into function file('x') format CSV", "SELECT `a``b` FORMAT \"JSON\"",
	} {
		f.Add(s)
	}
	s := &Server{opts: defaultOptions()}
	f.Fuzz(func(t *testing.T, sql string) {
		st := Analyze(sql)
		n := len(sql)
		if st.End < 0 || st.End > n {
			t.Fatalf("End %d outside [0,%d]", st.End, n)
		}
		if st.Kind == KindEmpty {
			if strings.TrimSpace(sql) != "" && st.End != 0 && !strings.ContainsAny(sql, "-/#") {
				t.Fatalf("non-blank text %q analysed as empty", sql)
			}
			return
		}
		if st.FormatPos >= st.End || st.FormatPos < -1 {
			t.Fatalf("FormatPos %d not before End %d", st.FormatPos, st.End)
		}
		if st.Data > n || st.Data < -1 || (st.Data >= 0 && st.Data < st.End) {
			t.Fatalf("Data %d outside [End %d, %d]", st.Data, st.End, n)
		}
		if st.SettingsEnd > st.End || st.SettingsPos > n {
			t.Fatalf("settings offsets %d/%d past End %d", st.SettingsEnd, st.SettingsPos, st.End)
		}
		if st.Data >= 0 && (st.Kind != KindInsert || st.FormatPos < 0) {
			t.Fatalf("inline data without an INSERT format: %+v", st)
		}
		// Composing the engine's SQL never panics, for readers and inserts.
		req := &request{text: sql, st: st, readOnly: st.Kind == KindRead}
		if st.Data >= 0 {
			req.spoolFile = "/tmp/f"
		}
		out := s.compose(req)
		if req.readOnly && !strings.Contains(out, "readonly = 1") {
			t.Fatalf("read-only query lost readonly: %q", out)
		}
		if req.readOnly {
			checkStatementLevelReadonly(t, sql[:st.End], out)
		}
	})
}

// FuzzParseParams checks that URL parsing never panics and that only
// well-formed names become settings (they are spliced into SET).
func FuzzParseParams(f *testing.F) {
	for _, s := range []string{
		"query=SELECT+1&default_format=Native&client_protocol_version=54460&async_insert=1",
		"compress=1&decompress=1&network_compression_method=ZSTD&param_x=1",
		"max_threads%3D1=2", "session_id=x", "client_protocol_version=-1", "a=1&a=2&=3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		p, ex := parseParams(q)
		if ex != nil {
			if ex.Code == 0 || !strings.HasPrefix(ex.Error(), "Code: ") {
				t.Fatalf("malformed exception %q", ex.Error())
			}
			return
		}
		for k := range p.settings {
			if !validSettingName(k) || isHandlerParam(k) || strings.HasPrefix(k, "param_") {
				t.Fatalf("bad setting name %q accepted", k)
			}
		}
	})
}

// checkStatementLevelReadonly holds the guarantee of readOnlySQL: lexed
// again, the composed text ends in a top-level SETTINGS clause whose last
// assignment is readonly = 1, after the FORMAT clause for EXPLAIN and for
// a statement with one — unless the
// original text ends inside an unterminated quote or bracket, which
// swallows what was appended and which the engine rejects as a syntax
// error.
func checkStatementLevelReadonly(t interface {
	Helper()
	Fatalf(string, ...any)
}, orig, out string) {
	t.Helper()
	depth := 0
	for lx := (lexer{s: orig}); ; {
		tok, ok := lx.next()
		if !ok {
			break
		}
		switch tok.text(orig) {
		case "(", "[":
			depth++
		case ")", "]":
			depth = max(0, depth-1)
		}
	}
	if depth > 0 {
		return
	}
	lx := lexer{s: out}
	for {
		tok, ok := lx.next()
		if !ok {
			break
		}
		if tok.start < len(orig) && tok.end > len(orig) {
			return // an unterminated quote runs into the appended text
		}
	}
	// After a dangling "." what is added reads as part of a name (a. FORMAT
	// is a.FORMAT), and after a dangling operator or operand keyword
	// (a =, WHERE, AND) as the operand it wants: both leave a syntax
	// error for the engine (TestReadStatementsOnTheEngine).
	if strings.HasSuffix(orig, ".") || endsWantingOperand(orig) {
		return
	}
	again := Analyze(out)
	if again.Kind != KindRead || again.Multi || len(again.Settings) == 0 {
		t.Fatalf("composed %q lexes as %+v", out, again)
	}
	last := again.Settings[len(again.Settings)-1]
	if !strings.HasSuffix(out[last.Start:last.End], "readonly = 1") || last.End != again.End {
		t.Fatalf("readonly = 1 is not the statement's last setting in %q (%+v)", out, again)
	}
	if (Analyze(orig).Keyword == "EXPLAIN" || Analyze(orig).FormatPos >= 0) && last.Start < again.FormatPos {
		t.Fatalf("readonly = 1 is not after the FORMAT clause in %q (%+v)", out, again)
	}
}

// TestSettingNames: the names a statement's SETTINGS clauses assign, also
// quoted or in any case, after values with commas inside brackets or
// strings, in every clause (before and after FORMAT).
func TestSettingNames(t *testing.T) {
	for _, tt := range []struct {
		sql  string
		want []string
	}{
		{"SELECT 1", nil},
		{"SELECT 1 SETTINGS a = 1", []string{"a"}},
		{"SELECT 1 SETTINGS a = [1, 2], `b` = (3, 4), c = 'x, d = 1', E = {'k': 1}", []string{"a", "b", "c", "E"}},
		{"SELECT 1 SETTINGS a = 1 FORMAT TSV SETTINGS \"b\" = 2", []string{"a", "b"}},
		{"SELECT 1 SETTINGS a = 1 UNION ALL SELECT 2 SETTINGS b = 2", []string{"a", "b"}},
	} {
		st := Analyze(tt.sql)
		assert.Equal(t, tt.want, settingNames(tt.sql, st.Settings), tt.sql)
	}
}
