package policy

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// SourcePolicy is the gate.source of the policy's own decisions (fixed
// kinds, fetch, a tool without a rule, input it cannot read); shell and
// path decisions carry classify.SourceBash and classify.SourcePath.
const SourcePolicy = "policy"

// Canonical tool names the policy gate presents to classify.PathGate, one
// per operation (its default tool map knows them), so that the operation
// is the rule's and never the call's.
const (
	opToolList   = "list_dir"
	opToolRead   = "read_file"
	opToolSearch = "grep"
	opToolWrite  = "write_file"
	opToolDelete = "delete_file"
)

// policyGate routes each call by tool name (see Policy.Gate).
type policyGate struct {
	p            *Policy
	workspace    string
	cwd          string // where calls run, when not the workspace root ("" = the root)
	bash         gate.Gate
	files        gate.Gate
	reviewAction gate.Action
	protect      []string // the policy file and GateAt's protect paths (absolute, clean)
}

// Gate returns one gate for the policy: each call's tool name selects its
// rule (Rule); shell rules go to classify.BashGate, read/write/delete rules
// to classify.PathGate (with the rule's operation, or a more dangerous one
// an editor sub-command such as "create" names; never a less dangerous
// one), fetch to a review decision, allow/deny/ask to a fixed decision;
// a tool without a rule is asked about ("no policy for tool X"). Under
// the read-only profile every review (fetch, no rule, an ask rule) is
// denied instead. The classifier's options are ClassifierOptions and
// GateOptions. workspace, when non-empty, replaces p.Workspace as the
// classifier's workspace root (absolute; a relative one is made absolute
// against the working directory). The gate judges every tool (no scope),
// is safe for concurrent use and never runs anything. It fails when the
// classifier refuses the options (an unknown profile).
func (p *Policy) Gate(workspace string) (gate.Gate, error) { return p.GateAt(workspace, "") }

// GateAt is Gate for calls that run in cwd, a directory that may differ
// from the workspace root (a coding agent's shell keeps the directory the
// model cd'd into; its hook event says where): shell commands are judged
// as "cd CWD && COMMAND" and relative paths are taken from cwd, so that a
// model cannot make "rm -r x" in /etc read as a workspace file by moving
// there first. cwd "" or equal to the workspace root is Gate; a relative
// cwd is an error.
//
// protect names more files or directories that no file tool may write or
// delete (nor anything below a directory), beside the policy file itself:
// the hook's own executable, its spool and approvals inbox — what a model
// would change to stop being gated or audited. Absolute paths; others are
// ignored.
func (p *Policy) GateAt(workspace, cwd string, protect ...string) (gate.Gate, error) {
	if cwd != "" && !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("policy: working directory %q is not absolute", cwd)
	}
	ws := p.Workspace
	if workspace != "" {
		ws = workspace
	}
	if ws != "" && !filepath.IsAbs(ws) {
		abs, err := filepath.Abs(ws)
		if err != nil {
			return nil, fmt.Errorf("policy: workspace %q: %w", ws, err)
		}
		ws = abs
	}
	var self []string
	if p.source != "" {
		self = append(self, p.source)
	}
	for _, q := range protect {
		if filepath.IsAbs(q) {
			self = append(self, filepath.Clean(q))
		}
	}
	// The classifier rates every write there high too, in any spelling
	// and from a shell command (the check below is the file tools' fixed
	// denial).
	copts := append(p.ClassifierOptions(ws), classify.WithProtectedPaths(self...))
	gopts := p.GateOptions()
	bash, err := classify.BashGate(append(gopts, classify.WithClassifierOptions(copts...))...)
	if err != nil {
		return nil, fmt.Errorf("policy: bash gate: %w", err)
	}
	files, err := classify.PathGate(append(gopts, classify.WithClassifierOptions(copts...))...)
	if err != nil {
		return nil, fmt.Errorf("policy: path gate: %w", err)
	}
	review := gate.ActionAsk
	if p.Profile == classify.ProfileReadOnly {
		review = gate.ActionDeny
	}
	g := &policyGate{p: p, workspace: ws, bash: bash, files: files, reviewAction: review, protect: self}
	if cwd != "" && filepath.Clean(cwd) != filepath.Clean(ws) {
		g.cwd = filepath.Clean(cwd)
	}
	return g, nil
}

// ClassifierOptions are the classifier options the policy's gates use,
// for a workspace root (absolute, or "" for none): the workspace, whether
// it is trusted, the profile, and the user's home (os.UserHomeDir, when
// set and absolute: /Users/me/.ssh is ~/.ssh to the rules). The MCP
// gateway builds its classifier from the same options.
func (p *Policy) ClassifierOptions(workspace string) []classify.Option {
	opts := []classify.Option{classify.WithWorkspace(workspace), classify.WithTrustedWorkspace(p.Trusted())}
	if p.Profile != "" {
		opts = append(opts, classify.WithProfile(p.Profile))
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		opts = append(opts, classify.WithHome(home))
	}
	if p.interactive {
		opts = append(opts, classify.WithInteractiveInput(true))
	}
	return opts
}

// GateOptions are the options of the policy's classifier gates: the
// profile's gate behaviour, and high risk asked instead of denied when
// the policy says high: ask.
func (p *Policy) GateOptions() []classify.GateOption {
	var opts []classify.GateOption
	if p.Profile != "" {
		opts = append(opts, classify.WithGateProfile(p.Profile))
	}
	if p.High == HighAsk {
		opts = append(opts, classify.WithHighAction(gate.ActionAsk))
	}
	return opts
}

// Name is SourcePolicy.
func (g *policyGate) Name() string { return SourcePolicy }

// Decide implements gate.Gate.
func (g *policyGate) Decide(ctx context.Context, call gate.ToolCallContext) (gate.Decision, error) {
	if err := ctx.Err(); err != nil {
		return gate.Decision{}, err
	}
	r, ok := g.p.Rule(call.ToolName)
	if !ok {
		return g.review(fmt.Sprintf("no policy for tool %q", call.ToolName), "policy.no-rule"), nil
	}
	rule := "policy.tool:" + r.Match
	switch r.Kind {
	case KindAllow:
		d := gate.Allow()
		d.Reason, d.Rule = orDefault(r.Reason, "allowed by the policy's rule for "+r.Match), rule
		return d.WithRisk(gate.RiskSafe).WithSource(SourcePolicy), nil
	case KindDeny:
		d := gate.Deny(orDefault(r.Reason, "denied by the policy's rule for "+r.Match))
		d.Rule = rule
		return d.WithRisk(gate.RiskHigh).WithSource(SourcePolicy), nil
	case KindAsk:
		return g.review(orDefault(r.Reason, "the policy asks a human about every call of "+r.Match), rule), nil
	case KindFetch:
		what := ""
		if vs, err := values(call.Input, r.FieldsOrDefault(), true); err == nil && len(vs) > 0 {
			what = ": " + gate.SafeText(vs[0], 200)
		}
		return g.review(orDefault(r.Reason, "network access ("+call.ToolName+what+")"), rule), nil
	case KindShell:
		return g.shell(ctx, call, r)
	case KindRead, KindSearch, KindWrite, KindDelete:
		return g.path(ctx, call, r)
	}
	return failClosed(SourcePolicy, fmt.Sprintf("policy: rule for %s has unknown kind %q", r.Match, r.Kind)), nil
}

// review is a review-level decision: ask, or deny under read-only.
func (g *policyGate) review(reason, rule string) gate.Decision {
	d := gate.Ask(reason)
	if g.reviewAction == gate.ActionDeny {
		d = gate.Deny(reason)
	}
	d.Rule = rule
	return d.WithRisk(gate.RiskReview).WithSource(SourcePolicy)
}

// shell judges every command the rule's fields hold with BashGate; the
// highest risk decides.
func (g *policyGate) shell(ctx context.Context, call gate.ToolCallContext, r ToolRule) (gate.Decision, error) {
	fields := r.FieldsOrDefault()
	cmds, err := values(call.Input, fields, false)
	if err != nil {
		return failClosed(classify.SourceBash, "classify.bash: "+err.Error()), nil
	}
	if len(cmds) == 0 {
		return failClosed(classify.SourceBash, fmt.Sprintf("classify.bash: input has no string field %s", strings.Join(fields, " or "))), nil
	}
	var dirs []string
	if len(r.dirs) > 0 {
		if dirs, err = values(call.Input, r.dirs, false); err != nil {
			return failClosed(classify.SourceBash, "classify.bash: "+err.Error()), nil
		}
	}
	if g.cwd != "" {
		// A relative directory field is taken from the cwd; the cwd
		// itself comes first either way.
		for i, d := range dirs {
			if !filepath.IsAbs(d) {
				dirs[i] = filepath.Join(g.cwd, d)
			}
		}
		if len(dirs) == 0 {
			dirs = []string{g.cwd}
		}
	}
	if len(dirs) > 0 {
		// The tool runs the command in that directory: judge it as
		// "cd DIR && COMMAND" (the classifier follows cd).
		var in []string
		for _, d := range dirs {
			for _, c := range cmds {
				in = append(in, "cd "+shellQuote(d)+" && "+c)
			}
		}
		cmds = in
	}
	var best gate.Decision
	for i, c := range cmds {
		d, err := g.bash.Decide(ctx, gate.ToolCallContext{ToolName: call.ToolName, Input: map[string]any{"command": c},
			ToolCallID: call.ToolCallID, AgentName: call.AgentName, RunID: call.RunID, TaskID: call.TaskID})
		if err != nil {
			return gate.Decision{}, err
		}
		if i == 0 || worse(d, best) {
			best = d
		}
	}
	return best, nil
}

// path judges every path the rule names with PathGate under the rule's
// operation (raised, never lowered, by an editor sub-command).
func (g *policyGate) path(ctx context.Context, call gate.ToolCallContext, r ToolRule) (gate.Decision, error) {
	byOp := map[classify.Op][]string{}
	switch r.extract {
	case extractPatch:
		ps, err := values(call.Input, r.FieldsOrDefault(), false)
		if err != nil {
			return failClosed(classify.SourcePath, "apply_patch: "+err.Error()), nil
		}
		for _, text := range ps {
			for _, f := range PatchFiles(text) {
				byOp[f.Op] = append(byOp[f.Op], f.Path)
			}
		}
		if len(byOp) == 0 {
			return failClosed(classify.SourcePath, "apply_patch: the patch names no file (no *** Add/Update/Delete File: line)"), nil
		}
	default:
		op := opOf(r.Kind)
		if sub := editorOp(call.Input); opRank(sub) > opRank(op) {
			op = sub
		}
		ps, err := values(call.Input, r.FieldsOrDefault(), true)
		if err != nil {
			return failClosed(classify.SourcePath, "classify.path: "+err.Error()), nil
		}
		if r.extract == extractSearch || r.extract == extractSearchRe {
			if len(ps) == 0 {
				ps = []string{orDefault(g.cwd, orDefault(g.workspace, "."))} // where the search runs
			}
		}
		if r.extract == extractFields && slices.Contains(r.FieldsOrDefault(), "include") {
			// Gemini's read_many_files globs with dot:true.
			var all []string
			for _, p := range ps {
				all = append(all, dotVariants(p)...)
			}
			ps = all
		}
		switch r.extract {
		case extractSearch:
			// A listing (Glob, LS): names, not contents; the pattern's
			// directory is listed too.
			if op == classify.OpRead {
				op = classify.OpList
			}
			for _, pat := range stringFields(call.Input, "pattern") {
				ps = append(ps, globDir(ps[0], pat))
			}
		case extractSearchRe:
			// A content search (Grep) reads every file below each path,
			// hidden ones included; its file filter ("glob", Gemini's
			// "include") is a read of what it names below the path.
			if opRank(op) < opRank(classify.OpSearch) {
				op = classify.OpSearch
			}
			var filters []string
			for _, pat := range stringFields(call.Input, "glob", "include") {
				for _, base := range ps {
					filters = append(filters, dotVariants(globUnder(base, pat))...)
				}
			}
			if len(filters) > 0 {
				byOp[classify.OpRead] = filters
			}
		}
		if len(ps) == 0 {
			return failClosed(classify.SourcePath, fmt.Sprintf("classify.path: input has no string field %s", strings.Join(r.FieldsOrDefault(), " or "))), nil
		}
		byOp[op] = append(byOp[op], ps...)
	}
	if g.cwd != "" {
		for op, ps := range byOp {
			for i, p := range ps {
				if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~") {
					ps[i] = filepath.Join(g.cwd, p)
				}
			}
			byOp[op] = ps
		}
	}
	if d, ok := g.protected(byOp); ok {
		return d, nil
	}
	var best gate.Decision
	first := true
	for _, op := range []classify.Op{classify.OpList, classify.OpRead, classify.OpSearch, classify.OpWrite, classify.OpDelete} {
		ps := byOp[op]
		if len(ps) == 0 {
			continue
		}
		in := map[string]any{"paths": toAny(ps)}
		d, err := g.files.Decide(ctx, gate.ToolCallContext{ToolName: opTool(op), Input: in,
			ToolCallID: call.ToolCallID, AgentName: call.AgentName, RunID: call.RunID, TaskID: call.TaskID})
		if err != nil {
			return gate.Decision{}, err
		}
		if first || worse(d, best) {
			best, first = d, false
		}
	}
	return best, nil
}

// protected denies a write or delete of the policy file itself, or of a
// path GateAt was told to protect (or anything below one): an agent that
// could edit its own policy would set it, one that could replace the hook
// or empty its spool would not be gated or audited. (A shell command that
// writes them is judged by the classifier like any write outside the
// workspace; keep them outside it.)
func (g *policyGate) protected(byOp map[classify.Op][]string) (gate.Decision, bool) {
	if len(g.protect) == 0 {
		return gate.Decision{}, false
	}
	for _, op := range []classify.Op{classify.OpWrite, classify.OpDelete} {
		for _, p := range byOp[op] {
			abs := p
			if strings.HasPrefix(abs, "~/") || abs == "~" {
				if home, err := os.UserHomeDir(); err == nil {
					abs = filepath.Join(home, strings.TrimPrefix(abs, "~"))
				}
			}
			if !filepath.IsAbs(abs) {
				base := g.workspace
				if base == "" {
					base, _ = filepath.Abs(".")
				}
				abs = filepath.Join(base, abs)
			}
			abs = filepath.Clean(abs)
			for _, q := range g.protect {
				if abs == q || strings.HasPrefix(abs, q+string(filepath.Separator)) || strings.HasPrefix(q, abs+string(filepath.Separator)) {
					what := "the toolgate policy file (" + q + ")"
					if q != g.p.source {
						what = q + ", which toolgate needs to gate and audit this agent,"
					}
					d := gate.Deny(what + " cannot be changed through the gate it configures")
					d.Rule = "policy.self"
					return d.WithRisk(gate.RiskHigh).WithSource(SourcePolicy), true
				}
			}
		}
	}
	return gate.Decision{}, false
}

// shellQuote quotes s as one shell word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// globUnder is a search's file filter (a glob matched below base, as
// ripgrep's --glob) as one path glob: "**/*.go" under /src is
// /src/**/*.go; a filter without "/" matches at any depth ("*.pem" is
// base/**/*.pem); an absolute or "~" filter is itself.
func globUnder(base, pat string) string {
	pat = strings.TrimPrefix(pat, "!") // a negated filter names files too
	switch {
	case path.IsAbs(pat) || strings.HasPrefix(pat, "~"):
		return pat
	case !strings.Contains(pat, "/"):
		return path.Join(base, "**", pat)
	}
	return path.Join(base, pat)
}

// maxDotVariants bounds dotVariants' answer.
const maxDotVariants = 16

// dotVariants is a glob and, for a matcher whose "*", "?" and "[…]" match
// a leading dot (ripgrep's --glob, Gemini's dot:true; unlike bash and the
// path rules), the globs that spell that out: a segment "*.env" also as
// ".env" and ".*.env", "?env" as ".env", "[.]env" as ".env" (one segment
// at a time, then all of them, at most maxDotVariants).
func dotVariants(g string) []string {
	out := []string{g}
	segs := strings.Split(g, "/")
	all := slices.Clone(segs)
	dotted := false
	for i, sg := range segs {
		vs := dotSeg(sg)
		for _, v := range vs {
			if len(out) >= maxDotVariants {
				return out
			}
			alt := slices.Clone(segs)
			alt[i] = v
			out = append(out, strings.Join(alt, "/"))
		}
		if len(vs) > 0 {
			all[i], dotted = vs[0], true
		}
	}
	if dotted && len(out) < maxDotVariants {
		out = append(out, strings.Join(all, "/"))
	}
	return out
}

// dotSeg returns the spellings of a glob segment whose first character
// matches a leading dot (see dotVariants), or nil.
func dotSeg(sg string) []string {
	switch {
	case strings.Trim(sg, "*?") == "" || sg[0] == '.':
		// Only wildcards: a filter for every file is judged as no filter
		// (a search of the tree).
		return nil
	case sg[0] == '*':
		vs := []string{"." + sg}
		if rest := strings.TrimLeft(sg, "*"); strings.HasPrefix(rest, ".") {
			vs = append(vs, rest)
		}
		return vs
	case sg[0] == '?':
		return []string{"." + sg[1:]}
	case sg[0] == '[':
		end := strings.IndexByte(sg[1:], ']')
		if end < 0 {
			return nil
		}
		class := sg[1 : end+1]
		neg := strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^")
		if strings.Contains(class, ".") != neg || neg && len(class) == 1 {
			return []string{"." + sg[end+2:]}
		}
	}
	return nil
}

// stringFields are the string values of in's keys that are one of names
// in any gate.SameFieldName spelling, in sorted key order (other types
// are left out: the input schema has already judged them).
func stringFields(in map[string]any, names ...string) []string {
	var keys []string
	for k := range in {
		if slices.ContainsFunc(names, func(n string) bool { return gate.SameFieldName(k, n) }) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		if s, ok := in[k].(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// globDir is the directory part of a glob pattern before its first
// meta character, joined to base when relative ("../../**/*.go" → base/../..).
func globDir(base, pat string) string {
	i := strings.IndexAny(pat, "*?[{")
	dir := pat
	if i >= 0 {
		dir = pat[:i]
	}
	if j := strings.LastIndexByte(dir, '/'); j >= 0 {
		dir = dir[:j+1]
	} else {
		dir = ""
	}
	if dir == "" {
		return base
	}
	if path.IsAbs(dir) || strings.HasPrefix(dir, "~") {
		return dir
	}
	return path.Join(base, dir)
}

func opOf(k Kind) classify.Op {
	switch k {
	case KindRead:
		return classify.OpRead
	case KindSearch:
		return classify.OpSearch
	case KindDelete:
		return classify.OpDelete
	}
	return classify.OpWrite
}

func opTool(op classify.Op) string {
	switch op {
	case classify.OpList:
		return opToolList
	case classify.OpRead:
		return opToolRead
	case classify.OpSearch:
		return opToolSearch
	case classify.OpDelete:
		return opToolDelete
	}
	return opToolWrite
}

func opRank(o classify.Op) int {
	switch o {
	case classify.OpList:
		return 1
	case classify.OpRead:
		return 2
	case classify.OpSearch:
		return 3
	case classify.OpWrite:
		return 4
	case classify.OpDelete:
		return 5
	}
	return 0
}

// editorOp is the most dangerous operation an editor sub-command field
// ("command": view, create, str_replace, insert, undo_edit, write,
// append, delete; in any spelling) names, or "".
func editorOp(in map[string]any) classify.Op {
	var best classify.Op
	for k, v := range in {
		if !gate.SameFieldName(k, "command") {
			continue
		}
		s, _ := v.(string)
		var op classify.Op
		switch s {
		case "view":
			op = classify.OpRead
		case "create", "str_replace", "insert", "undo_edit", "write", "append":
			op = classify.OpWrite
		case "delete":
			op = classify.OpDelete
		default:
			continue
		}
		if opRank(op) > opRank(best) {
			best = op
		}
	}
	return best
}

// values are the strings of every key of in that is one of fields
// (gate.SameFieldName), in sorted key order; with arrays, an array of
// strings gives each string. A matching key of another type is an error.
func values(in map[string]any, fields []string, arrays bool) ([]string, error) {
	var keys []string
	for k := range in {
		if slices.ContainsFunc(fields, func(f string) bool { return gate.SameFieldName(k, f) }) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		switch v := in[k].(type) {
		case string:
			out = append(out, v)
		case []any:
			if !arrays {
				return nil, fmt.Errorf("input field %q is not a string", k)
			}
			for i, x := range v {
				s, ok := x.(string)
				if !ok {
					return nil, fmt.Errorf("input field %q item %d is not a string", k, i)
				}
				out = append(out, s)
			}
		default:
			return nil, fmt.Errorf("input field %q is not a string or an array of strings", k)
		}
	}
	return out, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// worse reports whether a is a stricter decision than b: a higher risk,
// or at equal risk a stricter action (deny > ask > allow).
func worse(a, b gate.Decision) bool {
	if ra, rb := a.Risk.Rank(), b.Risk.Rank(); ra != rb {
		return ra > rb
	}
	return actionRank(a.Action) > actionRank(b.Action)
}

func actionRank(a gate.Action) int {
	switch a {
	case gate.ActionAllow:
		return 0
	case gate.ActionAsk:
		return 1
	}
	return 2
}

// failClosed denies input the gate cannot read.
func failClosed(source, reason string) gate.Decision {
	return gate.Deny(reason).WithRisk(gate.RiskHigh).WithSource(source)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
