package classify_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

type trajectoryCall struct {
	Run   string         `json:"run"`
	Tool  string         `json:"tool"`
	Input map[string]any `json:"input"`
}

type realCommand struct {
	run, workspace, command string
}

var cdAbs = regexp.MustCompile(`(?:^|&&|;|\n)\s*cd\s+(/[^\s;&|]+)`)

// loadRealBash returns the real agents' bash commands with each run's
// workspace: the directory the run cds into most often (the agent
// harnesses start in it: /testbed, /workspace/…), "" when it never does.
func loadRealBash(t testing.TB) []realCommand {
	t.Helper()
	f, err := os.Open("../testdata/real/trajectories.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var out []realCommand
	cds := map[string]map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	for sc.Scan() {
		var c trajectoryCall
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		if c.Tool != "bash" {
			continue
		}
		cmd, _ := c.Input["command"].(string)
		out = append(out, realCommand{run: c.Run, command: cmd})
		for _, m := range cdAbs.FindAllStringSubmatch(cmd, -1) {
			if cds[c.Run] == nil {
				cds[c.Run] = map[string]int{}
			}
			cds[c.Run][m[1]]++
		}
	}
	require.NoError(t, sc.Err())
	for i := range out {
		best, n := "", 0
		for d, k := range cds[out[i].run] {
			if k > n || k == n && d < best {
				best, n = d, k
			}
		}
		out[i].workspace = best
	}
	return out
}

type frictionResult struct {
	counts  map[gate.RiskLevel]int
	reasons map[string]int
	highs   []string
}

func measureFriction(t *testing.T, cmds []realCommand, opts ...classify.Option) frictionResult {
	t.Helper()
	res := frictionResult{counts: map[gate.RiskLevel]int{}, reasons: map[string]int{}}
	byWS := map[string]*classify.Classifier{}
	for _, rc := range cmds {
		c := byWS[rc.workspace]
		if c == nil {
			var err error
			c, err = classify.New(append([]classify.Option{classify.WithWorkspace(rc.workspace)}, opts...)...)
			require.NoError(t, err)
			byWS[rc.workspace] = c
		}
		r := c.Bash(rc.command)
		res.counts[r.Level]++
		if r.Level == gate.RiskSafe {
			continue
		}
		top := r.Findings[0]
		for _, f := range r.Findings {
			if f.Level.Rank() > top.Level.Rank() {
				top = f
			}
		}
		res.reasons[fmt.Sprintf("%s %s", r.Level, top.Rule)]++
		if r.Level == gate.RiskHigh {
			res.highs = append(res.highs, rc.command)
		}
		if os.Getenv("FRICTION_DUMP") != "" {
			t.Logf("%s\t%s\t%q", r.Level, top.Rule, clipTo(rc.command, 140))
		}
	}
	return res
}

func (f frictionResult) report(n int) string {
	type kv struct {
		k string
		v int
	}
	var top []kv
	for k, v := range f.reasons {
		top = append(top, kv{k, v})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].v > top[j].v || top[i].v == top[j].v && top[i].k < top[j].k })
	var sb strings.Builder
	fmt.Fprintf(&sb, "safe %d (%.1f%%), review %d (%.1f%%), high %d (%.1f%%); top reasons:",
		f.counts[gate.RiskSafe], pctOf(f.counts[gate.RiskSafe], n), f.counts[gate.RiskReview], pctOf(f.counts[gate.RiskReview], n),
		f.counts[gate.RiskHigh], pctOf(f.counts[gate.RiskHigh], n))
	for i, e := range top {
		if i == 20 {
			break
		}
		fmt.Fprintf(&sb, "\n  %4d  %s", e.v, e.k)
	}
	return sb.String()
}

// TestFriction classifies the 904 real agent bash commands (each run with
// its workspace) and reports how many a human would be asked about, with
// the twenty most common reasons, under the labelling policy and under
// the "accept workspace edits" profile (WithScopedWrites(safe)).
//
// Under the policy, running project code (python, make, pip install) and
// writing files are review by definition, and they are most of what these
// agents do; the test guards against anything else: no real command may
// be high, and the share sent to a human must not grow.
func TestFriction(t *testing.T) {
	cmds := loadRealBash(t)
	require.Len(t, cmds, 904)
	n := len(cmds)

	policy := measureFriction(t, cmds)
	t.Logf("friction, labelling policy (%d real commands): %s", n, policy.report(n))
	edits := measureFriction(t, cmds, classify.WithScopedWrites(gate.RiskSafe))
	t.Logf("friction, accept workspace edits: %s", edits.report(n))

	f, err := os.Open("testdata/rules/swe-agent.yaml")
	require.NoError(t, err)
	harness, err := classify.ParseRules(f)
	f.Close()
	require.NoError(t, err)
	tuned := measureFriction(t, cmds, classify.WithScopedWrites(gate.RiskSafe), classify.WithRules(harness))
	t.Logf("friction, accept workspace edits + SWE-agent harness tools (testdata/rules/swe-agent.yaml): %s", tuned.report(n))

	require.Empty(t, policy.highs, "no real agent command should be high")
	asked := pctOf(policy.counts[gate.RiskReview]+policy.counts[gate.RiskHigh], n)
	require.Less(t, asked, 55.0, "policy friction regressed")
	askedEdits := pctOf(edits.counts[gate.RiskReview]+edits.counts[gate.RiskHigh], n)
	require.Less(t, askedEdits, 42.0, "accept-edits friction regressed")
	askedTuned := pctOf(tuned.counts[gate.RiskReview]+tuned.counts[gate.RiskHigh], n)
	require.Less(t, askedTuned, 37.0, "tuned friction regressed")
	// Reads, searches and listings are most of the work; none may be asked
	// about. A command counts as plain reading when every segment of its
	// chain starts with a reading utility and nothing writes or executes.
	c, err := classify.New()
	require.NoError(t, err)
	readers := map[string]bool{"grep": true, "ls": true, "head": true, "tail": true, "wc": true, "pwd": true, "find": true, "cat": true, "cd": true, "sort": true, "uniq": true, "echo": true}
	checked := 0
	for _, rc := range cmds {
		if strings.ContainsAny(rc.command, ">`$") || strings.Contains(rc.command, "-exec") || strings.Contains(rc.command, "<<") || strings.Contains(rc.command, "-delete") {
			continue
		}
		plain := true
		for _, seg := range segSplit.Split(rc.command, -1) {
			w := strings.Fields(seg)
			if len(w) > 0 && !readers[w[0]] {
				plain = false
				break
			}
		}
		if !plain {
			continue
		}
		checked++
		require.Equal(t, gate.RiskSafe, c.Bash(rc.command).Level, "read-only real command: %q", rc.command)
	}
	t.Logf("%d plain reading commands, all safe", checked)
	require.Greater(t, checked, 200)
}

var segSplit = regexp.MustCompile(`&&|\|\||;|\||\n`)

func pctOf(a, n int) float64 { return float64(a) * 100 / float64(n) }

func clipTo(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if len(s) > n {
		return s[:n]
	}
	return s
}
