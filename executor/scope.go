package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolgate/toolgate/gate"
)

// ErrGateScope: a scoped gate (gate.Scoper, gate.Scoped, the classify
// gates) does not fit the registered tools — its scope is invalid, it
// applies to no registered tool, or a tool in its scope does not declare
// the input field the gate reads. New and Agent return it, naming the
// gate, the tool and the field and saying what to change.
var ErrGateScope = errors.New("executor: gate scope")

// RequireGatedSource is the gate source (gate.source) of the denial of a
// call no gate applies to under WithRequireGated.
const RequireGatedSource = "executor.require_gated"

// requireGated is the gate of WithRequireGated for a tool no gate
// applies to: it denies every call, saying what to change.
type requireGated struct{}

func (*requireGated) Name() string { return RequireGatedSource }

func (*requireGated) Decide(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
	return gate.Deny(fmt.Sprintf("no gate applies to tool %q and the executor requires every call to be gated (executor.WithRequireGated): "+
		"scope a gate to the tool (gate.Scoped, classify.ForTools) or make it unreachable", c.ToolName)).
		WithRisk(gate.RiskHigh).WithSource(RequireGatedSource), nil
}

// ungated returns the registered tools the agent reaches that no gate
// applies to, sorted by name.
func (a *Agent) ungated() []string {
	var out []string
	for _, n := range a.ex.reg.Names() {
		if !a.Reachable(n) {
			continue
		}
		if ent, ok := a.ex.reg.lookup(n); ok {
			if g, _ := a.gateFor(ent); g == nil || g == gate.Gate(a.must) {
				out = append(out, n)
			}
		}
	}
	return out
}

// toolInfo is the registered tool as scopes see it (built once per
// registration): its name, annotations and every top-level field its
// input schema declares or admits (gate.SchemaField.Keyword): properties,
// patternProperties, additionalProperties and unevaluatedProperties given
// as a schema, propertyNames, required, dependentRequired, the keys of
// dependentSchemas and dependencies (and the names a dependencies array
// lists), the keys of the objects an enum or const lists, through allOf,
// anyOf, oneOf, not, $ref, $dynamicRef, $recursiveRef, if/then/else,
// dependentSchemas and dependencies. A property under "not" counts untyped
// (its types are the ones it forbids). TestToolInfoKeywords classifies
// every field of jsonschema.Schema; a new one fails it until classified.
func toolInfo(t Tool, in *jsonschema.Schema) gate.ToolInfo {
	type key struct{ keyword, name, pattern string }
	types := map[key][]string{}
	anyType := map[key]bool{}
	add := func(k key, p *jsonschema.Schema, negated bool) {
		if p != nil && p.Bool != nil && !*p.Bool && !negated {
			return // a false schema admits nothing
		}
		var ts []string
		if !negated && p != nil && p.Types != nil && !p.Types.IsEmpty() {
			ts = p.Types.ToStrings()
		}
		if ts == nil {
			anyType[k] = true
		}
		types[k] = append(types[k], ts...)
	}
	seen := map[*jsonschema.Schema]bool{}
	var walk func(s *jsonschema.Schema, negated bool)
	walk = func(s *jsonschema.Schema, negated bool) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		for name, p := range s.Properties {
			add(key{gate.KeywordProperties, name, ""}, p, negated)
		}
		for re, p := range s.PatternProperties {
			add(key{gate.KeywordPatternProperties, "", re.String()}, p, negated)
		}
		switch ap := s.AdditionalProperties.(type) {
		case *jsonschema.Schema:
			add(key{gate.KeywordAdditionalProperties, "", ""}, ap, negated)
		case bool:
			// true is the wholly open default; false admits nothing more.
		}
		if s.UnevaluatedProperties != nil {
			add(key{gate.KeywordAdditionalProperties, "", ""}, s.UnevaluatedProperties, negated)
		}
		if pn := s.PropertyNames; pn != nil {
			named := false
			if pn.Const != nil {
				if n, ok := (*pn.Const).(string); ok {
					add(key{gate.KeywordPropertyNames, n, ""}, nil, true)
					named = true
				}
			}
			if pn.Enum != nil {
				for _, v := range pn.Enum.Values {
					if n, ok := v.(string); ok {
						add(key{gate.KeywordPropertyNames, n, ""}, nil, true)
						named = true
					}
				}
			}
			if pn.Pattern != nil {
				add(key{gate.KeywordPropertyNames, "", pn.Pattern.String()}, nil, true)
				named = true
			}
			if !named && (pn.Bool == nil || *pn.Bool) {
				add(key{gate.KeywordPropertyNames, "", ""}, nil, true)
			}
		}
		for _, n := range s.Required {
			add(key{gate.KeywordRequired, n, ""}, nil, true)
		}
		for n, deps := range s.DependentRequired {
			add(key{gate.KeywordRequired, n, ""}, nil, true)
			for _, d := range deps {
				add(key{gate.KeywordRequired, d, ""}, nil, true)
			}
		}
		for _, n := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
			add(key{gate.KeywordRequired, n, ""}, nil, true)
			walk(s.DependentSchemas[n], negated)
		}
		// Draft-04 to 2019-09 "dependencies": a key with a schema
		// (dependentSchemas) or with the names it requires
		// (dependentRequired).
		for _, n := range slices.Sorted(maps.Keys(s.Dependencies)) {
			add(key{gate.KeywordRequired, n, ""}, nil, true)
			switch d := s.Dependencies[n].(type) {
			case *jsonschema.Schema:
				walk(d, negated)
			case []string:
				for _, r := range d {
					add(key{gate.KeywordRequired, r, ""}, nil, true)
				}
			}
		}
		// An "enum" or "const" of objects admits exactly their keys.
		var values []any
		if s.Const != nil {
			values = append(values, *s.Const)
		}
		if s.Enum != nil {
			values = append(values, s.Enum.Values...)
		}
		for _, v := range values {
			if o, ok := v.(map[string]any); ok {
				for _, n := range slices.Sorted(maps.Keys(o)) {
					add(key{gate.KeywordEnum, n, ""}, nil, true)
				}
			}
		}
		walk(s.Ref, negated)
		walk(s.RecursiveRef, negated)
		if s.DynamicRef != nil {
			walk(s.DynamicRef.Ref, negated)
		}
		for _, sub := range slices.Concat(s.AllOf, s.AnyOf, s.OneOf) {
			walk(sub, negated)
		}
		walk(s.Not, !negated)
		walk(s.If, negated)
		walk(s.Then, negated)
		walk(s.Else, negated)
	}
	walk(in, false)
	info := gate.ToolInfo{Name: t.Name, Annotations: t.Annotations}
	keys := slices.SortedFunc(maps.Keys(types), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.keyword, b.keyword), cmp.Compare(a.name, b.name), cmp.Compare(a.pattern, b.pattern))
	})
	for _, k := range keys {
		f := gate.SchemaField{Name: k.name, Pattern: k.pattern, Keyword: k.keyword,
			AnyName: k.name == "" && k.pattern == ""}
		if !anyType[k] {
			f.Types = slices.Compact(slices.Sorted(slices.Values(types[k])))
		}
		info.Fields = append(info.Fields, f)
	}
	return info
}

// expandChains replaces every gate.Chain of gs that has a scoped member
// (at any depth) by its members, so that each member's scope applies. The
// members then run as the executor's own chain: the same order, first deny
// wins, an ask survives allows, a rewrite ends the round; each member is
// bound by WithGateTimeout and named by its position when it has no name.
// Chains without scoped members are kept whole.
func expandChains(gs []gate.Gate) []gate.Gate {
	var out []gate.Gate
	for _, g := range gs {
		if ms, ok := gate.Members(g); ok && hasScoped(ms) {
			out = append(out, expandChains(ms)...)
			continue
		}
		out = append(out, g)
	}
	return out
}

func hasScoped(gs []gate.Gate) bool {
	for _, g := range gs {
		if _, ok := gate.ScopeOf(g); ok {
			return true
		}
		if ms, ok := gate.Members(g); ok && hasScoped(ms) {
			return true
		}
	}
	return false
}

// scopedGate is one gate of an agent with its scope (nil: every tool).
type scopedGate struct {
	g     gate.Gate // wrapped (timeout, name)
	scope *gate.Scope
}

// resolvedGate is the gate that judges the calls of one registered tool
// for one agent: the chain of the agent's gates whose scope holds the tool
// (nil: none does).
type resolvedGate struct {
	g    gate.Gate
	name string
}

// gateFor returns the gate that judges calls to the registered tool ent,
// and its name: the agent's whole chain when no gate is scoped, else the
// chain of the gates whose scope holds ent (nil when none does). It is
// resolved from the registered entry (name, annotations, schema), never
// from the call, once per entry and agent.
func (a *Agent) gateFor(ent *entry) (gate.Gate, string) {
	if !a.scoped {
		if a.gate == nil && a.must != nil {
			return a.must, RequireGatedSource
		}
		return a.gate, a.gname
	}
	if v, ok := a.byEntry.Load(ent); ok {
		r := v.(*resolvedGate)
		return r.g, r.name
	}
	var members []gate.Gate
	for _, sg := range a.members {
		if sg.scope == nil || sg.scope.Matches(ent.info) {
			members = append(members, sg.g)
		}
	}
	r := &resolvedGate{}
	switch len(members) {
	case 0:
		if a.must != nil {
			r.g, r.name = a.must, RequireGatedSource
		}
	case len(a.members):
		r.g, r.name = a.gate, a.gname
	case 1:
		r.g = members[0]
	default:
		r.g = gate.Chain(members...)
	}
	if r.g != nil && r.name == "" {
		r.name = gate.NameOf(r.g, "gate")
	}
	v, _ := a.byEntry.LoadOrStore(ent, r)
	r = v.(*resolvedGate)
	return r.g, r.name
}

// checkScopes refuses scoped gates that do not fit the registered tools:
// an invalid scope, a scope that holds no registered tool, a tool in scope
// whose schema lacks the field the gate needs or that the gate's
// CheckTool (gate.ToolChecker) refuses. where names the gates'
// level for messages ("executor-level", "agent \"coder\"'s").
func checkScopes(reg *Registry, gates []gate.Gate, where string) error {
	var tools []*entry
	for i, g := range gates {
		s, ok := gate.ScopeOf(g)
		if !ok {
			continue
		}
		name := strconv.Quote(gate.NameOf(g, "gate["+strconv.Itoa(i)+"]"))
		id := fmt.Sprintf("gate %s (%s gate %d)", name, where, i)
		if err := s.Validate(); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrGateScope, id, err)
		}
		if tools == nil {
			for _, n := range reg.Names() {
				if e, ok := reg.lookup(n); ok {
					tools = append(tools, e)
				}
			}
		}
		registered := make([]string, len(tools))
		for j, e := range tools {
			registered[j] = e.tool.Name
		}
		if n, tool, ok := s.NearMiss(registered); ok {
			return fmt.Errorf("%w: %s names tool %q, which is not registered; did you mean %q? Tool names are exact: "+
				"scope the gate to %q (gate.Scope.Tools, classify.ForTools)", ErrGateScope, id, n, tool, tool)
		}
		matched := 0
		for _, e := range tools {
			if !s.Matches(e.info) {
				continue
			}
			matched++
			if miss := s.Missing(e.info); miss != "" {
				return fmt.Errorf("%w: %s applies to tool %q, whose input schema has no %s (the gate reads one and denies every call without it): "+
					"declare the field in the tool's InputSchema properties, make the gate read the tool's own field (classify.WithInputFields), "+
					"or scope the gate to the tools that have it (gate.Scoped, classify.ForTools; for a name in classify.PathGate's tool map, classify.WithToolOps)",
					ErrGateScope, id, e.tool.Name, miss)
			}
			if err := gate.CheckTool(g, e.info); err != nil {
				return fmt.Errorf("%w: %s applies to tool %q: %w", ErrGateScope, id, e.tool.Name, err)
			}
		}
		if matched == 0 {
			return fmt.Errorf("%w: %s applies to no registered tool: its scope is %s, and the registered tools are [%s]: "+
				"register the tools it should judge before executor.New and Executor.Agent, or scope it to registered tools (gate.Scoped, classify.ForTools)",
				ErrGateScope, id, s, toolList(tools))
		}
	}
	return nil
}

func toolList(tools []*entry) string {
	names := make([]string, len(tools))
	for i, e := range tools {
		names[i] = strconv.Quote(e.tool.Name)
	}
	return strings.Join(names, " ")
}
