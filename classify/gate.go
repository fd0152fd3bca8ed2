package classify

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/gate"
)

// Gate sources, recorded as Decision.Source (gate.source).
const (
	SourceBash = "classify.bash"
	SourcePath = "classify.path"
)

// gateConfig is what GateOptions set.
type gateConfig struct {
	classifier   []Option
	highAction   gate.Action
	reviewAction gate.Action // ask (default) or deny (read-only profile)
	fields       []string
	toolOps      map[string]Op
	scope        *gate.Scope // nil: the tools whose schema has one of fields
}

// GateOption configures BashGate and PathGate.
type GateOption func(*gateConfig)

// WithClassifierOptions passes options (rules, workspace, trust, limits)
// to the gate's classifier.
func WithClassifierOptions(opts ...Option) GateOption {
	return func(c *gateConfig) { c.classifier = append(c.classifier, opts...) }
}

// WithHighAction sets what a high verdict becomes: gate.ActionDeny (the
// default) or gate.ActionAsk (a human may still approve it). Other values
// keep deny.
func WithHighAction(a gate.Action) GateOption {
	return func(c *gateConfig) {
		if a == gate.ActionAsk || a == gate.ActionDeny {
			c.highAction = a
		}
	}
}

// WithInputFields sets the input fields the gate reads, in order of
// preference: the command for BashGate (default "command", "cmd"; a
// string), the path for PathGate (default "path", "file_path",
// "target_file", "paths"; a string or an array of strings; every present
// one is classified).
func WithInputFields(names ...string) GateOption {
	return func(c *gateConfig) { c.fields = append([]string(nil), names...) }
}

// WithToolOps maps PathGate's tool names to file operations, replacing
// the defaults (read_file, view, cat → read; write_file, edit, create,
// str_replace_editor, … → write; delete_file, rm → delete).
func WithToolOps(ops map[string]Op) GateOption {
	return func(c *gateConfig) { c.toolOps = ops }
}

// ForTools scopes the gate to the named registered tools, instead of its
// default scope. The executor refuses the configuration
// (executor.ErrGateScope) when a named tool's schema does not declare a
// field the gate reads, of a type it reads, or when a name is registered
// only in another spelling ("Shell" for "shell").
func ForTools(names ...string) GateOption {
	return WithScope(gate.Scope{Tools: names})
}

// WithScope sets the tools the gate judges (see gate.Scope): its Tools,
// Patterns, Hints and Fields select them. The gate's own needs — a string
// field among its input fields (see WithInputFields) — are filled in
// when s leaves Needs empty.
func WithScope(s gate.Scope) GateOption {
	return func(c *gateConfig) { c.scope = &s }
}

// scopeOf is the gate's scope: by default the tools whose input schema
// can admit a field among fields (in any spelling the gate reads, of any
// type: a tool in scope that does not declare one as typ is refused by
// the executor) and the tools the gate's own table names (in any case);
// with ForTools or WithScope, those tools, each of which must declare one.
func (c *gateConfig) scopeOf(typ string, table []string) gate.Scope {
	if c.scope == nil {
		return gate.Scope{Tools: table, FoldTools: len(table) > 0, Fields: c.fields, FieldType: typ, Needs: c.fields}
	}
	s := *c.scope
	if len(s.Needs) == 0 {
		s.Needs = c.fields
		if s.FieldType == "" {
			s.FieldType = typ
		}
	}
	return s
}

func newGateConfig(opts []GateOption, fields []string) gateConfig {
	c := gateConfig{highAction: gate.ActionDeny, fields: fields}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// decision turns a verdict into a gate decision: safe → allow, review →
// ask (the executor resolves it with its Approver and denies when there is
// none), high → deny (or ask, see WithHighAction).
func (g *gateConfig) decision(r Risk, source string) gate.Decision {
	var d gate.Decision
	switch r.Level {
	case gate.RiskSafe:
		d = gate.Allow()
		d.Reason = r.Reason
	case gate.RiskReview:
		if g.reviewAction == gate.ActionDeny {
			d = gate.Deny(r.Reason)
		} else {
			d = gate.Ask(r.Reason)
		}
	default:
		if g.highAction == gate.ActionAsk {
			d = gate.Ask(r.Reason)
		} else {
			d = gate.Deny(r.Reason)
		}
	}
	if d.Reason == "" {
		d.Reason = string(r.Level)
	}
	d.Rule = r.rule()
	return d.WithRisk(r.Level.Max(gate.RiskSafe)).WithSource(source)
}

func inputOf(call gate.ToolCallContext) (map[string]any, error) {
	if call.Input != nil {
		return call.Input, nil
	}
	if len(call.RawInput) == 0 {
		return nil, fmt.Errorf("no input")
	}
	var m map[string]any
	if err := json.Unmarshal(call.RawInput, &m); err != nil {
		return nil, fmt.Errorf("input is not a JSON object: %w", err)
	}
	return m, nil
}

// failClosed is the verdict for input the gate cannot read.
func failClosed(source, reason string) gate.Decision {
	return gate.Deny(reason).WithRisk(gate.RiskHigh).WithSource(source)
}

type bashGate struct {
	c     *Classifier
	cfg   gateConfig
	scope gate.Scope
}

// Name is SourceBash.
func (g *bashGate) Name() string { return SourceBash }

// Scope implements gate.Scoper: see BashGate.
func (g *bashGate) Scope() gate.Scope { return g.scope }

// BashGate returns a gate.Gate for shell tools: it classifies the input's
// command fields with Bash — every key that is "command" or "cmd" (or
// the fields of WithInputFields) to a case-insensitive parser
// (gate.SameFieldName), since a tool
// may read any of them; the highest risk decides — and allows safe
// commands, asks about review ones and denies high ones. A call without a
// string command, or with a non-string one, is denied (fail closed).
//
// Scope (gate.Scoper): the executor runs it on the registered tools whose
// input schema can admit a property "command" or "cmd" (or a field of
// WithInputFields), in any spelling gate.SameFieldName reads as that
// name, of any type and through any JSON Schema keyword (see gate.Scope),
// and on no other tool; a tool in scope that does not declare one as a
// string in its properties (an argv array, a number, a pattern) is refused
// by the executor (ErrGateScope). ForTools or WithScope name the tools
// instead. It fails when the classifier options or the scope do not
// validate.
func BashGate(opts ...GateOption) (gate.Gate, error) {
	cfg := newGateConfig(opts, []string{"command", "cmd"})
	c, err := New(cfg.classifier...)
	if err != nil {
		return nil, err
	}
	s := cfg.scopeOf("string", nil)
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("classify: bash gate: %w", err)
	}
	return &bashGate{c: c, cfg: cfg, scope: s}, nil
}

// Decide implements gate.Gate.
func (g *bashGate) Decide(ctx context.Context, call gate.ToolCallContext) (gate.Decision, error) {
	if err := ctx.Err(); err != nil {
		return gate.Decision{}, err
	}
	in, err := inputOf(call)
	if err != nil {
		return failClosed(SourceBash, "classify.bash: "+err.Error()), nil
	}
	cmds, err := fieldValues(in, g.cfg.fields, false)
	if err != nil {
		return failClosed(SourceBash, "classify.bash: "+err.Error()), nil
	}
	if len(cmds) == 0 {
		return failClosed(SourceBash, fmt.Sprintf("classify.bash: input has no string field %s", strings.Join(g.cfg.fields, " or "))), nil
	}
	best := g.c.Bash(cmds[0])
	for _, cmd := range cmds[1:] {
		if r := g.c.Bash(cmd); r.Level.Rank() > best.Level.Rank() {
			best = r
		}
	}
	return g.cfg.decision(best, SourceBash), nil
}

// fieldValues returns the string values of every key of in that is one of
// fields to a case-insensitive parser (gate.SameFieldName), in key order:
// a tool may read any of them (Go's encoding/json matches field names
// case-insensitively; a tool may prefer "cmd" where the gate prefers
// "command"), so the gate judges them all. With arrays, an array of
// strings gives each of its strings. A matching key whose value is of
// another type is an error.
func fieldValues(in map[string]any, fields []string, arrays bool) ([]string, error) {
	keys := make([]string, 0, 2)
	for k := range in {
		for _, f := range fields {
			if gate.SameFieldName(k, f) {
				keys = append(keys, k)
				break
			}
		}
	}
	slices.Sort(keys)
	vals := make([]string, 0, len(keys))
	for _, k := range keys {
		switch v := in[k].(type) {
		case string:
			vals = append(vals, v)
		case []any:
			if !arrays {
				return nil, fmt.Errorf("input field %q is not a string", k)
			}
			for i, x := range v {
				xs, ok := x.(string)
				if !ok {
					return nil, fmt.Errorf("input field %q item %d is not a string", k, i)
				}
				vals = append(vals, xs)
			}
		default:
			if arrays {
				return nil, fmt.Errorf("input field %q is not a string or an array of strings", k)
			}
			return nil, fmt.Errorf("input field %q is not a string", k)
		}
	}
	return vals, nil
}

type pathGate struct {
	c     *Classifier
	cfg   gateConfig
	scope gate.Scope
}

// Name is SourcePath.
func (g *pathGate) Name() string { return SourcePath }

// Scope implements gate.Scoper: see PathGate.
func (g *pathGate) Scope() gate.Scope { return g.scope }

// DefaultToolOps returns PathGate's default map from tool names to file
// operations (a new map each call): extend it and pass it to WithToolOps
// to add tools.
func DefaultToolOps() map[string]Op { return defaultToolOps() }

// defaultToolOps maps common file-tool names to operations.
func defaultToolOps() map[string]Op {
	return map[string]Op{
		"read_file": OpRead, "read": OpRead, "view": OpRead, "cat": OpRead, "view_file": OpRead, "open_file": OpRead,
		"list_dir": OpList, "glob": OpList, "grep": OpSearch, "search": OpSearch,
		"write_file": OpWrite, "write": OpWrite, "create_file": OpWrite, "create": OpWrite, "edit": OpWrite,
		"edit_file": OpWrite, "str_replace": OpWrite, "str_replace_editor": OpWrite, "apply_patch": OpWrite,
		"multi_edit": OpWrite, "multiedit": OpWrite, "insert": OpWrite, "append_file": OpWrite,
		"delete_file": OpDelete, "delete": OpDelete, "remove_file": OpDelete, "rm": OpDelete,
	}
}

// PathGate returns a gate.Gate for file tools: the operation comes from
// the tool name (see WithToolOps) or, for editor tools with a "command"
// field (str_replace_editor: view, create, str_replace, insert,
// undo_edit), from that field; every present path field ("path",
// "file_path", "target_file", "paths": a string or an array of strings)
// is classified with Path and the highest level decides. The tool map is
// looked up by exact name, else in any gate.SameFieldName spelling ("Read"
// is "read"). A call with no path, a path of another type or an unknown
// operation is denied (fail closed).
//
// Scope (gate.Scoper): the executor runs it on the registered tools whose
// input schema can admit a path field (as BashGate's command fields), and
// on every tool its tool map names, in any spelling — a tool it knows is
// never silently ungated: one that declares no path field it reads is
// refused by the executor (ErrGateScope); ForTools or WithScope name the
// tools instead. A tool in scope must have an operation — its name in the tool
// map (WithToolOps, DefaultToolOps) or a "command" field for editor
// sub-commands — else the executor refuses the configuration
// (gate.ToolChecker, executor.ErrGateScope); a call whose operation is
// still unknown is denied. It fails when the classifier options or the
// scope do not validate.
func PathGate(opts ...GateOption) (gate.Gate, error) {
	cfg := newGateConfig(opts, []string{"path", "file_path", "target_file", "paths"})
	if cfg.toolOps == nil {
		cfg.toolOps = defaultToolOps()
	}
	c, err := New(cfg.classifier...)
	if err != nil {
		return nil, err
	}
	// Strings and arrays of strings are read (FieldType "" here; CheckTool
	// refuses other types).
	s := cfg.scopeOf("", slices.Sorted(maps.Keys(cfg.toolOps)))
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("classify: path gate: %w", err)
	}
	return &pathGate{c: c, cfg: cfg, scope: s}, nil
}

// opOf is the tool map's operation for tool: its entry, else the entry
// of the first name (sorted) gate.SameFieldName reads as tool ("Read" is
// "read").
func (g *pathGate) opOf(tool string) (Op, bool) {
	if op, ok := g.cfg.toolOps[tool]; ok {
		return op, true
	}
	for _, n := range slices.Sorted(maps.Keys(g.cfg.toolOps)) {
		if gate.SameFieldName(n, tool) {
			return g.cfg.toolOps[n], true
		}
	}
	return "", false
}

// CheckTool implements gate.ToolChecker: a tool in scope must have a file
// operation — its name in the tool map (WithToolOps) or a "command" field
// naming editor operations — else every call to it would be denied, and
// its path fields must admit a string or an array of strings.
func (g *pathGate) CheckTool(t gate.ToolInfo) error {
	for _, f := range t.Fields {
		if !f.Declared() || !slices.ContainsFunc(g.cfg.fields, f.Names) {
			continue
		}
		if !f.Admits("string") && !f.Admits("array") {
			return fmt.Errorf("its input field %q is %s, but classify.path reads a path string or an array of them: "+
				"declare it as a string, or scope the gate to other tools (classify.ForTools)", f.Name, strings.Join(f.Types, " or "))
		}
	}
	if _, ok := g.opOf(t.Name); ok {
		return nil
	}
	if _, ok := t.Field([]string{"command"}, "string"); ok {
		return nil
	}
	return fmt.Errorf("classify.path has no file operation for it, so it would deny every call: "+
		"map it, e.g. ops := classify.DefaultToolOps(); ops[%q] = classify.OpRead (or OpSearch, OpWrite, OpDelete); "+
		"classify.PathGate(classify.WithToolOps(ops)), or scope the gate to the file tools it knows (classify.ForTools)", t.Name)
}

// Decide implements gate.Gate.
func (g *pathGate) Decide(ctx context.Context, call gate.ToolCallContext) (gate.Decision, error) {
	if err := ctx.Err(); err != nil {
		return gate.Decision{}, err
	}
	in, err := inputOf(call)
	if err != nil {
		return failClosed(SourcePath, "classify.path: "+err.Error()), nil
	}
	op, ok := g.opOf(call.ToolName)
	subs, err := fieldValues(in, []string{"command"}, false)
	if err != nil {
		subs = nil // a non-string "command" names no editor operation
	}
	// An editor sub-command names the operation, overriding the tool
	// name's; every spelling of "command" a tool may read is considered,
	// and the most dangerous operation among them wins.
	subOp, subOK := Op(""), false
	for _, sub := range subs {
		var sop Op
		switch sub {
		case "view":
			sop = OpRead
		case "create", "str_replace", "insert", "undo_edit", "write", "append":
			sop = OpWrite
		case "delete":
			sop = OpDelete
		default:
			continue
		}
		if !subOK || opRank(sop) > opRank(subOp) {
			subOp, subOK = sop, true
		}
	}
	if subOK {
		op, ok = subOp, true
	}
	if !ok {
		return failClosed(SourcePath, fmt.Sprintf("classify.path: unknown file operation for tool %q", call.ToolName)), nil
	}
	paths, err := fieldValues(in, g.cfg.fields, true)
	if err != nil {
		return failClosed(SourcePath, "classify.path: "+err.Error()), nil
	}
	var best *Risk
	for _, p := range paths {
		r := g.c.Path(op, p)
		if best == nil || r.Level.Rank() > best.Level.Rank() {
			best = &r
		}
	}
	if best == nil {
		return failClosed(SourcePath, fmt.Sprintf("classify.path: input has no string field %s", strings.Join(g.cfg.fields, " or "))), nil
	}
	return g.cfg.decision(*best, SourcePath), nil
}

// opRank orders file operations by danger.
func opRank(o Op) int {
	switch o {
	case OpList:
		return 1
	case OpRead:
		return 2
	case OpSearch:
		return 3
	case OpWrite:
		return 4
	case OpDelete:
		return 5
	}
	return 0
}
