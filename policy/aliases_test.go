package policy

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/gate"
)

// The red team's reproductions at the hooks' level (HOME=/home/u,
// workspace /home/u/proj): tilde forms, /proc and macOS aliases, reads
// below a run-time directory, dc, and the new secret paths are not
// allowed; their ordinary neighbours are.
func TestAliasesAtPolicyLevel(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	g, err := Default().GateAt("/home/u/proj", "/home/u/proj")
	require.NoError(t, err)
	notAllowed := []struct {
		tool string
		in   map[string]any
	}{
		{"Bash", map[string]any{"command": "echo x >> ~+/../.bashrc"}},
		{"Bash", map[string]any{"command": "cat ~+/../.aws/credentials"}},
		{"Bash", map[string]any{"command": "echo x > ~+/../.config/toolgate/toolgate.yaml"}},
		{"Bash", map[string]any{"command": "echo x >> ~0/../.bashrc"}},
		{"Bash", map[string]any{"command": "cat ${PWD%/*}/.aws/credentials"}},
		{"Bash", map[string]any{"command": "cat $(dirname $PWD)/.aws/credentials"}},
		{"Bash", map[string]any{"command": `cat "$(cd ..; pwd)"/.aws/credentials`}},
		{"Bash", map[string]any{"command": "cat $(realpath ..)/.aws/credentials"}},
		{"Bash", map[string]any{"command": "cat ${HOME:0}/.aws/credentials"}},
		{"Bash", map[string]any{"command": "cat ${HOME/x/y}/.aws/credentials"}},
		{"Bash", map[string]any{"command": "cat ${HOME}${x}/.aws/credentials"}},
		{"Bash", map[string]any{"command": "dc -e '!rm -r x'"}},
		{"Bash", map[string]any{"command": "dc -f FILE"}},
		{"Read", map[string]any{"file_path": "/proc/self/cwd/../.aws/credentials"}},
		{"Read", map[string]any{"file_path": "/proc/thread-self/cwd/../.aws/credentials"}},
		{"Read", map[string]any{"file_path": "/proc/self/task/1/root/etc/shadow"}},
		{"Read", map[string]any{"file_path": "/proc/self/root/proc/self/root/etc/shadow"}},
		{"Read", map[string]any{"file_path": "/proc/self/root/../home/u/.aws/credentials"}},
		{"Read", map[string]any{"file_path": "/private/etc/master.passwd"}},
		{"Read", map[string]any{"file_path": "/home/u/.claude/.credentials.json"}},
		{"Read", map[string]any{"file_path": "/var/run/secrets/kubernetes.io/serviceaccount/token"}},
		{"Grep", map[string]any{"pattern": "x", "path": "/proc/self/task/1/root"}},
		{"Grep", map[string]any{"pattern": "x", "path": "/proc/1/cwd"}},
		{"Grep", map[string]any{"pattern": "x", "path": "/proc/self/cwd/../.ssh"}},
		{"Write", map[string]any{"file_path": "/home/u/.local/state/toolgate/inbox/approvals.db", "content": "x"}},
		{"Write", map[string]any{"file_path": "/home/u/proj/.claude/hooks/pre.sh", "content": "x"}},
	}
	for _, tc := range notAllowed {
		d := decide(t, g, tc.tool, tc.in)
		require.NotEqual(t, gate.ActionAllow, d.Action, "%s %v: %s (%s)", tc.tool, tc.in, d.Reason, d.Rule)
	}
	for _, tc := range []struct {
		tool string
		in   map[string]any
	}{
		{"Bash", map[string]any{"command": "cat ~+/README.md"}},
		{"Bash", map[string]any{"command": "cat $(git rev-parse --show-toplevel)/go.mod"}},
		{"Bash", map[string]any{"command": "dc -e '2 3+p'"}},
		{"Read", map[string]any{"file_path": "/proc/self/cwd/README.md"}},
		{"Read", map[string]any{"file_path": "/proc/cpuinfo"}},
	} {
		d := decide(t, g, tc.tool, tc.in)
		require.Equal(t, gate.ActionAllow, d.Action, "%s %v: %s (%s)", tc.tool, tc.in, d.Reason, d.Rule)
	}
}
