package chserve_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testenv"
	"pgregory.net/rapid"
)

// TestReadStatementsOnTheEngine runs every kind of read statement through
// the real engine as the read-only user: readonly = 1 is added at the
// statement level, so EXPLAIN shows the query as written, SHOW SETTINGS and
// system.settings are not mistaken for a SETTINGS clause, and the engine
// still refuses table functions, in every part of a UNION and in the query
// an EXPLAIN analyses. Refusals name the authenticated user, not the
// engine's own "default".
func TestReadStatementsOnTheEngine(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	w, r := &ch.Writer, &ch.Reader
	url := "url('http://127.0.0.1:1/x', 'CSV', 'a String')"
	tests := []struct {
		name  string
		call  httpCall
		code  string // X-ClickHouse-Exception-Code, "" for success
		body  string // exact body on success, a substring on error
		never string // must not appear in the body
	}{
		{name: "EXPLAIN SYNTAX", call: httpCall{user: r, body: "EXPLAIN SYNTAX SELECT 1"}, body: "SELECT 1\nFROM system.one\n"},
		{name: "EXPLAIN SYNTAX keeps the query's own settings", call: httpCall{user: r, body: "EXPLAIN SYNTAX SELECT 1 SETTINGS max_threads = 1"},
			body: "SELECT 1\nFROM system.one\nSETTINGS max_threads = 1\n"},
		{name: "EXPLAIN QUERY TREE", call: httpCall{user: r, body: "EXPLAIN QUERY TREE SELECT 1"}, never: "readonly"},
		{name: "EXPLAIN PLAN", call: httpCall{user: r, body: "EXPLAIN PLAN SELECT 1"}, never: "readonly"},
		{name: "EXPLAIN with a FORMAT", call: httpCall{user: r, body: "EXPLAIN SYNTAX SELECT 1 FORMAT JSONEachRow"}, body: "{\"explain\":\"SELECT 1\"}\n{\"explain\":\"FROM system.one\"}\n"},
		{name: "EXPLAIN with default_format", call: httpCall{user: r, query: q("default_format", "CSV"), body: "EXPLAIN SYNTAX SELECT 1"}, body: "\"SELECT 1\"\n\"FROM system.one\"\n"},
		{name: "SHOW SETTINGS", call: httpCall{user: r, body: "SHOW SETTINGS LIKE 'max_block_size'"}, body: "max_block_size\tNonZeroUInt64\t65409\n"},
		{name: "system.settings", call: httpCall{user: r, body: "SELECT name FROM system.settings WHERE name = 'max_block_size'"}, body: "max_block_size\n"},
		{name: "alias settings", call: httpCall{user: r, body: "SELECT 2 AS settings"}, body: "2\n"},
		{name: "count from system.settings, reader", call: httpCall{user: r, body: "SELECT count() > 100 FROM system.settings"}, body: "1\n"},
		{name: "count from system.settings, writer", call: httpCall{user: w, body: "SELECT count() > 100 FROM system.settings"}, body: "1\n"},
		{name: "order by a column named format", call: httpCall{user: w, body: "SELECT number AS format FROM numbers(3) ORDER BY format DESC"}, body: "2\n1\n0\n"},
		{name: "columns named settings and format", call: httpCall{user: r, body: "SELECT settings, format FROM (SELECT 1 AS settings, 2 AS format) WHERE settings = 1 ORDER BY format DESC SETTINGS max_threads = 1"}, body: "1\t2\n"},
		{name: "a dangling operand keyword leaves a syntax error, not a bypass", call: httpCall{user: r, body: "SELECT * FROM " + url + " WHERE 1 AND"},
			code: "62", body: "Syntax error"},
		{name: "DESCRIBE", call: httpCall{user: r, body: "DESCRIBE (SELECT 1 AS x)"}, body: "x\tUInt8\t\t\t\t\t\n"},
		{name: "WITH … SELECT", call: httpCall{user: r, body: "WITH 3 AS x SELECT x"}, body: "3\n"},
		{name: "settings of the query apply", call: httpCall{user: r, body: "SELECT getSetting('max_threads'), getSetting('readonly') SETTINGS max_threads = 1"}, body: "1\t1\n"},
		{name: "union with settings in the middle", call: httpCall{user: r, body: "SELECT 1 SETTINGS max_threads = 1 UNION ALL SELECT 2 ORDER BY 1"}, body: "1\n2\n"},

		{name: "table function refused, naming the reader", call: httpCall{user: r, body: "SELECT * FROM " + url},
			code: "164", body: "DB::Exception: " + r.Name + ": Cannot execute query in readonly mode (user " + r.Name + " is read-only)", never: "default"},
		{name: "in any part of a union", call: httpCall{user: r, body: "SELECT '1' SETTINGS max_threads = 1 UNION ALL SELECT * FROM " + url},
			code: "164", body: r.Name + ": Cannot execute query in readonly mode", never: "default"},
		{name: "and in the query EXPLAIN analyses", call: httpCall{user: r, body: "EXPLAIN PLAN SELECT * FROM " + url},
			code: "164", body: r.Name + ": Cannot execute query in readonly mode", never: "default"},
		{name: "the writer's reads are read-only too, and say why", call: httpCall{user: w, body: "SELECT * FROM " + url},
			code: "164", body: w.Name + ": Cannot execute query in readonly mode (auditq serve runs every read statement with readonly=1", never: "default"},
		{name: "the reader cannot lift readonly", call: httpCall{user: r, body: "SELECT 1 SETTINGS readonly = 0"}, code: "164", body: "readonly", never: "default:"},
		{name: "server refusals name the user", call: httpCall{user: r, body: "DROP TABLE t"}, code: "164", body: "user " + r.Name + " is read-only"},
	}
	t.Run("clickhouse-go (Native)", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn := open(t, ch.ReaderDSN)
		for sql, want := range map[string][]string{
			"EXPLAIN SYNTAX SELECT 1":                                        {"SELECT 1", "FROM system.one"},
			"SHOW TABLES FROM system LIKE 'one'":                             {"one"},
			"SELECT name FROM system.settings WHERE name = 'max_block_size'": {"max_block_size"},
		} {
			rows, err := conn.Query(ctx, sql)
			require.NoError(t, err, sql)
			var got []string
			for rows.Next() {
				var v string
				require.NoError(t, rows.Scan(&v), sql)
				got = append(got, v)
			}
			require.NoError(t, rows.Err(), sql)
			rows.Close()
			assert.Equal(t, want, got, sql)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := do(t, ch, tt.call)
			assert.Equal(t, tt.code, got.code, got.body)
			if tt.code == "" {
				assert.Equal(t, http.StatusOK, got.status, got.body)
				if tt.body != "" {
					assert.Equal(t, tt.body, got.body)
				}
			} else {
				assert.Contains(t, got.body, tt.body)
			}
			if tt.never != "" {
				assert.NotContains(t, got.body, tt.never)
			}
		})
	}
}

// TestReadOnlyHoldsForAnyText: whatever text the read-only user sends —
// heredocs ($$…$$, $t$…$t$, a tag with a quote in it), line comments of
// every kind (--, //, "# ", "#!"), nested block comments, quotes left
// open, backslashes, UTF-8 spaces, SETTINGS and FORMAT clauses anywhere —
// the engine either refuses it or runs it with readonly = 1: no answer
// carries getSetting('readonly') = 0 and no table function is reached (a
// refused connection would mean url() ran). It holds the statement lexer
// to the engine's own: where they split the text differently, the
// readonly = 1 that the server appends can land inside what the engine
// reads as a comment or a string (the red team's heredoc, session 13,
// is the first example below).
func TestReadOnlyHoldsForAnyText(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	r := &ch.Reader
	url := "url('http://127.0.0.1:1/x', 'CSV', 'a String')"
	send := func(t require.TestingT, body string) (int, string, string) {
		req, err := http.NewRequest(http.MethodPost, ch.URL+"/", strings.NewReader(body))
		require.NoError(t, err)
		req.SetBasicAuth(r.Name, r.Password)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header.Get("X-ClickHouse-Exception-Code"), string(b)
	}
	check := func(t require.TestingT, body string) {
		status, code, answer := send(t, body)
		require.NotEqual(t, "1001", code, "url() ran for %q: %s", body, answer)
		require.NotContains(t, answer, "root:", "a server file for %q", body)
		if status == http.StatusOK {
			for _, f := range strings.FieldsFunc(answer, func(c rune) bool { return c == '\t' || c == '\n' }) {
				require.NotEqual(t, "0", f, "readonly = 0 for %q: %q", body, answer)
			}
		}
	}
	for _, body := range []string{
		"SELECT $$ ' $$ AS a, getSetting('readonly') -- '",
		"SELECT $$ ' $$ AS a, * FROM " + url + " -- '",
		"SELECT $t$ ' $t$ AS a, getSetting('readonly') -- '",
		"SELECT $ ' $, getSetting('readonly') -- ' $ ' $",
		"SELECT getSetting('readonly') //",
		"SELECT getSetting('readonly') # ",
		"SELECT getSetting('readonly') #!",
		"SELECT getSetting('readonly') /* /* */",
		"SELECT 1 /* /* */ , getSetting('readonly') */",
		"SELECT getSetting('readonly')\u00a0--",
		"SELECT getSetting('readonly') FORMAT\u00a0TSV",
		"SELECT * FROM " + url + " //",
		// A subquery's own SETTINGS clause (red team, session 13: the
		// engine applied readonly = 0 there and read /etc/passwd).
		"SELECT * FROM (SELECT getSetting('readonly') SETTINGS readonly = 0)",
		"SELECT * FROM (SELECT * FROM file('/etc/passwd', 'LineAsString') SETTINGS readonly = 0) LIMIT 1",
		"SELECT (SELECT any(line) FROM file('/etc/passwd', 'LineAsString') SETTINGS readonly = 0)",
		"WITH x AS (SELECT getSetting('readonly') SETTINGS readonly = 0) SELECT * FROM x",
		"SELECT 1 WHERE 0 IN (SELECT getSetting('readonly') SETTINGS `readonly` = 0)",
	} {
		check(t, body)
	}
	fragments := []string{"'", `"`, "`", "$$", "$t$", "$ ' $", "$", "--", "//", "#", "# ", "#!", "/*", "*/", "\n", `\`, " ", ",",
		"getSetting('readonly')", "* FROM " + url, "SETTINGS", "readonly = 1", "max_threads = 1", "FORMAT", "TSV", "\u00a0", "\u2028",
		";", "x", "1e", "-", "AS", "(", ")", "UNION ALL SELECT", "max_threads = $$1$$", "x'", "0x"}
	for range 5 { // 500 texts, about half a second; 20,000 passed once
		rapid.Check(t, func(rt *rapid.T) {
			parts := rapid.SliceOfN(rapid.SampledFrom(fragments), 1, 12).Draw(rt, "fragments")
			check(rt, "SELECT getSetting('readonly') AS r "+strings.Join(parts, " "))
			check(rt, "SELECT getSetting('readonly') AS r "+strings.Join(parts, ""))
		})
	}
}

// TestSettingsThatChangeTheParserAreRefused: a URL setting that changes
// how the engine reads text — the dialect, its experimental switches, the
// parser's limits, implicit SELECTs — or the defaults beyond what a reset
// undoes (compatibility, profile), and a path the engine reads a format's
// template or schema from (in the URL or a SETTINGS clause), is refused
// for every user with SETTING_CONSTRAINT_VIOLATION. With ?dialect=kusto the read-only user's
// "(SELECT …) | take 1" ran without the appended readonly = 1 (KQL drops
// it) and read a server file; with ?dialect=prql or a max_query_size of
// 1 the session could not run the SET that resets it, and every later
// request on it, the writer's ingestion too, failed (red team, session
// 13). After every refusal both sessions still answer the writer.
func TestSettingsThatChangeTheParserAreRefused(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	for _, tt := range []struct {
		params url.Values
		body   string
	}{
		{q("dialect", "kusto", "allow_experimental_kusto_dialect", "1"), "(SELECT getSetting('readonly') AS r) | take 1"},
		{q("dialect", "kusto", "allow_experimental_kusto_dialect", "1"), "(SELECT * FROM file('/etc/hostname', 'LineAsString')) | take 1"},
		{q("dialect", "kusto"), "SELECT 1"},
		{q("dialect", "prql"), "SELECT 1"},
		{q("allow_experimental_prql_dialect", "1"), "SELECT 1"},
		{q("Dialect", "kusto"), "SELECT 1"},
		{q("max_query_size", "1"), "SELECT 1"},
		{q("max_parser_depth", "1"), "SELECT 1"},
		{q("implicit_select", "1"), "getSetting('readonly')"},
		// Defaults a reset does not undo (compatibility=1.1 left 540
		// changed settings and the analyzer off on the session), and
		// paths the engine reads (a template row of /etc/passwd came back
		// whole in the error message; red team, session 13).
		{q("compatibility", "1.1"), "SELECT 1"},
		{q("profile", "default"), "SELECT 1"},
		{q("format_template_row", "/etc/passwd"), "SELECT 1 AS x FORMAT Template"},
		{q("format_template_resultset", "/etc/passwd"), "SELECT 1 AS x FORMAT Template"},
		{q("format_template_row", "/etc/passwd", "default_format", "Template"), "SELECT 1 AS x"},
		{q("format_schema", "/etc/passwd:Msg"), "SELECT 1 AS x FORMAT Protobuf"},
		{nil, "SELECT 1 AS x FORMAT Template SETTINGS format_template_row = '/etc/passwd'"},
		{nil, "SELECT 1 AS x SETTINGS max_threads = 1, `format_template_row` = '/etc/passwd' FORMAT Template"},
		{nil, "SELECT 1 AS x FORMAT Template SETTINGS max_threads = 1, FORMAT_TEMPLATE_RESULTSET = '/etc/passwd'"},
	} {
		for _, u := range []*testenv.ClickHouseUser{&ch.Reader, &ch.Writer} {
			got := do(t, ch, httpCall{user: u, query: tt.params, body: tt.body})
			assert.Equal(t, "452", got.code, "%s %v %q: %d %q", u.Name, tt.params, tt.body, got.status, got.body)
			assert.Contains(t, got.body, "should not be changed")
			assert.NotContains(t, got.body, "root:", "a server file in the answer")
		}
	}
	probe := "SELECT count() FROM system.settings WHERE changed"
	want := do(t, ch, httpCall{user: &ch.Writer, body: probe}).body
	for range 6 {
		got := do(t, ch, httpCall{user: &ch.Writer, body: "SELECT 1"})
		require.Equal(t, "1\n", got.body, "a session was left unusable")
		require.Equal(t, want, do(t, ch, httpCall{user: &ch.Writer, body: probe}).body, "a session was left with other settings")
	}
	// Other settings still pass, for the reader too.
	got := do(t, ch, httpCall{user: &ch.Reader, query: q("max_threads", "1"), body: "SELECT getSetting('max_threads'), getSetting('readonly')"})
	assert.Equal(t, "1\t1\n", got.body)
}
