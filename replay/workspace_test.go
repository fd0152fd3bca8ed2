package replay

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInferWorkspace(t *testing.T) {
	call := func(tool string, in map[string]any) Call {
		b, _ := json.Marshal(in)
		return Call{Tool: tool, Input: b}
	}
	tests := []struct {
		name  string
		calls []Call
		want  string
	}{
		{"most frequent cd wins", []Call{
			call(ToolBash, map[string]any{"command": "cd /testbed && ls"}),
			call(ToolBash, map[string]any{"command": "cd /tmp; ls"}),
			call(ToolBash, map[string]any{"command": "ls && cd /testbed && pytest"}),
		}, "/testbed"},
		{"file paths at depth two", []Call{
			call(ToolReadFile, map[string]any{"path": "/workspace/repo/src/a.c"}),
			call(ToolEdit, map[string]any{"path": "/workspace/repo/b.c"}),
			call(ToolReadFile, map[string]any{"path": "/etc/hosts"}),
		}, "/workspace/repo"},
		{"ipython file helpers", []Call{
			call(ToolIPython, map[string]any{"code": "open_file('/workspace/app/src/App.tsx')"}),
			call(ToolIPython, map[string]any{"code": "edit_file_by_replace(\n'/workspace/app/x.css',\nto_replace=\"\"\"a\"\"\",\nnew_content=\"b\")"}),
		}, "/workspace/app"},
		{"relative paths only", []Call{call(ToolReadFile, map[string]any{"path": "src/a.go"})}, ""},
		{"cd to / is ignored", []Call{call(ToolBash, map[string]any{"command": "cd / && ls"})}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, InferWorkspace(Run{Calls: tt.calls}))
		})
	}
}

func TestIPythonGate(t *testing.T) {
	g, err := runGates("/workspace", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, code string
		want       string
	}{
		{"read helper inside workspace", "open_file('/workspace/src/App.css')", "safe"},
		{"write helper inside workspace", "edit_file_by_replace(\n'/workspace/src/App.tsx',\nto_replace=\"\"\"x)\"\"\",\nnew_content=\"y\",\n)", "review"},
		{"read of a secret", "open_file('/root/.ssh/id_rsa')", "high"},
		{"shell escape classified as bash", "!rm -rf ~", "high"},
		{"safe shell escape", "!ls -la", "safe"},
		{"arbitrary python", "import os\nprint(os.listdir('.'))", "review"},
		{"helper then python", "open_file('/workspace/a.py')\nx = 1", "review"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, g, ToolIPython, map[string]any{"code": tt.code})
			assert.Equal(t, tt.want, string(d.Risk), d.Reason)
		})
	}
}
