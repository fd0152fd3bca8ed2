package classify_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

func TestPath(t *testing.T) {
	const ws = "/work/app"
	tests := []struct {
		op   classify.Op
		path string
		ws   string
		want gate.RiskLevel
		rule string
	}{
		{classify.OpRead, "src/main.go", ws, S, ""},
		{classify.OpRead, "/work/app/src/main.go", ws, S, ""},
		{classify.OpRead, "/etc/passwd", ws, S, ""},
		{classify.OpRead, ".env", ws, H, "path.dotenv"},
		{classify.OpRead, "/work/app/config/.env.production", ws, H, ""},
		{classify.OpRead, ".env.example", ws, S, ""},
		{classify.OpRead, "~/.ssh/id_rsa", ws, H, "path.ssh-private-key"},
		{classify.OpRead, "~/.ssh/id_rsa.pub", ws, S, ""},
		{classify.OpRead, "/home/dev/.aws/credentials", ws, H, "path.cloud-credentials"}, // home rules hold below every home
		{classify.OpRead, "/root/.kube/config", ws, H, ""},
		// Letter case: macOS and Windows open ~/.SSH/ID_RSA as ~/.ssh/id_rsa.
		{classify.OpRead, "~/.SSH/ID_RSA", ws, H, "path.ssh-private-key"},
		{classify.OpRead, "/Users/dev/.AWS/Credentials", ws, H, "path.cloud-credentials"},
		{classify.OpWrite, "/ETC/passwd", ws, H, ""},
		// A search reads the whole tree below its path; a "**" read too.
		{classify.OpSearch, "/etc", ws, H, ""},
		{classify.OpSearch, "/", ws, H, ""},
		{classify.OpSearch, "~", ws, H, ""},
		{classify.OpSearch, "/root", ws, H, "path.ssh-private-key"},
		{classify.OpSearch, "/home", ws, H, "path.ssh-private-key"},
		{classify.OpSearch, "~/.config", ws, H, ""},
		{classify.OpSearch, "src", ws, S, ""},
		{classify.OpSearch, "/work/app", ws, S, ""},
		{classify.OpSearch, "/usr/share/doc", ws, S, ""},
		{classify.OpSearch, "~/.ssh/id_rsa", ws, H, "path.ssh-private-key"},
		{classify.OpRead, "~/**", ws, H, ""},
		{classify.OpRead, "/etc/**/*.conf", ws, H, ""},
		{classify.OpRead, "src/**/*.go", ws, S, ""},
		{classify.OpRead, "/etc", ws, S, ""}, // a listing: names, not contents
		{classify.OpRead, "/Users/ann/.ssh/id_ed25519", ws, H, ""},
		{classify.OpRead, "/home/dev/notes.txt", ws, S, ""},
		{classify.OpRead, "/home/project", ws, S, ""}, // a home directory as a whole is not the "~" rule
		{classify.OpRead, "/proc/self/environ", ws, H, ""},
		{classify.OpRead, "/etc/shadow", ws, H, ""},
		{classify.OpRead, "src/../../../etc/shadow", ws, H, ""},
		{classify.OpRead, "/work/app/./keys/server.key", ws, H, ""},
		{classify.OpRead, "~/.bash_history", ws, R, ""},
		{classify.OpWrite, "src/main.go", ws, R, "path.write-workspace"},
		{classify.OpWrite, "/work/app/README.md", ws, R, ""},
		{classify.OpWrite, "/tmp/scratch.txt", ws, R, "path.write-temp"},
		{classify.OpWrite, "/work/other/x", ws, R, "path.write-outside"},
		{classify.OpWrite, "../x", ws, R, "path.write-outside"},
		{classify.OpWrite, "~/.bashrc", ws, H, "path.shell-rc"},
		{classify.OpWrite, "/work/app/../../home/u/.bashrc", ws, H, "path.shell-rc"},
		{classify.OpWrite, "~/.ssh/authorized_keys", ws, H, ""},
		{classify.OpWrite, ".git/hooks/pre-commit", ws, H, "path.git-hooks"},
		{classify.OpWrite, "/work/app/.git/config", ws, H, ""},
		{classify.OpWrite, "/etc/cron.d/job", ws, H, "path.etc"},
		{classify.OpWrite, "/dev/sda", ws, H, "path.device"},
		{classify.OpWrite, "/dev/null", ws, S, ""},
		{classify.OpWrite, ".env", ws, H, ""},
		{classify.OpWrite, "$HOME/.bashrc", ws, R, "path.dynamic"},
		{classify.OpDelete, "build/out.o", ws, R, ""},
		{classify.OpDelete, ".", ws, H, "path.delete-root"},
		{classify.OpDelete, "/work/app", ws, H, ""},
		{classify.OpDelete, "/", ws, H, ""},
		{classify.OpDelete, "~", ws, H, ""},
		{classify.OpDelete, "/tmp", ws, H, ""},
		{classify.OpDelete, "..", ws, H, ""},
		{classify.OpDelete, "/work", ws, H, ""},
		{classify.OpDelete, ".git", ws, H, ""},
		{classify.OpDelete, "/home/alice", ws, H, "path.delete-root"},
		{classify.OpDelete, "/root", ws, H, "path.delete-root"},
		{classify.OpDelete, "~/.ssh/id_rsa", ws, H, "path.ssh-private-key"},
		// Globs are judged by what they could match (a file tool may expand them).
		{classify.OpRead, "~/.ssh/*", ws, H, "path.ssh-private-key"},
		{classify.OpRead, "~/.aws/cred*", ws, H, ""},
		{classify.OpRead, "/etc/ssl/private/*", ws, H, "path.private-key"},
		{classify.OpRead, "src/*.go", ws, S, ""},
		{classify.OpWrite, "~/.ssh/*", ws, H, ""},
		{classify.OpWrite, "/etc/cron.d/*", ws, H, "path.etc"},
		{classify.OpRead, "", ws, R, "path.invalid"},
		{classify.OpRead, "a\x00b", ws, R, ""},
		{classify.Op("chmod"), "x", ws, H, "path.unknown-op"},
		// No workspace: relative paths are inside it, absolute ones outside.
		{classify.OpWrite, "notes.md", "", R, "path.write-workspace"},
		{classify.OpWrite, "/srv/x", "", R, "path.write-outside"},
		{classify.OpDelete, ".", "", H, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.op)+" "+tt.path, func(t *testing.T) {
			r := classify.Path(tt.op, tt.path, tt.ws)
			assert.Equal(t, tt.want, r.Level, r.Reason)
			if tt.rule != "" {
				var rules []string
				for _, f := range r.Findings {
					rules = append(rules, f.Rule)
				}
				assert.Contains(t, rules, tt.rule)
			}
		})
	}
}

func TestPathHomeAndStrictReads(t *testing.T) {
	c, err := classify.New(classify.WithWorkspace("/home/dev/app"), classify.WithHome("/home/dev"), classify.WithStrictReads(true))
	assert.NoError(t, err)
	assert.Equal(t, H, c.Path(classify.OpRead, "/home/dev/.aws/credentials").Level)
	assert.Equal(t, H, c.Path(classify.OpWrite, "../.bashrc").Level)
	assert.Equal(t, R, c.Path(classify.OpRead, "/opt/data.csv").Level, "strict reads: outside the workspace")
	assert.Equal(t, S, c.Path(classify.OpRead, "src/x.go").Level)
	assert.Equal(t, H, c.Bash("cat /home/dev/.ssh/id_ed25519").Level)
	assert.Equal(t, H, c.Bash("rm -rf /home/dev").Level)
	assert.Equal(t, R, c.Bash("rm -rf /home/dev/app/build").Level, "absolute path inside the workspace")
	assert.Equal(t, H, c.Bash("rm -rf /home/dev/app").Level, "the workspace itself")
}

func TestScopedWrites(t *testing.T) {
	runBashCases(t, []bashCase{
		{"echo x > notes.md", S, ""},
		{"cat > test.py <<'EOF'\nprint(1)\nEOF", S, ""},
		{"sed -i 's/a/b/' src/x.py", S, ""},
		{"cp a.py a.py.bak", S, ""},
		{"touch /tmp/marker", S, ""},
		{"echo x > ~/notes", R, "write.outside"},
		{"echo x > .git/hooks/pre-commit", H, ""},
		{"echo x >> ~/.bashrc", H, ""},
		{"rm -rf build", R, ""},
		{"python3 x.py", R, ""},
	}, classify.WithScopedWrites(gate.RiskSafe))
}

// TestPathDeleteReason: a delete's reason says "deletes", not "writes".
func TestPathDeleteReason(t *testing.T) {
	for _, p := range []string{"~/.ssh/id_rsa", ".env", "~/.bashrc", "/etc/hosts"} {
		t.Run(p, func(t *testing.T) {
			r := classify.Path(classify.OpDelete, p, "/work/app")
			assert.Equal(t, H, r.Level)
			assert.Contains(t, r.Reason, "deletes")
			assert.NotContains(t, r.Reason, "writes")
		})
	}
}
