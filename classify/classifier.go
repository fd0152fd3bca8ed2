package classify

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/gate"
)

// Default limits. Inputs beyond them are never safe.
const (
	DefaultMaxBytes    = 256 << 10 // bytes of command text
	DefaultMaxDepth    = 16        // nesting of sh -c, eval, substitutions
	DefaultMaxCommands = 4096      // simple commands visited
)

// config is what Options set.
type config struct {
	rules        *Rules
	workspace    string
	home         string
	untrusted    bool
	strictReads  bool
	scopedWrites gate.RiskLevel
	maxBytes     int
	maxDepth     int
	maxCommands  int
	profile      string   // WithProfile
	interactive  bool     // WithInteractiveInput
	protect      []string // WithProtectedPaths (absolute, clean)
	err          error    // an invalid option
}

// Option configures a Classifier (and Bash, Path, BashGate, PathGate).
type Option func(*config)

// WithRules replaces the default rule set (see DefaultRules, ParseRules).
func WithRules(r *Rules) Option { return func(c *config) { c.rules = r } }

// WithWorkspace sets the absolute workspace root. Relative paths are then
// resolved against it (a command starts there), and absolute paths below
// it count as inside the workspace. Empty means unknown: relative paths
// are inside it and every absolute path outside.
func WithWorkspace(dir string) Option {
	return func(c *config) {
		if dir != "" {
			c.workspace = path.Clean(dir)
		}
	}
}

// WithHome sets the user's absolute home directory so that /home/dev/x is
// recognised as ~/x.
func WithHome(dir string) Option {
	return func(c *config) {
		if dir != "" && dir != "/" {
			c.home = path.Clean(dir)
		}
	}
}

// WithTrustedWorkspace says whether the workspace's own configuration
// (.git/config, hooks) can be trusted. In an untrusted workspace, git
// read commands are review, not safe: repository config can make them run
// programs (core.fsmonitor, core.pager). Default: trusted.
func WithTrustedWorkspace(trusted bool) Option { return func(c *config) { c.untrusted = !trusted } }

// WithScopedWrites sets the level of writing, creating or truncating
// files inside the workspace or a temp directory (redirects, tee, sed -i,
// cp, touch, …). The labelling policy's default is review; a deployment
// whose workspace is disposable or under version control may choose safe
// (like an "accept edits" mode). Sensitive paths (.git/hooks, .env, …) and
// deletions are unaffected. Levels other than safe and review are ignored.
func WithScopedWrites(level gate.RiskLevel) Option {
	return func(c *config) {
		if level == gate.RiskSafe || level == gate.RiskReview {
			c.scopedWrites = level
		}
	}
}

// WithStrictReads makes Path send reads outside the workspace to review.
func WithStrictReads(strict bool) Option { return func(c *config) { c.strictReads = strict } }

// WithLimits sets the input size in bytes, the nesting depth and the number
// of simple commands beyond which a command is review. Zero keeps a
// default.
func WithLimits(maxBytes, maxDepth, maxCommands int) Option {
	return func(c *config) {
		if maxBytes > 0 {
			c.maxBytes = maxBytes
		}
		if maxDepth > 0 {
			c.maxDepth = maxDepth
		}
		if maxCommands > 0 {
			c.maxCommands = maxCommands
		}
	}
}

// compiled is a validated rule set in lookup form. It is immutable and
// shared by every classification of a Classifier.
type compiled struct {
	*Rules
	paths    []compiledPath
	secrets  *secretFilter
	longOpts map[string]*longOptions // commands with Abbrev
	index    pathIndex
	// analyzers is the analyzer registry (see builtinAnalyzers).
	analyzers map[string]analyzerFunc
	wrappers  map[string]wrapperFunc
	// commandNames and wrapperNames are the keys of Commands and
	// Wrappers, sorted (for glob command names: see globName).
	commandNames, wrapperNames []string
	// commands holds Commands' rules by pointer, for the walk: a rule
	// is a few hundred bytes, copied out of the map on every lookup and
	// on every call that took it by value.
	commands map[string]*CommandRule
	// protect holds the write rules of WithProtectedPaths, matched
	// besides these for every write (nil: none).
	protect *compiled
}

func compileRules(r *Rules) (*compiled, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	cr := &compiled{Rules: r, analyzers: builtinAnalyzers(), wrappers: builtinWrappers()}
	for _, p := range r.Paths {
		// Rules are matched in lower case (see foldCase); the rule set
		// itself keeps its spelling.
		p.Pattern = foldCase(p.Pattern)
		p.Except = slices.Clone(p.Except)
		for i, ex := range p.Except {
			p.Except[i] = foldCase(ex)
		}
		cr.paths = append(cr.paths, newCompiledPath(p))
	}
	for i := range cr.paths {
		for j := range cr.paths {
			if i != j && strings.HasPrefix(cr.paths[j].rule.Pattern, strings.TrimSuffix(cr.paths[i].rule.Pattern, "/")+"/") {
				cr.paths[i].dir = true
				break
			}
		}
	}
	cr.commandNames = slices.Sorted(maps.Keys(r.Commands))
	cr.wrapperNames = slices.Sorted(maps.Keys(r.Wrappers))
	cr.secrets = newSecretFilter(cr.paths)
	cr.index = newPathIndex(cr.paths)
	cr.commands = make(map[string]*CommandRule, len(r.Commands))
	for name, c := range r.Commands {
		cr.commands[name] = &c
	}
	cr.longOpts = map[string]*longOptions{}
	for name, c := range r.Commands {
		if c.Abbrev {
			cr.longOpts[name] = collectLongOptions(c)
		}
	}
	if cr.Unknown == "" {
		cr.Unknown = review // r is the compiled rules' own copy
	}
	return cr, nil
}

// defaultCompiled is the built-in rule set compiled once; it is never
// modified after construction.
var defaultCompiled = sync.OnceValues(func() (*compiled, error) { return compileRules(DefaultRules()) })

// profileCompiled are the built-in rules with a profile's changes,
// compiled once each; never modified after construction.
var profileCompiled = map[string]func() (*compiled, error){
	ProfileWorkspace: sync.OnceValues(func() (*compiled, error) {
		r := DefaultRules()
		workspaceRules(r)
		return compileRules(r)
	}),
}

// Classifier classifies shell commands and file paths with one rule set
// and configuration. It is immutable and safe for concurrent use.
type Classifier struct {
	cfg   config
	rules *compiled
	res   resolver
	// runs holds cleared per-classification states with their parsers
	// for reuse (a sync.Pool is safe for concurrent use and changes no
	// verdict: see newRun).
	runs *sync.Pool
}

// New returns a Classifier. It fails when the rules do not validate
// (errors wrap ErrRules).
func New(opts ...Option) (*Classifier, error) {
	cfg := config{scopedWrites: review, maxBytes: DefaultMaxBytes, maxDepth: DefaultMaxDepth, maxCommands: DefaultMaxCommands}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.err != nil {
		return nil, fmt.Errorf("classify: %w", cfg.err)
	}
	var (
		cr  *compiled
		err error
	)
	spec, _ := profileSpecOf(cfg.profile)
	switch {
	case spec.rules != nil && cfg.rules == nil:
		cr, err = profileCompiled[cfg.profile]()
	case spec.rules != nil:
		rules := cfg.rules.Clone()
		spec.rules(rules)
		cr, err = compileRules(rules)
	case cfg.rules == nil:
		cr, err = defaultCompiled()
	default:
		// A deep copy: the caller may change its rules afterwards, or
		// hand the same rules to several New calls at once.
		cr, err = compileRules(cfg.rules.Clone())
	}
	if err != nil {
		return nil, fmt.Errorf("classify: %w", err)
	}
	if len(cfg.protect) > 0 {
		// The shared rule set plus a small one of this Classifier's own,
		// consulted for writes (compiled.protect): compiling the whole
		// set again would cost milliseconds per New.
		pr, err := compileRules(&Rules{Paths: protectedRules(cfg.protect, cfg.home), Unknown: review})
		if err != nil {
			return nil, fmt.Errorf("classify: protected paths: %w", err)
		}
		own := *cr
		own.protect = pr
		cr = &own
	}
	temp := make([]string, 0, len(cr.TempDirs))
	for _, t := range cr.TempDirs {
		temp = append(temp, path.Clean(t))
	}
	res := resolver{home: cfg.home, temp: temp}
	if cfg.workspace != "" {
		// The workspace in resolved form ("~/app" when it is under home).
		cfg.workspace = res.resolve("", cfg.workspace)
		res.workspace = cfg.workspace
	}
	return &Classifier{cfg: cfg, rules: cr, res: res, runs: &sync.Pool{}}, nil
}

// configErrorRisk is the fail-closed verdict for a bad configuration.
func configErrorRisk(err error) Risk {
	return summarize([]Finding{{Level: high, Rule: "config.invalid", Reason: clip(err.Error(), 200), Line: 1, Col: 1}}, "")
}

// systemDir reports whether dir holds trusted executables.
func (cr *compiled) systemDir(dir string) bool {
	for _, d := range cr.SystemDirs {
		if strings.TrimSuffix(d, "/") == dir {
			return true
		}
	}
	return false
}

// WithProtectedPaths names files and directories (absolute paths) that no
// command and no file tool may write, create, move or delete, nor anything
// below a directory: toolgate's own policy file, its executable, spool
// and approvals inbox, whose change would stop the gate or the audit.
// Writing one is high (path.toolgate-self), in every spelling the path
// rules see through (tilde forms, /proc aliases, letter case, ..). Other
// paths are ignored. Each Classifier with protected paths compiles its own
// rule set (about a millisecond).
func WithProtectedPaths(paths ...string) Option {
	return func(c *config) {
		for _, p := range paths {
			if path.IsAbs(p) {
				c.protect = append(c.protect, path.Clean(p))
			}
		}
	}
}

// protectedRules are the write rules for WithProtectedPaths, in the form
// the rules match (a path below home as "~/…"), glob characters escaped.
func protectedRules(paths []string, home string) []PathRule {
	res := resolver{home: home}
	esc := strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`)
	var out []PathRule
	const reason = "toolgate's own files (its policy, executable, spool or approvals inbox): changing them would stop the gate or the audit"
	for _, p := range paths {
		rp := res.resolve("", p)
		pat := esc.Replace(rp)
		for _, q := range []string{pat, strings.TrimSuffix(pat, "/") + "/**"} {
			out = append(out, PathRule{Pattern: q, Write: high, ID: "path.toolgate-self", Reason: reason})
		}
		// The directories holding it, below a top-level one ("/tmp",
		// "~/x" stay free): moving ~/.config/toolgate or ~/.config away
		// removes the policy file as surely as deleting it.
		for d := path.Dir(rp); strings.Count(strings.TrimPrefix(d, "/"), "/") >= 1 && d != "~"; d = path.Dir(d) {
			if strings.HasPrefix(d, "~/") && !strings.Contains(d[2:], "/") {
				out = append(out, PathRule{Pattern: esc.Replace(d), Write: high, ID: "path.toolgate-self", Reason: reason})
				break
			}
			out = append(out, PathRule{Pattern: esc.Replace(d), Write: high, ID: "path.toolgate-self", Reason: reason})
		}
	}
	return out
}
