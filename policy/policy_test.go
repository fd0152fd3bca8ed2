package policy

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

func decide(t *testing.T, g gate.Gate, tool string, in map[string]any) gate.Decision {
	t.Helper()
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	d, err := g.Decide(context.Background(), gate.ToolCallContext{ToolName: tool, Input: in, RawInput: raw})
	require.NoError(t, err)
	require.NoError(t, d.Validate())
	return d
}

func TestParseErrorsNameTheLine(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown key", "version: 1\nprofil: strict\n", "line 2: field profil not found"},
		{"unknown nested key", "version: 1\napprover:\n  kind: deny\n  who: me\n", "line 4: field who not found"},
		{"unknown rule key", "version: 1\ntools:\n  - match: Bash\n    kind: shell\n    feilds: [command]\n", "line 5: field feilds not found"},
		{"no version", "profile: strict\n", "line 1: version is 0, want 1"},
		{"wrong version", "version: 2\n", "line 1: version is 2, want 1"},
		{"bad profile", "version: 1\nprofile: wide\n", "line 2: unknown profile \"wide\""},
		{"bad high", "version: 1\nhigh: allow\n", "line 2: high is \"allow\""},
		{"bad approver", "version: 1\napprover:\n  kind: slack\n", "line 3: approver kind is \"slack\""},
		{"bad kind", "version: 1\ntools:\n  - match: X\n    kind: run\n", "line 4: unknown kind \"run\""},
		{"no match", "version: 1\ntools:\n  - kind: deny\n", "line 3: a tool rule without match"},
		{"bad glob", "version: 1\ntools:\n  - match: \"mcp[\"\n    kind: deny\n", "line 3: match \"mcp[\" is not a valid pattern"},
		{"wrong type", "version: 1\ntrust_workspace: maybe\n", "line 2: cannot unmarshal"},
		{"syntax", "version: 1\ntools: [\n", "line 2: did not find"},
		{"empty", "  \n", "line 1: empty"},
		{"two documents", "version: 1\n---\nversion: 1\n", "line 2: more than one YAML document"},
		{"upstream rule", "version: 1\nmcp:\n  upstreams:\n    - name: fs\n      tools:\n        - match: write_file\n          kind: writes\n", "line 7: unknown kind \"writes\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "/tmp")
			require.Error(t, err)
			require.ErrorIs(t, err, ErrPolicy)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "toolgate.yaml")
	require.NoError(t, os.WriteFile(f, []byte("version: 1\nprofile: strict\nhihg: ask\n"), 0o600))
	_, err := Load(f)
	require.ErrorIs(t, err, ErrPolicy)
	require.Contains(t, err.Error(), f+":3: field hihg not found")

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist, "a named file that is missing is an error, not the defaults")
}

func TestLoadDefaultLookup(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(EnvPolicy, "")
	p, err := Load("")
	require.NoError(t, err)
	require.Equal(t, Default(), p, "no file anywhere: the defaults")

	require.NoError(t, os.WriteFile(filepath.Join(dir, DefaultFile), []byte("version: 1\nprofile: workspace\nworkspace: proj\n"), 0o600))
	p, err = Load("")
	require.NoError(t, err)
	require.Equal(t, classify.ProfileWorkspace, p.Profile)
	require.Equal(t, filepath.Join(dir, "proj"), p.Workspace, "relative to the file's directory")

	other := filepath.Join(dir, "other.yaml")
	require.NoError(t, os.WriteFile(other, []byte("version: 1\nprofile: read-only\n"), 0o600))
	t.Setenv(EnvPolicy, other)
	p, err = Load("")
	require.NoError(t, err)
	require.Equal(t, classify.ProfileReadOnly, p.Profile, "$TOOLGATE_POLICY wins over ./toolgate.yaml")
	require.Equal(t, other, p.Source())
}

func TestParseFillsDefaultsAndResolvesPaths(t *testing.T) {
	p, err := Parse([]byte(`version: 1
approver:
  kind: inbox
  inbox: state/approvals.db
export:
  spool: spool
mcp:
  upstreams:
    - name: fs
      command: [npx, server]
      roots: [data]
`), "/srv/proj")
	require.NoError(t, err)
	require.Equal(t, classify.ProfileStrict, p.Profile)
	require.Equal(t, HighDeny, p.High)
	require.True(t, p.Trusted())
	require.Equal(t, "/srv/proj/state/approvals.db", p.Approver.Inbox)
	require.Equal(t, "/srv/proj/spool", p.Export.Spool)
	require.Equal(t, []string{"/srv/proj/data"}, p.MCP.Upstreams[0].Roots)
	require.Empty(t, p.Workspace, "unset workspace: the caller's")
}

func TestRuleOrder(t *testing.T) {
	p, err := Parse([]byte(`version: 1
tools:
  - match: "mcp__fs__*"
    kind: write
    fields: [path]
  - match: Bash
    kind: deny
    reason: no shell here
`), "/tmp")
	require.NoError(t, err)
	r, ok := p.Rule("mcp__fs__write_file")
	require.True(t, ok)
	require.Equal(t, KindWrite, r.Kind)
	r, ok = p.Rule("Bash")
	require.True(t, ok)
	require.Equal(t, KindDeny, r.Kind, "the file's rules come before the built-in table")
	r, ok = p.Rule("run_shell_command")
	require.True(t, ok)
	require.Equal(t, KindShell, r.Kind)
	_, ok = p.Rule("bash ")
	require.False(t, ok, "exact names only in the built-in table")
	_, ok = p.Rule("READ")
	require.False(t, ok)
}

func TestGateBuiltinTools(t *testing.T) {
	ws := "/home/dev/proj"
	g, err := Default().Gate(ws)
	require.NoError(t, err)
	tests := []struct {
		name   string
		tool   string
		in     map[string]any
		action gate.Action
		source string
	}{
		{"claude ls", "Bash", map[string]any{"command": "ls -la", "description": "list"}, gate.ActionAllow, classify.SourceBash},
		{"claude rm -rf /", "Bash", map[string]any{"command": "rm -rf /"}, gate.ActionDeny, classify.SourceBash},
		{"codex exec_command cmd", "exec_command", map[string]any{"cmd": "rm -r ~/canary"}, gate.ActionDeny, classify.SourceBash},
		{"gemini shell", "run_shell_command", map[string]any{"command": "cat README.md"}, gate.ActionAllow, classify.SourceBash},
		{"gemini shell in another dir", "run_shell_command", map[string]any{"command": "rm -r x", "dir_path": "/etc"}, gate.ActionDeny, classify.SourceBash},
		{"codex workdir", "exec_command", map[string]any{"cmd": "touch x", "workdir": "/etc"}, gate.ActionDeny, classify.SourceBash},
		{"dir not a string", "run_shell_command", map[string]any{"command": "ls", "dir_path": []any{"/"}}, gate.ActionDeny, classify.SourceBash},
		{"dir with a quote", "run_shell_command", map[string]any{"command": "ls", "dir_path": "/home/dev/proj/it's"}, gate.ActionAllow, classify.SourceBash},
		{"shell without command", "Bash", map[string]any{"description": "x"}, gate.ActionDeny, classify.SourceBash},
		{"shell command not a string", "Bash", map[string]any{"command": []any{"rm", "-rf", "/"}}, gate.ActionDeny, classify.SourceBash},
		{"claude read inside", "Read", map[string]any{"file_path": ws + "/main.go"}, gate.ActionAllow, classify.SourcePath},
		{"claude read secret", "Read", map[string]any{"file_path": "/home/dev/.ssh/id_rsa"}, gate.ActionDeny, classify.SourcePath},
		{"claude write outside", "Write", map[string]any{"file_path": "/etc/passwd", "content": "x"}, gate.ActionDeny, classify.SourcePath},
		{"claude edit inside (strict asks)", "Edit", map[string]any{"file_path": ws + "/a.go", "old_string": "a", "new_string": "b"}, gate.ActionAsk, classify.SourcePath},
		{"editor command cannot lower a write", "Write", map[string]any{"file_path": "/etc/passwd", "command": "view"}, gate.ActionDeny, classify.SourcePath},
		{"notebook", "NotebookEdit", map[string]any{"notebook_path": "/etc/x.ipynb"}, gate.ActionDeny, classify.SourcePath},
		{"glob in ws", "Glob", map[string]any{"pattern": "**/*.go"}, gate.ActionAllow, classify.SourcePath},
		{"glob lists names, even in ~/.ssh", "Glob", map[string]any{"pattern": "/home/dev/.ssh/*"}, gate.ActionAllow, classify.SourcePath},
		{"listing the home", "LS", map[string]any{"path": "/home/dev"}, gate.ActionAllow, classify.SourcePath},
		{"listing a key by its path is naming it", "LS", map[string]any{"path": "/home/dev/.ssh/id_ed25519"}, gate.ActionDeny, classify.SourcePath},
		{"glob pattern names /etc/shadow", "Glob", map[string]any{"pattern": "/etc/**/shadow"}, gate.ActionAllow, classify.SourcePath},
		{"grep regex is not a path", "Grep", map[string]any{"pattern": "/etc/passwd"}, gate.ActionAllow, classify.SourcePath},
		{"gemini read_file absolute_path", "read_file", map[string]any{"absolute_path": "/home/dev/.aws/credentials"}, gate.ActionDeny, classify.SourcePath},
		{"gemini read_many_files", "read_many_files", map[string]any{"paths": []any{"a.go", "/home/dev/.ssh/id_ed25519"}}, gate.ActionDeny, classify.SourcePath},
		{"gemini replace", "replace", map[string]any{"file_path": "/etc/hosts", "old_string": "a", "new_string": "b"}, gate.ActionDeny, classify.SourcePath},
		{"codex patch delete outside", "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Delete File: /etc/hosts\n*** End Patch\n"}, gate.ActionDeny, classify.SourcePath},
		{"codex patch update inside", "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: a.go\n@@\n-a\n+b\n*** End Patch\n"}, gate.ActionAsk, classify.SourcePath},
		{"codex patch move outside", "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: a.go\n*** Move to: /etc/cron.d/x\n*** End Patch\n"}, gate.ActionDeny, classify.SourcePath},
		{"codex patch without files", "apply_patch", map[string]any{"command": "rm -rf /"}, gate.ActionDeny, classify.SourcePath},
		{"web fetch", "WebFetch", map[string]any{"url": "https://example.com", "prompt": "x"}, gate.ActionAsk, SourcePolicy},
		{"todo", "TodoWrite", map[string]any{"todos": []any{}}, gate.ActionAllow, SourcePolicy},
		{"mcp tool without a rule", "mcp__fs__write_file", map[string]any{"path": "a"}, gate.ActionAsk, SourcePolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, g, tt.tool, tt.in)
			require.Equal(t, tt.action, d.Action, d.Reason)
			require.Equal(t, tt.source, d.Source, d.Reason)
		})
	}
}

func TestGateProfilesAndRules(t *testing.T) {
	p, err := Parse([]byte(`version: 1
profile: read-only
tools:
  - match: "mcp__fs__read_*"
    kind: read
    fields: [path]
  - match: "mcp__db__*"
    kind: ask
    reason: the database is production
  - match: Deploy
    kind: deny
`), "/tmp")
	require.NoError(t, err)
	g, err := p.Gate("/home/dev/proj")
	require.NoError(t, err)
	d := decide(t, g, "mcp__fs__read_text_file", map[string]any{"path": "/home/dev/proj/a.txt"})
	require.Equal(t, gate.ActionAllow, d.Action, d.Reason)
	d = decide(t, g, "mcp__db__query", map[string]any{"sql": "select 1"})
	require.Equal(t, gate.ActionDeny, d.Action, "read-only denies what it would ask")
	require.Equal(t, "the database is production", d.Reason)
	d = decide(t, g, "Deploy", nil)
	require.Equal(t, gate.ActionDeny, d.Action)
	d = decide(t, g, "Edit", map[string]any{"file_path": "/home/dev/proj/a.go"})
	require.Equal(t, gate.ActionDeny, d.Action, d.Reason)
	d = decide(t, g, "unknown_tool", nil)
	require.Equal(t, gate.ActionDeny, d.Action)

	p, err = Parse([]byte("version: 1\nprofile: workspace\nhigh: ask\n"), "/tmp")
	require.NoError(t, err)
	g, err = p.Gate("/home/dev/proj")
	require.NoError(t, err)
	d = decide(t, g, "Edit", map[string]any{"file_path": "/home/dev/proj/a.go"})
	require.Equal(t, gate.ActionAllow, d.Action, "workspace profile: edits inside run")
	d = decide(t, g, "Bash", map[string]any{"command": "rm -rf /"})
	require.Equal(t, gate.ActionAsk, d.Action, "high: ask")
}

func TestPatchFiles(t *testing.T) {
	got := PatchFiles("*** Begin Patch\n*** Add File: new.txt\n+hi\n*** Update File: a.go\n*** Move to: b.go\n@@\n  *** Delete File: /etc/x \r\n*** Delete File:\n*** End Patch")
	require.Equal(t, []PatchFile{
		{"new.txt", classify.OpWrite}, {"a.go", classify.OpWrite}, {"b.go", classify.OpWrite}, {"/etc/x", classify.OpDelete},
	}, got)
	require.Empty(t, PatchFiles("echo hi"))
}

func TestGateHonoursContext(t *testing.T) {
	g, err := Default().Gate("/w")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = g.Decide(ctx, gate.ToolCallContext{ToolName: "Bash", Input: map[string]any{"command": "ls"}})
	require.True(t, errors.Is(err, context.Canceled))
}

func TestBuiltinRulesIsACopy(t *testing.T) {
	rs := BuiltinRules()
	require.NotEmpty(t, rs)
	for i := range rs {
		if rs[i].Match == "Bash" {
			rs[i].Fields[0] = "x"
		}
		require.False(t, strings.ContainsAny(rs[i].Match, "*?["), "built-in names are exact")
	}
	r, _ := Default().Rule("Bash")
	require.Equal(t, "command", r.Fields[0])
}

// The shipped example (examples/policy/toolgate.yaml, docs/policy.md)
// parses and gates as it says.
func TestExamplePolicy(t *testing.T) {
	p, err := Load(filepath.Join("..", "examples", "policy", "toolgate.yaml"))
	require.NoError(t, err)
	require.Equal(t, classify.ProfileWorkspace, p.Profile)
	g, err := p.Gate("/home/dev/proj")
	require.NoError(t, err)
	require.Equal(t, gate.ActionAllow, decide(t, g, "mcp__fs__read_text_file", map[string]any{"path": "/home/dev/proj/a.txt"}).Action)
	require.Equal(t, gate.ActionDeny, decide(t, g, "mcp__fs__write_file", map[string]any{"path": "/etc/passwd"}).Action)
	require.Equal(t, gate.ActionAsk, decide(t, g, "mcp__fs__move_file", map[string]any{"source": "a", "destination": "b"}).Action)
	require.Equal(t, gate.ActionDeny, decide(t, g, "mcp__deploy__prod", nil).Action)
	require.Equal(t, gate.ActionAllow, decide(t, g, "Edit", map[string]any{"file_path": "/home/dev/proj/a.go"}).Action)
}

// A write or delete of the loaded policy file is denied, whatever the
// profile allows elsewhere.
func TestPolicyFileIsProtected(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "toolgate.yaml")
	require.NoError(t, os.WriteFile(f, []byte("version: 1\nprofile: workspace\n"), 0o600))
	p, err := Load(f)
	require.NoError(t, err)
	g, err := p.Gate(dir)
	require.NoError(t, err)
	for _, c := range []struct {
		tool string
		in   map[string]any
	}{
		{"Write", map[string]any{"file_path": f, "content": "version: 1\ntools: [{match: '*', kind: allow}]\n"}},
		{"Edit", map[string]any{"file_path": "toolgate.yaml"}},
		{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Delete File: ./toolgate.yaml\n*** End Patch\n"}},
	} {
		d := decide(t, g, c.tool, c.in)
		require.Equal(t, gate.ActionDeny, d.Action, c.tool)
		require.Equal(t, "policy.self", d.Rule, c.tool)
	}
	// Through the spellings the classifier sees through (a /proc link,
	// letter case, ~+), the write is still denied: the classifier holds
	// the policy file as a protected path too.
	at, err := p.GateAt(dir, dir)
	require.NoError(t, err)
	for _, q := range []string{"/proc/self/cwd/toolgate.yaml", "/proc/self/root" + f, "/proc/thread-self/cwd/sub/../toolgate.yaml", "TOOLGATE.YAML"} {
		d := decide(t, at, "Write", map[string]any{"file_path": q, "content": "x"})
		require.Equal(t, gate.ActionDeny, d.Action, "%s: %s", q, d.Reason)
		d = decide(t, at, "Bash", map[string]any{"command": "echo x > " + q})
		require.Equal(t, gate.ActionDeny, d.Action, "shell %s: %s", q, d.Reason)
	}
	d := decide(t, g, "Edit", map[string]any{"file_path": filepath.Join(dir, "main.go")})
	require.Equal(t, gate.ActionAllow, d.Action, "other workspace edits run under the workspace profile: %s", d.Reason)
	d = decide(t, g, "Read", map[string]any{"file_path": f})
	require.Equal(t, gate.ActionAllow, d.Action, "reading it is fine")
}

// The agent's cwd may lie outside the policy's workspace: a relative path
// is where the agent runs the call, never inside the workspace. (Before
// GateAt's cwd, "notes.txt" from /srv/other was judged as /srv/proj/notes.txt
// and allowed.)
func TestRelativePathsAreJudgedFromTheCallsCwd(t *testing.T) {
	p, err := Parse([]byte("version: 1\nprofile: workspace\nworkspace: .\n"), "/srv/proj")
	require.NoError(t, err)
	inWS, err := p.Gate("")
	require.NoError(t, err)
	elsewhere, err := p.GateAt("", "/srv/other")
	require.NoError(t, err)
	for _, c := range []struct {
		tool string
		in   map[string]any
	}{
		{"Write", map[string]any{"file_path": "notes.txt", "content": "x"}},
		{"Edit", map[string]any{"file_path": "./src/../notes.txt"}},
		{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: notes.txt\n+hi\n*** End Patch\n"}},
		{"Bash", map[string]any{"command": "echo hi > notes.txt"}},
		{"write_file", map[string]any{"path": "notes.txt"}},
	} {
		require.Equal(t, gate.ActionAllow, decide(t, inWS, c.tool, c.in).Action, "%s in the workspace", c.tool)
		d := decide(t, elsewhere, c.tool, c.in)
		require.NotEqual(t, gate.ActionAllow, d.Action, "%s from /srv/other writes outside the workspace: %s", c.tool, d.Reason)
		abs := decide(t, inWS, c.tool, absolutize(c.tool, c.in, "/srv/other"))
		require.Equal(t, abs.Action, d.Action, "%s: relative from the cwd = the absolute path: %s vs %s", c.tool, d.Reason, abs.Reason)
	}
	// rm of a relative path from elsewhere is as strict as of its absolute path.
	rel := decide(t, elsewhere, "Bash", map[string]any{"command": "rm -rf build"})
	abs := decide(t, inWS, "Bash", map[string]any{"command": "rm -rf /srv/other/build"})
	require.Equal(t, abs.Action, rel.Action, "%s vs %s", rel.Reason, abs.Reason)
	// The cwd equal to the workspace, or not absolute, changes nothing.
	same, err := p.GateAt("", "/srv/proj/")
	require.NoError(t, err)
	require.Equal(t, gate.ActionAllow, decide(t, same, "Write", map[string]any{"file_path": "notes.txt"}).Action)
}

// absolutize rewrites the test inputs' relative paths under dir.
func absolutize(tool string, in map[string]any, dir string) map[string]any {
	out := map[string]any{}
	for k, v := range in {
		s, _ := v.(string)
		switch {
		case tool == "apply_patch":
			s = strings.ReplaceAll(s, "File: notes.txt", "File: "+dir+"/notes.txt")
		case tool == "Bash":
			s = strings.ReplaceAll(s, "> notes.txt", "> "+dir+"/notes.txt")
		case k == "file_path" || k == "path":
			s = filepath.Join(dir, s)
		}
		out[k] = s
	}
	return out
}

// Calls that run outside the workspace root (the model cd'd elsewhere) are
// judged where they run.
func TestGateAtJudgesWhereTheCallRuns(t *testing.T) {
	p, err := Parse([]byte("version: 1\nprofile: workspace\n"), "/tmp")
	require.NoError(t, err)
	ws := "/home/dev/proj"
	root, err := p.GateAt(ws, ws)
	require.NoError(t, err)
	etc, err := p.GateAt(ws, "/etc")
	require.NoError(t, err)
	sub, err := p.GateAt(ws, ws+"/src")
	require.NoError(t, err)
	ssh, err := p.GateAt(ws, "/home/dev/.ssh")
	require.NoError(t, err)
	tests := []struct {
		name string
		g    gate.Gate
		tool string
		in   map[string]any
		want gate.Action
	}{
		{"rm in the workspace (asked)", root, "Bash", map[string]any{"command": "rm -r build"}, gate.ActionAsk},
		{"rm after cd /etc", etc, "Bash", map[string]any{"command": "rm -r build"}, gate.ActionDeny},
		{"rm in a workspace subdir (asked)", sub, "Bash", map[string]any{"command": "rm -r build"}, gate.ActionAsk},
		{"ls in /etc", etc, "Bash", map[string]any{"command": "ls"}, gate.ActionAllow},
		{"relative write from /etc", etc, "write_file", map[string]any{"file_path": "passwd"}, gate.ActionDeny},
		{"relative write in the workspace", root, "write_file", map[string]any{"file_path": "a.go"}, gate.ActionAllow},
		{"relative dir_path from /etc", etc, "run_shell_command", map[string]any{"command": "touch x", "dir_path": "cron.d"}, gate.ActionDeny},
		{"glob without a path lists the cwd (names only)", ssh, "Glob", map[string]any{"pattern": "id_*"}, gate.ActionAllow},
		{"grep without a path searches the cwd", ssh, "Grep", map[string]any{"pattern": "PRIVATE"}, gate.ActionDeny},
		{"glob without a path in the workspace", root, "Glob", map[string]any{"pattern": "**/*.go"}, gate.ActionAllow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, tt.g, tt.tool, tt.in)
			require.Equal(t, tt.want, d.Action, d.Reason)
		})
	}
	_, err = p.GateAt(ws, "relative")
	require.Error(t, err)
}
