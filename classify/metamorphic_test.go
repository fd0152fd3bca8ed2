package classify_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// sq single-quotes s for bash.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// simpleCommand reports whether cmd is one simple command without
// assignments, so that a wrapper can be put in front of it.
func simpleCommand(cmd string) (*syntax.CallExpr, bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	s := f.Stmts[0]
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 || s.Background || s.Negated {
		return nil, false
	}
	return call, true
}

// wrap puts a wrapper in front of cmd, through bash -c when cmd is not a
// simple command.
func wrap(w, cmd string) string {
	if _, ok := simpleCommand(cmd); ok {
		return w + " " + cmd
	}
	return w + " bash -c " + sq(cmd)
}

// requote rewrites every plain literal word of a simple command in the
// given quoting style; words whose meaning quoting would change (tilde,
// globs, expansions) are kept. ok is false when nothing changed.
func requote(cmd string, style int) (string, bool) {
	call, ok := simpleCommand(cmd)
	if !ok {
		return "", false
	}
	changed := false
	var b strings.Builder
	last := 0
	for _, w := range call.Args {
		lit := w.Lit()
		if lit == "" || strings.ContainsAny(lit, "~*?[{\\$`'\"!") || strings.HasPrefix(lit, "#") {
			continue
		}
		var q string
		switch style {
		case 0:
			q = sq(lit)
		case 1:
			q = `"` + lit + `"`
		case 2:
			var e strings.Builder
			for _, r := range lit {
				e.WriteByte('\\')
				e.WriteRune(r)
			}
			q = e.String()
		case 3:
			q = lit[:1] + `''` + lit[1:]
		}
		b.WriteString(cmd[last:w.Pos().Offset()])
		b.WriteString(q)
		last = int(w.End().Offset())
		changed = true
	}
	b.WriteString(cmd[last:])
	return b.String(), changed
}

func metamorphicInputs(t *testing.T) []string {
	var in []string
	for _, l := range loadCorpus(t) {
		in = append(in, l.Command)
	}
	for _, rc := range loadRealBash(t) {
		in = append(in, rc.command)
	}
	in = append(in, silentPassInputs()...)
	f, err := os.Open("../testdata/real/commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan() && n < 3000; n++ {
		in = append(in, sc.Text())
	}
	return in
}

// TestMetamorphic: wrapping a command in sudo, bash -c, env, timeout,
// xargs or $(…), or re-quoting its words, never lowers its level.
func TestMetamorphic(t *testing.T) {
	c, err := classify.New()
	if err != nil {
		t.Fatal(err)
	}
	transforms := []struct {
		name string
		f    func(string) (string, bool)
	}{
		{"sudo", func(s string) (string, bool) { return wrap("sudo", s), true }},
		{"bash -c", func(s string) (string, bool) { return "bash -c " + sq(s), true }},
		{"sh -c double", func(s string) (string, bool) {
			if strings.ContainsAny(s, "\"$`\\!\n") {
				return "", false
			}
			return `sh -c "` + s + `"`, true
		}},
		{"env", func(s string) (string, bool) { return wrap("env", s), true }},
		{"env -i", func(s string) (string, bool) { return wrap("env -i PATH=/usr/bin", s), true }},
		{"timeout", func(s string) (string, bool) { return wrap("timeout 10", s), true }},
		{"nice", func(s string) (string, bool) { return wrap("nice -n 5", s), true }},
		{"xargs", func(s string) (string, bool) { return "echo x | " + wrap("xargs", s), true }},
		{"$()", func(s string) (string, bool) {
			if strings.Contains(s, "#") {
				return "", false
			}
			return "echo \"$(" + s + "\n)\"", true
		}},
		{"backticks", func(s string) (string, bool) {
			if strings.ContainsAny(s, "`\\#") {
				return "", false
			}
			return "echo `" + s + "`", true
		}},
		{"eval", func(s string) (string, bool) { return "eval " + sq(s), true }},
		{"single quotes", func(s string) (string, bool) { return requote(s, 0) }},
		{"double quotes", func(s string) (string, bool) { return requote(s, 1) }},
		{"backslashes", func(s string) (string, bool) { return requote(s, 2) }},
		{"empty quotes", func(s string) (string, bool) { return requote(s, 3) }},
	}
	inputs := metamorphicInputs(t)
	checked := 0
	for _, in := range inputs {
		base := c.Bash(in).Level
		for _, tr := range transforms {
			out, ok := tr.f(in)
			if !ok {
				continue
			}
			checked++
			got := c.Bash(out)
			if got.Level.Rank() < base.Rank() {
				t.Errorf("%s lowered %s to %s:\n  in:  %q\n  out: %q\n  reason: %s", tr.name, base, got.Level, in, out, got.Reason)
			}
		}
	}
	t.Logf("%d transformed commands checked against %d originals", checked, len(inputs))
}

// TestRequotePreservesLevel: quoting words that need no quotes is not
// only never lower, it gives exactly the same level.
func TestRequotePreservesLevel(t *testing.T) {
	c, err := classify.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range loadCorpus(t) {
		for style := 0; style < 4; style++ {
			out, ok := requote(l.Command, style)
			if !ok {
				continue
			}
			if got, want := c.Bash(out).Level, c.Bash(l.Command).Level; got != want && want != gate.RiskSafe {
				t.Errorf("requote style %d changed %s to %s: %q -> %q", style, want, got, l.Command, out)
			}
		}
	}
}
