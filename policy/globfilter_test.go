package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/gate"
)

// A search's file filter and Gemini's read_many_files globs are matched
// as the tools match them: braces and extended glob groups are expanded,
// and "*", "?" and "[…]" at the start of a segment match a leading dot
// (ripgrep's --glob, Gemini's dot:true), so "*.env" names .env.
func TestGlobFiltersLikeTheTools(t *testing.T) {
	t.Setenv("HOME", "/home/dev")
	g, err := Default().GateAt("/home/dev/proj", "/home/dev/proj")
	require.NoError(t, err)
	deny := []string{"{.env,x}", "*.{pem,key}", "@(id_rsa)", "+(id_rsa)", "*(id_rsa)", "?(.env)", "*.env", "?env", "[.]env", "[!a]env",
		"src/*.env", "*/.env", "**/?env", "{src,lib}/{.env,x}", "*rc", "~/.ssh/{id_rsa,x}", "~/.aws/*credentials"}
	allow := []string{"*.go", "{a,b}.go", "**/*.{go,ts}", "!(x)", "*", "**/*", "?", "[a-z]*.py", "src/**/*.rs"}
	for _, tool := range []struct {
		name, field string
	}{{"Grep", "glob"}, {"grep_search", "include"}, {"read_many_files", "include"}} {
		for _, pats := range []struct {
			list []string
			want gate.Action
		}{{deny, gate.ActionDeny}, {allow, gate.ActionAllow}} {
			for _, p := range pats.list {
				in := map[string]any{"pattern": "x", tool.field: p}
				if tool.name == "read_many_files" {
					in = map[string]any{tool.field: []any{p}}
				}
				d := decide(t, g, tool.name, in)
				require.Equal(t, pats.want, d.Action, "%s %s=%q: %s (%s)", tool.name, tool.field, p, d.Reason, d.Rule)
			}
		}
	}
}

// Property: a filter spelling a secret's name with a leading "*", "?" or
// a class for its dot, or among brace or extglob alternatives, is denied
// for every search tool, like the name itself.
func TestGlobFilterSpellingsNeverLower(t *testing.T) {
	t.Setenv("HOME", "/home/dev")
	g, err := Default().GateAt("/home/dev/proj", "/home/dev/proj")
	require.NoError(t, err)
	names := []string{".env", ".env.local", ".envrc", ".dev.vars", ".git-credentials", ".netrc", ".pgpass", ".htpasswd"}
	outer := t
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SampledFrom(names).Draw(t, "name")
		rest := name[1:]
		var f string
		switch rapid.IntRange(0, 4).Draw(t, "form") {
		case 0:
			f = "*" + name
		case 1:
			f = "?" + rest
		case 2:
			f = "[.]" + rest
		case 3:
			f = "{x," + name + "}"
		default:
			f = rapid.SampledFrom([]string{"@", "+", "?", "*"}).Draw(t, "op") + "(" + name + "|x)"
		}
		if rapid.Bool().Draw(t, "deep") {
			f = "**/" + f
		}
		tool := rapid.SampledFrom([]string{"Grep", "grep_search"}).Draw(t, "tool")
		field := map[string]string{"Grep": "glob", "grep_search": "include"}[tool]
		if d := decide(outer, g, tool, map[string]any{"pattern": "x", field: f}); d.Action != gate.ActionDeny {
			t.Fatalf("%s %s=%q: %s (%s)", tool, field, f, d.Action, d.Reason)
		}
		if d := decide(outer, g, "read_many_files", map[string]any{"include": []any{f}}); d.Action != gate.ActionDeny {
			t.Fatalf("read_many_files include=%q: %s (%s)", f, d.Action, d.Reason)
		}
	})
}
