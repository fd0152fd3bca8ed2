package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// migrate --status after migrate --retention (or --cluster-free runs with
// other options) reports the steps applied, as migrate itself does.
func TestMigrateStatusAfterRetention(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	writer := []string{"--dsn", env.WriterDSN, "--database", "ret"}
	var out bytes.Buffer
	code, stderr := execAuditq(t, ctx, &out, append([]string{"migrate", "--retention", "365d"}, writer...)...)
	require.Equal(t, 0, code, stderr)
	ms, err := audit.Migrations()
	require.NoError(t, err)

	for _, args := range [][]string{
		{"migrate", "--retention", "365d"},
		{"migrate"},
	} {
		out.Reset()
		code, stderr = execAuditq(t, ctx, &out, append(args, writer...)...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, out.String(), "schema is up to date")
		for _, status := range [][]string{append(args, "--status"), {"migrate", "--status", "--retention", "30d"}} {
			out.Reset()
			code, stderr = execAuditq(t, ctx, &out, append(status, writer...)...)
			require.Equal(t, 0, code, stderr)
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			require.Len(t, lines, 1+len(ms), out.String())
			for _, l := range lines[1:] {
				f := strings.Fields(l)
				assert.Equal(t, []string{"applied"}, f[2:], "%v: %s", status, l)
			}
		}
	}
}
