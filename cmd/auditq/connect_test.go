package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestConnectErrorsNameTheFix points auditq at the real embedded server
// with the wrong scheme or no port: one line on stderr that names the DSN
// to use, found by the probe (the 15 s --timeout, shorter than the native
// driver's 30 s read timeout, would otherwise end the command with a
// timeout and no fix).
func TestConnectErrorsNameTheFix(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	user, pass, addr := ch.Reader.Name, ch.Reader.Password, ch.Addr
	tests := []struct {
		name string
		dsn  string
		code int
		want string
	}{
		{"native scheme at the embedded server", "clickhouse://" + user + ":" + pass + "@" + addr,
			1, "ClickHouse's HTTP interface answers at " + addr + ": use an http:// DSN, http://reader:xxxxx@" + addr + " (the embedded server `auditq serve` speaks HTTP only)"},
		{"tcp scheme at the embedded server", "tcp://" + user + ":" + pass + "@" + addr,
			1, "use an http:// DSN, http://reader:xxxxx@" + addr},
		{"https at the plain-HTTP embedded server", "https://" + user + ":" + pass + "@" + addr + "?secure=true",
			1, "a plain-HTTP server (no TLS) answers at " + addr + ": use an http:// DSN without secure=true"},
		{"https without secure=true", "https://" + user + ":" + pass + "@" + addr,
			2, "a clickhouse-go https:// DSN needs secure=true"},
		{"native without a port", "clickhouse://" + user + ":" + pass + "@127.0.0.1",
			2, "has no port; ClickHouse's HTTP interface (and the embedded server `auditq serve`) is usually on 8123"},
		// Either "the DSN asks for ClickHouse's native protocol, and the
		// embedded server speaks HTTP only", or, when some ClickHouse HTTP
		// interface answers on 127.0.0.1:8123, the http:// DSN for it.
		{"native at a closed port", "clickhouse://" + user + ":" + pass + "@127.0.0.1:1",
			1, "speaks HTTP only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var out bytes.Buffer
			code, stderr := execAuditq(t, ctx, &out, "decisions", "--timeout", "15s", "--dsn", tt.dsn)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stderr, tt.want)
			assert.NotContains(t, stderr, pass)
			assert.NotContains(t, stderr, "timeout")
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.Empty(t, out.String())
		})
	}
}
