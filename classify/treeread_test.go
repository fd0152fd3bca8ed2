package classify_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// secretPaths are concrete paths, one per default rule anchored at "/" or
// "~" that makes a read high, whose plain read the classifier calls high
// (a glob segment is filled in: "id_*" is "id_x", "**" is "a/b").
func secretPaths(t *testing.T, c *classify.Classifier) []string {
	var out []string
	for _, r := range classify.DefaultRules().Paths {
		if r.Read != gate.RiskHigh || !(strings.HasPrefix(r.Pattern, "/") || strings.HasPrefix(r.Pattern, "~")) {
			continue
		}
		var segs []string
		for _, s := range strings.Split(r.Pattern, "/") {
			switch {
			case s == "**":
				segs = append(segs, "a", "b")
			case strings.ContainsAny(s, "[\\{"):
				segs = nil
			default:
				segs = append(segs, strings.NewReplacer("*", "x", "?", "x").Replace(s))
			}
			if segs == nil {
				break
			}
		}
		if p := strings.Join(segs, "/"); len(segs) >= 2 && c.Path(classify.OpRead, p).Level == gate.RiskHigh {
			out = append(out, p)
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d secret paths from the default rules: %q", len(out), out)
	}
	return out
}

// Property: a read of a glob with a "**" segment is high whenever a file
// it could match is high to read — "**" spans any number of directories,
// hidden ones included, zero too (/etc/**/shadow holds /etc/shadow) — and
// a search of any directory above such a file is high, in any letter case.
func TestTreeReadsReachEverySecretBelow(t *testing.T) {
	c, err := classify.New(classify.WithWorkspace("/work/app"), classify.WithHome("/home/dev"))
	if err != nil {
		t.Fatal(err)
	}
	secrets := secretPaths(t, c)
	rapid.Check(t, func(t *rapid.T) {
		secret := rapid.SampledFrom(secrets).Draw(t, "secret")
		segs := strings.Split(secret, "/") // segs[0] is "" (for "/") or "~"
		i := rapid.IntRange(1, len(segs)-1).Draw(t, "from")
		j := rapid.IntRange(i, len(segs)-1).Draw(t, "to") // segs[i:j] become "**"
		glob := append(append(append([]string{}, segs[:i]...), "**"), segs[j:]...)
		if rapid.Bool().Draw(t, "anyName") {
			glob[len(glob)-1] = "*"
		}
		g := strings.Join(glob, "/")
		if rapid.Bool().Draw(t, "upper") {
			g = strings.ToUpper(g)
		}
		if r := c.Path(classify.OpRead, g); r.Level != gate.RiskHigh {
			t.Fatalf("read of %q (may match %s): %s %s", g, secret, r.Level, r.Reason)
		}
		dir := strings.Join(segs[:rapid.IntRange(1, len(segs)-1).Draw(t, "dir")], "/")
		if dir == "" {
			dir = "/"
		}
		if r := c.Path(classify.OpSearch, dir); r.Level != gate.RiskHigh {
			t.Fatalf("search of %q (holds %s): %s %s", dir, secret, r.Level, r.Reason)
		}
	})
}
