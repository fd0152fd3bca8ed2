package policy

import (
	"path"
	"slices"
)

// Kind is what a tool does, as far as the gate is concerned.
type Kind string

// Tool kinds.
const (
	// KindShell: the fields hold shell commands (classify.BashGate).
	KindShell Kind = "shell"
	// KindRead, KindWrite, KindDelete: the fields hold paths the tool
	// reads, writes or deletes (classify.PathGate with that operation).
	KindRead   Kind = "read"
	KindWrite  Kind = "write"
	KindDelete Kind = "delete"
	// KindSearch: the fields hold directories the tool searches the
	// contents of, every file below them (classify.OpSearch: a search of
	// /etc is judged as a read of /etc/shadow).
	KindSearch Kind = "search"
	// KindFetch: network access (a review verdict: asked, or denied
	// under read-only).
	KindFetch Kind = "fetch"
	// KindAllow, KindDeny, KindAsk: a fixed decision with the rule's
	// reason.
	KindAllow Kind = "allow"
	KindDeny  Kind = "deny"
	KindAsk   Kind = "ask"
)

func (k Kind) valid() bool {
	switch k {
	case KindShell, KindRead, KindSearch, KindWrite, KindDelete, KindFetch, KindAllow, KindDeny, KindAsk:
		return true
	}
	return false
}

// DefaultFields are the input fields a kind reads when a rule names none.
func (k Kind) DefaultFields() []string {
	switch k {
	case KindShell:
		return []string{"command", "cmd"}
	case KindRead, KindSearch, KindWrite, KindDelete:
		return []string{"path", "file_path", "target_file", "paths"}
	case KindFetch:
		return []string{"url", "query"}
	}
	return nil
}

// ToolRule is one `tools:` entry: which tools it matches and how their
// calls are judged.
type ToolRule struct {
	// Match is an exact tool name or a path.Match glob ("mcp__fs__*").
	Match string `yaml:"match"`
	// Kind is how calls are judged.
	Kind Kind `yaml:"kind"`
	// Fields are the input fields holding the command, path(s) or URL, in
	// any spelling gate.SameFieldName reads as one (default: the kind's
	// DefaultFields).
	Fields []string `yaml:"fields"`
	// Reason is recorded and shown for allow, deny and ask (default: one
	// naming the rule).
	Reason string `yaml:"reason"`

	extract extractor // built-in rules with a tool-specific input shape
	dirs    []string  // shell: input fields naming the directory the command runs in
}

// extractor names a built-in input shape.
type extractor int

const (
	extractFields   extractor = iota // the rule's fields
	extractPatch                     // Codex apply_patch: paths from the patch text in "command"
	extractSearch                    // Glob/Grep/LS-like: path fields, else the cwd; plus a glob pattern's directory
	extractSearchRe                  // like extractSearch, but the pattern is a regex (not a path)
)

// FieldsOrDefault is r.Fields, or the kind's DefaultFields when empty.
func (r ToolRule) FieldsOrDefault() []string {
	if len(r.Fields) > 0 {
		return r.Fields
	}
	return r.Kind.DefaultFields()
}

// matches reports whether the rule matches tool: equal, or a glob match.
func (r ToolRule) matches(tool string) bool {
	if r.Match == tool {
		return true
	}
	ok, err := path.Match(r.Match, tool)
	return err == nil && ok
}

// builtin is the built-in tool table, by exact tool name.
var builtin = func() map[string]ToolRule {
	m := map[string]ToolRule{}
	add := func(k Kind, fields []string, ex extractor, reason string, names ...string) {
		for _, n := range names {
			m[n] = ToolRule{Match: n, Kind: k, Fields: fields, Reason: reason, extract: ex}
		}
	}
	// Shell: Claude Code and Codex "Bash" (Codex also names its shell
	// tools exec_command and shell), Gemini run_shell_command, replay bash.
	// A directory the tool runs the command in (Gemini's dir_path, Codex's
	// workdir) is judged as a cd before the command.
	add(KindShell, []string{"command", "cmd"}, extractFields, "", "Bash", "exec_command", "shell", "run_shell_command", "bash")
	for _, n := range []string{"Bash", "exec_command", "shell", "run_shell_command"} {
		r := m[n]
		r.dirs = []string{"dir_path", "workdir", "cwd", "directory"}
		m[n] = r
	}
	// Reads.
	add(KindRead, []string{"file_path", "path"}, extractFields, "", "Read")
	add(KindRead, []string{"path", "file_path", "absolute_path"}, extractFields, "", "read_file")
	// Gemini CLI 0.61 names the files in "include" (required; paths or
	// globs), older versions in "paths": both are judged.
	add(KindRead, []string{"paths", "include"}, extractFields, "", "read_many_files")
	add(KindRead, []string{"path", "dir_path"}, extractSearch, "", "Glob", "LS", "list_directory", "glob")
	add(KindSearch, []string{"path", "dir_path"}, extractSearchRe, "", "Grep", "search_file_content", "grep_search")
	// Writes.
	add(KindWrite, []string{"file_path"}, extractFields, "", "Write", "Edit", "MultiEdit", "replace")
	add(KindWrite, []string{"notebook_path"}, extractFields, "", "NotebookEdit")
	add(KindWrite, []string{"path", "file_path"}, extractFields, "", "write_file", "edit")
	add(KindWrite, []string{"command"}, extractPatch, "", "apply_patch")
	// Network.
	add(KindFetch, []string{"url", "prompt"}, extractFields, "", "WebFetch", "web_fetch")
	add(KindFetch, []string{"query"}, extractFields, "", "WebSearch", "google_web_search")
	// No side effects (Task spawns a subagent whose own calls are gated).
	add(KindAllow, nil, extractFields, "no side effects", "TodoWrite", "Task", "think", "finish")
	return m
}()

// BuiltinRules returns the built-in tool table (a copy), sorted by tool
// name: the tools of Claude Code, Codex CLI, Gemini CLI and the replayed
// runs (testdata/real), each with its kind and input fields.
func BuiltinRules() []ToolRule {
	out := make([]ToolRule, 0, len(builtin))
	for _, r := range builtin {
		r.Fields = slices.Clone(r.Fields)
		r.dirs = slices.Clone(r.dirs)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ToolRule) int {
		if a.Match < b.Match {
			return -1
		}
		if a.Match > b.Match {
			return 1
		}
		return 0
	})
	return out
}

// Rule returns the rule that applies to tool: the file's first matching
// rule, else the built-in table's entry for exactly that name. false
// means none: the gate asks about the call ("no policy for tool X"; denied
// under read-only), it never allows it.
func (p *Policy) Rule(tool string) (ToolRule, bool) {
	for _, r := range p.Tools {
		if r.matches(tool) {
			return r, true
		}
	}
	r, ok := builtin[tool]
	return r, ok
}
