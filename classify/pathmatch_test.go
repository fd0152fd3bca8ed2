package classify

import (
	"path"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// pathSegments are the pieces hostile paths are made of: names the
// rules know, glob segments ("**", classes, escapes, extended globs),
// dot files, the anchors and empty or relative segments.
var pathSegments = []string{
	"~", "~alice", "~root", "root", "home", "alice", "Users", "etc", "proc", "self", "1", "123", "task", "environ", "mem",
	".ssh", "id_rsa", "id_ed25519", "id_rsa.pub", "id_x.pub", "authorized_keys", "known_hosts", "config",
	".aws", "credentials", ".kube", ".docker", "config.json", ".config", "gcloud", "gh", "hosts.yml",
	".env", ".env.local", ".envrc", "x.pem", "server.key", "a.p12", "secrets.yml", ".netrc", ".pgpass",
	".git", "hooks", "pre-commit", ".bashrc", ".zshrc", ".profile", "shadow", "sudoers", "ssl", "private",
	"src", "main.go", "README.md", "tmp", "work", "app", "node_modules", "", ".", "..",
	"*", "**", "*.*", "*.pem", "*.pub", "id*", "id_*", "id_rs?", ".e??", ".*", "*_rsa", "cred*", "c?edentials",
	"[s]sh", ".[s]sh", "[!a]*", "[a-z]*", "\\*", "a\\[b", "[", "]", "@(env|x)", "!(*.pub)", "+(i)d_rsa",
	".s*h", "*env*", "toolgate", "approvals.db", "approvals.db-wal",
}

// hostilePath draws a path from pathSegments and arbitrary strings,
// absolute, home-relative or relative.
func hostilePath(t *rapid.T) string {
	n := rapid.IntRange(1, 7).Draw(t, "n")
	segs := make([]string, 0, n)
	for i := 0; i < n; i++ {
		if rapid.IntRange(0, 9).Draw(t, "kind") == 0 {
			segs = append(segs, rapid.StringMatching(`[a-z.*?\[\]!\\~_-]{0,6}`).Draw(t, "raw"))
		} else {
			segs = append(segs, rapid.SampledFrom(pathSegments).Draw(t, "seg"))
		}
	}
	p := strings.Join(segs, "/")
	switch rapid.IntRange(0, 3).Draw(t, "anchor") {
	case 0:
		p = "/" + p
	case 1:
		p = "~/" + p
	}
	return p
}

// TestPathMatcherEqualsReference: the indexed matcher (bit-set
// candidates, segment-count filters, stack buffers) answers every read,
// write and recursive-read question exactly like the matcher it
// replaced (pathref_test.go), for the default and the workspace rules,
// on hostile paths, resolved or not.
func TestPathMatcherEqualsReference(t *testing.T) {
	def, err := defaultCompiled()
	if err != nil {
		t.Fatal(err)
	}
	ws, err := profileCompiled[ProfileWorkspace]()
	if err != nil {
		t.Fatal(err)
	}
	res := resolver{workspace: "/work/app", home: "/home/dev", temp: []string{"/tmp"}}
	for _, cr := range []*compiled{def, ws} {
		ref := newRefMatcher(cr)
		rapid.Check(t, func(t *rapid.T) {
			p := hostilePath(t)
			if rapid.Bool().Draw(t, "resolve") {
				p = res.resolve("/work/app", p)
			}
			for _, write := range []bool{false, true} {
				if got, want := cr.matchPath(p, write), ref.matchPath(p, write); got != want {
					t.Fatalf("matchPath(%q, write=%v) = %+v, reference %+v", p, write, got, want)
				}
			}
			for _, hidden := range []bool{false, true} {
				if got, want := cr.matchTree(p, hidden), ref.matchTree(p, hidden); got != want {
					t.Fatalf("matchTree(%q, skipHidden=%v) = %+v, reference %+v", p, hidden, got, want)
				}
			}
		})
	}
}

// TestPathMatcherReferenceExamples: the property's generator reaches
// the interesting answers (a matcher that never matched would pass it).
func TestPathMatcherReferenceExamples(t *testing.T) {
	cr, err := defaultCompiled()
	if err != nil {
		t.Fatal(err)
	}
	ref := newRefMatcher(cr)
	for _, tc := range []struct {
		p     string
		write bool
		id    string
	}{
		{"~/.ssh/id_rsa", false, "path.ssh-private-key"},
		{"~/.ssh/id*", false, ""},
		{"/home/alice/.aws/credentials", false, "path.cloud-credentials"},
		{"/proc/self/environ", false, "path.environ"},
		{"/proc/1/root/etc/shadow", false, "path.shadow"},
		{"src/.env.local", false, "path.dotenv"},
		{"~/.bashrc", true, "path.shell-rc"},
		{"a/b/.git/hooks/pre-commit", true, "path.git-hooks"},
	} {
		got, want := cr.matchPath(tc.p, tc.write), ref.matchPath(tc.p, tc.write)
		if got != want || got.level != high || tc.id != "" && got.id != tc.id {
			t.Errorf("matchPath(%q, %v) = %+v, reference %+v, want high %s", tc.p, tc.write, got, want, tc.id)
		}
	}
	if v := cr.matchTree("~/.config", false); v.level != high || v != ref.matchTree("~/.config", false) {
		t.Errorf("matchTree(~/.config) = %+v", v)
	}
	if v := cr.matchPath("src/main.go", false); v.level == high {
		t.Errorf("matchPath(src/main.go) = %+v", v)
	}
}

// refResolve is resolver.resolve without its fast path for home paths
// that are already clean: every path takes the round trip through
// homeMark, the /proc walk and the root aliases.
func refResolve(r *resolver, cwd, p string) string {
	if n, kind := tildeDir(p); kind == tildeCwd {
		p = "." + p[n:]
	} else if kind == tildeUnknown {
		return unknownPath(p[n:])
	} else if u, rest, ok := tildeUser(p); ok {
		if u == "root" {
			p = "/root" + rest
		} else {
			p = "/home/" + u + rest
		}
	}
	if !strings.HasPrefix(p, "/") && !(p == "~" || strings.HasPrefix(p, "~/")) && cwd != "" {
		p = cwd + "/" + p
	}
	if rest, ok := unknownRest(p); ok {
		return unknownPath(rest)
	}
	marked := false
	if p == "~" || strings.HasPrefix(p, "~/") {
		base := homeMark
		if r.home != "" {
			base = r.home
		}
		p = base + strings.TrimPrefix(p, "~")
		marked = true
	}
	if q, ok := procWalk(p, r.markHome(cwd)); ok {
		if _, unk := unknownRest(q); unk {
			return q
		}
		p = q
	}
	p = path.Clean(p)
	if p == homeMark || strings.HasPrefix(p, homeMark+"/") {
		p = "~" + strings.TrimPrefix(p, homeMark)
	} else if r.home == "" && strings.Contains(p, "\x00") {
		p = strings.ReplaceAll(p, "\x00", "")
	} else if marked && r.home == "" {
		return unknownPath(strings.TrimPrefix(p, "/"))
	}
	if alt, ok := procRootAlias(p); ok {
		p = alt
	}
	if r.home != "" && (p == r.home || strings.HasPrefix(p, r.home+"/")) {
		p = "~" + strings.TrimPrefix(p, r.home)
	}
	return p
}

// TestResolveEqualsReference: resolve gives what it gave before its
// fast path for clean home paths, on hostile paths (with "//", "/./",
// "..", trailing slashes, NUL bytes) from hostile working directories.
func TestResolveEqualsReference(t *testing.T) {
	for _, res := range []resolver{{}, {workspace: "/work/app", home: "/home/dev", temp: []string{"/tmp"}}} {
		rapid.Check(t, func(t *rapid.T) {
			p := hostilePath(t)
			switch rapid.IntRange(0, 4).Draw(t, "mangle") {
			case 0:
				p = strings.ReplaceAll(p, "/", rapid.SampledFrom([]string{"//", "/./", "/../", "/\x00"}).Draw(t, "sep"))
			case 1:
				p += rapid.SampledFrom([]string{"/", "/.", "/..", "//"}).Draw(t, "end")
			case 2:
				p = rapid.SampledFrom([]string{"~", "~/", "~//", "~/.", "~/..", "~/../x", "~/a/../b"}).Draw(t, "home")
			}
			cwd := rapid.SampledFrom([]string{"", "src", "~", "~/w", "/work/app", "/", "../x"}).Draw(t, "cwd")
			if got, want := res.resolve(cwd, p), refResolve(&res, cwd, p); got != want {
				t.Fatalf("resolve(%q, %q) = %q, reference %q", cwd, p, got, want)
			}
		})
	}
}
