package classify_test

import (
	"path"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// maxPerInput bounds one classification during fuzzing; it is far above
// the microseconds a command takes, so only a hang or blow-up trips it.
const maxPerInput = 2 * time.Second

func validRisk(t *testing.T, in string, r classify.Risk) {
	t.Helper()
	switch r.Level {
	case gate.RiskSafe, gate.RiskReview, gate.RiskHigh:
	default:
		t.Fatalf("invalid level %q for %q", r.Level, in)
	}
	if r.Reason == "" && r.Level != gate.RiskSafe {
		t.Fatalf("no reason for %q", in)
	}
	if r.Level != gate.RiskSafe && len(r.Findings) == 0 {
		t.Fatalf("level %s without findings for %q", r.Level, in)
	}
	for _, f := range r.Findings {
		if f.Level.Rank() > r.Level.Rank() || f.Rule == "" {
			t.Fatalf("bad finding %+v for %q", f, in)
		}
	}
	if strings.ContainsAny(r.Reason, "\n\r") {
		t.Fatalf("reason not on one line: %q", r.Reason)
	}
}

// FuzzBash: no panic, no hang, a valid verdict for any input; a parse
// error is never safe; prefixing sudo never lowers the level.
func FuzzBash(f *testing.F) {
	for _, l := range loadCorpus(f) {
		f.Add(l.Command)
	}
	for _, s := range []string{"", "$(", "${x@P}", "a=(1 2); ${a[@]}", "cat <<E\n$(id)\nE", "{a,b}{c,d}{e,f}", "{1..99999999}",
		"$((1+", "<<<", "f() { f | f & }; f", "x=$'\\x00'", "case $x in (a) ;; esac", "[[ $(a) == b ]]", "coproc x { ls; }",
		"echo ${x:0:1}${y/a/b}${#z}${!w}", "eval \"$(eval \"$(eval x)\")\"",
		"less '+!rm -rf ~' f", "LESS='+|a$' less", "ed '!x' <<< '1r !y'", "git -c core.pager='sh -c x' log",
		"GIT_CONFIG_PARAMETERS=\"'a.b'='c' 'core.pager=sh -c \\'x\\''\" git log", "GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!sh' git x",
		"echo 'sh a.sh; sh a.sh' > a.sh; sh a.sh", "cat > a <<'E'\n. ./a\nE\n. ./a", "echo x | tee -a a b; ./a"} {
		f.Add(s)
	}
	c, err := classify.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		start := time.Now()
		r := c.Bash(in)
		if d := time.Since(start); d > maxPerInput {
			t.Fatalf("classification took %v for %q", d, in)
		}
		validRisk(t, in, r)
		if _, simple := simpleCommand(in); simple && utf8.ValidString(in) {
			if s := c.Bash("sudo " + in); s.Level != gate.RiskHigh {
				t.Fatalf("sudo prefix gave %s for %q", s.Level, in)
			}
		}
	})
}

// FuzzPath: no panic, a valid verdict; writes are never safe (with the
// default scoped-write level) and reads of the same path are never higher
// than writes.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"", ".", "..", "/", "~", "~/.ssh/id_rsa", ".env", "a/../../b", "/etc//shadow", "/proc/1/environ",
		"\x00", "$(id)", "C:\\x", strings.Repeat("a/", 3000), "/dev/null", ".git/hooks/x",
		"~+/../.bashrc", "~-/x", "~0/..", "/proc/self/root/../x", "/proc/1/cwd/../../y", "/proc/self/fd/3/..", "/Volumes/x/etc",
		"{a,{b,c}}/@(d|e)", "+(x", "{", "@()", strings.Repeat("{a,b}", 20)} {
		f.Add(s, "/work/ws")
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, p, ws string) {
		start := time.Now()
		rd := classify.Path(classify.OpRead, p, ws)
		wr := classify.Path(classify.OpWrite, p, ws)
		del := classify.Path(classify.OpDelete, p, ws)
		if d := time.Since(start); d > maxPerInput {
			t.Fatalf("took %v for %q", d, p)
		}
		for _, r := range []classify.Risk{rd, wr, del} {
			validRisk(t, p, r)
		}
		if wr.Level == gate.RiskSafe && p != "/dev/null" && !strings.HasPrefix(p, "/dev/") && !strings.HasPrefix(path.Clean(p), "/proc/self/fd/") {
			// Only discard devices may be written safely.
			cleaned := strings.TrimRight(p, "/")
			if !strings.HasPrefix(cleaned, "/dev") && !strings.Contains(p, "/dev/") {
				t.Fatalf("write of %q is safe", p)
			}
		}
		if del.Level.Rank() < wr.Level.Rank() {
			t.Fatalf("delete %s below write %s for %q", del.Level, wr.Level, p)
		}
	})
}
