package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// `toolgate mcp` refuses a configuration it cannot serve with exit 2 and a
// message naming the problem, before it connects to anything.
func TestMCPCmdUsageErrors(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	t.Setenv("TOOLGATE_POLICY", "")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	for _, c := range []struct {
		name, policy, want string
		args               []string
	}{
		{"no upstreams", "version: 1\n", "no mcp.upstreams", nil},
		{"bad timeout", "version: 1\nmcp:\n  call_timeout: soon\n  upstreams:\n    - name: fs\n      command: [x]\n", "call_timeout", nil},
		{"bad name", "version: 1\nmcp:\n  upstreams:\n    - name: \"has space\"\n      command: [x]\n", "upstream name", nil},
		{"command and url", "version: 1\nmcp:\n  upstreams:\n    - name: fs\n      command: [x]\n      url: http://127.0.0.1:1/mcp\n", "both command and url", nil},
		{"not loopback", "version: 1\nmcp:\n  upstreams:\n    - name: fs\n      command: [" + filepath.Join(dir, "none") + "]\n", "not loopback", []string{"--listen", "0.0.0.0:0"}},
		{"unknown key", "version: 1\nmcp:\n  upstream: []\n", "upstream", nil},
		{"no workspace in /", "version: 1\nmcp:\n  upstreams:\n    - name: fs\n      command: [x]\n", "set workspace:", []string{"--chdir", "/"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			pol := write(strings.ReplaceAll(strings.ReplaceAll(c.name, " ", "_"), "/", "root")+".yaml", c.policy)
			extra := c.args
			if len(extra) == 2 && extra[0] == "--chdir" {
				t.Chdir(extra[1])
				extra = nil
			}
			args := append([]string{"mcp", "--quiet", "--policy", pol}, extra...)
			code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
			require.Equal(t, 2, code, "stderr: %s", errb.String())
			require.Contains(t, errb.String(), c.want)
			require.Empty(t, out.String(), "nothing on stdout (the protocol stream)")
		})
	}
}
