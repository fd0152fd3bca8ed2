package audit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
)

// TestOpenNamesTheFix points DSNs at real servers that speak another
// protocol than the DSN asks for (Go HTTP and HTTPS servers that are not
// ClickHouse) and at addresses without a port: each error is typed and
// names the fix, and comes back before the driver's 30 s read timeout (the
// context's 10 s deadline would otherwise end it with a timeout instead).
func TestOpenNamesTheFix(t *testing.T) {
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	plainAddr := strings.TrimPrefix(plain.URL, "http://")
	tlsAddr := strings.TrimPrefix(tlsSrv.URL, "https://")

	tests := []struct {
		name   string
		dsn    string
		server string // ProtocolError.Server contains
		fix    string // the error contains
		badDSN bool
	}{
		{name: "native at a plain HTTP server", dsn: "clickhouse://u:secret@" + plainAddr, server: "an HTTP server that is not ClickHouse", fix: "ClickHouse's native protocol is usually on 9000"},
		{name: "native at an HTTPS server", dsn: "clickhouse://u:secret@" + tlsAddr, server: "an HTTPS server", fix: "use an https:// DSN, https://u:xxxxx@" + tlsAddr + "?secure=true"},
		{name: "http at a server that is not ClickHouse", dsn: "http://u:secret@" + plainAddr, server: "not ClickHouse (GET /ping: HTTP/1.0 404 Not Found)", fix: "usually on 8123"},
		{name: "http at an HTTPS server", dsn: "http://u:secret@" + tlsAddr, server: "an HTTPS server", fix: "use an https:// DSN, https://u:xxxxx@" + tlsAddr + "?secure=true"},
		{name: "https at a plain server", dsn: "https://u:secret@" + plainAddr + "?secure=true", server: "a plain-HTTP server (no TLS)", fix: "use an http:// DSN without secure=true, http://u:xxxxx@" + plainAddr},
		{name: "https at an untrusted certificate", dsn: "https://u:secret@" + tlsAddr + "?secure=true", server: "does not trust", fix: "SSL_CERT_FILE"},
		{name: "native without a port", dsn: "clickhouse://u:secret@127.0.0.1", badDSN: true, fix: `address "127.0.0.1" has no port`},
		{name: "http without a port", dsn: "http://u:secret@localhost", badDSN: true, fix: "http://u:xxxxx@localhost:8123"},
		{name: "https without secure", dsn: "https://u:secret@" + tlsAddr, badDSN: true, fix: "needs secure=true, e.g. https://u:xxxxx@" + tlsAddr + "?secure=true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st, err := audit.Open(ctx, tt.dsn)
			if st != nil {
				st.Close()
			}
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "secret", "the password is redacted")
			assert.Contains(t, err.Error(), tt.fix)
			assert.False(t, errors.Is(err, context.DeadlineExceeded), "found by the probe, not by a timeout: %v", err)
			if tt.badDSN {
				assert.ErrorIs(t, err, audit.ErrBadDSN)
				return
			}
			var pe *audit.ProtocolError
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, pe.Server, tt.server)
			assert.Contains(t, pe.Fix, tt.fix)
		})
	}
}

// TestOpenNothingListens: nothing listens: an *UnreachableError at once.
func TestOpenNothingListens(t *testing.T) {
	for _, dsn := range []string{"clickhouse://127.0.0.1:1", "http://127.0.0.1:1"} {
		_, err := audit.Open(context.Background(), dsn)
		var ue *audit.UnreachableError
		require.ErrorAs(t, err, &ue, dsn)
		assert.Equal(t, "127.0.0.1:1", ue.Addr)
	}
}
