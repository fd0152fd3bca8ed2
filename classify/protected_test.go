package classify_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// WithProtectedPaths: toolgate's own files cannot be written, moved or
// deleted by a shell command or a file tool in any spelling the path rules
// see through; reading them, and neighbours, keep their verdicts; glob
// characters in a protected path are literal.
func TestProtectedPaths(t *testing.T) {
	c, err := classify.New(classify.WithWorkspace("/home/u/proj"), classify.WithHome("/home/u"),
		classify.WithProtectedPaths("/home/u/bin/toolgate", "/home/u/.local/state/tg/spool", "/srv/a*b/toolgate.yaml", "relative/ignored"))
	require.NoError(t, err)
	for _, cmd := range []string{
		"cp /bin/true ~/bin/toolgate", "cp /bin/true /home/u/bin/toolgate", "echo x > ~+/../bin/toolgate",
		"mv ~/bin/toolgate /tmp/x", "rm ~/bin/toolgate", "chmod 000 ~/bin/toolgate", "chmod a-x ~/bin/toolgate", "chmod -x ~/bin/toolgate", "chattr +i ~/.local/state/tg/spool", "ln -sf /bin/true ~/bin/toolgate",
		"rm -r ~/.local/state/tg/spool", ": > ~/.local/state/tg/spool/slot-00/seg-000001.log",
		"truncate -s0 ~/.local/state/tg/spool/slot-00/seg-000001.log", "cd ~/.local/state/tg && rm -r spool",
		"echo x > '/srv/a*b/toolgate.yaml'", "echo x > ~/BIN/TOOLGATE",
		"mv ~/.local/state/tg ~/x", "mv ~/.local/state ~/x", "mv ~/.local ~/x", "rm -r ~/.local/state/tg", "mv ~/bin ~/bin2",
	} {
		require.Equal(t, gate.RiskHigh, c.Bash(cmd).Level, "%q: %s", cmd, c.Bash(cmd).Reason)
	}
	for _, p := range []string{"/home/u/bin/toolgate", "~/bin/toolgate", "/proc/self/root/home/u/bin/toolgate", "../bin/toolgate", "/home/u/.local/state/tg/spool/x"} {
		for _, op := range []classify.Op{classify.OpWrite, classify.OpDelete} {
			require.Equal(t, gate.RiskHigh, c.Path(op, p).Level, "%s %s", op, p)
		}
		require.NotEqual(t, gate.RiskHigh, c.Path(classify.OpRead, p).Level, "reading %s", p)
	}
	require.NotEqual(t, gate.RiskHigh, c.Bash("echo x > /srv/aXb/toolgate.yaml").Level, "a protected path's * is literal")
	require.Equal(t, gate.RiskSafe, c.Bash("ls ~/bin").Level)
	require.NotEqual(t, gate.RiskHigh, c.Bash("touch /srv/newfile").Level, "a top-level directory's other files stay free")
	require.NotEqual(t, gate.RiskHigh, c.Bash("mkdir -p ~/.local/share/x").Level, "a sibling of a protected directory")
	require.NotEqual(t, gate.RiskHigh, c.Bash("cp a ~/bin/other-tool").Level, "a neighbour")
}
