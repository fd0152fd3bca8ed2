package mcpgate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// Gate sources of the gateway's own decisions (gate.source).
const (
	SourceRule        = "mcpgate.rule"        // an allow/deny/ask/fetch rule
	SourceAnnotations = "mcpgate.annotations" // no rule: the default risk from annotations
	SourceRouter      = "mcpgate"             // a tool the gateway has no gate for (never presented)
)

// toolPolicy is what the gateway knows about one presented tool.
type toolPolicy struct {
	upstream    *Upstream
	server      string // the upstream's serverInfo.name (initialize)
	tool        string // the upstream's own name
	presented   string
	annotations gate.Annotations // as trusted: the upstream's, or MCP's defaults
}

// policyConfig is the classifier set-up shared by every rule's gate.
type policyConfig struct {
	classifier  []classify.Option
	gateOpts    []classify.GateOption
	readOnly    bool // profile read-only: review denies
	protectBase string
	protected   []string // absolute, clean: files no write/delete may touch
}

// buildGate returns the gate of one presented tool: its upstream's first
// matching rule, else the built-in table's, else the default risk from
// its annotations.
func (c policyConfig) buildGate(tp toolPolicy) (gate.Gate, string, error) {
	r, ok := ruleFor(tp.upstream.Tools, tp.tool)
	origin := "upstream rule " + r.Match
	if !ok && tp.upstream.URL == "" && tp.server == FilesystemServerName {
		// The built-in table describes the reference filesystem server's
		// tools by name, so it applies to that server only (a command
		// upstream that says it is): another server's read_file may fetch
		// a URL, its list_allowed_directories may do anything. A remote
		// upstream's tool names are its own claims, like its annotations:
		// it needs rules of its own.
		r, ok = ruleFor(BuiltinRules(), tp.tool)
		origin = "built-in rule " + r.Match
	}
	if !ok {
		return c.annotationGate(tp), "annotations", nil
	}
	parts := append([]Rule{r}, r.Also...)
	gates := make([]gate.Gate, 0, len(parts))
	for _, p := range parts {
		g, err := c.ruleGate(tp, p)
		if err != nil {
			return nil, "", fmt.Errorf("mcpgate: %s tool %q: %s: %w", tp.upstream.Name, tp.tool, origin, err)
		}
		gates = append(gates, g)
	}
	if len(gates) == 1 {
		return gates[0], origin, nil
	}
	return gate.Chain(gates...), origin, nil
}

func (c policyConfig) ruleGate(tp toolPolicy, r Rule) (gate.Gate, error) {
	opts := append([]classify.GateOption(nil), c.gateOpts...)
	opts = append(opts, classify.WithClassifierOptions(c.classifier...))
	if len(r.Fields) > 0 {
		opts = append(opts, classify.WithInputFields(r.Fields...))
	}
	switch r.Kind {
	case KindShell:
		return classify.BashGate(opts...)
	case KindRead, KindSearch, KindWrite, KindDelete:
		op := map[Kind]classify.Op{KindRead: classify.OpRead, KindSearch: classify.OpSearch, KindWrite: classify.OpWrite, KindDelete: classify.OpDelete}[r.Kind]
		opts = append(opts, classify.WithToolOps(map[string]classify.Op{tp.presented: op}))
		pg, err := classify.PathGate(opts...)
		if err != nil {
			return nil, err
		}
		// The first deny wins: the policy file's protection, then the path
		// gate's verdict, then the roots (a path the classifier lets run
		// that the upstream was never given).
		var gs []gate.Gate
		if r.Kind != KindRead && r.Kind != KindSearch && len(c.protected) > 0 {
			gs = append(gs, c.protect(r))
		}
		gs = append(gs, pg)
		if len(tp.upstream.Roots) > 0 {
			gs = append(gs, rootsGate(tp.upstream, r))
		}
		if len(gs) == 1 {
			return pg, nil
		}
		return gate.Chain(gs...), nil
	case KindFetch:
		return c.fixed(gate.RiskReview, gate.ActionAsk, orDefault(r.Reason, "fetches from the network")), nil
	case KindAllow:
		return c.fixed(gate.RiskSafe, gate.ActionAllow, orDefault(r.Reason, "allowed by rule "+r.Match)), nil
	case KindDeny:
		return c.fixed(gate.RiskHigh, gate.ActionDeny, orDefault(r.Reason, "denied by rule "+r.Match)), nil
	case KindAsk:
		return c.fixed(gate.RiskReview, gate.ActionAsk, orDefault(r.Reason, "rule "+r.Match+" asks a person")), nil
	}
	return nil, fmt.Errorf("unknown kind %q", r.Kind)
}

// protect denies a call of a write or delete rule whose path field names a
// protected file (the policy file).
func (c policyConfig) protect(r Rule) gate.Gate {
	fields := r.Fields
	if len(fields) == 0 {
		fields = []string{"path", "file_path", "target_file", "paths"}
	}
	return gate.Named("mcpgate.self", gate.Func(func(ctx context.Context, call gate.ToolCallContext) (gate.Decision, error) {
		if err := ctx.Err(); err != nil {
			return gate.Decision{}, err
		}
		for k, v := range call.Input {
			if !slices.ContainsFunc(fields, func(f string) bool { return gate.SameFieldName(k, f) }) {
				continue
			}
			var ps []string
			switch x := v.(type) {
			case string:
				ps = []string{x}
			case []any:
				for _, e := range x {
					if s, ok := e.(string); ok {
						ps = append(ps, s)
					}
				}
			}
			for _, p := range ps {
				if !filepath.IsAbs(p) {
					p = filepath.Join(c.protectBase, p)
				}
				p = filepath.Clean(p)
				if i := slices.IndexFunc(c.protected, func(q string) bool {
					return p == q || strings.HasPrefix(p, q+string(filepath.Separator)) || strings.HasPrefix(q, p+string(filepath.Separator))
				}); i >= 0 {
					d := gate.Deny(c.protected[i] + ", which toolgate needs to gate and audit this client's calls, cannot be changed through the gate it configures")
					d.Rule = "mcpgate.self"
					return d.WithRisk(gate.RiskHigh).WithSource(SourceRule), nil
				}
			}
		}
		// No risk of its own: the path gate's verdict is the decision.
		return gate.Allow().WithSource(SourceRule), nil
	}))
}

// pathValues are the strings (and strings of arrays) of in's fields.
func pathValues(in map[string]any, fields []string) []string {
	if len(fields) == 0 {
		fields = []string{"path", "file_path", "target_file", "paths"}
	}
	var ps []string
	for k, v := range in {
		if !slices.ContainsFunc(fields, func(f string) bool { return gate.SameFieldName(k, f) }) {
			continue
		}
		switch x := v.(type) {
		case string:
			ps = append(ps, x)
		case []any:
			for _, e := range x {
				if s, ok := e.(string); ok {
					ps = append(ps, s)
				}
			}
		}
	}
	return ps
}

// rootsGate denies a call of a file rule whose path lies outside every root
// the gateway gives the upstream (Upstream.Roots): the upstream never sees
// it, whatever the classifier thinks of the path (a temp directory, say).
// A relative path is taken from the first root and "~" from the home
// directory, as the reference filesystem server resolves them.
func rootsGate(u *Upstream, r Rule) gate.Gate {
	roots := make([]string, len(u.Roots))
	for i, root := range u.Roots {
		roots[i] = filepath.Clean(root)
	}
	home, _ := os.UserHomeDir()
	return gate.Named("mcpgate.roots", gate.Func(func(ctx context.Context, call gate.ToolCallContext) (gate.Decision, error) {
		if err := ctx.Err(); err != nil {
			return gate.Decision{}, err
		}
		for _, p := range pathValues(call.Input, r.Fields) {
			abs := p
			switch {
			case p == "~" || strings.HasPrefix(p, "~/"):
				abs = filepath.Join(home, strings.TrimPrefix(p, "~"))
			case !filepath.IsAbs(p):
				abs = filepath.Join(roots[0], p)
			}
			abs = filepath.Clean(abs)
			if !slices.ContainsFunc(roots, func(root string) bool {
				return abs == root || strings.HasPrefix(abs, strings.TrimSuffix(root, "/")+"/")
			}) {
				d := gate.Deny(fmt.Sprintf("%s is outside the roots of upstream %s (%s)", gate.SafeText(abs, 300), u.Name, strings.Join(roots, ", ")))
				d.Rule = "mcpgate.roots"
				return d.WithRisk(gate.RiskHigh).WithSource(SourceRule), nil
			}
		}
		// No risk of its own: the path gate's verdict is the decision.
		return gate.Allow().WithSource(SourceRule), nil
	}))
}

// fixed is a gate with one decision; under the read-only profile an ask
// is a deny.
func (c policyConfig) fixed(risk gate.RiskLevel, a gate.Action, reason string) gate.Gate {
	if a == gate.ActionAsk && c.readOnly {
		a = gate.ActionDeny
	}
	d := gate.Decision{Action: a, Reason: reason, Risk: risk, Source: SourceRule}
	return gate.Func(func(ctx context.Context, _ gate.ToolCallContext) (gate.Decision, error) {
		if err := ctx.Err(); err != nil {
			return gate.Decision{}, err
		}
		return d, nil
	})
}

// annotationGate is the default for a tool no rule covers: safe only when
// a trusted upstream says it is read-only and closed-world; otherwise
// review (ask; deny under read-only), with the reason naming what the
// annotations (or their untrusted defaults) say.
func (c policyConfig) annotationGate(tp toolPolicy) gate.Gate {
	a := tp.annotations
	if tp.upstream.Trusted && a.ReadOnlyHint && !gate.HintOpenWorld.Has(a) {
		return withSource(SourceAnnotations, c.fixed(gate.RiskSafe, gate.ActionAllow,
			"no rule for "+tp.upstream.Name+" tool "+tp.tool+"; the trusted upstream annotates it read-only and closed-world"))
	}
	var says []string
	switch {
	case !tp.upstream.Trusted:
		says = append(says, "untrusted annotations: taken as not read-only, destructive, open-world")
	case a.ReadOnlyHint:
		says = append(says, "read-only but open-world")
	default:
		if gate.HintDestructive.Has(a) {
			says = append(says, "destructive")
		} else {
			says = append(says, "not read-only")
		}
		if gate.HintOpenWorld.Has(a) {
			says = append(says, "open-world")
		}
	}
	return withSource(SourceAnnotations, c.fixed(gate.RiskReview, gate.ActionAsk,
		"no rule for "+tp.upstream.Name+" tool "+tp.tool+" ("+strings.Join(says, ", ")+"): a person must approve it"))
}

// withSource gives g's decisions the source src.
func withSource(src string, g gate.Gate) gate.Gate {
	return gate.Func(func(ctx context.Context, call gate.ToolCallContext) (gate.Decision, error) {
		d, err := g.Decide(ctx, call)
		d.Source = src
		return d, err
	})
}

// router decides each call by the gate of the tool it names (the
// presented name); a name it has no gate for is denied (fail closed).
type router struct {
	gates map[string]gate.Gate
}

// Name implements gate.Namer.
func (router) Name() string { return SourceRouter }

// Decide implements gate.Gate.
func (r router) Decide(ctx context.Context, call gate.ToolCallContext) (gate.Decision, error) {
	g, ok := r.gates[call.ToolName]
	if !ok {
		return gate.Deny("no gateway policy for tool " + call.ToolName).WithRisk(gate.RiskHigh).WithSource(SourceRouter), nil
	}
	return g.Decide(ctx, call)
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
