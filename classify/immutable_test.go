package classify_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// TestNewCopiesRules: a Classifier does not share the caller's *Rules;
// changing them after New changes no verdict.
func TestNewCopiesRules(t *testing.T) {
	cases := []struct {
		name   string
		cmd    string
		mutate func(r *classify.Rules)
	}{
		{"command level", "cat README.md", func(r *classify.Rules) { c := r.Commands["cat"]; c.Level = gate.RiskHigh; r.Commands["cat"] = c }},
		{"delete a command", "cat README.md", func(r *classify.Rules) { delete(r.Commands, "cat") }},
		{"unknown level", "frobnicate", func(r *classify.Rules) { r.Unknown = gate.RiskSafe }},
		{"path rule level", "cat .env", func(r *classify.Rules) { r.Paths[0].Pattern = "**/nothing"; r.Paths = r.Paths[:0] }},
		{"subcommand map", "git status", func(r *classify.Rules) {
			r.Commands["git"].Subcommands["status"] = classify.CommandRule{Level: gate.RiskHigh}
		}},
		{"flag slice", "journalctl --vacuum-time=1d", func(r *classify.Rules) { r.Commands["journalctl"].Flags[0].Flags[0] = "--nothing" }},
		{"runs slice", "sort --compress-program=gzip a", func(r *classify.Rules) { r.Commands["sort"].Runs[0].Options[0] = "--nothing" }},
		{"env rule", "PAGER=less git log", func(r *classify.Rules) { delete(r.Env, "PAGER") }},
		{"wrapper", "sudo ls", func(r *classify.Rules) { delete(r.Wrappers, "sudo") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rules := classify.DefaultRules()
			c, err := classify.New(classify.WithRules(rules))
			require.NoError(t, err)
			before := c.Bash(tc.cmd)
			tc.mutate(rules)
			assert.Equal(t, before, c.Bash(tc.cmd))
		})
	}
}

// TestConcurrentNew: New on the same rules from many goroutines does not
// race (run with -race) and gives equal classifiers.
func TestConcurrentNew(t *testing.T) {
	rules := classify.DefaultRules()
	rules.Unknown = "" // New fills in the default on its own copy
	var wg sync.WaitGroup
	got := make([]classify.Risk, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := classify.New(classify.WithRules(rules))
			if assert.NoError(t, err) {
				got[g] = c.Bash("frobnicate && sort --co=x a")
			}
		}()
	}
	wg.Wait()
	for _, r := range got[1:] {
		assert.Equal(t, got[0], r)
	}
	assert.Equal(t, gate.RiskLevel(""), rules.Unknown, "New must not write to the caller's rules")
}

// TestRulesClone: a clone is equal and independent.
func TestRulesClone(t *testing.T) {
	a := classify.DefaultRules()
	b := a.Clone()
	assert.Equal(t, a, b)
	b.Commands["git"].Subcommands["status"] = classify.CommandRule{Level: gate.RiskHigh}
	b.Paths[0].Except[0] = "x"
	assert.NotEqual(t, a.Commands["git"].Subcommands["status"], b.Commands["git"].Subcommands["status"])
	assert.NotEqual(t, a.Paths[0].Except[0], b.Paths[0].Except[0])
}
