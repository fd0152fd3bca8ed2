package classify_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// With WithInteractiveInput (Codex: write_stdin types into a started
// program), programs that read commands from the terminal are review in
// every spelling; without it they keep their verdict.
func TestInteractiveInput(t *testing.T) {
	on, err := classify.New(classify.WithWorkspace("/work/app"), classify.WithInteractiveInput(true))
	require.NoError(t, err)
	off, err := classify.New(classify.WithWorkspace("/work/app"))
	require.NoError(t, err)
	for _, cmd := range []string{
		"less README.md", "/usr/bin/less README.md", "more a.txt", "command less a.txt", "env less a.txt",
		"vi a.go", "vim -R a.go", "view a.go", "nano a.txt", "man ls", "info ls",
		"screen", "tmux new -s x", "ls && less a.txt", "cat a | less", "timeout 60 less a.txt",
	} {
		got := on.Bash(cmd)
		require.NotEqual(t, gate.RiskSafe, got.Level, "%q with interactive input: %s", cmd, got.Reason)
		if got.Level == gate.RiskReview {
			require.Contains(t, got.Reason, "interactive.input", cmd)
		}
	}
	for _, cmd := range []string{"less README.md", "man ls", "cat a.txt", "git status"} {
		if cmd == "cat a.txt" || cmd == "git status" {
			require.Equal(t, gate.RiskSafe, on.Bash(cmd).Level, cmd)
		}
		require.Equal(t, off.Bash(cmd).Level, gate.RiskSafe, "%q without interactive input", cmd)
	}
}
