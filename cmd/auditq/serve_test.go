package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestServeUsage checks serve's refusals before anything is loaded: bad
// usage exits 2, a missing libchdb exits 1 with installation advice.
func TestServeUsage(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libchdb.so")
	tests := []struct {
		name     string
		users    string
		args     []string
		wantCode int
		wantErr  string
	}{
		{name: "no data dir", users: "w:p:rw", args: []string{"serve"}, wantCode: 2, wantErr: "--data-dir is required"},
		{name: "no users and no anonymous", args: []string{"serve", "--data-dir", t.TempDir()}, wantCode: 2, wantErr: "AUDITQ_SERVE_USERS"},
		{name: "bad user list", users: "w:p:admin", args: []string{"serve", "--data-dir", t.TempDir()}, wantCode: 2, wantErr: `role "admin"`},
		{name: "missing libchdb", users: "w:p:rw", args: []string{"serve", "--data-dir", t.TempDir(), "--libchdb", missing}, wantCode: 1, wantErr: "make deps"},
		{name: "missing libchdb, anonymous", args: []string{"serve", "--data-dir", t.TempDir(), "--libchdb", missing, "--allow-anonymous"}, wantCode: 1, wantErr: "scripts/install-libchdb.sh"},
		// Loopback-safe by default: refused before anything is loaded or bound.
		{name: "anonymous on every interface", args: []string{"serve", "--data-dir", t.TempDir(), "--libchdb", missing, "--allow-anonymous", "--listen", "0.0.0.0:0"}, wantCode: 2, wantErr: "anonymous access (--allow-anonymous) is allowed on a loopback address only"},
		{name: "anonymous on every interface, empty host", users: "w:p:rw", args: []string{"serve", "--data-dir", t.TempDir(), "--libchdb", missing, "--allow-anonymous", "--listen", ":0", "--insecure-plaintext-passwords"}, wantCode: 2, wantErr: "loopback address only"},
		{name: "anonymous on IPv6 any, even with TLS flags", args: []string{"serve", "--data-dir", t.TempDir(), "--libchdb", missing, "--allow-anonymous", "--listen", "[::]:0", "--tls-cert", missing, "--tls-key", missing}, wantCode: 2, wantErr: "loopback address only"},
		{name: "users on the network without TLS", users: "w:p:rw", args: []string{"serve", "--data-dir", t.TempDir(), "--libchdb", missing, "--listen", "0.0.0.0:0"}, wantCode: 2, wantErr: "need TLS, or their passwords cross the network in plain HTTP: pass --tls-cert FILE --tls-key FILE"},
		{name: "users on the network, explicit plaintext opt-in", users: "w:p:rw", args: []string{"serve", "--data-dir", t.TempDir(), "--libchdb", missing, "--listen", "0.0.0.0:0", "--insecure-plaintext-passwords"}, wantCode: 1, wantErr: "make deps"},
		{name: "tls cert without key", users: "w:p:rw", args: []string{"serve", "--data-dir", t.TempDir(), "--libchdb", missing, "--tls-cert", missing}, wantCode: 2, wantErr: "--tls-cert and --tls-key go together"},
		{name: "tls files missing", users: "w:p:rw", args: []string{"serve", "--data-dir", t.TempDir(), "--libchdb", missing, "--listen", "0.0.0.0:0", "--tls-cert", missing, "--tls-key", missing}, wantCode: 2, wantErr: "want a PEM certificate chain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(serveUsersEnv, tt.users)
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, stdio{in: &bytes.Buffer{}, out: &out, err: &errb})
			assert.Equal(t, tt.wantCode, code, errb.String())
			assert.Contains(t, errb.String(), tt.wantErr)
		})
	}
}
