package executor_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// The property test's world: tool names built from a few parts (so
// patterns and near-miss spellings collide), fields in several spellings
// and types, and annotations drawn from MCP's three states.
var (
	scopeNameParts = []string{"bash", "read", "read_file", "fs", "mcp__", "Bash", "get"}
	scopeFields    = []string{"command", "cmd", "Command", "com_mand", "path", "url"}
	scopeTypes     = []string{"string", "integer", ""}
	scopePatterns  = []string{"*", "read*", "mcp__*", "*_file", "?ash", "[bB]ash", "*get"}
	scopeHints     = []gate.Hint{gate.HintReadOnly, gate.HintDestructive, gate.HintOpenWorld}
	// Property-name patterns a schema may admit fields by
	// (patternProperties): each matches some spelling of a field above
	// exactly when patternSpellings says so.
	scopeSchemaPatterns = []string{"^command$", "^comm", ".", "^CMD$", "^path$", "mand$", "^x-", "^c_?m_?d$", "^u.l$"}
)

// patternAdmitsField is the test's reading of a field admitted by pattern:
// the pattern matches one of the field's plain spellings (its '_'
// dropped; as written, lower or upper case) — enough for the patterns
// above.
func patternAdmitsField(pattern, field string) bool {
	plain := strings.ReplaceAll(field, "_", "")
	for _, sp := range []string{field, plain, strings.ToLower(plain), strings.ToUpper(plain)} {
		if regexp.MustCompile(pattern).MatchString(sp) {
			return true
		}
	}
	return false
}

type propTool struct {
	name     string
	fields   map[string]string // field → type ("" untyped)
	pattern  string            // a patternProperties key ("" none)
	catchAll bool              // additionalProperties is a schema
	named    string            // a field admitted by name through via ("" none)
	via      string            // one of namedVias
	ann      gate.Annotations
}

// namedVias are the keywords, other than properties, by which a schema
// admits one field by name (see admitNamed).
var namedVias = []string{"required", "dependentRequired", "dependencies", "dependenciesKey", "dependenciesSchema", "enum", "const", "allOf.enum"}

// admitNamed makes sch admit the field f through the keyword via (one of
// namedVias); the draft-07 "dependencies" forms set $schema to draft-07.
func admitNamed(sch map[string]any, f, via string) {
	draft7 := func() { sch["$schema"] = "http://json-schema.org/draft-07/schema#" }
	switch via {
	case "required":
		sch["required"] = []string{f}
	case "dependentRequired":
		sch["dependentRequired"] = map[string]any{"x": []string{f}}
	case "dependencies":
		draft7()
		sch["dependencies"] = map[string]any{"x": []string{f}}
	case "dependenciesKey":
		draft7()
		sch["dependencies"] = map[string]any{f: []string{"x"}}
	case "dependenciesSchema":
		draft7()
		sch["dependencies"] = map[string]any{"x": map[string]any{"properties": map[string]any{f: map[string]any{}}}}
	case "enum":
		sch["enum"] = []any{map[string]any{f: "rm -rf /"}, map[string]any{}}
	case "const":
		sch["const"] = map[string]any{f: "rm -rf /"}
	case "allOf.enum":
		sch["allOf"] = []any{map[string]any{"enum": []any{map[string]any{f: "rm -rf /"}}}}
	}
}

func drawTool(t *rapid.T, label string) propTool {
	name := rapid.SampledFrom(scopeNameParts).Draw(t, label+".name")
	if rapid.Bool().Draw(t, label+".suffix?") {
		name += rapid.SampledFrom([]string{"_get", "2", ".x", "_file"}).Draw(t, label+".suffix")
	}
	pt := propTool{name: name, fields: map[string]string{}}
	for range rapid.IntRange(0, 2).Draw(t, label+".nfields") {
		f := rapid.SampledFrom(scopeFields).Draw(t, label+".field")
		if _, dup := pt.fields[f]; dup {
			continue
		}
		// One spelling per case-insensitive name: the executor refuses
		// input that carries two of them anyway.
		clash := false
		for g := range pt.fields {
			clash = clash || gate.SameFieldName(f, g)
		}
		if !clash {
			pt.fields[f] = rapid.SampledFrom(scopeTypes).Draw(t, label+".type")
		}
	}
	switch rapid.IntRange(0, 5).Draw(t, label+".admits") {
	case 0:
		pt.pattern = rapid.SampledFrom(scopeSchemaPatterns).Draw(t, label+".pattern")
	case 1:
		pt.catchAll = true
	case 2:
		pt.named = rapid.SampledFrom(scopeFields).Draw(t, label+".named")
		pt.via = rapid.SampledFrom(namedVias).Draw(t, label+".via")
	}
	tri := func(l string) *bool {
		switch rapid.IntRange(0, 2).Draw(t, l) {
		case 0:
			return nil
		case 1:
			b := true
			return &b
		}
		b := false
		return &b
	}
	pt.ann = gate.Annotations{ReadOnlyHint: rapid.Bool().Draw(t, label+".readOnly"),
		DestructiveHint: tri(label + ".destructive"), OpenWorldHint: tri(label + ".openWorld")}
	return pt
}

func (pt propTool) schema() json.RawMessage {
	props := map[string]any{}
	for f, typ := range pt.fields {
		if typ == "" {
			props[f] = map[string]any{}
		} else {
			props[f] = map[string]any{"type": typ}
		}
	}
	sch := map[string]any{"type": "object", "properties": props}
	if pt.pattern != "" {
		sch["patternProperties"] = map[string]any{pt.pattern: map[string]any{"type": "string"}}
	}
	if pt.catchAll {
		sch["additionalProperties"] = map[string]any{"type": "string"}
	}
	if pt.named != "" {
		admitNamed(sch, pt.named, pt.via)
	}
	b, _ := json.Marshal(sch)
	return b
}

func drawScope(t *rapid.T, label string) gate.Scope {
	var s gate.Scope
	for s.Tools == nil && s.Patterns == nil && s.Hints == nil && s.Fields == nil {
		if rapid.IntRange(0, 2).Draw(t, label+".tools?") == 0 {
			s.Tools = rapid.SliceOfN(rapid.SampledFrom(append(scopeNameParts, "read_file_get", "bash2")), 1, 2).Draw(t, label+".tools")
		}
		if rapid.IntRange(0, 2).Draw(t, label+".patterns?") == 0 {
			s.Patterns = rapid.SliceOfN(rapid.SampledFrom(scopePatterns), 1, 2).Draw(t, label+".patterns")
		}
		if rapid.IntRange(0, 3).Draw(t, label+".hints?") == 0 {
			s.Hints = rapid.SliceOfN(rapid.SampledFrom(scopeHints), 1, 2).Draw(t, label+".hints")
		}
		if rapid.IntRange(0, 2).Draw(t, label+".fields?") == 0 {
			s.Fields = rapid.SliceOfN(rapid.SampledFrom(scopeFields), 1, 2).Draw(t, label+".fields")
			s.FieldType = rapid.SampledFrom(scopeTypes).Draw(t, label+".fieldType")
		}
	}
	return s
}

// inScope is the test's own reading of gate.Scope, written from its
// documentation: any selector holds the registered tool.
func inScope(s gate.Scope, pt propTool) bool {
	if slices.Contains(s.Tools, pt.name) {
		return true
	}
	for _, p := range s.Patterns {
		if ok, _ := path.Match(p, pt.name); ok {
			return true
		}
	}
	a := pt.ann
	for _, h := range s.Hints {
		switch h {
		case gate.HintReadOnly:
			if a.ReadOnlyHint {
				return true
			}
		case gate.HintDestructive:
			if !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint) {
				return true
			}
		case gate.HintOpenWorld:
			if a.OpenWorldHint == nil || *a.OpenWorldHint {
				return true
			}
		}
	}
	// A field of any type selects (FieldType never narrows a scope), and
	// so does a pattern or a catch-all that admits it.
	for _, want := range s.Fields {
		if pt.catchAll || pt.pattern != "" && patternAdmitsField(pt.pattern, want) || pt.named != "" && sameName(pt.named, want) {
			return true
		}
		for f := range pt.fields {
			if sameName(f, want) {
				return true
			}
		}
	}
	return false
}

func sameName(a, b string) bool {
	return strings.EqualFold(strings.ReplaceAll(a, "_", ""), strings.ReplaceAll(b, "_", ""))
}

// nearMiss is the test's reading of the near-miss rule: a scope name that
// no registered tool has but one has in another spelling.
func nearMiss(s gate.Scope, tools map[string]propTool) bool {
	for _, n := range s.Tools {
		if _, ok := tools[n]; ok {
			continue
		}
		for r := range tools {
			if sameName(n, r) {
				return true
			}
		}
	}
	return false
}

// logGate records the calls it judged and allows or denies by its table.
type logGate struct {
	name  string
	deny  int // denies the tools whose name's length is 0 mod deny (0: none)
	mu    sync.Mutex
	calls []string // tool call IDs judged
}

func (g *logGate) Name() string { return g.name }

func (g *logGate) Decide(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
	g.mu.Lock()
	g.calls = append(g.calls, c.ToolCallID)
	g.mu.Unlock()
	if g.denies(c.ToolName) {
		return gate.Deny(g.name + " denies " + c.ToolName).WithRisk(gate.RiskHigh), nil
	}
	return gate.Allow().WithRisk(gate.RiskReview), nil
}

func (g *logGate) denies(tool string) bool { return g.deny > 0 && len(tool)%g.deny == 0 }

func (g *logGate) judged(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.calls, id)
}

// TestPropertyGateScope: over random registries (tools registered before
// the executor and while calls run), random scoped and unscoped gates at
// the executor and agent level, and random calls — registered names,
// near-miss spellings (case, suffixes), inputs with any field — a gate
// judges a call iff the called tool is registered and in the gate's
// scope (unscoped: every tool); the gates that judge it are exactly the
// in-scope ones in order, up to the first deny; the decision's verdicts and
// the span's gate.verdicts (or gate.source) name exactly them; a call no
// gate applies to is ungated (gate.gated=false), or with WithRequireGated
// denied and never run; a call that a gate in scope denies never runs.
// Schemas admit fields by properties of any type, patternProperties,
// catch-alls and by name (required, dependentRequired, draft-07
// dependencies in each form, enum and const of objects); a scope naming a registered tool in another spelling is
// refused, as is an agent reaching an ungated tool under WithRequireGated.
func TestPropertyGateScope(t *testing.T) {
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		require.NoError(t, flag.Set("rapid.checks", "1000"))
		t.Cleanup(func() { _ = flag.Set("rapid.checks", f.DefValue) })
	}
	rapid.Check(t, func(t *rapid.T) {
		tools := map[string]propTool{}
		ran := map[string]int{}
		var mu sync.Mutex
		reg, err := executor.NewRegistry()
		require.NoError(t, err)
		register := func(label string) {
			pt := drawTool(t, label)
			if _, dup := tools[pt.name]; dup {
				return
			}
			name := pt.name
			require.NoError(t, reg.Register(executor.Tool{Name: name, InputSchema: pt.schema(), Annotations: pt.ann,
				Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
					mu.Lock()
					ran[name]++
					mu.Unlock()
					return executor.Text("ok"), nil
				}}))
			tools[name] = pt
		}
		for i := range rapid.IntRange(1, 5).Draw(t, "tools") {
			register(fmt.Sprintf("tool%d", i))
		}
		// Gates with their scopes (nil: unscoped), executor-level first.
		type member struct {
			g     *logGate
			scope *gate.Scope
		}
		var execM, agentM []member
		drawMembers := func(level string, n int) []member {
			var ms []member
			for i := range n {
				lg := &logGate{name: fmt.Sprintf("%s%d", level, i)}
				lg.deny = rapid.IntRange(0, 5).Draw(t, lg.name+".deny")
				m := member{g: lg}
				if rapid.IntRange(0, 3).Draw(t, lg.name+".scoped?") > 0 {
					s := drawScope(t, lg.name)
					// Scopes must fit the registry (else New refuses them,
					// see TestGateScopeErrors): keep drawing scopes that
					// hold at least one registered tool.
					fits := false
					for _, pt := range tools {
						fits = fits || inScope(s, pt)
					}
					if !fits {
						s = gate.Scope{Patterns: []string{"*"}}
					}
					m.scope = &s
				}
				ms = append(ms, m)
			}
			return ms
		}
		execM = drawMembers("exec", rapid.IntRange(0, 3).Draw(t, "exec gates"))
		agentM = drawMembers("agent", rapid.IntRange(0, 3).Draw(t, "agent gates"))
		asGates := func(ms []member) []gate.Gate {
			var gs []gate.Gate
			for _, m := range ms {
				var g gate.Gate = m.g
				if m.scope != nil {
					g = gate.Scoped(g, *m.scope)
				}
				if rapid.Bool().Draw(t, m.g.name+".renamed?") {
					g = gate.Named(m.g.name, g) // a wrapper must not hide the scope
				}
				gs = append(gs, g)
			}
			// Some runs of gates come as one gate.Chain (nested at
			// times): the members' scopes still apply.
			if len(gs) > 1 && rapid.Bool().Draw(t, "chain?") {
				i := rapid.IntRange(0, len(gs)-2).Draw(t, "chain.from")
				j := rapid.IntRange(i+2, len(gs)).Draw(t, "chain.to")
				inner := slices.Clone(gs[i:j])
				if len(inner) > 2 && rapid.Bool().Draw(t, "nested?") {
					inner = []gate.Gate{inner[0], gate.Chain(inner[1:]...)}
				}
				gs = slices.Concat(gs[:i], []gate.Gate{gate.Chain(inner...)}, gs[j:])
			}
			return gs
		}
		// A scope naming a tool in another spelling than the registered
		// one ("Bash" for "bash") is refused, never left to select nothing.
		missed := func(ms []member) bool {
			return slices.ContainsFunc(ms, func(m member) bool { return m.scope != nil && nearMiss(*m.scope, tools) })
		}
		requireGated := rapid.Bool().Draw(t, "requireGated")
		opts := []executor.Option{executor.WithGates(asGates(execM)...)}
		if requireGated {
			opts = append(opts, executor.WithRequireGated())
		}
		spans := tracetest.NewInMemoryExporter()
		ex, err := executor.New(reg, append(opts, executor.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))))...)
		if missed(execM) {
			require.ErrorIs(t, err, executor.ErrGateScope)
			require.ErrorContains(t, err, "did you mean")
			return
		}
		require.NoError(t, err)
		a, err := ex.Agent("prop", executor.AgentPresets(executor.PresetAll), executor.AgentGates(asGates(agentM)...))
		if missed(agentM) {
			require.ErrorIs(t, err, executor.ErrGateScope)
			require.ErrorContains(t, err, "did you mean")
			return
		}
		all := append(slices.Clone(execM), agentM...)
		gatedTool := func(pt propTool) bool {
			return slices.ContainsFunc(all, func(m member) bool { return m.scope == nil || inScope(*m.scope, pt) })
		}
		if requireGated {
			// Every reachable registered tool needs a gate in scope.
			var ungated []string
			for _, n := range slices.Sorted(maps.Keys(tools)) {
				if !gatedTool(tools[n]) {
					ungated = append(ungated, n)
				}
			}
			if len(ungated) > 0 {
				require.ErrorIs(t, err, executor.ErrGateScope)
				require.ErrorContains(t, err, fmt.Sprintf("%q", ungated))
				return
			}
		}
		require.NoError(t, err)
		run := a.Run("r")

		for i := range rapid.IntRange(1, 8).Draw(t, "calls") {
			if rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("register%d?", i)) == 0 {
				register(fmt.Sprintf("late%d", i)) // registered while the agent runs
			}
			names := slices.Sorted(func(yield func(string) bool) {
				for n := range tools {
					if !yield(n) {
						return
					}
				}
			})
			name := rapid.SampledFrom(append(names, scopeNameParts...)).Draw(t, fmt.Sprintf("call%d.name", i))
			switch rapid.IntRange(0, 5).Draw(t, fmt.Sprintf("call%d.spelling", i)) {
			case 0:
				name = strings.ToUpper(name)
			case 1:
				name += " "
			}
			in := map[string]any{}
			for range rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("call%d.nfields", i)) {
				f := rapid.SampledFrom(scopeFields).Draw(t, fmt.Sprintf("call%d.field", i))
				clash := false
				for g := range in {
					clash = clash || gate.SameFieldName(f, g)
				}
				if !clash {
					in[f] = rapid.SampledFrom([]any{"rm -rf /", "x", 3}).Draw(t, fmt.Sprintf("call%d.value", i))
				}
			}
			raw, _ := json.Marshal(in)
			id := fmt.Sprintf("c%d", i)
			spans.Reset()
			mu.Lock()
			before := ran[name]
			mu.Unlock()
			res := run.Execute(context.Background(), executor.ToolCall{ID: id, Name: name, Input: raw})

			pt, registered := tools[name]
			valid := registered && res.ErrorType != executor.ErrorTypeInvalidInput
			var want []string // the gates that must judge, in order
			if valid {
				for _, m := range all {
					if m.scope == nil || inScope(*m.scope, pt) {
						want = append(want, m.g.name)
						if m.g.denies(name) {
							break
						}
					}
				}
			}
			for _, m := range all {
				if got := m.g.judged(id); got != slices.Contains(want, m.g.name) {
					t.Fatalf("call %s to %q (%+v, registered %v): gate %s judged=%v, want the gates %v; result %+v",
						id, name, pt, registered, m.g.name, got, want, res)
				}
			}
			mu.Lock()
			didRun := ran[name] > before
			mu.Unlock()
			if requireGated && valid && len(want) == 0 {
				// A tool registered later outside every scope: denied by
				// the executor, never run, recorded as gated.
				if !res.Gate.Gated || res.Gate.Action != gate.ActionDeny || res.Gate.Source != executor.RequireGatedSource || didRun {
					t.Fatalf("call %s to %q with WithRequireGated and no gate in scope: %+v, ran=%v", id, name, res.Gate, didRun)
				}
				continue
			}
			var verdicts []string
			for _, v := range res.Gate.Verdicts {
				verdicts = append(verdicts, v.Gate)
			}
			if !slices.Equal(verdicts, want) {
				t.Fatalf("call %s to %q: verdicts %v, want %v", id, name, verdicts, want)
			}
			ss := spans.GetSpans()
			if len(ss) != 1 {
				t.Fatalf("%d spans", len(ss))
			}
			if got := spanGates(ss[0]); !slices.Equal(got, want) {
				t.Fatalf("call %s to %q: span names gates %v, want %v", id, name, got, want)
			}
			if res.Gate.Gated != (len(want) > 0) {
				t.Fatalf("call %s to %q: gated=%v with gates %v", id, name, res.Gate.Gated, want)
			}
			denied := len(want) > 0 && all[slices.IndexFunc(all, func(m member) bool { return m.g.name == want[len(want)-1] })].g.denies(name)
			if didRun != (valid && !denied) {
				t.Fatalf("call %s to %q: ran=%v, valid=%v, denied=%v", id, name, didRun, valid, denied)
			}
		}
	})
}

// TestPropertyClassifierScopesNeverSilent: over random registries of file
// and shell tools in the shapes real agents use — names from
// classify.DefaultToolOps in any case, path and command fields of any
// type, declared or admitted by a pattern, a catch-all or by name
// (required, dependencies in each form, enum and const of objects) — the default
// BashGate and PathGate never leave a tool they know silently ungated:
// either New refuses the configuration (ErrGateScope, naming a tool), or
// every call to a tool whose name their tables hold or whose schema can
// admit a field they read is gated.
func TestPropertyClassifierScopesNeverSilent(t *testing.T) {
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		require.NoError(t, flag.Set("rapid.checks", "1000"))
		t.Cleanup(func() { _ = flag.Set("rapid.checks", f.DefValue) })
	}
	ops := classify.DefaultToolOps()
	opNames := slices.Sorted(maps.Keys(ops))
	pathFields := []string{"path", "file_path", "target_file", "paths"}
	cmdFields := []string{"command", "cmd"}
	fields := []string{"path", "file_path", "target_file", "paths", "Path", "TargetFile", "command", "cmd", "Cmd", "input", "url", "file", "text"}
	patterns := []string{"^target", ".", "^cmd$", "^PATH$", "^x-", "^file"}
	bash, err := classify.BashGate()
	require.NoError(t, err)
	files, err := classify.PathGate()
	require.NoError(t, err)
	rapid.Check(t, func(t *rapid.T) {
		type ctool struct {
			name     string
			fields   map[string]string
			pattern  string
			catchAll bool
			named    string // admitted through via (namedVias)
			via      string
		}
		var tools []ctool
		var reg []executor.Tool
		seen := map[string]bool{}
		// Two tools each gate fits, so that New does not refuse the
		// configuration merely because a gate applies to no tool.
		if rapid.Bool().Draw(t, "anchors?") {
			for _, ct := range []ctool{{name: "read_file", fields: map[string]string{"path": "string"}}, {name: "anchor_sh", fields: map[string]string{"command": "string"}}} {
				seen[ct.name] = true
				f := slices.Collect(maps.Keys(ct.fields))[0]
				tools = append(tools, ct)
				reg = append(reg, executor.Tool{Name: ct.name, InputSchema: json.RawMessage(`{"type":"object","properties":{"` + f + `":{"type":"string"}}}`),
					Execute: func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ran"), nil }})
			}
		}
		for i := range rapid.IntRange(1, 4).Draw(t, "tools") {
			l := fmt.Sprintf("t%d", i)
			name := rapid.SampledFrom(append(slices.Clone(opNames), "bash", "shell", "http_get", "notes")).Draw(t, l+".name")
			switch rapid.IntRange(0, 3).Draw(t, l+".case") {
			case 0:
				name = strings.ToUpper(name)
			case 1:
				name = strings.ToUpper(name[:1]) + name[1:]
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			ct := ctool{name: name, fields: map[string]string{}}
			for range rapid.IntRange(0, 2).Draw(t, l+".nfields") {
				f := rapid.SampledFrom(fields).Draw(t, l+".field")
				if slices.ContainsFunc(slices.Collect(maps.Keys(ct.fields)), func(g string) bool { return gate.SameFieldName(f, g) }) {
					continue
				}
				ct.fields[f] = rapid.SampledFrom([]string{"string", "array", "integer", ""}).Draw(t, l+".type")
			}
			switch rapid.IntRange(0, 4).Draw(t, l+".admits") {
			case 0:
				ct.pattern = rapid.SampledFrom(patterns).Draw(t, l+".pattern")
			case 1:
				ct.catchAll = true
			case 2:
				ct.named = rapid.SampledFrom(fields).Draw(t, l+".named")
				ct.via = rapid.SampledFrom(namedVias).Draw(t, l+".via")
			}
			props := map[string]any{}
			for f, typ := range ct.fields {
				switch typ {
				case "":
					props[f] = map[string]any{}
				case "array":
					props[f] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
				default:
					props[f] = map[string]any{"type": typ}
				}
			}
			sch := map[string]any{"type": "object", "properties": props}
			if ct.pattern != "" {
				sch["patternProperties"] = map[string]any{ct.pattern: map[string]any{"type": "string"}}
			}
			if ct.catchAll {
				sch["additionalProperties"] = map[string]any{"type": "string"}
			}
			if ct.named != "" {
				admitNamed(sch, ct.named, ct.via)
			}
			raw, _ := json.Marshal(sch)
			tools = append(tools, ct)
			reg = append(reg, executor.Tool{Name: name, InputSchema: raw,
				Execute: func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ran"), nil }})
		}
		r, err := executor.NewRegistry(reg...)
		require.NoError(t, err)
		ex, err := executor.New(r, executor.WithGates(bash, files))
		if err != nil {
			require.ErrorIs(t, err, executor.ErrGateScope)
			return
		}
		a, err := ex.Agent("a", executor.AgentPresets(executor.PresetAll))
		require.NoError(t, err)
		run := a.Run("r")
		admits := func(ct ctool, names []string) bool {
			for _, n := range names {
				if ct.catchAll || ct.pattern != "" && patternAdmitsField(ct.pattern, n) || ct.named != "" && gate.SameFieldName(ct.named, n) {
					return true
				}
				for f := range ct.fields {
					if gate.SameFieldName(f, n) {
						return true
					}
				}
			}
			return false
		}
		for i, ct := range tools {
			known := slices.ContainsFunc(opNames, func(n string) bool { return gate.SameFieldName(n, ct.name) }) ||
				admits(ct, pathFields) || admits(ct, cmdFields)
			in := map[string]any{}
			for f, typ := range ct.fields {
				switch typ {
				case "array":
					in[f] = []string{"/etc/passwd"}
				case "integer":
					in[f] = 1
				default:
					in[f] = "/etc/passwd"
				}
			}
			switch ct.via {
			case "":
			case "enum", "const", "allOf.enum": // the whole input is the value listed
				in = map[string]any{ct.named: "rm -rf /"}
			default:
				in[ct.named], in["x"] = "rm -rf /", "1"
			}
			raw, _ := json.Marshal(in)
			res := run.Execute(context.Background(), executor.ToolCall{ID: fmt.Sprint(i), Name: ct.name, Input: raw})
			if known && res.ErrorType != executor.ErrorTypeInvalidInput && !res.Gate.Gated {
				t.Fatalf("tool %+v, which the classify gates know, ran ungated: %+v", ct, res)
			}
		}
	})
}
