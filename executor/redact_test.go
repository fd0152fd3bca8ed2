package executor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/executor"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"ls -la", "ls -la"},
		{"", ""},
		{`curl -H "Authorization: Bearer abcdefgh12345678" https://api`, `curl -H "Authorization: Bearer [REDACTED]" https://api`},
		{"export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123", "export GITHUB_TOKEN=[REDACTED]"},
		{"echo ghp_abcdefghijklmnopqrstuvwxyz0123", "echo [REDACTED]"},
		{`{"api_key": "s3cr3t-value"}`, `{"api_key": "[REDACTED]"}`},
		{"mysql --password=hunter2 db", "mysql --password=[REDACTED] db"},
		{"psql --password hunter2", "psql --password [REDACTED]"},
		{"git clone https://user:p4ss@github.com/x.git", "git clone https://user:[REDACTED]@github.com/x.git"},
		{"key AKIAABCDEFGHIJKLMNOP", "key [REDACTED]"},
		{"OPENAI sk-proj-abcdefghijklmnopqrstuv", "OPENAI [REDACTED]"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmn", "jwt [REDACTED]"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "[REDACTED]"},
		{"password: hunter2 and token=abc", "password: [REDACTED] and token=[REDACTED]"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			assert.Equal(t, tc.want, executor.Redact(tc.in))
		})
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("token=abc Authorization: Bearer xyzxyzxyzxyz")
	f.Add("-----BEGIN PRIVATE KEY-----")
	f.Fuzz(func(t *testing.T, s string) {
		out := executor.Redact(s)
		if executor.Redact(out) != out {
			t.Fatalf("redaction is not idempotent: %q -> %q -> %q", s, out, executor.Redact(out))
		}
	})
}
