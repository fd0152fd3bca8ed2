package classify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/gate"
)

// Rules is a classifier's rule set: plain data that DefaultRules builds in
// Go and ParseRules reads from YAML. Field names below are the YAML keys.
type Rules struct {
	// Commands maps a command name (argv0's basename, lower case) to its
	// rule. A command in no table gets Unknown.
	Commands map[string]CommandRule `yaml:"commands,omitempty"`
	// Wrappers maps a command that runs another command (sudo, env,
	// timeout, xargs, …) to how to find the wrapped command.
	Wrappers map[string]WrapperRule `yaml:"wrappers,omitempty"`
	// Env maps an environment variable to the risk of setting it, as a
	// command prefix (PAGER=… git log) or with export.
	Env map[string]EnvRule `yaml:"env,omitempty"`
	// Paths are sensitive path patterns for reads and writes (redirects,
	// file operands, file tools). The highest matching rule wins.
	Paths []PathRule `yaml:"paths,omitempty"`
	// SystemDirs hold trusted executables: /bin/rm is rm, ./rm is not.
	SystemDirs []string `yaml:"system_dirs,omitempty"`
	// TempDirs are scratch directories: writes and scoped deletes inside
	// them are review, deleting them wholesale is high.
	TempDirs []string `yaml:"temp_dirs,omitempty"`
	// Unknown is the level of a command in no table (default review).
	Unknown gate.RiskLevel `yaml:"unknown,omitempty"`
	// GitExecKeys are git config keys whose value is a program git runs
	// (core.pager, core.fsmonitor, alias.* with "!"…; "*" matches any
	// part). Setting one with git config is high; with git -c, its value
	// is classified as a command.
	GitExecKeys []string `yaml:"git_exec_keys,omitempty"`
}

// CommandRule classifies one command.
type CommandRule struct {
	// Level is the command's level when no flag, subcommand or analyzer
	// says more: safe for read-only utilities.
	Level gate.RiskLevel `yaml:"level"`
	// Reason explains Level.
	Reason string `yaml:"reason,omitempty"`
	// Analyzer names a built-in argument analyzer (see docs/classifier.md:
	// rm, find, sed, awk, git, tar, curl, shell, interpreter, …).
	Analyzer string `yaml:"analyzer,omitempty"`
	// ReadsFiles: operands are files the command reads, checked against
	// the Paths rules (cat .env is high).
	ReadsFiles bool `yaml:"reads_files,omitempty"`
	// WritesFiles: operands are files the command writes or deletes
	// (touch, mkdir, truncate), checked against the Paths rules.
	WritesFiles bool `yaml:"writes_files,omitempty"`
	// Traits feed the composite rules: fetch, decode, envdump, shell
	// (runs a script read on stdin), network (sends stdin out).
	Traits []string `yaml:"traits,omitempty"`
	// ValueFlags take a separate value (kubectl -n NS); used to find the
	// subcommand and the operands.
	ValueFlags []string `yaml:"value_flags,omitempty"`
	// OutputFlags take the name of a file the command writes (gcc -o,
	// valgrind --log-file, curl --dump-header); the file is checked like
	// any other write (gcc -o ~/.bashrc is high).
	OutputFlags []string `yaml:"output_flags,omitempty"`
	// Wraps: the operands after this (sub)command's options are a command
	// it runs (uv run, poetry run, bundle exec), classified like a
	// wrapper's.
	Wraps bool `yaml:"wraps,omitempty"`
	// Flags raise the level when present (before "--").
	Flags []FlagRule `yaml:"flags,omitempty"`
	// Subcommands, keyed by the first operand, refine the rule; a
	// subcommand's own Subcommands match the next operand.
	Subcommands map[string]CommandRule `yaml:"subcommands,omitempty"`
	// Runs lists the options that make this (sub)command run a program,
	// open a pager or editor, load a library or take its options from a
	// file (see RunRule).
	Runs []RunRule `yaml:"runs,omitempty"`
	// Abbrev: the command parses long options with GNU getopt_long (or
	// git's parse-options), which accepts any unambiguous prefix of a
	// long option ("--compress-prog", "--co=" for
	// "--compress-program"). Every rule for a long option then covers
	// its abbreviations; LongOptions names the command's other long
	// options so that a prefix is resolved as the tool resolves it.
	Abbrev bool `yaml:"abbrev,omitempty"`
	// LongOptions are further long options of the command, used only to
	// resolve abbreviations (see Abbrev).
	LongOptions []string `yaml:"long_options,omitempty"`
}

// RunRule is an option that makes a command run another program: an
// entry of the table of "programs that run programs".
type RunRule struct {
	// Options are the spellings ("-I", "--use-compress-program"); every
	// accepted form matches: "-I V", "-IV", a bundle ("-xI V"),
	// "--opt V", "--opt=V" and, with Abbrev, "--use-comp=V".
	Options []string `yaml:"options"`
	// Value says what the option's value is: "command" (a command line
	// the tool runs; it is classified too and can only raise the level),
	// "file" (a file the tool reads options or code from), or "" (the
	// option takes no value: its presence is enough).
	Value string `yaml:"value,omitempty"`
	// Prefix: only values starting with it count, and the command is
	// what follows ("exec=" for tar --checkpoint-action=exec=CMD).
	Prefix string `yaml:"prefix,omitempty"`
	// Level, ID and Reason are the finding when the option is present.
	Level  gate.RiskLevel `yaml:"level"`
	ID     string         `yaml:"id"`
	Reason string         `yaml:"reason"`
}

// FlagRule raises a command's level when one of its flags is present.
type FlagRule struct {
	// Flags: "--force" also matches "--force=x"; a one-letter "-f" also
	// matches inside a bundle like "-rf"; a trailing "*" matches a prefix
	// ("-i*" matches "-i.bak").
	Flags  []string       `yaml:"flags"`
	Level  gate.RiskLevel `yaml:"level"`
	ID     string         `yaml:"id"`
	Reason string         `yaml:"reason"`
}

// WrapperRule describes a command that runs another command.
type WrapperRule struct {
	// Level is the wrapper's own minimum level (sudo: high).
	Level gate.RiskLevel `yaml:"level,omitempty"`
	// Reason explains Level.
	Reason string `yaml:"reason,omitempty"`
	// ValueFlags take a separate value (timeout -s SIG, nice -n 5).
	ValueFlags []string `yaml:"value_flags,omitempty"`
	// Skip is the number of operands before the wrapped command (timeout's
	// duration: 1; flock's lock file: 1).
	Skip int `yaml:"skip,omitempty"`
	// ScriptFlags take a shell script as their value (su -c, script -c).
	ScriptFlags []string `yaml:"script_flags,omitempty"`
	// OutputFlags take the name of a file the wrapper writes (strace -o,
	// time -o); it is checked like any other write.
	OutputFlags []string `yaml:"output_flags,omitempty"`
	// Analyzer names built-in handling for wrappers with their own syntax
	// (env, xargs, parallel, shell, eval).
	Analyzer string `yaml:"analyzer,omitempty"`
}

// EnvRule is the risk of setting one environment variable.
type EnvRule struct {
	Level  gate.RiskLevel `yaml:"level"`
	Reason string         `yaml:"reason"`
	// Command: the value is a command line the program runs (PAGER,
	// GIT_SSH_COMMAND); it is classified too and can only raise Level.
	Command bool `yaml:"command,omitempty"`
}

// PathRule is a sensitive path pattern.
type PathRule struct {
	// Pattern is a slash-separated glob: "~" is the home directory, "**"
	// matches any number of directories, a pattern without a leading "/",
	// "~" or "**" is matched anywhere ("**/" is implied).
	Pattern string `yaml:"pattern"`
	// Except lists patterns that exempt a match (.env.example).
	Except []string `yaml:"except,omitempty"`
	// Read and Write are the levels of reading and of writing, creating,
	// truncating or deleting a matching path; empty means no rule.
	Read  gate.RiskLevel `yaml:"read,omitempty"`
	Write gate.RiskLevel `yaml:"write,omitempty"`
	// ID and Reason name the rule in findings.
	ID     string `yaml:"id"`
	Reason string `yaml:"reason"`
}

// RulesFile is the YAML document ParseRules reads: a Rules document plus
// "extends: default" to merge onto DefaultRules instead of replacing them.
type RulesFile struct {
	Extends string `yaml:"extends,omitempty"`
	Rules   `yaml:",inline"`
}

// ErrRules is wrapped by rule loading and validation errors.
var ErrRules = errors.New("classify: invalid rules")

// ParseRules reads a YAML rule set. With "extends: default" the document
// is merged onto DefaultRules (see Merge); without it, it replaces them.
// Unknown keys are errors. The result is validated.
func ParseRules(r io.Reader) (*Rules, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: read: %w", ErrRules, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f RulesFile
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %w", ErrRules, err)
	}
	var out *Rules
	switch f.Extends {
	case "":
		out = &f.Rules
	case "default":
		out = DefaultRules()
		out.Merge(&f.Rules)
	default:
		return nil, fmt.Errorf("%w: extends %q (want \"default\" or nothing)", ErrRules, f.Extends)
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// MarshalYAML-friendly export: YAML returns the rule set as a YAML
// document that ParseRules reads back to an equal rule set.
func (r *Rules) YAML() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(RulesFile{Rules: *r}); err != nil {
		return nil, fmt.Errorf("classify: encode rules: %w", err)
	}
	return buf.Bytes(), nil
}

// Merge adds o to r: commands, wrappers and env rules of o replace those
// of the same name; path rules, system and temp dirs are appended; a set
// Unknown replaces r's.
func (r *Rules) Merge(o *Rules) {
	if o == nil {
		return
	}
	if r.Commands == nil {
		r.Commands = map[string]CommandRule{}
	}
	if r.Wrappers == nil {
		r.Wrappers = map[string]WrapperRule{}
	}
	if r.Env == nil {
		r.Env = map[string]EnvRule{}
	}
	maps.Copy(r.Commands, o.Commands)
	maps.Copy(r.Wrappers, o.Wrappers)
	maps.Copy(r.Env, o.Env)
	r.Paths = append(r.Paths, o.Paths...)
	r.SystemDirs = append(r.SystemDirs, o.SystemDirs...)
	r.TempDirs = append(r.TempDirs, o.TempDirs...)
	r.GitExecKeys = append(r.GitExecKeys, o.GitExecKeys...)
	if o.Unknown != "" {
		r.Unknown = o.Unknown
	}
}

// Validate checks levels, analyzer names and patterns.
func (r *Rules) Validate() error {
	var errs []error
	level := func(where string, l gate.RiskLevel, optional bool) {
		if l == "" && optional {
			return
		}
		if _, err := gate.ParseRiskLevel(string(l)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	level("unknown", r.Unknown, true)
	registry, wrappers := builtinAnalyzers(), builtinWrappers()
	var cmd func(where string, c CommandRule)
	cmd = func(where string, c CommandRule) {
		level(where+".level", c.Level, true)
		if _, ok := registry[c.Analyzer]; c.Analyzer != "" && !ok {
			errs = append(errs, fmt.Errorf("%s.analyzer: unknown analyzer %q", where, c.Analyzer))
		}
		for _, t := range c.Traits {
			if _, ok := traitBits[t]; !ok {
				errs = append(errs, fmt.Errorf("%s.traits: unknown trait %q", where, t))
			}
		}
		for i, f := range c.Flags {
			level(fmt.Sprintf("%s.flags[%d].level", where, i), f.Level, false)
			if len(f.Flags) == 0 {
				errs = append(errs, fmt.Errorf("%s.flags[%d]: no flags", where, i))
			}
		}
		for name, s := range c.Subcommands {
			cmd(where+".subcommands."+name, s)
		}
		for i, rr := range c.Runs {
			level(fmt.Sprintf("%s.runs[%d].level", where, i), rr.Level, false)
			if len(rr.Options) == 0 {
				errs = append(errs, fmt.Errorf("%s.runs[%d]: no options", where, i))
			}
			switch rr.Value {
			case "", "command", "file":
			default:
				errs = append(errs, fmt.Errorf("%s.runs[%d].value: %q (want command, file or nothing)", where, i, rr.Value))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Commands)) {
		cmd("commands."+name, r.Commands[name])
	}
	for _, name := range slices.Sorted(maps.Keys(r.Wrappers)) {
		w := r.Wrappers[name]
		level("wrappers."+name+".level", w.Level, true)
		if _, ok := wrappers[w.Analyzer]; w.Analyzer != "" && !ok {
			errs = append(errs, fmt.Errorf("wrappers.%s.analyzer: unknown analyzer %q", name, w.Analyzer))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Env)) {
		level("env."+name+".level", r.Env[name].Level, false)
	}
	for i, p := range r.Paths {
		where := fmt.Sprintf("paths[%d] (%s)", i, p.Pattern)
		level(where+".read", p.Read, true)
		level(where+".write", p.Write, true)
		for _, pat := range append([]string{p.Pattern}, p.Except...) {
			if pat == "" {
				errs = append(errs, fmt.Errorf("%s: empty pattern", where))
				continue
			}
			for _, seg := range strings.Split(pat, "/") {
				if _, err := path.Match(seg, ""); err != nil {
					errs = append(errs, fmt.Errorf("%s: pattern %q: %w", where, pat, err))
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrRules, err)
	}
	return nil
}
