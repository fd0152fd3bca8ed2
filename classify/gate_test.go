package classify_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

func TestBashGate(t *testing.T) {
	g, err := classify.BashGate()
	require.NoError(t, err)
	gAsk, err := classify.BashGate(classify.WithHighAction(gate.ActionAsk))
	require.NoError(t, err)
	tests := []struct {
		name   string
		g      gate.Gate
		call   gate.ToolCallContext
		action gate.Action
		risk   gate.RiskLevel
	}{
		{"safe allows", g, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"command": "ls -la"}}, gate.ActionAllow, S},
		{"review asks", g, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"command": "npm install"}}, gate.ActionAsk, R},
		{"high denies", g, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"command": "rm -rf ~"}}, gate.ActionDeny, H},
		{"high asks when configured", gAsk, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"command": "rm -rf ~"}}, gate.ActionAsk, H},
		{"cmd field", g, gate.ToolCallContext{ToolName: "shell", Input: map[string]any{"cmd": "sudo ls"}}, gate.ActionDeny, H},
		{"raw input only", g, gate.ToolCallContext{ToolName: "bash", RawInput: json.RawMessage(`{"command":"pwd"}`)}, gate.ActionAllow, S},
		{"no command fails closed", g, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"script": "ls"}}, gate.ActionDeny, H},
		{"non-string command fails closed", g, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"command": 42}}, gate.ActionDeny, H},
		{"bad raw input fails closed", g, gate.ToolCallContext{ToolName: "bash", RawInput: json.RawMessage(`[1]`)}, gate.ActionDeny, H},
		// A tool may read any spelling (encoding/json matches names
		// case-insensitively) or the other field: every one is judged.
		{"case variant of a field is judged", g, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"cmd": "ls", "COMMAND": "rm -rf ~"}}, gate.ActionDeny, H},
		{"dash or underscore variant is judged", g, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"cmd": "ls", "com_mand": "rm -rf ~"}}, gate.ActionDeny, H},
		{"both fields are judged", g, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"command": "ls", "cmd": "rm -rf ~"}}, gate.ActionDeny, H},
		{"harmless variants allow", g, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"command": "ls", "Cmd": "pwd"}}, gate.ActionAllow, S},
		{"non-string variant fails closed", g, gate.ToolCallContext{ToolName: "bash", Input: map[string]any{"command": "ls", "Command": []any{"rm"}}}, gate.ActionDeny, H},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.g.Decide(context.Background(), tt.call)
			require.NoError(t, err)
			require.NoError(t, d.Validate())
			assert.Equal(t, tt.action, d.Action, d.Reason)
			assert.Equal(t, tt.risk, d.Risk)
			assert.Equal(t, classify.SourceBash, d.Source)
			assert.NotEmpty(t, d.Reason)
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = g.Decide(ctx, gate.ToolCallContext{Input: map[string]any{"command": "ls"}})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestBashGateOptions(t *testing.T) {
	g, err := classify.BashGate(classify.WithClassifierOptions(classify.WithTrustedWorkspace(false)), classify.WithInputFields("script"))
	require.NoError(t, err)
	d, err := g.Decide(context.Background(), gate.ToolCallContext{Input: map[string]any{"script": "git status"}})
	require.NoError(t, err)
	assert.Equal(t, gate.ActionAsk, d.Action)
	_, err = classify.BashGate(classify.WithClassifierOptions(classify.WithRules(&classify.Rules{Unknown: "bogus"})))
	assert.ErrorIs(t, err, classify.ErrRules)
}

func TestPathGate(t *testing.T) {
	g, err := classify.PathGate(classify.WithClassifierOptions(classify.WithWorkspace("/workspace/app")))
	require.NoError(t, err)
	tests := []struct {
		name   string
		call   gate.ToolCallContext
		action gate.Action
		risk   gate.RiskLevel
	}{
		{"read_file path", gate.ToolCallContext{ToolName: "read_file", Input: map[string]any{"path": "src/a.go"}}, gate.ActionAllow, S},
		{"read_file secret", gate.ToolCallContext{ToolName: "read_file", Input: map[string]any{"file_path": "/workspace/app/.env"}}, gate.ActionDeny, H},
		{"write_file", gate.ToolCallContext{ToolName: "write_file", Input: map[string]any{"path": "dist/index.js"}}, gate.ActionAsk, R},
		{"edit search/replace", gate.ToolCallContext{ToolName: "edit", Input: map[string]any{"path": "CONVENTIONS.md", "search": "a", "replace": "b"}}, gate.ActionAsk, R},
		{"editor view", gate.ToolCallContext{ToolName: "edit", Input: map[string]any{"command": "view", "path": "/workspace/app/src/x.c"}}, gate.ActionAllow, S},
		{"editor str_replace", gate.ToolCallContext{ToolName: "str_replace_editor", Input: map[string]any{"command": "str_replace", "path": "/workspace/app/x.c", "old_str": "a", "new_str": "b"}}, gate.ActionAsk, R},
		{"editor create rc", gate.ToolCallContext{ToolName: "str_replace_editor", Input: map[string]any{"command": "create", "path": "~/.bashrc"}}, gate.ActionDeny, H},
		{"both fields, worst wins", gate.ToolCallContext{ToolName: "read_file", Input: map[string]any{"path": "a.go", "file_path": "~/.ssh/id_rsa"}}, gate.ActionDeny, H},
		{"unknown tool", gate.ToolCallContext{ToolName: "frobnicate", Input: map[string]any{"path": "a"}}, gate.ActionDeny, H},
		{"no path", gate.ToolCallContext{ToolName: "read_file", Input: map[string]any{"name": "a"}}, gate.ActionDeny, H},
		{"delete", gate.ToolCallContext{ToolName: "delete_file", Input: map[string]any{"path": "."}}, gate.ActionDeny, H},
		{"case variant of a path field is judged", gate.ToolCallContext{ToolName: "read_file", Input: map[string]any{"path": "a.go", "PATH": "~/.ssh/id_rsa"}}, gate.ActionDeny, H},
		{"case variant of the editor command: the most dangerous operation", gate.ToolCallContext{ToolName: "str_replace_editor",
			Input: map[string]any{"command": "view", "Command": "create", "path": "~/.bashrc"}}, gate.ActionDeny, H},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := g.Decide(context.Background(), tt.call)
			require.NoError(t, err)
			require.NoError(t, d.Validate())
			assert.Equal(t, tt.action, d.Action, d.Reason)
			assert.Equal(t, tt.risk, d.Risk)
			assert.Equal(t, classify.SourcePath, d.Source)
		})
	}
}

// TestPathGateRealTranscripts runs the file-tool calls of the real
// transcripts (read_file, write_file, edit; keys path or file_path) through
// the gate: every one gets a valid decision, reads are allowed, writes ask.
func TestPathGateRealTranscripts(t *testing.T) {
	g, err := classify.PathGate()
	require.NoError(t, err)
	f, err := os.Open("../testdata/real/trajectories.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	n := 0
	for sc.Scan() {
		var c trajectoryCall
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		switch c.Tool {
		case "read_file", "write_file", "edit":
		default:
			continue
		}
		n++
		d, err := g.Decide(context.Background(), gate.ToolCallContext{ToolName: c.Tool, Input: c.Input})
		require.NoError(t, err)
		require.NoError(t, d.Validate())
		sub, _ := c.Input["command"].(string)
		if c.Tool == "read_file" || sub == "view" {
			assert.Equal(t, gate.ActionAllow, d.Action, "%v: %s", c.Input["path"], d.Reason)
		} else {
			assert.Equal(t, gate.ActionAsk, d.Action, "%v: %s", c.Input["path"], d.Reason)
		}
	}
	require.Equal(t, 159, n)
}
