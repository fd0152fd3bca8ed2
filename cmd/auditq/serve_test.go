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
