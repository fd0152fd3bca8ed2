package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// yamlPieces are fragments a hostile policy file is built from: keys,
// anchors and aliases, tags, flow syntax, deep nesting, odd scalars.
var yamlPieces = []string{
	"version: 1\n", "version: 999999999999999999999\n", "profile: ", "strict", "read-only", "tools:\n", "  - match: ", "\"*\"",
	"    kind: ", "shell", "allow", "fields: [", "]", "{", "}", "[", "&a ", "*a", "<<: *a\n", "!!binary ", "!!map ",
	"---\n", "...\n", "\t", "  ", "\n", ": ", "- ", "? ", "|\n", ">-\n", "\"\\u0000\"", "'", "\"", "#", "%YAML 1.1\n",
	"\xff\xfe", "\x00", "mcp:\n  upstreams:\n    - name: x\n", "approver: {kind: inbox, inbox: ../../x}\n", "~", "null",
	"0x10", "1e400", "-.inf", ".nan", "yes", "no", "on", strings.Repeat("[", 200), strings.Repeat("a: &x [*x]\n", 3),
}

func TestParseNeverPanics(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(yamlPieces)-1), 0, 40).Draw(t, "pieces") {
			b.WriteString(yamlPieces[i])
		}
		b.Write(rapid.SliceOfN(rapid.Byte(), 0, 16).Draw(t, "tail"))
		p, err := Parse([]byte(b.String()), "/tmp")
		if err == nil {
			// A policy that parsed is valid: a gate can be built from it.
			_, gerr := p.Gate("/tmp/ws")
			require.NoError(t, gerr)
		} else {
			require.ErrorIs(t, err, ErrPolicy)
		}
	})
}

// FuzzParse: no input makes Parse panic; an accepted policy builds a gate.
func FuzzParse(f *testing.F) {
	f.Add([]byte("version: 1\nprofile: workspace\ntools:\n  - match: Bash\n    kind: shell\n"))
	f.Add([]byte("a: &a [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nversion: 1\n"))
	f.Add([]byte("version: 1\ntools: [{match: '[', kind: deny}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "/tmp")
		if err != nil {
			if !strings.Contains(err.Error(), ErrPolicy.Error()) {
				t.Fatalf("error does not wrap ErrPolicy: %v", err)
			}
			return
		}
		if _, err := p.Gate("/tmp/ws"); err != nil {
			t.Fatalf("accepted policy, no gate: %v", err)
		}
	})
}

// A tool name no rule matches is never allowed, whatever the profile, the
// high action, the file's rules (that do not match it) and the input.
func TestNoRuleNeverAllows(t *testing.T) {
	profiles := []string{classify.ProfileStrict, classify.ProfileWorkspace, classify.ProfileReadOnly}
	kinds := []Kind{KindShell, KindRead, KindWrite, KindDelete, KindFetch, KindAllow, KindDeny, KindAsk}
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		fmt.Fprintf(&b, "version: 1\nprofile: %s\nhigh: %s\ntools:\n", rapid.SampledFrom(profiles).Draw(t, "profile"),
			rapid.SampledFrom([]string{"deny", "ask"}).Draw(t, "high"))
		for i := range rapid.IntRange(0, 4).Draw(t, "rules") {
			m := rapid.StringMatching(`[a-zA-Z_*?]{1,12}`).Draw(t, fmt.Sprintf("match%d", i))
			fmt.Fprintf(&b, "  - match: %q\n    kind: %s\n", m, rapid.SampledFrom(kinds).Draw(t, fmt.Sprintf("kind%d", i)))
		}
		p, err := Parse([]byte(b.String()), "/tmp")
		require.NoError(t, err, b.String())
		g, err := p.Gate("/home/dev/proj")
		require.NoError(t, err)
		name := rapid.OneOf(rapid.String(), rapid.StringMatching(`(mcp__[a-z]{1,5}__)?[A-Za-z_]{1,16}`),
			rapid.SampledFrom([]string{"bash ", "BASH", "Read\x00", "read-file", "Shell", "mcp_fs_write"})).Draw(t, "tool")
		if _, ok := p.Rule(name); ok {
			t.Skip("a rule matches")
		}
		in := rapid.MapOfN(rapid.SampledFrom([]string{"command", "cmd", "path", "file_path", "paths", "url"}),
			rapid.SampledFrom([]any{"ls", "view", "/tmp/x", []any{"a"}, 1.0, nil}), 0, 4).Draw(t, "input")
		raw, _ := json.Marshal(in)
		d, err := g.Decide(context.Background(), gate.ToolCallContext{ToolName: name, Input: in, RawInput: raw})
		require.NoError(t, err)
		require.NoError(t, d.Validate())
		require.NotEqual(t, gate.ActionAllow, d.Action, "tool %q has no rule", name)
	})
}

// The rule's file operation is never lowered by the call's input: a write
// tool's decision with extra fields (an editor "command": "view", any
// spelling) is at least as strict as the bare call's.
func TestInputCannotLowerTheOperation(t *testing.T) {
	g, err := Default().Gate("/home/dev/proj")
	require.NoError(t, err)
	rapid.Check(t, func(t *rapid.T) {
		tool := rapid.SampledFrom([]string{"Write", "Edit", "MultiEdit", "write_file", "replace"}).Draw(t, "tool")
		p := rapid.SampledFrom([]string{"/etc/passwd", "/home/dev/proj/a.go", "/home/dev/.bashrc", "a.go", "/tmp/x"}).Draw(t, "path")
		field := "file_path"
		if tool == "write_file" {
			field = rapid.SampledFrom([]string{"path", "file_path"}).Draw(t, "field")
		}
		bare := map[string]any{field: p}
		base, err := g.Decide(context.Background(), gate.ToolCallContext{ToolName: tool, Input: bare})
		require.NoError(t, err)
		extra := map[string]any{field: p}
		extra[rapid.SampledFrom([]string{"command", "Command", "COMMAND", "com_mand"}).Draw(t, "key")] =
			rapid.SampledFrom([]string{"view", "read", "ls", "create"}).Draw(t, "sub")
		got, err := g.Decide(context.Background(), gate.ToolCallContext{ToolName: tool, Input: extra})
		require.NoError(t, err)
		require.GreaterOrEqual(t, actionRank(got.Action), actionRank(base.Action), "%s %v: %s vs %s", tool, extra, got.Reason, base.Reason)
	})
}

// Property: with the call's cwd outside the workspace, a relative path is
// judged exactly as its absolute path under that cwd, for every file tool
// and operation (the workspace root is never the base of a relative path).
func TestRelativePathIsItsAbsolutePathUnderTheCwd(t *testing.T) {
	p, err := Parse([]byte("version: 1\nprofile: workspace\nworkspace: .\n"), "/srv/proj")
	if err != nil {
		t.Fatal(err)
	}
	seg := rapid.SampledFrom([]string{"a", "b.txt", "..", ".", "proj", "src", ".git", "node_modules", "x y", ".env"})
	rapid.Check(t, func(t *rapid.T) {
		cwd := "/srv/" + rapid.SampledFrom([]string{"other", "proj/sub", "proj/../other", "other/deep"}).Draw(t, "cwd")
		rel := strings.Join(rapid.SliceOfN(seg, 1, 5).Draw(t, "segs"), "/")
		tool := rapid.SampledFrom([]string{"Write", "Read", "write_file", "read_file"}).Draw(t, "tool")
		field := "file_path"
		if tool == "write_file" || tool == "read_file" {
			field = "path"
		}
		in, err := p.Gate("")
		if err != nil {
			t.Fatal(err)
		}
		at, err := p.GateAt("", cwd)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		got, err := at.Decide(ctx, gate.ToolCallContext{ToolName: tool, Input: map[string]any{field: rel}})
		if err != nil {
			t.Fatal(err)
		}
		want, err := in.Decide(ctx, gate.ToolCallContext{ToolName: tool, Input: map[string]any{field: cwd + "/" + rel}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Action != want.Action || got.Risk != want.Risk {
			t.Fatalf("%s %q from %s: %s/%s (%s), its absolute path: %s/%s (%s)", tool, rel, cwd, got.Action, got.Risk, got.Reason, want.Action, want.Risk, want.Reason)
		}
	})
}
