package policy_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/policy"
)

func TestMCPSection(t *testing.T) {
	dir := t.TempDir()
	p, err := policy.Parse([]byte(`version: 1
mcp:
  listen: 127.0.0.1:8931
  call_timeout: 5s
  upstreams:
    - name: fs
      command: [npx, -y, "@modelcontextprotocol/server-filesystem", ./work]
      roots: [./work]
      hide: ["move_*"]
      tools:
        - match: search_files
          kind: deny
          reason: no searching
    - name: remote
      url: http://127.0.0.1:9000/mcp
      trusted: true
`), dir)
	require.NoError(t, err)
	require.Len(t, p.MCP.Upstreams, 2)
	fs := p.MCP.Upstreams[0]
	require.Equal(t, []string{filepath.Join(dir, "work")}, fs.Roots, "roots are absolute after load")
	require.Equal(t, policy.KindDeny, fs.Tools[0].Kind)
	require.True(t, p.MCP.Upstreams[1].Trusted)
	d, err := p.MCP.Timeout()
	require.NoError(t, err)
	require.Equal(t, 5*time.Second, d)
	require.Equal(t, "127.0.0.1:8931", p.MCP.Listen)

	d, err = policy.MCP{}.Timeout()
	require.NoError(t, err)
	require.Equal(t, policy.DefaultCallTimeout, d)
	for _, bad := range []string{"soon", "-1s", "0"} {
		_, err := policy.MCP{CallTimeout: bad}.Timeout()
		require.ErrorIs(t, err, policy.ErrPolicy, bad)
	}

	// Unknown keys and bad kinds in an upstream's rules are file errors.
	_, err = policy.Parse([]byte("version: 1\nmcp:\n  upstreams:\n    - name: fs\n      comand: [x]\n"), dir)
	require.ErrorIs(t, err, policy.ErrPolicy)
	_, err = policy.Parse([]byte("version: 1\nmcp:\n  upstreams:\n    - name: fs\n      command: [x]\n      tools:\n        - match: a\n          kind: explode\n"), dir)
	require.ErrorIs(t, err, policy.ErrPolicy)
}
