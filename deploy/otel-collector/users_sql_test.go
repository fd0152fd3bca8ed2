package otelcollector_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/internal/testenv"
)

// usersSQL returns the statements of docs/deployment.md's "Users on a
// ClickHouse server (SQL)" block, comments removed.
func usersSQL(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/deployment.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "### Users on a ClickHouse server (SQL)")
	require.True(t, ok, "docs/deployment.md has the users SQL section")
	m := regexp.MustCompile("(?s)```sql\n(.*?)```").FindStringSubmatch(section)
	require.NotNil(t, m, "the section has an sql block")
	var lines []string
	for _, l := range strings.Split(m[1], "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			lines = append(lines, l)
		}
	}
	var stmts []string
	for _, s := range strings.Split(strings.Join(lines, "\n"), ";") {
		if s = strings.TrimSpace(s); s != "" {
			stmts = append(stmts, s)
		}
	}
	return stmts
}

// TestClickHouseUsersSQLParses: each statement of the documented users SQL
// is valid ClickHouse syntax — ClickHouse's own parser (formatQuery, in the
// embedded engine) accepts it — and the SQL grants what the compose users
// file grants. chDB has no access control, so the statements' effect is
// not tested here.
func TestClickHouseUsersSQLParses(t *testing.T) {
	stmts := usersSQL(t)
	require.Len(t, stmts, 7)
	all := strings.Join(stmts, "\n")
	for _, want := range []string{"IDENTIFIED WITH sha256_password", "readonly = 1", "GRANT SELECT, SHOW TABLES ON otel.* TO reader",
		"GRANT INSERT, SELECT ON otel.* TO writer", "CREATE TABLE, CREATE VIEW", "ALTER VIEW MODIFY QUERY"} {
		assert.Contains(t, all, want)
	}

	ch := testenv.StartClickHouse(t)
	ctx := context.Background()
	r, err := audit.Open(ctx, ch.ReaderDSN)
	require.NoError(t, err)
	defer r.Close()
	for _, s := range append(stmts, "CREATE USER broken IDENTIFIED WITH sha256_pasword BY 'x'") {
		s = strings.Join(strings.Fields(s), " ") // one line, for the log
		var formatted string
		qctx := new(audit.Params).String("q", s).Context(ctx)
		err := r.Conn().QueryRow(qctx, "SELECT formatQuery({q:String})").Scan(&formatted)
		if strings.Contains(s, "broken") {
			assert.Error(t, err, "the parser rejects a misspelt statement (so the check can fail)")
			continue
		}
		assert.NoError(t, err, "ClickHouse does not parse: %s", s)
		t.Logf("%s", formatted)
	}
}
