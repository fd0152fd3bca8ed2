package classify_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// The coding agents' own settings (their hooks — toolgate's among them —,
// permission rules, MCP servers) and toolgate's user policy are high to
// write, inside the workspace too and even where workspace writes are
// accepted (profile workspace): before, a model could remove its own hook
// with a Write of .claude/settings.local.json or `echo {} > …`. Reading
// them stays an ordinary read.
func TestAgentConfigWritesAreHigh(t *testing.T) {
	c, err := classify.New(classify.WithWorkspace("/home/dev/app"), classify.WithHome("/home/dev"),
		classify.WithScopedWrites(gate.RiskSafe))
	assert.NoError(t, err)
	for _, p := range []string{
		".claude/settings.json", ".claude/settings.local.json", "/home/dev/app/.claude/settings.json",
		"sub/.claude/settings.json", "~/.claude/settings.json", "/home/dev/.claude/settings.json", "~/.claude.json",
		".mcp.json", ".gemini/settings.json", "~/.gemini/settings.json", ".codex/config.toml", ".codex/hooks.json",
		"~/.codex/config.toml", "~/.codex/hooks.json", "~/.config/toolgate/toolgate.yaml", "src/../.claude/settings.local.json",
	} {
		for _, op := range []classify.Op{classify.OpWrite, classify.OpDelete} {
			v := c.Path(op, p)
			assert.Equal(t, gate.RiskHigh, v.Level, "%s %s: %s", op, p, v.Reason)
		}
		assert.Equal(t, gate.RiskSafe, c.Path(classify.OpRead, p).Level, "read %s", p)
	}
	for _, cmd := range []string{"echo {} > .claude/settings.local.json", "cp /tmp/x ~/.gemini/settings.json", "rm .codex/hooks.json"} {
		assert.Equal(t, gate.RiskHigh, c.Bash(cmd).Level, cmd)
	}
	for _, p := range []string{"src/settings.json", ".claude/notes.md", "docs/mcp.json"} {
		assert.Equal(t, gate.RiskSafe, c.Path(classify.OpWrite, p).Level, "an ordinary workspace write: %s", p)
	}
	// The collector token the hook docs keep there is a secret: reading it
	// lets the model send spans in the hook's name.
	assert.Equal(t, gate.RiskHigh, c.Path(classify.OpRead, "~/.config/toolgate/otlp-token").Level)
	assert.Equal(t, gate.RiskHigh, c.Bash("cat ~/.config/toolgate/otlp-token").Level)
}
