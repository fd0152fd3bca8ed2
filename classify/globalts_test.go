package classify_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// TestGlobAlternatives: a file tool's glob with braces or extended glob
// groups is judged by the worst of its alternatives, as the tools' glob
// libraries expand them; so are bash's extended globs.
func TestGlobAlternatives(t *testing.T) {
	c := rtClassifier(t)
	for _, tc := range []struct {
		op   classify.Op
		p    string
		want gate.RiskLevel
	}{
		{classify.OpRead, "{.env,x}", H},
		{classify.OpRead, "src/{a,.env}", H},
		{classify.OpRead, "**/{.env,x}", H},
		{classify.OpRead, "**/*.{pem,key}", H},
		{classify.OpRead, "~/.ssh/{id_rsa,known_hosts}", H},
		{classify.OpRead, "~/{.aws/credentials,x}", H},
		{classify.OpRead, "~/.{a,{b,aws}}/credentials", H},
		{classify.OpRead, "@(id_rsa)", H},
		{classify.OpRead, "+(id_rsa)", H},
		{classify.OpRead, "*(id_rsa)", H},
		{classify.OpRead, "?(.env)", H},
		{classify.OpRead, "**/@(x|id_ed25519)", H},
		{classify.OpWrite, "~/.{bashrc,x}", H},
		{classify.OpRead, "{a,b}.go", S},
		{classify.OpRead, "src/**/*.{go,ts}", S},
		{classify.OpRead, "@(README.md|go.mod)", S},
		{classify.OpRead, "!(x)", S},
		{classify.OpWrite, "src/{a,b}.go", R},
	} {
		r := c.Path(tc.op, tc.p)
		if r.Level != tc.want {
			t.Errorf("%s %s: %s, want %s (%s)", tc.op, tc.p, r.Level, tc.want, r.Reason)
		}
	}
	runBashCases(t, []bashCase{
		{"cat +(id_rsa)", H, "path.private-key"},
		{"cat @(x|id_rsa)", H, "path.private-key"},
		{"shopt -s extglob; cat ?(.env)", H, "path.dotenv"},
		{"cat @(README.md)", S, ""},
		{"cat !(x)", S, ""},
	}, classify.WithWorkspace(rtWS), classify.WithHome(rtHome))
	// Too many alternatives: at least review.
	many := "{" + strings.Repeat("a,", 10) + "b}/{" + strings.Repeat("c,", 10) + "d}"
	if r := c.Path(classify.OpRead, many); r.Level == S {
		t.Errorf("read %s: %s (%s)", many, r.Level, r.Reason)
	}
}

// Property: wrapping a sensitive path's segment in braces or an extended
// glob group with decoys never lowers its level.
func TestGlobAlternativesNeverLower(t *testing.T) {
	c := rtClassifier(t)
	reads := rtSensitivePaths(t, c, false)
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.SampledFrom(reads).Draw(t, "secret")
		segs := strings.Split(s.path, "/")
		i := rapid.IntRange(1, len(segs)-1).Draw(t, "seg")
		decoy := rapid.SampledFrom([]string{"x", "README.md", "a.go", "zz"}).Draw(t, "decoy")
		alts := []string{segs[i], decoy}
		if rapid.Bool().Draw(t, "swap") {
			alts[0], alts[1] = alts[1], alts[0]
		}
		switch rapid.IntRange(0, 2).Draw(t, "form") {
		case 0:
			segs[i] = "{" + strings.Join(alts, ",") + "}"
		case 1:
			segs[i] = rapid.SampledFrom([]string{"@", "+", "*", "?"}).Draw(t, "op") + "(" + strings.Join(alts, "|") + ")"
		default:
			segs[i] = "@(" + segs[i] + ")"
		}
		g := strings.Join(segs, "/")
		if r := c.Path(classify.OpRead, g); r.Level != H {
			t.Fatalf("read %s: %s (%s), %s is high", g, r.Level, r.Reason, s.path)
		}
	})
}
