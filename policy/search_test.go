package policy

import (
	"context"
	"path"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/gate"
)

// A content search (Grep, Gemini's grep_search and search_file_content)
// reads every file below its path, hidden ones included: a directory that
// holds a secret is judged as the secret, in every spelling of it.
func TestSearchReadsTheWholeTree(t *testing.T) {
	t.Setenv("HOME", "/home/dev")
	g, err := Default().GateAt("/home/dev/proj", "/home/dev/proj")
	require.NoError(t, err)
	tests := []struct {
		tool string
		in   map[string]any
		want gate.Action
	}{
		{"Grep", map[string]any{"pattern": "root:", "path": "/etc"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/home"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/home/dev"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/home/dev/"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/home/dev/proj/.."}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": ".."}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "~"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/root"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/Users/someone"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/home/dev/.config"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/home/dev/.ssh"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/HOME/DEV/.SSH"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/home/dev/.ssh/id_ed25519"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/proc/self/root/etc"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "PATH": "/etc"}, gate.ActionDeny},
		// The file filter names what is read below the path.
		{"Grep", map[string]any{"pattern": "x", "path": "/home/dev/proj", "glob": "../.ssh/*"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/home/dev/proj", "glob": "/etc/shadow"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "path": "/home/dev/proj", "glob": "~/.aws/*"}, gate.ActionDeny},
		{"Grep", map[string]any{"pattern": "x", "glob": "*.go"}, gate.ActionAllow},
		{"Grep", map[string]any{"pattern": "x", "path": "/home/dev/proj/src", "glob": "**/*.ts"}, gate.ActionAllow},
		{"grep_search", map[string]any{"pattern": "x", "dir_path": "/etc"}, gate.ActionDeny},
		{"grep_search", map[string]any{"pattern": "x", "dir_path": "/home/dev"}, gate.ActionDeny},
		{"grep_search", map[string]any{"pattern": "x", "include": "../.ssh/*"}, gate.ActionDeny},
		{"grep_search", map[string]any{"pattern": "x", "include": "*.py"}, gate.ActionAllow},
		{"search_file_content", map[string]any{"pattern": "x", "path": "/"}, gate.ActionDeny},
		// Inside the workspace a search is a read.
		{"Grep", map[string]any{"pattern": "TODO"}, gate.ActionAllow},
		{"Grep", map[string]any{"pattern": "TODO", "path": "src"}, gate.ActionAllow},
		{"Grep", map[string]any{"pattern": "TODO", "path": "/home/dev/proj/.git"}, gate.ActionAllow},
		{"grep_search", map[string]any{"pattern": "TODO", "dir_path": "/home/dev/proj"}, gate.ActionAllow},
		// A "**" glob of files to read reaches the whole tree below it.
		{"read_many_files", map[string]any{"include": []any{"~/**"}}, gate.ActionDeny},
		{"read_many_files", map[string]any{"include": []any{"/home/dev/**"}}, gate.ActionDeny},
		{"read_many_files", map[string]any{"include": []any{"/home/*/**"}}, gate.ActionDeny},
		{"read_many_files", map[string]any{"include": []any{"src/**/*.go"}}, gate.ActionAllow},
		// A listing gives names, not contents.
		{"Glob", map[string]any{"pattern": "**/*.go", "path": "/home/dev/proj"}, gate.ActionAllow},
		{"Glob", map[string]any{"pattern": "**/*.conf", "path": "/etc"}, gate.ActionAllow},
	}
	for _, tt := range tests {
		d := decide(t, g, tt.tool, tt.in)
		require.Equal(t, tt.want, d.Action, "%s %v: %s (%s)", tt.tool, tt.in, d.Reason, d.Rule)
	}
}

// secretFiles are files whose plain read the default rules deny, each
// anchored at "/" or "~" (rules for names found anywhere, "**/.env", are
// matched when named, not when a tree is searched).
var secretFiles = []string{
	"~/.ssh/id_ed25519", "~/.ssh/id_rsa", "~/.aws/credentials", "~/.config/gcloud/application_default_credentials.json",
	"~/.kube/config", "~/.docker/config.json", "~/.gnupg/private-keys-v1.d/x.key", "/etc/shadow", "/etc/sudoers",
}

// Property: for every secret file, a content search of any directory that
// holds it — in "~" or absolute form, through "..", "." or "//", from any
// cwd, by any of the agents' search tools — is denied; so is a "**" read
// of that directory.
func TestSearchOfATreeHoldingASecretIsDenied(t *testing.T) {
	t.Setenv("HOME", "/home/dev")
	ctx := context.Background()
	ws := "/home/dev/proj"
	rapid.Check(t, func(t *rapid.T) {
		secret := rapid.SampledFrom(secretFiles).Draw(t, "secret")
		abs := strings.Replace(secret, "~", "/home/dev", 1)
		segs := strings.Split(strings.TrimPrefix(abs, "/"), "/")
		dir := "/" + strings.Join(segs[:rapid.IntRange(0, len(segs)-1).Draw(t, "depth")], "/")
		spelled := spell(t, dir)
		cwd := rapid.SampledFrom([]string{ws, ws + "/src", "/tmp", "/home/dev"}).Draw(t, "cwd")
		g, err := Default().GateAt(ws, cwd)
		if err != nil {
			t.Fatal(err)
		}
		read, err := g.Decide(ctx, gate.ToolCallContext{ToolName: "Read", Input: map[string]any{"file_path": abs}})
		if err != nil || read.Action != gate.ActionDeny {
			t.Fatalf("the plain read of %s is %v (%v): the list of secrets is wrong", abs, read.Action, err)
		}
		var tool string
		var in map[string]any
		switch rapid.IntRange(0, 3).Draw(t, "tool") {
		case 0:
			tool, in = "Grep", map[string]any{"pattern": "x", "path": spelled}
		case 1:
			tool, in = "grep_search", map[string]any{"pattern": "x", "dir_path": spelled}
		case 2:
			tool, in = "search_file_content", map[string]any{"pattern": "x", "path": spelled}
		default:
			tool, in = "read_many_files", map[string]any{"include": []any{strings.TrimSuffix(spelled, "/") + "/**"}}
		}
		d, err := g.Decide(ctx, gate.ToolCallContext{ToolName: tool, Input: in})
		if err != nil {
			t.Fatal(err)
		}
		if d.Action != gate.ActionDeny {
			t.Fatalf("%s %v (holds %s) from %s: %s/%s %s (%s)", tool, in, secret, cwd, d.Action, d.Risk, d.Reason, d.Rule)
		}
	})
}

// spell writes the absolute directory dir as the model might: as is, in
// "~" form, with a trailing slash, "//", "/./" or a ".." detour.
func spell(t *rapid.T, dir string) string {
	s := dir
	if rapid.Bool().Draw(t, "tilde") && (dir == "/home/dev" || strings.HasPrefix(dir, "/home/dev/")) {
		s = "~" + strings.TrimPrefix(dir, "/home/dev")
	}
	switch rapid.IntRange(0, 4).Draw(t, "spelling") {
	case 1:
		s += "/"
	case 2:
		s = strings.Replace(s, "/", "//", 1)
	case 3:
		s = strings.Replace(s, "/", "/./", 1)
	case 4:
		if s != "/" && s != "~" {
			s = path.Dir(s) + "/x/../" + path.Base(s)
		}
	}
	return s
}

// Property: a secret's read is denied in any letter case (macOS and
// Windows file systems open ~/.SSH/ID_RSA as ~/.ssh/id_rsa), by every
// read tool.
func TestSecretReadIsDeniedInAnyCase(t *testing.T) {
	t.Setenv("HOME", "/home/dev")
	g, err := Default().Gate("/home/dev/proj")
	require.NoError(t, err)
	rapid.Check(t, func(t *rapid.T) {
		secret := strings.Replace(rapid.SampledFrom(secretFiles).Draw(t, "secret"), "~", "/home/dev", 1)
		b := []rune(secret)
		flips := rapid.SliceOfN(rapid.Bool(), len(b), len(b)).Draw(t, "flips")
		for i := range b {
			if flips[i] {
				b[i] = unicode.ToUpper(b[i])
			}
		}
		tool := rapid.SampledFrom([]string{"Read", "read_file", "Grep"}).Draw(t, "tool")
		field := map[string]string{"Read": "file_path", "read_file": "path", "Grep": "path"}[tool]
		in := map[string]any{field: string(b)}
		if tool == "Grep" {
			in["pattern"] = "x"
		}
		d, err := g.Decide(context.Background(), gate.ToolCallContext{ToolName: tool, Input: in})
		if err != nil {
			t.Fatal(err)
		}
		if d.Action != gate.ActionDeny {
			t.Fatalf("%s %v: %s (%s)", tool, in, d.Action, d.Reason)
		}
	})
}

// Property: a search of a path is never judged more leniently than a
// read of it.
func TestSearchIsNeverLaxerThanRead(t *testing.T) {
	t.Setenv("HOME", "/home/dev")
	g, err := Default().Gate("/home/dev/proj")
	require.NoError(t, err)
	seg := rapid.SampledFrom([]string{"home", "dev", "proj", ".ssh", ".aws", "etc", "..", ".", "src", ".config", "gcloud", "~", "Users", "root", "*", "**"})
	rapid.Check(t, func(t *rapid.T) {
		p := strings.Join(rapid.SliceOfN(seg, 1, 5).Draw(t, "segs"), "/")
		if rapid.Bool().Draw(t, "abs") {
			p = "/" + p
		}
		ctx := context.Background()
		read, err := g.Decide(ctx, gate.ToolCallContext{ToolName: "read_file", Input: map[string]any{"path": p}})
		if err != nil {
			t.Fatal(err)
		}
		search, err := g.Decide(ctx, gate.ToolCallContext{ToolName: "Grep", Input: map[string]any{"pattern": "x", "path": p}})
		if err != nil {
			t.Fatal(err)
		}
		if actionRank(search.Action) < actionRank(read.Action) {
			t.Fatalf("%q: search %s (%s), read %s (%s)", p, search.Action, search.Reason, read.Action, read.Reason)
		}
	})
}
