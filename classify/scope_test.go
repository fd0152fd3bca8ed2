package classify_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// The classifier gates declare the tools they judge: by default those
// whose input schema declares a string field they read (in any spelling
// they read), or the tools named with ForTools or selected with WithScope,
// each of which must then declare such a field.
func TestGateScopes(t *testing.T) {
	str := func(names ...string) []gate.SchemaField {
		var fs []gate.SchemaField
		for _, n := range names {
			fs = append(fs, gate.SchemaField{Name: n, Types: []string{"string"}})
		}
		return fs
	}
	tools := []gate.ToolInfo{
		{Name: "bash", Fields: str("command")},
		{Name: "shell", Fields: str("Cmd", "timeout")},
		{Name: "editor", Fields: str("command", "path")},
		{Name: "read_file", Fields: str("path")},
		{Name: "write_file", Fields: str("file_path", "content")},
		{Name: "http_get", Fields: str("url")},
		{Name: "counter", Fields: []gate.SchemaField{{Name: "command", Types: []string{"integer"}}}},
		{Name: "untyped", Fields: []gate.SchemaField{{Name: "command"}}},
		{Name: "run_script", Fields: str("script")},
	}
	mk := func(f func(...classify.GateOption) (gate.Gate, error), opts ...classify.GateOption) gate.Gate {
		g, err := f(opts...)
		require.NoError(t, err)
		return g
	}
	tests := []struct {
		name    string
		g       gate.Gate
		want    []string
		missing []string // tools in scope without the field
	}{
		// A command of another type is in scope, and refused (Missing).
		{"bash by fields", mk(classify.BashGate), []string{"bash", "shell", "editor", "untyped", "counter"}, []string{"counter"}},
		{"bash for named tools", mk(classify.BashGate, classify.ForTools("bash", "run_script")), []string{"bash", "run_script"}, []string{"run_script"}},
		{"bash with its own fields", mk(classify.BashGate, classify.WithInputFields("script")), []string{"run_script"}, nil},
		{"bash by pattern", mk(classify.BashGate, classify.WithScope(gate.Scope{Patterns: []string{"*sh*"}})), []string{"bash", "shell"}, nil},
		{"path by fields", mk(classify.PathGate), []string{"editor", "read_file", "write_file"}, nil},
		{"path for named tools", mk(classify.PathGate, classify.ForTools("read_file", "http_get")), []string{"read_file", "http_get"}, []string{"http_get"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := gate.ScopeOf(tt.g)
			require.True(t, ok, "a classifier gate declares its scope")
			var got, missing []string
			for _, tool := range tools {
				if s.Matches(tool) {
					got = append(got, tool.Name)
					if s.Missing(tool) != "" {
						missing = append(missing, tool.Name)
					}
				}
			}
			assert.ElementsMatch(t, tt.want, got)
			assert.ElementsMatch(t, tt.missing, missing)
		})
	}
	assert.Equal(t, classify.SourceBash, gate.NameOf(mk(classify.BashGate), ""))
	assert.Equal(t, classify.SourcePath, gate.NameOf(mk(classify.PathGate), ""))
	_, err := classify.BashGate(classify.ForTools())
	require.ErrorIs(t, err, gate.ErrInvalidScope)
	_, err = classify.PathGate(classify.WithScope(gate.Scope{Patterns: []string{"["}}))
	require.ErrorIs(t, err, gate.ErrInvalidScope)
	_, err = classify.BashGate(classify.WithInputFields())
	require.ErrorIs(t, err, gate.ErrInvalidScope, "a bash gate that reads no field judges no tool")
}

// PathGate reads the path fields real agents use — path, file_path,
// target_file, and arrays of paths — and finds a tool's operation by its
// name in any spelling; a path of another type, or an array holding one,
// is denied (fail closed).
func TestPathGateFields(t *testing.T) {
	g, err := classify.PathGate(classify.WithClassifierOptions(classify.WithWorkspace("/work")))
	require.NoError(t, err)
	tests := []struct {
		tool, input string
		action      gate.Action
		risk        gate.RiskLevel
		reason      string
	}{
		{"delete_file", `{"target_file":"/home/u/.ssh/id_rsa"}`, gate.ActionDeny, gate.RiskHigh, ""},
		{"Delete_File", `{"TargetFile":"/home/u/.ssh/id_rsa"}`, gate.ActionDeny, gate.RiskHigh, ""},
		{"read_file", `{"paths":["/work/a.go","/work/b.go"]}`, gate.ActionAllow, gate.RiskSafe, ""},
		{"write_file", `{"paths":["/work/a.go","/etc/passwd"]}`, gate.ActionDeny, gate.RiskHigh, ""},
		{"READ", `{"file_path":"/work/a.go"}`, gate.ActionAllow, gate.RiskSafe, ""},
		{"read_file", `{"paths":["/work/a.go",3]}`, gate.ActionDeny, gate.RiskHigh, `input field "paths" item 1 is not a string`},
		{"read_file", `{"path":3}`, gate.ActionDeny, gate.RiskHigh, `input field "path" is not a string or an array of strings`},
		{"read_file", `{"paths":[]}`, gate.ActionDeny, gate.RiskHigh, "input has no string field"},
		{"frobnicate", `{"path":"/work/a.go"}`, gate.ActionDeny, gate.RiskHigh, "unknown file operation"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.input, func(t *testing.T) {
			d, err := g.Decide(context.Background(), gate.ToolCallContext{ToolName: tt.tool, RawInput: json.RawMessage(tt.input)})
			require.NoError(t, err)
			assert.Equal(t, tt.action, d.Action, d.Reason)
			assert.Equal(t, tt.risk, d.Risk)
			assert.Contains(t, d.Reason, tt.reason)
		})
	}
	// The default scope holds the tools of its table in any case, and
	// tools with any of its path fields.
	s, ok := gate.ScopeOf(g)
	require.True(t, ok)
	for name, want := range map[string]bool{"delete_file": true, "Delete_File": true, "APPLY_PATCH": true, "Read": true, "http_get": false} {
		assert.Equal(t, want, s.Matches(gate.ToolInfo{Name: name}), name)
	}
	assert.True(t, s.Matches(gate.ToolInfo{Name: "x", Fields: []gate.SchemaField{{Name: "target_file"}}}))
	assert.False(t, s.Matches(gate.ToolInfo{Name: "x", Fields: []gate.SchemaField{{Name: "url"}}}))
}
