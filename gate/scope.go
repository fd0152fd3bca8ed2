package gate

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Hint is one behaviour hint of a tool's Annotations, for Scope.Hints.
type Hint string

// Hints a Scope can select tools by. Unknown hints (MCP's default for
// DestructiveHint and OpenWorldHint is true) count as set, so a tool that
// declares nothing is in the scope of a gate for destructive or open-world
// tools.
const (
	// HintReadOnly: the tool declares ReadOnlyHint.
	HintReadOnly Hint = "read_only"
	// HintDestructive: the tool does not declare ReadOnlyHint, and its
	// DestructiveHint is unset or true.
	HintDestructive Hint = "destructive"
	// HintOpenWorld: the tool's OpenWorldHint is unset or true.
	HintOpenWorld Hint = "open_world"
)

// Has reports whether annotations a carry hint h.
func (h Hint) Has(a Annotations) bool {
	switch h {
	case HintReadOnly:
		return a.ReadOnlyHint
	case HintDestructive:
		return !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint)
	case HintOpenWorld:
		return a.OpenWorldHint == nil || *a.OpenWorldHint
	}
	return false
}

// ErrInvalidScope: a Scope selects no tool or has a bad pattern, hint or
// field type.
var ErrInvalidScope = errors.New("gate: invalid scope")

// Scope says which registered tools a gate judges, and which input fields
// it needs in them. A tool is in scope when any selector matches it: its
// name is one of Tools (or, with FoldTools, SameFieldName to one), or
// matches one of Patterns, or its annotations carry one of Hints, or its
// input schema can admit a top-level property named one of Fields (in any
// spelling SameFieldName reads as it, of any type, through any keyword:
// see ToolInfo.Admitted).
//
// The executor resolves a scope against the registered tool — the
// developer's name, annotations and schema (ToolInfo) — never against what
// the model sends, and runs the gate on every call to a tool in scope and
// on no other. Selecting by Hints trusts the registered annotations: for
// tools whose annotations come from a server you do not trust, select by
// name. Selecting by Fields trusts the schema: a wholly open schema (one
// that names the field nowhere and leaves additionalProperties absent or
// true) admits any property yet is outside a field-selected gate's scope,
// so declare every field a tool reads, or select it by name.
type Scope struct {
	// Tools are registered tool names, matched exactly (see FoldTools).
	// The executor refuses a name that matches no registered tool but is
	// SameFieldName to one ("Shell" for "shell").
	Tools []string
	// FoldTools: Tools match every registered name SameFieldName reads as
	// one of them ("Read" for "read"), and near misses are not refused.
	// For tables of well-known tool names (classify.PathGate's).
	FoldTools bool
	// Patterns are tool-name patterns in path.Match syntax ("mcp__*",
	// "read_*", "file.?"; '*' matches any run of characters, since tool
	// names have no '/').
	Patterns []string
	// Hints select tools by their annotations (any one of them).
	Hints []Hint
	// Fields select tools whose input schema can admit one of these
	// properties, in any spelling a case-insensitive parser reads as the
	// same name (SameFieldName), whatever its type.
	Fields []string
	// FieldType is the JSON type ("string", "object", …) a field of Needs
	// must admit; "" admits any. A property whose schema names no type
	// admits every type. It does not narrow Fields: a tool that declares
	// the field with another type is in scope and refused (Missing).
	FieldType string
	// Needs are the input fields the gate reads (one of them, in any
	// spelling, admitting FieldType): every tool in scope must declare one
	// in its input schema's properties, or the executor refuses the
	// configuration (executor.ErrGateScope). Empty: the gate needs no
	// field.
	Needs []string
}

// Scoper is implemented by gates that judge only some tools: the executor
// runs such a gate only on calls to the registered tools its Scope
// selects. Named, WithTimeout and Scoped pass a wrapped gate's scope on
// (see ScopeOf).
type Scoper interface {
	Scope() Scope
}

// ToolChecker is implemented by scoped gates that need more of a tool in
// their scope than a field (Scope.Needs): CheckTool returns an error that
// says what to change when the gate cannot judge the tool's calls (it
// would deny them all). The executor calls it, at configuration, for every
// registered tool in the gate's scope, and reports the error as
// executor.ErrGateScope. Named, WithTimeout and Scoped pass it on (see
// CheckTool).
type ToolChecker interface {
	CheckTool(t ToolInfo) error
}

// CheckTool calls g's CheckTool (ToolChecker), looking through Named,
// WithTimeout and Scoped; nil when no gate in the wrapping implements it.
func CheckTool(g Gate, t ToolInfo) error {
	for {
		if c, ok := g.(ToolChecker); ok {
			return c.CheckTool(t)
		}
		switch v := g.(type) {
		case scopedGate:
			g = v.g
		case namedGate:
			g = v.g
		case timeoutGate:
			g = v.g
		default:
			return nil
		}
	}
}

// jsonTypes are the types FieldType may name (JSON Schema's).
var jsonTypes = []string{"", "string", "number", "integer", "boolean", "object", "array", "null"}

// Validate reports ErrInvalidScope when s selects no tool (no Tools,
// Patterns, Hints or Fields), has a malformed pattern, an unknown hint or
// an unknown FieldType.
func (s Scope) Validate() error {
	if len(s.Tools) == 0 && len(s.Patterns) == 0 && len(s.Hints) == 0 && len(s.Fields) == 0 {
		return fmt.Errorf("%w: it selects no tool: give Tools, Patterns, Hints or Fields", ErrInvalidScope)
	}
	for _, p := range s.Patterns {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("%w: pattern %q: %w", ErrInvalidScope, p, err)
		}
	}
	for _, h := range s.Hints {
		switch h {
		case HintReadOnly, HintDestructive, HintOpenWorld:
		default:
			return fmt.Errorf("%w: unknown hint %q (want %q, %q or %q)", ErrInvalidScope, h, HintReadOnly, HintDestructive, HintOpenWorld)
		}
	}
	if !slices.Contains(jsonTypes, s.FieldType) {
		return fmt.Errorf("%w: unknown field type %q (want a JSON Schema type such as \"string\")", ErrInvalidScope, s.FieldType)
	}
	return nil
}

// Matches reports whether the tool t is in scope.
func (s Scope) Matches(t ToolInfo) bool {
	if s.namesTool(t.Name) {
		return true
	}
	for _, p := range s.Patterns {
		if ok, _ := path.Match(p, t.Name); ok {
			return true
		}
	}
	for _, h := range s.Hints {
		if h.Has(t.Annotations) {
			return true
		}
	}
	if len(s.Fields) > 0 {
		if _, ok := t.Admitted(s.Fields); ok {
			return true
		}
	}
	return false
}

func (s Scope) namesTool(name string) bool {
	for _, n := range s.Tools {
		if n == name || s.FoldTools && SameFieldName(n, name) {
			return true
		}
	}
	return false
}

// NearMiss returns a name of Tools that no tool of registered has but
// that is SameFieldName to one of them, and that tool's name ("Shell",
// "shell"); ok is false when there is none or FoldTools is set.
func (s Scope) NearMiss(registered []string) (name, tool string, ok bool) {
	if s.FoldTools {
		return "", "", false
	}
	for _, n := range s.Tools {
		if slices.Contains(registered, n) {
			continue
		}
		for _, r := range registered {
			if SameFieldName(n, r) {
				return n, r, true
			}
		}
	}
	return "", "", false
}

// Missing returns why the tool t does not give the gate a field of Needs
// (`string field "command" or "cmd"`, followed by what t has instead when
// it declares such a field with another type or admits it only by a
// pattern, a catch-all or a bare "required"), or "" when t declares one
// of them admitting FieldType in its properties (or s needs none).
func (s Scope) Missing(t ToolInfo) string {
	if len(s.Needs) == 0 {
		return ""
	}
	if _, ok := t.Field(s.Needs, s.FieldType); ok {
		return ""
	}
	miss := fieldPhrase(s.Needs, s.FieldType)
	if f, ok := t.Field(s.Needs, ""); ok {
		return fmt.Sprintf("%s (it declares %q as %s)", miss, f.Name, strings.Join(f.Types, " or "))
	}
	if f, ok := t.Admitted(s.Needs); ok {
		return fmt.Sprintf("%s declared in its properties (it admits one only through %s)", miss, f.describe())
	}
	return miss
}

// describe names how a field is admitted, for messages.
func (f SchemaField) describe() string {
	switch {
	case f.Pattern != "":
		return fmt.Sprintf("%s %q", f.Keyword, f.Pattern)
	case f.AnyName:
		return f.Keyword + " (any property name)"
	}
	return fmt.Sprintf("%s %q", f.Keyword, f.Name)
}

// String describes the scope for messages: `tools "bash"; tools with a
// string field "command" or "cmd"`.
func (s Scope) String() string {
	var parts []string
	if len(s.Tools) > 0 {
		fold := ""
		if s.FoldTools {
			fold = " (in any case)"
		}
		parts = append(parts, "tools "+quoteList(s.Tools, "or")+fold)
	}
	if len(s.Patterns) > 0 {
		parts = append(parts, "tools matching "+quoteList(s.Patterns, "or"))
	}
	if len(s.Hints) > 0 {
		hs := make([]string, len(s.Hints))
		for i, h := range s.Hints {
			hs[i] = string(h)
		}
		parts = append(parts, "tools hinted "+quoteList(hs, "or"))
	}
	if len(s.Fields) > 0 {
		parts = append(parts, "tools whose input schema admits a field "+quoteList(s.Fields, "or"))
	}
	if len(parts) == 0 {
		return "no tools"
	}
	return strings.Join(parts, "; ")
}

func fieldPhrase(names []string, typ string) string {
	if typ != "" {
		typ += " "
	}
	return typ + "field " + quoteList(names, "or")
}

func quoteList(xs []string, conj string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + conj + " " + q[len(q)-1]
}

// Scoped gives g a scope: the executor runs it only on calls to the
// registered tools s selects (see Scope). It keeps g's name. Decide
// itself does not look at the scope (a caller that runs the gate has
// decided it applies). The executor applies the scopes of the members of
// a Chain given to it directly (it runs the members as its own chain, see
// Members); inside a Named or Scoped chain, a scoped member judges every
// call the chain judges.
func Scoped(g Gate, s Scope) Gate {
	s.Tools, s.Patterns, s.Hints = slices.Clone(s.Tools), slices.Clone(s.Patterns), slices.Clone(s.Hints)
	s.Fields, s.Needs = slices.Clone(s.Fields), slices.Clone(s.Needs)
	return scopedGate{g: g, s: s}
}

type scopedGate struct {
	g Gate
	s Scope
}

func (s scopedGate) Scope() Scope { return s.s }

func (s scopedGate) Name() string { return NameOf(s.g, "") }

func (s scopedGate) Decide(ctx context.Context, call ToolCallContext) (Decision, error) {
	if isNil(s.g) {
		return Decision{}, errNilGate
	}
	return s.g.Decide(ctx, call)
}

// ScopeOf returns g's scope: the one of the outermost Scoped wrapper or
// Scoper, looking through Named and WithTimeout. ok is false for a gate
// that judges every tool.
func ScopeOf(g Gate) (s Scope, ok bool) {
	for {
		switch v := g.(type) {
		case scopedGate:
			return v.s, true
		case namedGate:
			g = v.g
			continue
		case timeoutGate:
			g = v.g
			continue
		}
		if sc, is := g.(Scoper); is {
			return sc.Scope(), true
		}
		return Scope{}, false
	}
}
