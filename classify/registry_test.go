package classify

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestAnalyzerRegistry: every analyzer a rules file names (the defaults
// and the YAML files in testdata/rules) is registered, and every
// registered analyzer is used by the default rules.
func TestAnalyzerRegistry(t *testing.T) {
	reg, wreg := builtinAnalyzers(), builtinWrappers()
	sets := map[string]*Rules{"default": DefaultRules()}
	files, err := filepath.Glob("testdata/rules/*.yaml")
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var rf RulesFile
		require.NoError(t, yaml.Unmarshal(b, &rf), f)
		sets[f] = &rf.Rules
	}
	used := map[string]bool{}
	for name, rules := range sets {
		var walk func(where string, c CommandRule)
		walk = func(where string, c CommandRule) {
			if c.Analyzer != "" {
				used[c.Analyzer] = true
				assert.Contains(t, reg, c.Analyzer, "%s: %s names an unregistered analyzer", name, where)
			}
			for s, sub := range c.Subcommands {
				walk(where+" "+s, sub)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(rules.Commands)) {
			walk(k, rules.Commands[k])
		}
		for k, w := range rules.Wrappers {
			if w.Analyzer != "" {
				assert.Contains(t, wreg, w.Analyzer, "%s: wrapper %s names an unregistered analyzer", name, k)
			}
		}
	}
	for n := range reg {
		assert.True(t, used[n], "analyzer %q is registered but no rule uses it", n)
	}
}
