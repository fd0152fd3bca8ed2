package gate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/gate"
)

func boolp(b bool) *bool { return &b }

// Tools as scopes see them: a shell, a file reader, a fetcher with no
// declared fields but open-world by default, and a typed tool.
var (
	shellTool = gate.ToolInfo{Name: "bash", Fields: []gate.SchemaField{{Name: "command", Types: []string{"string"}}}}
	readTool  = gate.ToolInfo{Name: "read_file", Annotations: gate.Annotations{ReadOnlyHint: true, OpenWorldHint: boolp(false)},
		Fields: []gate.SchemaField{{Name: "path", Types: []string{"string"}}}}
	fetchTool = gate.ToolInfo{Name: "http_get", Fields: []gate.SchemaField{{Name: "url", Types: []string{"string"}}}}
	mcpTool   = gate.ToolInfo{Name: "mcp__fs__write", Annotations: gate.Annotations{DestructiveHint: boolp(false), OpenWorldHint: boolp(false)},
		Fields: []gate.SchemaField{{Name: "Command"}, {Name: "n", Types: []string{"integer"}}}}
	intTool = gate.ToolInfo{Name: "counter", Fields: []gate.SchemaField{{Name: "command", Types: []string{"integer", "null"}}}}
)

func TestScopeMatches(t *testing.T) {
	all := []gate.ToolInfo{shellTool, readTool, fetchTool, mcpTool, intTool}
	tests := []struct {
		name  string
		scope gate.Scope
		want  []string
	}{
		{"names are exact", gate.Scope{Tools: []string{"bash", "Read_file", "nope"}}, []string{"bash"}},
		{"patterns", gate.Scope{Patterns: []string{"mcp__*", "http_???"}}, []string{"http_get", "mcp__fs__write"}},
		{"pattern star spans the name", gate.Scope{Patterns: []string{"*"}}, []string{"bash", "read_file", "http_get", "mcp__fs__write", "counter"}},
		{"read-only hint", gate.Scope{Hints: []gate.Hint{gate.HintReadOnly}}, []string{"read_file"}},
		// An undeclared DestructiveHint or OpenWorldHint is true (MCP's
		// default): only a declared false or read-only leaves the scope.
		{"destructive by default", gate.Scope{Hints: []gate.Hint{gate.HintDestructive}}, []string{"bash", "http_get", "counter"}},
		{"open world by default", gate.Scope{Hints: []gate.Hint{gate.HintOpenWorld}}, []string{"bash", "http_get", "counter"}},
		// Fields match every spelling a case-insensitive parser reads as
		// the name; an untyped property admits a string.
		// FieldType does not narrow the selection: a command of another
		// type is in scope (and refused by Missing), never left ungated.
		{"field in any spelling, of any type", gate.Scope{Fields: []string{"command", "cmd"}, FieldType: "string"}, []string{"bash", "mcp__fs__write", "counter"}},
		{"names fold with FoldTools", gate.Scope{Tools: []string{"BASH", "Read-File"}, FoldTools: true}, []string{"bash", "read_file"}},
		{"field of any type", gate.Scope{Fields: []string{"COM_MAND"}}, []string{"bash", "mcp__fs__write", "counter"}},
		{"integer field", gate.Scope{Fields: []string{"n"}, FieldType: "number"}, []string{"mcp__fs__write"}},
		{"selectors add up", gate.Scope{Tools: []string{"bash"}, Hints: []gate.Hint{gate.HintReadOnly}}, []string{"bash", "read_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.scope.Validate())
			var got []string
			for _, tool := range all {
				if tt.scope.Matches(tool) {
					got = append(got, tool.Name)
				}
			}
			assert.ElementsMatch(t, tt.want, got)
		})
	}
}

func TestScopeValidate(t *testing.T) {
	tests := []struct {
		name  string
		scope gate.Scope
		msg   string
	}{
		{"empty selects nothing", gate.Scope{Needs: []string{"command"}}, "selects no tool"},
		{"bad pattern", gate.Scope{Patterns: []string{"read_["}}, `pattern "read_["`},
		{"unknown hint", gate.Scope{Hints: []gate.Hint{"readonly"}}, `unknown hint "readonly"`},
		{"unknown field type", gate.Scope{Fields: []string{"x"}, FieldType: "str"}, `unknown field type "str"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.scope.Validate()
			require.ErrorIs(t, err, gate.ErrInvalidScope)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestScopeMissing(t *testing.T) {
	s := gate.Scope{Tools: []string{"bash", "counter", "http_get"}, FieldType: "string", Needs: []string{"command", "cmd"}}
	assert.Empty(t, s.Missing(shellTool))
	assert.Empty(t, s.Missing(mcpTool), "an untyped Command is a command in another spelling")
	assert.Equal(t, `string field "command" or "cmd" (it declares "command" as integer or null)`, s.Missing(intTool), "an integer command is not a string")
	assert.Equal(t, `string field "command" or "cmd" declared in its properties (it admits one only through patternProperties "^comm")`,
		s.Missing(gate.ToolInfo{Name: "p", Fields: []gate.SchemaField{{Keyword: gate.KeywordPatternProperties, Pattern: "^comm"}}}))
	assert.Equal(t, `string field "command" or "cmd"`, s.Missing(fetchTool))
	assert.Empty(t, gate.Scope{Tools: []string{"x"}}.Missing(fetchTool), "a gate that needs nothing misses nothing")
	assert.Equal(t, `tools "bash"; tools matching "mcp__*"; tools hinted "destructive"; tools whose input schema admits a field "command" or "cmd"`,
		gate.Scope{Tools: []string{"bash"}, Patterns: []string{"mcp__*"}, Hints: []gate.Hint{gate.HintDestructive},
			Fields: []string{"command", "cmd"}, FieldType: "string"}.String())
}

// ScopeOf sees a scope through the wrappers the executor and developers
// put around gates; a gate without one is unscoped.
func TestScopeOf(t *testing.T) {
	allow := gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) { return gate.Allow(), nil })
	s := gate.Scope{Tools: []string{"bash"}}
	for name, g := range map[string]gate.Gate{
		"scoped":             gate.Scoped(allow, s),
		"named scoped":       gate.Named("n", gate.Scoped(allow, s)),
		"scoped named":       gate.Scoped(gate.Named("n", allow), s),
		"timeout named":      gate.WithTimeout(gate.Named("n", gate.Scoped(allow, s)), time.Second),
		"scoper":             scoperGate{s},
		"named scoper":       gate.Named("n", scoperGate{s}),
		"scoped over scoper": gate.Scoped(scoperGate{gate.Scope{Tools: []string{"other"}}}, s),
	} {
		got, ok := gate.ScopeOf(g)
		assert.True(t, ok, name)
		assert.Equal(t, s, got, name)
	}
	for name, g := range map[string]gate.Gate{
		"func": allow, "named": gate.Named("n", allow), "chain of scoped": gate.Chain(gate.Scoped(allow, s)), "nil": nil,
	} {
		_, ok := gate.ScopeOf(g)
		assert.False(t, ok, name)
	}
	assert.Equal(t, "n", gate.NameOf(gate.Scoped(gate.Named("n", allow), s), ""), "Scoped keeps the name")
	assert.True(t, gate.IsNil(gate.Scoped(nil, s)))
	assert.True(t, gate.IsNil(gate.Scoped(gate.Func(nil), s)))
	d := gate.Evaluate(context.Background(), gate.Scoped(nil, s), bash, "x")
	assert.Equal(t, gate.ErrorKindInvalid, d.ErrorKind)
	// Scoped copies the scope: changing the caller's slices later changes
	// nothing.
	tools := []string{"bash"}
	g := gate.Scoped(allow, gate.Scope{Tools: tools})
	tools[0] = "rm"
	got, _ := gate.ScopeOf(g)
	assert.Equal(t, []string{"bash"}, got.Tools)
	// Decide runs the gate: the scope is the executor's to apply.
	d, err := gate.Scoped(allow, s).Decide(context.Background(), gate.ToolCallContext{ToolName: "elsewhere"})
	require.NoError(t, err)
	assert.Equal(t, gate.ActionAllow, d.Action)
}

func TestMembers(t *testing.T) {
	a, b := gate.AllowAll(), gate.AskConsequential()
	ms, ok := gate.Members(gate.Chain(a, b))
	require.True(t, ok)
	require.Len(t, ms, 2)
	assert.Equal(t, "allow-all", gate.NameOf(ms[0], ""))
	assert.Equal(t, "consequential", gate.NameOf(ms[1], ""))
	for _, g := range []gate.Gate{a, gate.Named("n", gate.Chain(a)), gate.Scoped(gate.Chain(a), gate.Scope{Tools: []string{"x"}}), nil} {
		_, ok := gate.Members(g)
		assert.False(t, ok)
	}
}

// CheckTool finds a gate's ToolChecker through the wrappers.
func TestCheckTool(t *testing.T) {
	c := checkerGate{}
	for name, g := range map[string]gate.Gate{
		"checker": c, "named": gate.Named("n", c), "scoped": gate.Scoped(c, gate.Scope{Tools: []string{"x"}}),
		"timeout scoped named": gate.WithTimeout(gate.Scoped(gate.Named("n", c), gate.Scope{Tools: []string{"x"}}), time.Second),
	} {
		assert.EqualError(t, gate.CheckTool(g, gate.ToolInfo{Name: "bad"}), "bad is bad", name)
		assert.NoError(t, gate.CheckTool(g, gate.ToolInfo{Name: "good"}), name)
	}
	assert.NoError(t, gate.CheckTool(gate.Named("n", gate.AllowAll()), gate.ToolInfo{Name: "bad"}))
}

type checkerGate struct{}

func (checkerGate) CheckTool(t gate.ToolInfo) error {
	if t.Name == "bad" {
		return errors.New("bad is bad")
	}
	return nil
}
func (checkerGate) Decide(context.Context, gate.ToolCallContext) (gate.Decision, error) {
	return gate.Allow(), nil
}

type scoperGate struct{ s gate.Scope }

func (g scoperGate) Scope() gate.Scope { return g.s }
func (g scoperGate) Decide(context.Context, gate.ToolCallContext) (gate.Decision, error) {
	return gate.Allow(), nil
}

// A field-selected scope holds every tool whose schema can admit the
// field, through any keyword: a pattern matching some spelling
// SameFieldName reads as the field, a catch-all, a bare "required".
func TestScopeAdmittedFields(t *testing.T) {
	pat := func(p string) gate.ToolInfo {
		return gate.ToolInfo{Name: "t", Fields: []gate.SchemaField{{Keyword: gate.KeywordPatternProperties, Pattern: p}}}
	}
	s := gate.Scope{Fields: []string{"command", "cmd"}}
	tests := []struct {
		name string
		tool gate.ToolInfo
		want bool
	}{
		{"exact pattern", pat("^command$"), true},
		{"prefix", pat("^comm"), true},
		{"any character", pat("."), true},
		{"empty pattern", pat(""), false}, // "" is no pattern: a named field with no name
		{"case folded", pat("^COMMAND$"), true},
		{"spelling with underscores", pat("^com_mand$"), true},
		{"dashes and underscores around", pat("^-+cmd_$"), true},
		{"kelvin sign is k folded", gate.ToolInfo{Name: "t", Fields: []gate.SchemaField{{Keyword: gate.KeywordPatternProperties, Pattern: "^\u212a$"}}}, false},
		{"alternation", pat("^(path|cmd)$"), true},
		{"class", pat("^c[a-z]d$"), true},
		{"suffix", pat("and$"), true},
		{"other name", pat("^path$"), false},
		{"anchored longer name", pat("^commands$"), false},
		{"digit never in a spelling", pat("[0-9]"), false},
		{"word boundary over-approximated", pat(`\bcmd\b`), true},
		{"bad pattern counts as matching", pat("(("), true},
		{"catch-all", gate.ToolInfo{Name: "t", Fields: []gate.SchemaField{{Keyword: gate.KeywordAdditionalProperties, AnyName: true}}}, true},
		{"bare required", gate.ToolInfo{Name: "t", Fields: []gate.SchemaField{{Keyword: gate.KeywordRequired, Name: "CMD"}}}, true},
		{"other declared field", fetchTool, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, s.Matches(tt.tool))
			if tt.want {
				assert.NotEmpty(t, gate.Scope{Tools: []string{"t"}, Needs: []string{"command"}}.Missing(tt.tool),
					"a field admitted but not declared gives the gate nothing to read")
			}
		})
	}
	// Kelvin sign K folds to k: a pattern with it admits "kind".
	assert.True(t, gate.Scope{Fields: []string{"kind"}}.Matches(gate.ToolInfo{Fields: []gate.SchemaField{{Keyword: gate.KeywordPatternProperties, Pattern: "^\u212aIND$"}}}))
}

// A Tools name that matches no registered tool but one in another
// spelling is a near miss ("Shell" for "shell"); FoldTools has none.
func TestScopeNearMiss(t *testing.T) {
	reg := []string{"bash", "shell", "read_file"}
	tests := []struct {
		scope      gate.Scope
		name, tool string
	}{
		{gate.Scope{Tools: []string{"bash", "Shell"}}, "Shell", "shell"},
		{gate.Scope{Tools: []string{"ReadFile"}}, "ReadFile", "read_file"},
		{gate.Scope{Tools: []string{"bash", "shel"}}, "", ""},
		{gate.Scope{Tools: []string{"Shell"}, FoldTools: true}, "", ""},
		{gate.Scope{Patterns: []string{"Shell"}}, "", ""},
	}
	for _, tt := range tests {
		name, tool, ok := tt.scope.NearMiss(reg)
		assert.Equal(t, tt.name != "", ok, tt.scope)
		assert.Equal(t, tt.name, name)
		assert.Equal(t, tt.tool, tool)
	}
}
