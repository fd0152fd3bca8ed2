package mcpgate

import (
	"fmt"
	"path"
	"slices"

	"github.com/toolgate/toolgate/policy"
)

// Kind is what a rule says a tool does with its arguments: the policy
// file's kinds (policy.Kind).
type Kind = policy.Kind

// Rule kinds: shell and the file operations send the named fields through
// classify's bash and path classifiers; fetch is review (the profile's
// review action: ask, or deny under read-only); allow, deny and ask are
// fixed decisions with Rule.Reason.
const (
	KindShell  = policy.KindShell
	KindRead   = policy.KindRead
	KindSearch = policy.KindSearch // every file below the path (classify.OpSearch)
	KindWrite  = policy.KindWrite
	KindDelete = policy.KindDelete
	KindFetch  = policy.KindFetch
	KindAllow  = policy.KindAllow
	KindDeny   = policy.KindDeny
	KindAsk    = policy.KindAsk
)

// Rule is one per-tool rule of an upstream (same shape as policy.ToolRule).
type Rule struct {
	// Match is the upstream's own tool name, exact or a path.Match glob.
	Match string
	Kind  Kind
	// Fields are the input fields holding the command (shell) or the
	// path(s) (read, write, delete; strings or arrays of strings). Empty:
	// "command", "cmd" for shell; "path", "file_path", "paths" for files.
	Fields []string
	// Reason is recorded and shown for allow, deny and ask.
	Reason string
	// Also are further parts judged with this one, for tools whose
	// arguments do several things (move_file deletes its source and writes
	// its destination); the strictest part decides (gate.Chain).
	Also []Rule
}

// Validate checks the kind and the glob.
func (r Rule) Validate() error {
	if r.Match == "" {
		return fmt.Errorf("rule without match")
	}
	if err := checkGlob(r.Match); err != nil {
		return fmt.Errorf("match %q: %w", r.Match, err)
	}
	if !slices.Contains([]Kind{KindShell, KindRead, KindSearch, KindWrite, KindDelete, KindFetch, KindAllow, KindDeny, KindAsk}, r.Kind) {
		return fmt.Errorf("match %q: unknown kind %q (shell, read, search, write, delete, fetch, allow, deny, ask)", r.Match, r.Kind)
	}
	for _, a := range r.Also {
		a.Match = r.Match
		if err := a.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// FilesystemServerName is the serverInfo.name of
// @modelcontextprotocol/server-filesystem, the server BuiltinRules
// describes.
const FilesystemServerName = "secure-filesystem-server"

// BuiltinRules is the table applied after an upstream's own rules: the
// tools of @modelcontextprotocol/server-filesystem (2026.8.31), by name,
// on an upstream started by command whose initialize names it
// (FilesystemServerName) — never on another server, whose tool of the same
// name may do something else, nor on a URL upstream, whose tool names are
// untrusted claims like its annotations. A new slice each call.
func BuiltinRules() []Rule {
	read := func(name string, fields ...string) Rule { return Rule{Match: name, Kind: KindRead, Fields: fields} }
	write := func(name string, fields ...string) Rule { return Rule{Match: name, Kind: KindWrite, Fields: fields} }
	return []Rule{
		read("read_text_file", "path"),
		read("read_file", "path"),
		read("read_media_file", "path"),
		read("read_multiple_files", "paths"),
		read("list_directory", "path"),
		read("list_directory_with_sizes", "path"),
		read("directory_tree", "path"),
		read("search_files", "path"),
		read("get_file_info", "path"),
		write("write_file", "path"),
		write("edit_file", "path"),
		write("create_directory", "path"),
		{Match: "move_file", Kind: KindDelete, Fields: []string{"source"},
			Also: []Rule{{Kind: KindWrite, Fields: []string{"destination"}}}},
		{Match: "list_allowed_directories", Kind: KindAllow, Reason: "lists the server's allowed directories; no side effects"},
	}
}

// ruleFor is the first rule of rules that matches tool.
func ruleFor(rules []Rule, tool string) (Rule, bool) {
	for _, r := range rules {
		if globMatch(r.Match, tool) {
			return r, true
		}
	}
	return Rule{}, false
}

func checkGlob(p string) error {
	_, err := path.Match(p, "")
	return err
}

// globMatch is exact equality or path.Match (a malformed pattern matches
// only itself).
func globMatch(pattern, name string) bool {
	if pattern == name {
		return true
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}
