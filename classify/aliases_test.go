package classify_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// The red team's machine: HOME=/home/u, workspace /home/u/proj.
const (
	rtHome = "/home/u"
	rtWS   = "/home/u/proj"
)

func rtClassifier(t testing.TB) *classify.Classifier {
	c, err := classify.New(classify.WithWorkspace(rtWS), classify.WithHome(rtHome))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rtSensitive are concrete paths, one per default rule anchored at "/" or
// "~" whose read (write: false) or write (write: true) is high, with
// which of their segments came from a literal pattern segment (glob
// segments filled in: "id_*" is "id_x", "**" is "a/b"; names with spaces
// are left out: they go into bash words unquoted).
type rtSensitive struct {
	path string
	lit  []bool // lit[i]: segment i (of strings.Split(path, "/")) is literal in the rule
}

func rtSensitivePaths(t testing.TB, c *classify.Classifier, write bool) []rtSensitive {
	op := classify.OpRead
	if write {
		op = classify.OpWrite
	}
	var out []rtSensitive
	for _, r := range classify.DefaultRules().Paths {
		l := r.Read
		if write {
			l = r.Write
		}
		if l != gate.RiskHigh || !(strings.HasPrefix(r.Pattern, "/") || strings.HasPrefix(r.Pattern, "~")) {
			continue
		}
		var segs []string
		var lit []bool
		ok := true
		for _, s := range strings.Split(r.Pattern, "/") {
			switch {
			case s == "**":
				segs, lit = append(segs, "a", "b"), append(lit, false, false)
			case strings.ContainsAny(s, "[\\{"):
				ok = false
			default:
				segs = append(segs, strings.NewReplacer("*", "x", "?", "x").Replace(s))
				lit = append(lit, !strings.ContainsAny(s, "*?"))
			}
		}
		p := strings.Join(segs, "/")
		if ok && len(segs) >= 2 && !strings.Contains(p, " ") && c.Path(op, p).Level == gate.RiskHigh {
			out = append(out, rtSensitive{p, lit})
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d sensitive paths (write %v)", len(out), write)
	}
	return out
}

// abs is a sensitive path with "~" spelled as the home directory.
func (s rtSensitive) abs() string {
	if strings.HasPrefix(s.path, "~") {
		return rtHome + s.path[1:]
	}
	return s.path
}

// TestTildeForms: bash's directory-stack tilde prefixes are the working
// directory (~+, ~+0, ~0) or a directory only known at run time (~-,
// ~N, ~+N, ~-N), never a directory named "~+" below the working one.
func TestTildeForms(t *testing.T) {
	opts := []classify.Option{classify.WithWorkspace(rtWS), classify.WithHome(rtHome)}
	runBashCases(t, []bashCase{
		// ~+ is $PWD: these are ~/.bashrc, ~/.aws/credentials, toolgate's policy.
		{"echo x >> ~+/../.bashrc", H, "path.shell-rc"},
		{"cat ~+/../.aws/credentials", H, "path.cloud-credentials"},
		{"echo x > ~+/../.config/toolgate/toolgate.yaml", H, "path.agent-config"},
		{"echo x >> ~+0/../.bashrc", H, "path.shell-rc"},
		{"echo x >> ~0/../.bashrc", H, "path.shell-rc"},
		{"cat ~00/../.ssh/id_rsa", H, ""},
		{"cp evil ~+/../.ssh/authorized_keys", H, ""},
		{"cat ~+/../../../etc/shadow", H, "path.shadow"},
		// ~-, ~N, ~+N, ~-N: unknown; a secret's name below any directory is high.
		{"cat ~-/.aws/credentials", H, "path.cloud-credentials"},
		{"cat ~-/../.aws/credentials", H, "path.cloud-credentials"},
		{"cat ~1/.ssh/id_rsa", H, ""},
		{"cat ~+2/../.aws/credentials", H, ""},
		{"cat ~-1/etc/shadow", H, "path.shadow"},
		{"echo x >> ~-/.bashrc", H, "path.shell-rc"},
		{"echo x >> ~3/.bashrc", H, "path.shell-rc"},
		{"echo x > ~-/notes.txt", R, "write.outside"},
		{"tee ~2/out.log < /dev/null", R, ""},
		// A working directory only known at run time (cd ~-, cd "$X", cd
		// into another process's cwd): what follows may be below any base.
		{"cd ~-; cat .aws/credentials", H, "path.cloud-credentials"},
		{"cd ~-; cat ../.aws/credentials", H, "path.cloud-credentials"},
		{"cd /proc/1/cwd && cat .aws/credentials", H, "path.cloud-credentials"},
		{`cd "$(dirname $PWD)"; cat .aws/credentials`, H, "path.cloud-credentials"},
		{"cd - >/dev/null; cat .ssh/id_rsa", H, ""},
		{"cd ~2; echo x >> .bashrc", H, "path.shell-rc"},
		{`cd "$X"; echo x > out.txt`, R, "write.outside"},
		{`cd "$X"; cat README.md`, S, ""},
		// Ordinary reads stay safe.
		{"cat ~+/README.md", S, ""},
		{"cat ~-/README.md", S, ""},
		{"cat ~1/main.go", S, ""},
		{"ls ~+", S, ""},
		// ~NAME is still a user's home; a name that merely looks numeric is not.
		{"cat ~root/.ssh/id_rsa", H, ""},
		{"cat ~u/.aws/credentials", H, ""},
	}, opts...)
}

// TestTildeFormsFileTools: a file tool given a ~+ path (a model that
// writes bash spellings into a file tool's input) is judged as the
// working directory too.
func TestTildeFormsFileTools(t *testing.T) {
	c := rtClassifier(t)
	for _, tc := range []struct {
		op   classify.Op
		p    string
		want gate.RiskLevel
	}{
		{classify.OpWrite, "~+/../.bashrc", H},
		{classify.OpRead, "~+/../.aws/credentials", H},
		{classify.OpRead, "~0/../.aws/credentials", H},
		{classify.OpRead, "~-/.aws/credentials", H},
		{classify.OpWrite, "~-/x.txt", R},
		{classify.OpRead, "~+/README.md", S},
	} {
		r := c.Path(tc.op, tc.p)
		if r.Level != tc.want {
			t.Errorf("%s %s: %s, want %s (%s)", tc.op, tc.p, r.Level, tc.want, r.Reason)
		}
	}
}

// Property: every tilde form bash accepts (~, ~user, ~+, ~+0, ~0 and the
// unknown ~-, ~N, ~+N, ~-N), with "/.." suffixes, reading or writing a
// sensitive path, is never lower than the explicit path.
func TestTildeFormsNeverLower(t *testing.T) {
	c := rtClassifier(t)
	reads := rtSensitivePaths(t, c, false)
	writes := rtSensitivePaths(t, c, true)
	rapid.Check(t, func(t *rapid.T) {
		write := rapid.Bool().Draw(t, "write")
		s := rapid.SampledFrom(reads).Draw(t, "read")
		if write {
			s = rapid.SampledFrom(writes).Draw(t, "written")
		}
		abs := s.abs()
		cmd := func(p string) string {
			if write {
				return "echo x >> " + p
			}
			return "cat " + p
		}
		want := c.Bash(cmd(abs)).Level
		if want != H {
			t.Fatalf("explicit %s: %s", cmd(abs), want)
		}
		ups := strings.Repeat("/..", rapid.IntRange(3, 6).Draw(t, "ups")) // the workspace is 3 deep
		n := rapid.StringMatching(`[0-9]{1,2}`).Draw(t, "n")
		var form string
		switch k := rapid.IntRange(0, 5).Draw(t, "kind"); k {
		case 0: // ~ and ~user: only for home paths
			if !strings.HasPrefix(s.path, "~/") {
				t.Skip("not below home")
			}
			form = rapid.SampledFrom([]string{"~", "~u"}).Draw(t, "home") + s.path[1:]
		case 1:
			form = rapid.SampledFrom([]string{"~+", "~+0", "~0", "~00"}).Draw(t, "cwd") + ups + abs
		default: // unknown directory
			pre := rapid.SampledFrom([]string{"~-", "~" + n, "~+" + strings.TrimLeft(n, "0") + "1", "~-" + n}).Draw(t, "stack")
			form = pre + ups + abs
		}
		if got := c.Bash(cmd(form)); got.Level.Rank() < want.Rank() {
			t.Fatalf("%s: %s (%s), explicit %s is %s", cmd(form), got.Level, got.Reason, abs, want)
		}
	})
}

// TestProcAndOSAliases: /proc links and macOS's path aliases name the
// file they lead to: a process's root is /, /proc/self/cwd is the working
// directory, another process's cwd or an open directory is unknown.
func TestProcAndOSAliases(t *testing.T) {
	c := rtClassifier(t)
	for _, tc := range []struct {
		op   classify.Op
		p    string
		want gate.RiskLevel
	}{
		{classify.OpRead, "/proc/self/cwd/../.aws/credentials", H},
		{classify.OpRead, "/proc/thread-self/cwd/../.aws/credentials", H},
		{classify.OpRead, "/proc/self/task/1/root/etc/shadow", H},
		{classify.OpRead, "/proc/1/task/7/root/etc/shadow", H},
		{classify.OpRead, "/proc/self/root/proc/self/root/etc/shadow", H},
		{classify.OpRead, "/proc/self/root/../home/u/.aws/credentials", H},
		{classify.OpRead, "/proc/self/root/../../../etc/shadow", H},
		{classify.OpRead, "/proc/self/task/9/cwd/../.ssh/id_ed25519", H},
		{classify.OpSearch, "/proc/self/task/1/root", H},
		{classify.OpSearch, "/proc/1/cwd", H},
		{classify.OpSearch, "/proc/self/cwd/../.ssh", H},
		{classify.OpSearch, "/proc/1/cwd/.ssh", H},
		// Another process's cwd, an open directory, a mapped file: unknown.
		{classify.OpRead, "/proc/1/cwd/.aws/credentials", H},
		{classify.OpRead, "/proc/self/fd/3/.aws/credentials", H},
		{classify.OpRead, "/proc/self/fd/3/../.ssh/id_rsa", H},
		{classify.OpRead, "/proc/self/fd/3/../.aws/credentials", H},
		{classify.OpRead, "/proc/self/task/2/fd/3/../../etc/shadow", H},
		{classify.OpRead, "/proc/1/map_files/x/../.aws/credentials", H},
		{classify.OpRead, "/dev/fd/3/.aws/credentials", H},
		{classify.OpRead, "/dev/fd/3/../../etc/shadow", H},
		{classify.OpWrite, "/dev/fd/1", S},
		{classify.OpWrite, "/proc/self/fd/2", S},
		// Another descriptor may be any file the process has open (the
		// /proc/** and /dev/** write rules).
		{classify.OpWrite, "/proc/self/fd/7", H},
		{classify.OpWrite, "/dev/fd/5", H},
		{classify.OpWrite, "/proc/1/cwd/.bashrc", H},
		{classify.OpWrite, "/proc/1/cwd/notes.txt", R},
		{classify.OpRead, "/proc/1/cwd/README.md", S},
		// macOS.
		{classify.OpRead, "/private/etc/master.passwd", H},
		{classify.OpRead, "/etc/master.passwd", H},
		{classify.OpRead, "/private/etc/shadow", H},
		{classify.OpRead, "/System/Volumes/Data/Users/u/.ssh/id_rsa", H},
		{classify.OpRead, "/Volumes/Macintosh HD/etc/shadow", H},
		{classify.OpWrite, "/private/etc/sudoers", H},
		{classify.OpWrite, "/private/var/run/utmp", H},
		{classify.OpWrite, "/var/run/utmp", H},
		{classify.OpWrite, "/run/utmp", H},
		// Still ordinary.
		{classify.OpRead, "/proc/self/status", S},
		{classify.OpRead, "/proc/cpuinfo", S},
		{classify.OpRead, "/private/tmp/build.log", S},
		{classify.OpRead, "/proc/self/cwd/README.md", S},
	} {
		r := c.Path(tc.op, tc.p)
		if r.Level != tc.want {
			t.Errorf("%s %s: %s, want %s (%s)", tc.op, tc.p, r.Level, tc.want, r.Reason)
		}
	}
	runBashCases(t, []bashCase{
		{"cat /proc/self/cwd/../.aws/credentials", H, ""},
		{"cat /proc/self/root/proc/self/root/etc/shadow", H, "path.shadow"},
		// After cd /proc/self the shell's cwd is /proc/ITS_PID: cwd/.. is /proc.
		{"cd /proc/self; cat cwd/../.aws/credentials", S, ""},
		{"echo x >> /proc/self/cwd/../.bashrc", H, "path.shell-rc"},
		{"cat /proc/$$/cwd/../.aws/credentials", H, ""},
		{"grep -r key /proc/1/cwd", H, ""},
		{"cat /private/etc/master.passwd", H, ""},
		{"cat /proc/self/status", S, ""},
	}, classify.WithWorkspace(rtWS), classify.WithHome(rtHome))
}

// Property: prefixing a sensitive path with any root alias (/proc/PID/root,
// /proc/PID/task/TID/root, nested, /proc/self/root/.., macOS's
// /System/Volumes/Data and /Volumes/NAME, /proc/self/cwd/../../..) never
// lowers its level, for reads, searches, writes and bash.
func TestRootAliasesNeverLower(t *testing.T) {
	c := rtClassifier(t)
	reads := rtSensitivePaths(t, c, false)
	writes := rtSensitivePaths(t, c, true)
	pid := rapid.SampledFrom([]string{"self", "thread-self", "1", "4242", "*"})
	alias := rapid.Custom(func(t *rapid.T) string {
		switch rapid.IntRange(0, 5).Draw(t, "form") {
		case 0:
			return "/proc/" + pid.Draw(t, "pid") + "/root"
		case 1:
			return "/proc/" + pid.Draw(t, "pid") + "/task/" + rapid.SampledFrom([]string{"1", "77", "*"}).Draw(t, "tid") + "/root"
		case 2:
			return "/proc/self/root/.."
		case 3:
			return "/System/Volumes/Data"
		case 4:
			return "/Volumes/" + rapid.SampledFrom([]string{"Macintosh HD", "Data", "x"}).Draw(t, "vol")
		default:
			return "/proc/" + rapid.SampledFrom([]string{"self", "thread-self"}).Draw(t, "me") + "/cwd/../../.."
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		write := rapid.Bool().Draw(t, "write")
		op := classify.OpRead
		s := rapid.SampledFrom(reads).Draw(t, "read")
		if write {
			op, s = classify.OpWrite, rapid.SampledFrom(writes).Draw(t, "written")
		}
		abs := s.abs()
		p := abs
		for range rapid.IntRange(1, 3).Draw(t, "depth") {
			p = alias.Draw(t, "alias") + p
		}
		if r := c.Path(op, p); r.Level != H {
			t.Fatalf("%s %s: %s (%s), %s is high", op, p, r.Level, r.Reason, abs)
		}
		if !write {
			dir := p[:strings.LastIndexByte(p, '/')]
			if r := c.Path(classify.OpSearch, dir); r.Level != H {
				t.Fatalf("search %s: %s (%s), holds %s", dir, r.Level, r.Reason, abs)
			}
		}
	})
}

// dynamicDirs are spellings of a directory only known at run time.
var dynamicDirs = []string{"${PWD%/*}", "$(dirname $PWD)", `"$(cd ..; pwd)"`, "$(realpath ..)", "${HOME:0}", "${HOME/x/y}", "${HOME}${x}", "~-", "~2", "$D"}

// TestDynamicReadPrefix: a read whose leading directory is only known at
// run time is high when the rest names a secret below some directory.
func TestDynamicReadPrefix(t *testing.T) {
	var cases []bashCase
	for _, d := range dynamicDirs {
		cases = append(cases,
			bashCase{"cat " + d + "/.aws/credentials", H, "path.cloud-credentials"},
			bashCase{"head " + d + "/../.ssh/id_rsa", H, ""},
			bashCase{"cat " + d + "/shadow", H, "path.shadow"},
			bashCase{"cat " + d + "/README.md", S, ""},
			bashCase{"wc -l " + d + "/src/main.go", S, ""},
		)
	}
	runBashCases(t, cases, classify.WithWorkspace(rtWS), classify.WithHome(rtHome))
}

// Property: for every secret path anchored at "~" or "/", replacing a
// leading run of its segments (not all its literal ones) with any
// run-time spelling of a directory gives a high read.
func TestDynamicPrefixOfSecretIsHigh(t *testing.T) {
	c := rtClassifier(t)
	reads := rtSensitivePaths(t, c, false)
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.SampledFrom(reads).Draw(t, "secret")
		segs := strings.Split(s.path, "/")
		i := rapid.IntRange(1, len(segs)-1).Draw(t, "keep")
		named := false
		for _, l := range s.lit[i:] {
			named = named || l
		}
		if !named {
			t.Skip("the rest is only wildcards")
		}
		d := rapid.SampledFrom(dynamicDirs).Draw(t, "dir")
		want := c.Bash("cat " + s.path).Level
		cmd := "cat " + d + "/" + strings.Join(segs[i:], "/")
		if r := c.Bash(cmd); r.Level.Rank() < want.Rank() {
			t.Fatalf("%s: %s (%s), cat %s is %s", cmd, r.Level, r.Reason, s.path, want)
		}
	})
}
