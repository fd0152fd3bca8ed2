package gate

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
)

// ToolInfo describes one registered tool as a Scope sees it: the
// developer's own declaration (name, annotations, the fields of its input
// schema), never anything a model sent. The executor builds it once per
// registered tool.
type ToolInfo struct {
	// Name is the registered tool name.
	Name string
	// Annotations are the tool's registered hints.
	Annotations Annotations
	// Fields are the top-level properties the tool's input schema declares
	// or admits, found through every keyword that can admit a named
	// property (see SchemaField.Keyword): the schema and every subschema
	// it composes (allOf, anyOf, oneOf, not, $ref, $dynamicRef,
	// $recursiveRef, if/then/else, dependentSchemas, dependencies), each once, sorted by Keyword, then
	// Name, then Pattern.
	Fields []SchemaField
}

// Keywords of SchemaField.Keyword: how an input schema admits a field.
const (
	// KeywordProperties: declared in "properties" (Name set).
	KeywordProperties = "properties"
	// KeywordRequired: named by "required", "dependentRequired", a
	// "dependentSchemas" or "dependencies" key, or a "dependencies" array,
	// without a schema (Name set, any type).
	KeywordRequired = "required"
	// KeywordEnum: a key of an object that an "enum" or "const" lists as
	// the input's whole value (Name set, any type).
	KeywordEnum = "enum"
	// KeywordPropertyNames: a name a "propertyNames" schema lists (enum,
	// const: Name set), a pattern it gives (Pattern set), or any name it
	// admits otherwise (AnyName).
	KeywordPropertyNames = "propertyNames"
	// KeywordPatternProperties: every name a "patternProperties" regexp
	// matches (Pattern set).
	KeywordPatternProperties = "patternProperties"
	// KeywordAdditionalProperties: every other name, "additionalProperties"
	// or "unevaluatedProperties" given as a schema (AnyName set).
	KeywordAdditionalProperties = "additionalProperties"
)

// SchemaField is one top-level property, or set of property names, an
// input schema admits.
type SchemaField struct {
	// Name is the property name, as the schema spells it ("" for a
	// Pattern or AnyName field).
	Name string
	// Types are the JSON types the property's schema names ("string",
	// "integer", "object", …); nil when it names none (or the property
	// sits under "not"), i.e. any type.
	Types []string
	// Keyword is how the schema admits it (KeywordProperties, …); "" is
	// read as KeywordProperties.
	Keyword string
	// Pattern is a regexp (Go regexp/syntax, Perl flags, unanchored — as
	// the executor's schema validator reads patternProperties) matching
	// the names the field stands for.
	Pattern string
	// AnyName: the field stands for every property name.
	AnyName bool
}

// Declared reports whether the schema declares the field by name in
// "properties" (rather than admitting it by pattern, catch-all or a bare
// "required").
func (f SchemaField) Declared() bool {
	return f.Keyword == "" || f.Keyword == KeywordProperties
}

// Admits reports whether the field may hold a value of JSON type typ: ""
// admits any field; a field that names no types admits every type;
// "integer" and "number" admit each other's fields.
func (f SchemaField) Admits(typ string) bool {
	if typ == "" || len(f.Types) == 0 {
		return true
	}
	switch {
	case slices.Contains(f.Types, typ):
		return true
	case typ == "integer":
		return slices.Contains(f.Types, "number")
	case typ == "number":
		return slices.Contains(f.Types, "integer")
	}
	return false
}

// Names reports whether the field stands for a property name that is
// name to a case-insensitive parser (SameFieldName): its Name is, its
// Pattern matches some such spelling, or it stands for any name. A
// Pattern that does not parse counts as matching (fail closed).
func (f SchemaField) Names(name string) bool {
	switch {
	case f.AnyName:
		return true
	case f.Pattern != "":
		return patternAdmits(f.Pattern, name)
	}
	return SameFieldName(f.Name, name)
}

// Field returns the first field the schema declares in "properties" that
// is one of names to a case-insensitive parser (SameFieldName) and admits
// typ ("" for any).
func (t ToolInfo) Field(names []string, typ string) (SchemaField, bool) {
	for _, f := range t.Fields {
		if !f.Declared() {
			continue
		}
		for _, n := range names {
			if f.Names(n) && f.Admits(typ) {
				return f, true
			}
		}
	}
	return SchemaField{}, false
}

// Admitted returns the first field, declared or admitted by any keyword,
// that stands for one of names (SameFieldName, any type): the schema
// can accept a property the gate reading names judges.
func (t ToolInfo) Admitted(names []string) (SchemaField, bool) {
	for _, f := range t.Fields {
		for _, n := range names {
			if f.Names(n) {
				return f, true
			}
		}
	}
	return SchemaField{}, false
}

// patternAdmits reports whether the unanchored regexp pattern matches
// some string that SameFieldName reads as name (see patternWitness). A
// pattern that does not parse counts as matching (fail closed).
func patternAdmits(pattern, name string) bool {
	_, ok, err := patternWitness(pattern, name)
	return ok || err != nil
}

// patternWitness returns a string that SameFieldName reads as name and
// that the unanchored regexp pattern matches, if one exists: a
// letter-for-letter spelling of name (its '-' and '_' dropped) under
// Unicode simple case folding, with any run of '-' and '_' before,
// between and after the letters. It walks the product of the regexp's
// program and that language's automaton; word-boundary assertions are
// taken as satisfied (over-approximation: a pattern is never wrongly
// found not to match, and with \b or \B the witness may not match).
func patternWitness(pattern, name string) (string, bool, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return "", false, err
	}
	letters := []rune(strings.Map(dropDashUnderscore, name))
	k := len(letters)
	type state struct {
		pc      uint32
		pos     int // letters of name spelt so far
		atStart bool
		atEnd   bool // an end-of-text assertion passed: no more runes
	}
	// spelt holds, per state reached, the text read to reach it.
	spelt := map[state]string{}
	var stack []state
	push := func(s state, text string) {
		if _, ok := spelt[s]; !ok {
			spelt[s] = text
			stack = append(stack, s)
		}
	}
	// Unanchored: the match may start after any prefix of a spelling.
	start := uint32(prog.Start)
	push(state{pc: start, pos: 0, atStart: true}, "")
	for p := 0; p <= k; p++ {
		push(state{pc: start, pos: p}, string(letters[:p]))
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		text := spelt[s]
		in := &prog.Inst[s.pc]
		switch in.Op {
		case syntax.InstMatch:
			// The rest of the spelling can always follow, unless the
			// text had to end here.
			if !s.atEnd {
				return text + string(letters[s.pos:]), true, nil
			}
			if s.pos == k {
				return text, true, nil
			}
		case syntax.InstFail:
		case syntax.InstAlt, syntax.InstAltMatch:
			push(state{in.Out, s.pos, s.atStart, s.atEnd}, text)
			push(state{in.Arg, s.pos, s.atStart, s.atEnd}, text)
		case syntax.InstCapture, syntax.InstNop:
			push(state{in.Out, s.pos, s.atStart, s.atEnd}, text)
		case syntax.InstEmptyWidth:
			op := syntax.EmptyOp(in.Arg)
			if op&(syntax.EmptyBeginText|syntax.EmptyBeginLine) != 0 && !s.atStart {
				continue
			}
			end := s.atEnd || op&(syntax.EmptyEndText|syntax.EmptyEndLine) != 0
			push(state{in.Out, s.pos, s.atStart, end}, text)
		default: // a rune instruction
			if s.atEnd {
				continue
			}
			next := func(r rune, pos int) {
				ok := false
				switch in.Op {
				case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
					ok = true
				default:
					ok = in.MatchRune(r)
				}
				if ok {
					push(state{in.Out, pos, false, false}, text+string(r))
				}
			}
			next('-', s.pos)
			next('_', s.pos)
			if s.pos < k {
				c := letters[s.pos]
				for r := unicode.SimpleFold(c); ; r = unicode.SimpleFold(r) {
					next(r, s.pos+1)
					if r == c {
						break
					}
				}
			}
		}
	}
	return "", false, nil
}
