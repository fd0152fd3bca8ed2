package classify

import (
	"fmt"
	"maps"
	"slices"

	"github.com/toolgate/toolgate/gate"
)

// Permission profiles: named rule sets a user picks in one word, like the
// permission modes of coding agents.
const (
	// ProfileReadOnly: only what the classifier proves read-only runs;
	// everything else is denied, nothing is asked (a "plan" mode).
	ProfileReadOnly = "read-only"
	// ProfileWorkspace: edits inside the workspace or a temp directory
	// and the project's own builds, tests, linters and formatters run
	// without asking; installs, network, running other code and writes
	// outside are asked; high is denied.
	ProfileWorkspace = "workspace"
	// ProfileStrict is the labelling policy (the default): everything
	// that is not provably read-only is asked, high is denied.
	ProfileStrict = "strict"
)

// ProfileInfo describes a permission profile.
type ProfileInfo struct {
	Name    string
	Summary string
}

// Profiles lists the built-in permission profiles.
func Profiles() []ProfileInfo {
	return []ProfileInfo{
		{ProfileReadOnly, "reads run; anything else is denied without asking"},
		{ProfileWorkspace, "workspace edits and the project's builds and tests run; installs, network, other code and writes outside are asked; high is denied"},
		{ProfileStrict, "reads run; anything else is asked; high is denied (the default)"},
	}
}

// profileSpec is what a profile changes: the classifier's options, its
// rules, and what a review verdict becomes at a gate.
type profileSpec struct {
	scopedWrites gate.RiskLevel
	rules        func(*Rules) // changes to the rule set, or nil
	reviewAction gate.Action
}

func profileSpecOf(name string) (profileSpec, error) {
	switch name {
	case ProfileStrict, "":
		return profileSpec{scopedWrites: review, reviewAction: gate.ActionAsk}, nil
	case ProfileReadOnly:
		return profileSpec{scopedWrites: review, reviewAction: gate.ActionDeny}, nil
	case ProfileWorkspace:
		return profileSpec{scopedWrites: safe, rules: workspaceRules, reviewAction: gate.ActionAsk}, nil
	}
	return profileSpec{}, fmt.Errorf("%w: unknown profile %q (want one of read-only, workspace, strict)", ErrRules, name)
}

// WithProfile selects a permission profile for the classifier (see
// Profiles): its rule changes are applied to the rules in use (the
// defaults or WithRules'), and it sets WithScopedWrites. An unknown
// name makes New fail. At a gate use WithGateProfile, which also sets
// what a review verdict becomes.
func WithProfile(name string) Option {
	return func(c *config) {
		spec, err := profileSpecOf(name)
		if err != nil {
			c.err = err
			return
		}
		c.profile = name
		c.scopedWrites = spec.scopedWrites
	}
}

// WithGateProfile selects a permission profile for BashGate or PathGate:
// the classifier's profile (WithProfile) and what a review verdict
// becomes (ask, or deny under read-only). High is denied under every
// profile unless WithHighAction says otherwise.
func WithGateProfile(name string) GateOption {
	return func(c *gateConfig) {
		c.classifier = append(c.classifier, WithProfile(name))
		if spec, err := profileSpecOf(name); err == nil {
			c.reviewAction = spec.reviewAction
		}
	}
}

// projectCommands are the project's own builds, tests, linters and
// formatters: safe under the workspace profile (the files they write
// are the workspace's; any other finding still counts).
var projectCommands = []string{"make", "gmake", "cmake", "ninja", "meson", "pytest", "tox", "nox", "unittest", "jest", "vitest", "mocha",
	"tsc", "eslint", "prettier", "black", "ruff", "flake8", "mypy", "pylint", "isort", "javac", "gcc", "g++", "cc", "clang", "clang++",
	"rustc", "mvn", "gradle", "gradlew", "ant", "sbt", "ctest", "phpunit", "rspec", "py_compile", "compileall", "coverage", "nosetests"}

// projectSubcommands are the build and test subcommands of package
// managers and language tools.
var projectSubcommands = map[string][]string{
	"go":     {"build", "test", "vet", "fmt", "generate"},
	"cargo":  {"build", "test", "check", "clippy", "fmt", "doc", "bench"},
	"npm":    {"test", "run", "run-script", "t"},
	"yarn":   {"test", "run", "build", "lint"},
	"pnpm":   {"test", "run", "build", "lint"},
	"dotnet": {"build", "test"},
	"uv":     {"run"},
	"poetry": {"run"},
}

// workspaceRules makes the project's builds and tests safe.
func workspaceRules(r *Rules) {
	for _, n := range projectCommands {
		if c, ok := r.Commands[n]; ok {
			c.Level, c.Reason = safe, "builds or tests the project (workspace profile)"
			r.Commands[n] = c
		}
	}
	for _, n := range slices.Sorted(maps.Keys(projectSubcommands)) {
		c, ok := r.Commands[n]
		if !ok {
			continue
		}
		c = c.clone()
		if c.Subcommands == nil {
			c.Subcommands = map[string]CommandRule{}
		}
		for _, s := range projectSubcommands[n] {
			sub := c.Subcommands[s]
			sub.Level, sub.Reason = safe, "builds or tests the project (workspace profile)"
			c.Subcommands[s] = sub
		}
		r.Commands[n] = c
	}
}
