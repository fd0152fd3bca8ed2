package classify

import (
	"fmt"
	"math/bits"
	"path"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/gate"
)

// Op is a file-tool operation.
type Op string

// File-tool operations.
const (
	// OpRead reads the file at the path, or lists the directory there
	// (its names, not its files' contents). A glob with a "**" segment
	// reads the whole tree below its literal directory, hidden entries
	// included (as OpSearch).
	OpRead Op = "read"
	// OpSearch reads every file below the path, hidden ones included (a
	// recursive search: a Grep tool, grep -r): a directory that holds a
	// sensitive path is judged as that path ("/" holds /etc/shadow, "~"
	// holds ~/.ssh/id_*). A file path is read as OpRead.
	OpSearch Op = "search"
	// OpList lists the names in a directory (LS, Glob): a directory that
	// rules name whole for its contents (~, ~/.ssh) is no secret to list;
	// a secret file's own path still is (its name is asked for by name).
	OpList   Op = "list"
	OpWrite  Op = "write"
	OpDelete Op = "delete"
)

// compiledPath is a PathRule split into segments.
type compiledPath struct {
	rule   PathRule
	segs   []string
	except [][]string
	// first and last are the pattern's first and last segments when they
	// are literal ("" otherwise); lastPre and lastSuf are the literal
	// prefix and suffix of a glob last segment: cheap filters before
	// matchSegs.
	first, last      string
	lastPre, lastSuf string
	// lastSeg is the pattern's last segment and lastAnywhere whether it
	// follows "**" (see couldMatchSeg).
	lastSeg      string
	lastAnywhere bool
	// segPre and segSuf are the last segment's literal prefix and suffix
	// (the whole name when it is literal): a name matching both it and
	// a glob starts and ends compatibly with both (see lastCompatible).
	segPre, segSuf string
	// second is the literal second segment of a rule anchored at "/"
	// or "~" ("etc" in "/etc/shadow"), "" otherwise: a path whose second
	// segment is another literal cannot match.
	second string
	// nstar is the number of "**" segments: a pattern without one
	// matches paths of exactly len(segs) segments, one with them paths
	// of at least len(segs)-nstar (see fits).
	nstar int
	// dir: the rule names a directory that other rules look into
	// ("~", "~/.ssh", "~/.aws"): naming it lists it, reading it whole
	// needs a recursive reader (matchTree).
	dir bool
}

func literalSeg(s string) string {
	if s == "**" || globEscBytes.any(s) {
		return ""
	}
	return s
}

func newCompiledPath(p PathRule) compiledPath {
	cp := compiledPath{rule: p, segs: compilePattern(p.Pattern)}
	for _, ex := range p.Except {
		cp.except = append(cp.except, compilePattern(ex))
	}
	cp.first = literalSeg(cp.segs[0])
	for _, sg := range cp.segs {
		if sg == "**" {
			cp.nstar++
		}
	}
	l := cp.segs[len(cp.segs)-1]
	cp.lastSeg = l
	cp.segPre, cp.segSuf = litPrefix(l), litSuffix(l)
	if (cp.first == "/" || cp.first == "~") && len(cp.segs) > 1 {
		cp.second = literalSeg(cp.segs[1])
	}
	cp.lastAnywhere = len(cp.segs) > 1 && cp.segs[len(cp.segs)-2] == "**"
	cp.last = literalSeg(l)
	if cp.last == "" && l != "**" && !strings.Contains(l, "\\") {
		if i := globBytes.index(l); i >= 0 {
			cp.lastPre = l[:i]
		}
		if i := globEndBytes.lastIndex(l); i >= 0 {
			cp.lastSuf = l[i+1:]
		}
	}
	return cp
}

// fits reports whether a path of n segments is of a length the pattern
// can match (a cheap test before matchSegs).
func (cp *compiledPath) fits(n int) bool {
	if cp.nstar == 0 {
		return n == len(cp.segs)
	}
	return n >= len(cp.segs)-cp.nstar
}

func compilePattern(p string) []string {
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "**") {
		p = "**/" + p
	}
	if strings.HasPrefix(p, "/") {
		return append([]string{"/"}, strings.Split(strings.TrimPrefix(p, "/"), "/")...)
	}
	return strings.Split(p, "/")
}

// splitPath turns a resolved path ("/a/b", "~/x", "rel/y") into segments
// matching compilePattern's form.
func splitPath(p string) []string { return appendSegs(nil, p) }

// appendSegs appends splitPath(p) to buf (for a caller's stack buffer).
func appendSegs(buf []string, p string) []string {
	if strings.HasPrefix(p, "/") {
		buf = append(buf, "/")
		p = p[1:]
		if p == "" {
			return buf
		}
	}
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return append(buf, p)
		}
		buf = append(buf, p[:i])
		p = p[i+1:]
	}
}

// matchSegs matches path segments against pattern segments; "**" matches
// zero or more segments (but a pattern ending in "**" needs at least one).
// It runs in O(len(pat)·len(segs)) time.
func matchSegs(pat, segs []string) bool {
	var buf [2 * 34]bool
	n := len(segs) + 1
	var reach, next []bool
	if 2*n <= len(buf) {
		reach, next = buf[:n], buf[n:2*n]
	} else {
		b := make([]bool, 2*n)
		reach, next = b[:n], b[n:]
	}
	return matchSegsDP(pat, segs, reach, next, false)
}

// matchSegsGlob is matchSegs for a path whose segments may be globs
// themselves: a glob segment matches a pattern segment when some name
// could match both (see couldMatchSeg).
func matchSegsGlob(pat, segs []string) bool {
	var buf [2 * 34]bool
	n := len(segs) + 1
	b := buf[:]
	if 2*n > len(buf) {
		b = make([]bool, 2*n)
	}
	return matchSegsDP(pat, segs, b[:n], b[n:2*n], true)
}

func matchSegsDP(pat, segs []string, reach, next []bool, glob bool) bool {
	reach[0] = true
	for i, p := range pat {
		clear(next)
		if p == "**" {
			// next[j]: some k <= j reachable (k < j for a trailing **,
			// which must match at least one segment).
			strict := i == len(pat)-1
			seen := false
			for j := range reach {
				if !strict {
					seen = seen || reach[j]
				}
				next[j] = seen
				if strict {
					seen = seen || reach[j]
				}
			}
		} else {
			anywhere := i > 0 && pat[i-1] == "**"
			alive := false
			j0 := 0
			if i == len(pat)-1 {
				// The last pattern segment only counts against the last
				// path segment.
				j0 = len(segs) - 1
			}
			for j := j0; j < len(segs); j++ {
				if reach[j] && (segMatch(p, segs[j]) || glob && couldMatchSeg(p, segs[j], anywhere)) {
					next[j+1] = true
					alive = true
				}
			}
			if !alive {
				return false
			}
		}
		reach, next = next, reach
	}
	return reach[len(segs)]
}

func segMatch(p, s string) bool {
	if p == s {
		return true
	}
	if p == "/" || s == "/" || p == "" || s == "" {
		return false
	}
	// Literal first or last characters must agree (cheap, before
	// path.Match).
	if c := p[0]; c != '*' && c != '?' && c != '[' && c != '\\' && c != s[0] {
		return false
	}
	if c := p[len(p)-1]; c != '*' && c != '?' && c != ']' && c != s[len(s)-1] && (len(p) < 2 || p[len(p)-2] != '\\') {
		return false
	}
	if !globEscBytes.any(p) {
		return false
	}
	ok, _ := path.Match(p, s)
	return ok
}

const globMeta = "*?["

// hasGlob reports whether a path segment or path holds glob
// metacharacters.
func hasGlob(s string) bool { return globBytes.any(s) }

// litPrefix and litSuffix are a glob's literal text before its first and
// after its last metacharacter.
func litPrefix(s string) string {
	if i := globEscBytes.index(s); i >= 0 {
		return s[:i]
	}
	return s
}

func litSuffix(s string) string {
	if i := globEndBytes.lastIndex(s); i >= 0 {
		return s[i+1:]
	}
	return s
}

// specificGlob reports whether a glob segment says enough about the
// names it matches to be compared with file-name rules found anywhere
// ("**/id_rsa", "**/*.pem"): it has a literal prefix ("id*", ".env*",
// ".*"), no "*" (a fixed length: "id_rs?", "[i]d_rsa"), or at least two
// literal characters besides a trailing extension ("*_rsa", "*rsa*").
// "*", "*.*" and "*.json" are not: every directory has such names.
func specificGlob(s string) bool {
	if litPrefix(s) != "" || !strings.Contains(s, "*") {
		return true
	}
	lits := 0
	in := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case in:
			in = c != ']'
		case c == '[':
			in = true
		case c != '*' && c != '?':
			lits++
		}
	}
	if suf := litSuffix(s); strings.HasPrefix(suf, ".") {
		lits -= len(suf)
	}
	return lits >= 2
}

// couldMatchSeg reports whether some file name could match both the rule
// segment p and the path's glob segment g. The rule accepting g's text
// ("*.pem" and "*.pem"), g matching p's literal name ("id*" and "id_rsa")
// or the glob accepting the rule's text (".env*" and ".env.*") count, and
// for a rule segment below a literal directory also compatible literal
// prefixes and suffixes of two patterns ("~/.ssh/id*" and "~/.ssh/id_*"). Like bash, a glob not starting with "." matches no
// hidden name. Where the rule segment follows "**" (a name anywhere), g
// must be specific (see specificGlob).
func couldMatchSeg(p, g string, anywhere bool) bool {
	if p == "/" || p == "~" || p == "**" || !hasGlob(g) {
		return false
	}
	if strings.HasPrefix(p, ".") && !strings.HasPrefix(g, ".") {
		return false
	}
	if anywhere && !specificGlob(g) {
		return false
	}
	if !globEscBytes.any(p) {
		ok, _ := path.Match(g, p)
		return ok
	}
	if ok, _ := path.Match(g, p); ok || anywhere {
		return ok
	}
	pp, gp := litPrefix(p), litPrefix(g)
	ps, gs := litSuffix(p), litSuffix(g)
	return (strings.HasPrefix(pp, gp) || strings.HasPrefix(gp, pp)) && (strings.HasSuffix(ps, gs) || strings.HasSuffix(gs, ps))
}

// pathVerdict is the path rules' answer for one access.
type pathVerdict struct {
	level  gate.RiskLevel
	id     string
	reason string
	dir    bool // the rule names a directory (compiledPath.dir)
}

// matchPath returns the highest matching path rule for a read or a write
// of the resolved path p.
//
// Home-relative rules ("~/.aws/credentials") apply below every home
// directory: /root, /home/NAME and /Users/NAME (and ~NAME, which resolve
// gives as /home/NAME). The rule for the whole home ("~") does not: in
// containers /home/NAME is often a project directory. A path with glob characters is judged by what it
// could match (see matchGlob).
func (cr *compiled) matchPath(p string, write bool) pathVerdict {
	v := cr.matchRules(p, write)
	if write && cr.protect != nil {
		if pv := cr.protect.matchRules(p, true); pv.level.Rank() > v.level.Rank() {
			v = pv
		}
	}
	return v
}

// matchRules is matchPath with cr's own rules only (not protect's).
func (cr *compiled) matchRules(p string, write bool) pathVerdict {
	p = foldCase(p)
	if rest, ok := unknownRest(p); ok {
		return cr.matchAnyBase(rest, write)
	}
	if alt, ok := procRootAlias(p); ok {
		// /proc/PID/root/… is that process's view of the file system.
		p = alt
	}
	v := cr.matchOne(p, write)
	if alt, ok := homeAlias(p); ok && alt != "~" {
		if va := cr.matchOne(alt, write); va.level.Rank() > v.level.Rank() {
			v = va
		}
	}
	if alt, ok := runAlias(p); ok {
		if va := cr.matchOne(alt, write); va.level.Rank() > v.level.Rank() {
			v = va
		}
	}
	return v
}

// runAlias is the other name of a path below /run: /var/run/X is /run/X
// and the reverse (rules name either).
func runAlias(p string) (string, bool) {
	if rest, ok := strings.CutPrefix(p, "/var/run"); ok && (rest == "" || rest[0] == '/') {
		return "/run" + rest, true
	}
	if rest, ok := strings.CutPrefix(p, "/run"); ok && (rest == "" || rest[0] == '/') {
		return "/var/run" + rest, true
	}
	return "", false
}

// procRootAlias rewrites a path to the one it names through an alias
// of the file system's root, repeatedly (to a fixpoint):
// /proc/PID/root/REST and /proc/PID/task/TID/root/REST (any PID, self,
// thread-self, a glob) are /REST, the file seen through a process's root
// directory ("/proc/self/root/../x" is /x: ".." stops at a root); and
// macOS's /private/{etc,var,tmp}, /System/Volumes/Data/X and
// /Volumes/NAME/X (conservatively taken for the boot volume) are /etc,
// /var, /tmp and /X (see also runAlias). Names are compared case-insensitively.
func procRootAlias(p string) (string, bool) {
	changed := false
	for range 16 {
		alt, ok := rootAliasOnce(p)
		if !ok {
			break
		}
		p, changed = alt, true
	}
	return p, changed
}

func rootAliasOnce(p string) (string, bool) {
	if len(p) < 4 || p[0] != '/' || !mayRootAlias(p) {
		return "", false
	}
	segs := strings.Split(p[1:], "/")
	n := min(len(segs), 5)
	f := make([]string, n)
	for i := range n {
		f[i] = foldCase(segs[i])
	}
	cut := 0 // segments that name the root
	switch segs := f; {
	case segs[0] == "proc" && len(segs) >= 3 && segs[2] == "root":
		cut = 3
	case segs[0] == "proc" && len(segs) >= 5 && segs[2] == "task" && segs[4] == "root":
		cut = 5
	case segs[0] == "system" && len(segs) >= 3 && segs[1] == "volumes" && segs[2] == "data":
		cut = 3
	case segs[0] == "volumes" && len(segs) >= 2 && segs[1] != "":
		cut = 2
	case segs[0] == "private" && len(segs) >= 2 && (segs[1] == "etc" || segs[1] == "var" || segs[1] == "tmp"):
		cut = 1
	default:
		return "", false
	}
	rest := segs[cut:]
	for len(rest) > 0 && (rest[0] == ".." || rest[0] == "." || rest[0] == "") {
		// ".." at a root is the root.
		rest = rest[1:]
	}
	return path.Clean("/" + strings.Join(rest, "/")), true
}

// mayRootAlias is a cheap test before rootAliasOnce: p's first segment
// is proc, system, volumes or private (in any case).
func mayRootAlias(p string) bool {
	end := strings.IndexByte(p[1:], '/')
	if end < 0 {
		return false
	}
	switch first := p[1 : end+1]; len(first) {
	case 4:
		return strings.EqualFold(first, "proc")
	case 6:
		return strings.EqualFold(first, "system")
	case 7:
		return strings.EqualFold(first, "volumes") || strings.EqualFold(first, "private")
	}
	return false
}

// unknownMark starts a resolved path whose leading directory is unknown
// (~-, ~N, another process's /proc/PID/cwd, /proc/PID/fd/N/…): the rest
// follows it, and the path rules judge the rest below any directory (see
// matchAnyBase). NUL never appears in a real path.
const unknownMark = "/\x00unknown"

// unknownRest returns the known rest of a resolved path below an unknown
// directory ("" for the directory itself).
func unknownRest(p string) (string, bool) {
	if p == unknownMark {
		return "", true
	}
	if rest, ok := strings.CutPrefix(p, unknownMark+"/"); ok {
		return rest, true
	}
	return "", false
}

// unknownPath is unknownMark followed by rest, cleaned: ".." at its start
// stays in the unknown directory's ancestors, unknown too.
func unknownPath(rest string) string {
	rest = path.Clean("x/" + rest)
	for rest == ".." || strings.HasPrefix(rest, "../") || rest == "x" || strings.HasPrefix(rest, "x/") {
		switch {
		case rest == "x" || rest == "..":
			return unknownMark
		case strings.HasPrefix(rest, "x/"):
			rest = rest[2:]
		default:
			rest = rest[3:]
		}
		if !strings.HasPrefix(rest, "../") && rest != ".." {
			break
		}
	}
	return unknownMark + "/" + rest
}

// mayWalk is a cheap test before procWalk: some segment of p may start
// a /proc link or a root alias ("proc", "Volumes", "private", "System"),
// or it holds /dev/fd/.
func mayWalk(p string) bool {
	if strings.Contains(p, "/dev/fd/") {
		return true
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' || i+5 > len(p) {
			continue
		}
		switch p[i+1] | 0x20 {
		case 'p', 's', 'v':
			if mayRootAlias(p[i:]) {
				return true
			}
		}
	}
	return false
}

// procWalk resolves an absolute path p (not cleaned: "/proc/self/cwd/.."
// is the working directory's parent, not /proc/self) through the
// /proc links to directories: a process's root (/), the classifier's own
// working directory (/proc/self/cwd, /proc/thread-self/cwd: cwd, already
// resolved) and directories it cannot know (another process's cwd, an
// open directory /proc/PID/fd/N/… or /dev/fd/N/…, /proc/PID/map_files/…:
// unknownPath).
// ok is false when p holds no /proc link.
func procWalk(p, cwd string) (string, bool) {
	if !mayWalk(p) {
		return "", false
	}
	segs := strings.Split(p, "/")
	var st []string
	rel := !strings.HasPrefix(p, "/")
	hit := false
	self := func(pid string) bool { return pid == "self" || pid == "thread-self" }
	for i, sg := range segs {
		if sg != "" && sg != "." && !rel {
			// Below an open directory or a mapped file's link (".."
			// included: the parent of a directory we cannot know).
			if len(st) == 3 && st[0] == "dev" && st[1] == "fd" {
				// /dev/fd is /proc/self/fd.
				return unknownPath(strings.Join(segs[i:], "/")), true
			}
			if len(st) >= 4 && foldCase(st[0]) == "proc" {
				k := foldCase(st[len(st)-2])
				if len(st) == 4 && (k == "fd" || k == "map_files") || len(st) == 6 && foldCase(st[2]) == "task" && (k == "fd" || k == "map_files") {
					return unknownPath(strings.Join(segs[i:], "/")), true
				}
			}
		}
		switch sg {
		case "", ".":
			continue
		case "..":
			if len(st) > 0 && st[len(st)-1] != ".." {
				st = st[:len(st)-1]
			} else if rel {
				st = append(st, "..")
			}
			continue
		}
		st = append(st, sg)
		if rel {
			continue
		}
		if len(st) <= 5 {
			if alt, ok := rootAliasOnce("/" + strings.Join(st, "/")); ok {
				// A root alias (/proc/PID/root, /Volumes/NAME, …).
				st, hit = st[:0], true
				if alt != "/" {
					st = append(st, strings.Split(alt[1:], "/")...)
				}
				continue
			}
		}
		if foldCase(st[0]) != "proc" {
			continue
		}
		n := len(st)
		last := foldCase(st[n-1])
		if !(n == 3 || n == 5 && foldCase(st[2]) == "task") {
			continue
		}
		switch last {
		case "cwd":
			hit = true
			if !self(foldCase(st[1])) {
				return unknownPath(strings.Join(segs[i+1:], "/")), true
			}
			// The working directory: absolute, homeMark-based or
			// relative to the start directory.
			st, rel = st[:0], !strings.HasPrefix(cwd, "/")
			for _, c := range strings.Split(strings.TrimPrefix(cwd, "/"), "/") {
				if c != "" && c != "." {
					st = append(st, c)
				}
			}
		}
	}
	if !hit {
		return "", false
	}
	if rel {
		if len(st) == 0 {
			return ".", true
		}
		return strings.Join(st, "/"), true
	}
	return "/" + strings.Join(st, "/"), true
}

// secretFilter is a cheap test, derived from the path rules, for whether
// an argument could name a file a rule makes a high read: its last
// segment is a rule's literal name or shares a glob name's literal prefix
// or suffix, or it lies below a directory a rule covers whole.
type secretFilter struct {
	names      map[string]bool
	pres, sufs []string
	// dirs are the names of directories a rule covers whole ("gcloud"
	// for "~/.config/gcloud/**"): s lies below one when a segment of s
	// between two slashes is one of them. A name that cannot be a
	// segment ("/", "") is in oddDirs as "/NAME/", to search for.
	dirs    map[string]bool
	oddDirs []string
	any     bool
	// The first and last bytes of names, the first bytes of pres and
	// the last bytes of sufs: a base name matching none of them skips
	// the lookup and the loops (most arguments are not secrets).
	nameFirst, nameLast, preFirst, sufLast byteSet
	// dirNames are the last names of directory rules (compiledPath.dir)
	// whose reads are high (".ssh", ".gnupg").
	dirNames map[string]bool
}

// dirName reports whether the last segment of s names a directory rule's
// directory.
func (f *secretFilter) dirName(s string) bool {
	s = strings.TrimRight(foldCase(s), "/")
	return f.dirNames[s[strings.LastIndexByte(s, '/')+1:]]
}

func newSecretFilter(paths []compiledPath) *secretFilter {
	f := &secretFilter{names: map[string]bool{}, dirs: map[string]bool{}, dirNames: map[string]bool{}}
	for i := range paths {
		cp := &paths[i]
		if cp.rule.Read == high && cp.dir && cp.last != "" {
			f.dirNames[cp.last] = true
		}
		if cp.rule.Read != high || cp.dir {
			continue
		}
		n := len(cp.segs)
		l := cp.segs[n-1]
		switch {
		case l == "**":
			if n >= 2 && literalSeg(cp.segs[n-2]) != "" {
				if d := cp.segs[n-2]; d == "" || strings.Contains(d, "/") {
					f.oddDirs = append(f.oddDirs, "/"+d+"/")
				} else {
					f.dirs[d] = true
				}
			} else {
				f.any = true
			}
		case cp.last != "":
			f.names[cp.last] = true
		case cp.lastPre != "" || cp.lastSuf != "":
			if cp.lastPre != "" {
				f.pres = append(f.pres, cp.lastPre)
			}
			if cp.lastSuf != "" {
				f.sufs = append(f.sufs, cp.lastSuf)
			}
		default:
			f.any = true
		}
	}
	for n := range f.names {
		f.nameFirst[n[0]], f.nameLast[n[len(n)-1]] = true, true
	}
	for _, p := range f.pres {
		f.preFirst[p[0]] = true
	}
	for _, x := range f.sufs {
		f.sufLast[x[len(x)-1]] = true
	}
	return f
}

// may reports whether s could name a secret file.
func (f *secretFilter) may(s string) bool {
	if f.any || hasGlob(s) || strings.IndexByte(s, '(') >= 0 {
		// A glob, or an extended glob group ("+(i)d_rsa"), which the
		// matcher reads as one: it could match anything.
		return true
	}
	s = strings.TrimRight(foldCase(s), "/")
	if base := s[strings.LastIndexByte(s, '/')+1:]; base != "" {
		first, last := base[0], base[len(base)-1]
		if f.nameFirst[first] && f.nameLast[last] && f.names[base] {
			return true
		}
		if f.preFirst[first] {
			for _, p := range f.pres {
				if strings.HasPrefix(base, p) {
					return true
				}
			}
		}
		if f.sufLast[last] {
			for _, x := range f.sufs {
				if strings.HasSuffix(base, x) {
					return true
				}
			}
		}
	}
	// A segment with a slash on both sides ("/gcloud/" in s).
	for i := strings.IndexByte(s, '/'); i >= 0; {
		j := strings.IndexByte(s[i+1:], '/')
		if j < 0 {
			break
		}
		if f.dirs[s[i+1:i+1+j]] {
			return true
		}
		i += 1 + j
	}
	for _, d := range f.oddDirs {
		if strings.Contains(s, d) {
			return true
		}
	}
	return false
}

// homeAlias rewrites a path below another user's home directory to the
// "~" form the rules use.
func homeAlias(p string) (string, bool) {
	var rest string
	switch {
	case p == "/root" || strings.HasPrefix(p, "/root/"):
		rest = strings.TrimPrefix(p, "/root")
	case strings.HasPrefix(p, "/home/") || strings.HasPrefix(p, "/Users/") || strings.HasPrefix(p, "/users/"): // "/users/": folded (foldCase)
		q := p[strings.IndexByte(p[1:], '/')+2:]
		if q == "" || q[0] == '/' || q[0] == '.' {
			return "", false
		}
		if i := strings.IndexByte(q, '/'); i >= 0 {
			rest = q[i:]
		}
	default:
		return "", false
	}
	return "~" + rest, true
}

// pathIndex finds the path rules a path can match without trying them
// all (the latency tail was glob matching against every rule). Rules are
// grouped by anchor: "/" and "~" rules only match paths starting there,
// the others ("**/…") any path. Within a group, rules whose last segment
// is a literal name are indexed by that name and by its first and last
// byte; the others (a glob or "**" last) are always tried. Each entry is
// a set of rule indices (ruleSet), so candidates are a union of a few
// sets, visited in rule order, which decides ties.
type pathIndex struct {
	words           int // len of every ruleSet
	root, home, any ruleGroup
	// live are the rules with a level for reads (live[0]) and for writes
	// (live[1]); fit[n] those that can match a path of n segments
	// (compiledPath.fits), the last entry standing for every longer
	// path. A literal path's candidates are cut down to both before any
	// rule is tried: they are the tests every rule would fail first.
	live [2]ruleSet
	fit  []ruleSet
}

// ruleSet is a bit set of rule indices (bit i of word i/64).
type ruleSet []uint64

// and keeps in s only what is in t (len(t) == len(s)).
func (s ruleSet) and(t ruleSet) {
	for i := range s {
		s[i] &= t[i]
	}
}

// or adds t to s (len(t) is 0 or len(s)).
func (s ruleSet) or(t ruleSet) {
	for i := range t {
		s[i] |= t[i]
	}
}

// each calls f with every index in s, in increasing order.
func (s ruleSet) each(f func(i int)) {
	for w, x := range s {
		for x != 0 {
			f(w*64 + bits.TrailingZeros64(x))
			x &= x - 1
		}
	}
}

type ruleGroup struct {
	byName       map[string]ruleSet
	byLastByte   [256]ruleSet
	byFirstByte  [256]ruleSet
	lits, nonLit ruleSet
}

func (ix *pathIndex) set(s *ruleSet, i int) {
	if *s == nil {
		*s = make(ruleSet, ix.words)
	}
	(*s)[i/64] |= 1 << (i % 64)
}

func (ix *pathIndex) add(g *ruleGroup, i int, last string) {
	if last == "" || last == "/" || last == "~" {
		ix.set(&g.nonLit, i)
		return
	}
	if g.byName == nil {
		g.byName = map[string]ruleSet{}
	}
	ix.set(&g.lits, i)
	n := g.byName[last]
	ix.set(&n, i)
	g.byName[last] = n
	ix.set(&g.byLastByte[last[len(last)-1]], i)
	ix.set(&g.byFirstByte[last[0]], i)
}

func newPathIndex(paths []compiledPath) pathIndex {
	ix := pathIndex{words: (len(paths) + 63) / 64}
	longest := 0
	for i := range paths {
		longest = max(longest, len(paths[i].segs))
	}
	ix.live = [2]ruleSet{make(ruleSet, ix.words), make(ruleSet, ix.words)}
	// Past longest segments only the rules with "**" fit, all of them.
	ix.fit = make([]ruleSet, longest+2)
	for n := range ix.fit {
		ix.fit[n] = make(ruleSet, ix.words)
	}
	for i := range paths {
		cp := &paths[i]
		if cp.rule.Read != "" {
			ix.live[0][i/64] |= 1 << (i % 64)
		}
		if cp.rule.Write != "" {
			ix.live[1][i/64] |= 1 << (i % 64)
		}
		for n := range ix.fit {
			if cp.fits(n) {
				ix.fit[n][i/64] |= 1 << (i % 64)
			}
		}
	}
	for i := range paths {
		switch paths[i].first {
		case "/":
			ix.add(&ix.root, i, paths[i].last)
		case "~":
			ix.add(&ix.home, i, paths[i].last)
		default:
			ix.add(&ix.any, i, paths[i].last)
		}
	}
	return ix
}

// groups are the rule groups a path starting with the segment first can
// match.
func (ix *pathIndex) groups(first string) (*ruleGroup, *ruleGroup) {
	switch first {
	case "/":
		return &ix.root, &ix.any
	case "~":
		return &ix.home, &ix.any
	}
	return &ix.any, nil
}

// union returns the union of sets in buf (cleared, or allocated when too
// small).
func (ix *pathIndex) union(buf []uint64, sets ...ruleSet) ruleSet {
	var out ruleSet
	if ix.words <= len(buf) {
		out = buf[:ix.words]
		clear(out)
	} else {
		out = make(ruleSet, ix.words)
	}
	for _, t := range sets {
		out.or(t)
	}
	return out
}

// literalCandidates are the rules a literal path of n segments, with
// first and last segments first and end, can match: those with a level
// for writes (write) or reads that fit n segments.
func (ix *pathIndex) literalCandidates(first, end string, n int, write bool, buf []uint64) ruleSet {
	a, b := ix.groups(first)
	var out ruleSet
	if b == nil {
		out = ix.union(buf, a.byName[end], a.nonLit)
	} else {
		out = ix.union(buf, a.byName[end], a.nonLit, b.byName[end], b.nonLit)
	}
	w := 0
	if write {
		w = 1
	}
	out.and(ix.live[w])
	out.and(ix.fit[min(n, len(ix.fit)-1)])
	return out
}

// globCandidates are the rules a path with first and last segments
// first and last (a glob or a name) can match directly, plus those
// naming dirName, the literal directory the glob lies in ("" for none).
func (ix *pathIndex) globCandidates(first, last, dirName string, buf []uint64) ruleSet {
	gp, gs := litPrefix(last), litSuffix(last)
	pick := func(g *ruleGroup) ruleSet {
		switch {
		case last == "**" || strings.Contains(last, "\\"):
			return g.lits
		case !hasGlob(last):
			return g.byName[last]
		case gs != "":
			return g.byLastByte[gs[len(gs)-1]]
		case gp != "":
			return g.byFirstByte[gp[0]]
		}
		return g.lits
	}
	if hasGlob(first) {
		// A relative glob in the first segment: only "**" rules.
		first = ""
	}
	a, b := ix.groups(first)
	var dirA, dirB ruleSet
	if dirName != "" {
		dirA = a.byName[dirName]
		if b != nil {
			dirB = b.byName[dirName]
		}
	}
	if b == nil {
		return ix.union(buf, pick(a), dirA, a.nonLit)
	}
	return ix.union(buf, pick(a), dirA, a.nonLit, pick(b), dirB, b.nonLit)
}

func (cr *compiled) matchOne(p string, write bool) pathVerdict {
	if strings.IndexByte(p, '(') >= 0 {
		p = extglobAsStar(p)
	}
	if hasGlob(p) {
		return cr.matchGlob(p, write)
	}
	var sbuf [16]string
	segs := appendSegs(sbuf[:0], p)
	var best pathVerdict
	var buf [8]uint64
	end := segs[len(segs)-1]
	second := ""
	if len(segs) > 1 {
		second = segs[1]
	}
	cr.index.literalCandidates(segs[0], end, len(segs), write, buf[:]).each(func(i int) {
		cp := &cr.paths[i]
		if cp.second != "" && second != "" && cp.second != second && cp.first == segs[0] {
			return
		}
		l := cp.rule.Read
		if write {
			l = cp.rule.Write
		}
		if l == "" || l.Rank() <= best.level.Rank() {
			return
		}
		if cp.first != "" && cp.first != segs[0] || cp.last != "" && cp.last != end || !cp.fits(len(segs)) ||
			!strings.HasPrefix(end, cp.lastPre) || !strings.HasSuffix(end, cp.lastSuf) {
			return
		}
		if !matchSegs(cp.segs, segs) {
			return
		}
		for _, ex := range cp.except {
			if matchSegs(ex, segs) {
				return
			}
		}
		best = pathVerdict{level: l, id: cp.rule.ID, reason: cp.rule.Reason, dir: cp.dir}
	})
	return best
}

// matchGlob returns the highest path rule that a glob could match: a rule
// matching some path the glob matches (matchSegsGlob), or any rule
// covering the glob's literal directory ("~/.ssh/*", "/etc/ssl/private/k*"
// lie in a directory that is sensitive as a whole). The home directory
// itself is the exception: its secrets are hidden names that "*" does not
// match, so "~/*.txt" is judged by its names alone. Except patterns hold
// for a glob whose every name they cover: the rule's text ("id_*.pub")
// matches the glob, or the glob's last segment ends in the literal suffix
// of an except pattern's last segment ("~/.ssh/*.pub").
func (cr *compiled) matchGlob(p string, write bool) pathVerdict {
	var sbuf [16]string
	segs := appendSegs(sbuf[:0], p)
	k := 0
	for k < len(segs) && !hasGlob(segs[k]) {
		k++
	}
	dir := segs[:k]
	dirSensitive := k > 0 && k < len(segs) && !(k == 1 && (segs[0] == "~" || segs[0] == "/"))
	var probe []string
	last := segs[len(segs)-1]
	gp, gs := litPrefix(last), litSuffix(last)
	exact := last != "**" && !strings.Contains(last, "\\")
	cheap := func(cp *compiledPath) bool {
		if !exact || cp.lastSeg == "**" || strings.Contains(cp.lastSeg, "\\") {
			return true
		}
		if strings.HasPrefix(cp.lastSeg, ".") && !strings.HasPrefix(last, ".") && hasGlob(last) {
			return false // a glob not starting with "." matches no hidden name
		}
		return (strings.HasPrefix(cp.segPre, gp) || strings.HasPrefix(gp, cp.segPre)) &&
			(strings.HasSuffix(cp.segSuf, gs) || strings.HasSuffix(gs, cp.segSuf))
	}
	var best pathVerdict
	dirName := ""
	if dirSensitive {
		dirName = dir[len(dir)-1]
	}
	var buf [8]uint64
	second := ""
	if len(segs) > 1 && !hasGlob(segs[1]) {
		second = segs[1]
	}
	cr.index.globCandidates(segs[0], last, dirName, buf[:]).each(func(i int) {
		cp := &cr.paths[i]
		if cp.second != "" && second != "" && cp.second != second && cp.first == segs[0] {
			return
		}
		l := cp.rule.Read
		if write {
			l = cp.rule.Write
		}
		if l == "" || l.Rank() <= best.level.Rank() {
			return
		}
		// The last segments must agree before the whole path is tried:
		// first by their literal ends (cheap), then as patterns.
		hit := cheap(cp) && (cp.lastSeg == "**" || segMatch(cp.lastSeg, last) || couldMatchSeg(cp.lastSeg, last, cp.lastAnywhere)) && matchSegsGlob(cp.segs, segs)
		direct := hit
		if !hit && dirSensitive && (cp.last == "" || cp.last == dirName) {
			// A rule with a literal last name can only match the
			// directory itself (the probe is no name).
			if probe == nil {
				probe = append(slices.Clone(dir), "\x00")
			}
			hit = matchSegs(cp.segs, dir) || matchSegs(cp.segs, probe)
		}
		if !hit || cr.globExempt(cp.except, segs) {
			return
		}
		best = pathVerdict{level: l, id: cp.rule.ID, reason: cp.rule.Reason + ", which the glob may match", dir: cp.dir && direct}
	})
	return best
}

// globExempt reports whether except patterns cover every name a glob
// can match (see matchGlob). The except patterns of every rule in the
// same directory count, so a directory rule ("~/.ssh") honours the
// exceptions of the file rules inside it ("~/.ssh/id_*.pub").
func (cr *compiled) globExempt(excepts [][]string, segs []string) bool {
	last := segs[len(segs)-1]
	suf := litSuffix(last)
	check := func(ex []string) bool {
		if matchSegs(ex, segs) {
			return true
		}
		if len(ex) != len(segs) || !hasGlob(last) || !matchSegs(ex[:len(ex)-1], segs[:len(segs)-1]) {
			return false
		}
		es := ex[len(ex)-1]
		return hasGlob(es) && litSuffix(es) != "" && strings.HasSuffix(suf, litSuffix(es))
	}
	for _, ex := range excepts {
		if check(ex) {
			return true
		}
	}
	if len(excepts) > 0 || !hasGlob(last) {
		return false
	}
	for i := range cr.paths {
		for _, ex := range cr.paths[i].except {
			if len(ex) == len(segs) && check(ex) {
				return true
			}
		}
	}
	return false
}

// matchTree returns the highest read rule for a file somewhere below the
// directory p, for a recursive read (grep -r, tar c, cp -r): a rule
// anchored at "/" or "~" whose leading segments match p and that names
// something further down ("~/.config" holds "~/.config/gcloud/**", "/etc"
// holds "/etc/shadow"). Rules for names found anywhere ("**/.env") are
// left out: every project has such names, and they are matched when they
// are named.
//
// With skipHidden (rg, ag, ack without --hidden), rules whose remaining
// segments name a hidden entry ("~" holding "~/.ssh/id_*") do not count.
func (cr *compiled) matchTree(p string, skipHidden bool) pathVerdict {
	return cr.matchTreeNamed(p, skipHidden, "")
}

// matchWriteTree is matchTree for writes: the highest write rule, of cr's
// own and of the protected paths', for a file somewhere below the
// directory p that a command may create or overwrite without naming it
// (an archive extracted into p: "~" holds "~/.bashrc", "~/.config" holds
// "~/.config/toolgate/**", "/" holds "/etc/**"). Rules for names found
// anywhere ("**/.git/hooks/**") count only for a directory p that ends in
// their leading names (.git, .git/hooks): any other directory holds
// such files only under those names, which the rule sees where used.
func (cr *compiled) matchWriteTree(p string) pathVerdict {
	v := cr.treeBelow(p, false, "", true)
	if cr.protect != nil {
		if pv := cr.protect.treeBelow(p, false, "", true); pv.level.Rank() > v.level.Rank() {
			v = pv
		}
	}
	return v
}

// matchTreeNamed is matchTree for the files below p whose names the glob
// segment name may match ("" or "**": any name): only rules whose last
// segment is compatible with it (nameCompatible) count.
func (cr *compiled) matchTreeNamed(p string, skipHidden bool, name string) pathVerdict {
	return cr.treeBelow(p, skipHidden, name, false)
}

// treeBelow is matchTreeNamed over the read rules, or with write over the
// write rules (see matchWriteTree).
func (cr *compiled) treeBelow(p string, skipHidden bool, name string, write bool) pathVerdict {
	p, name = foldCase(p), foldCase(name)
	if name == "**" {
		name = ""
	}
	if rest, ok := unknownRest(p); ok {
		if write {
			// Below a directory only known at run time: writePath's
			// write.dynamic / write.outside already say review.
			return pathVerdict{}
		}
		return cr.treeAnyBase(rest, skipHidden, name)
	}
	var hbuf [16]treeHit
	return cr.pickTree(cr.treeHits(hbuf[:0], p, skipHidden, write), name)
}

// treeHit is a rule whose files may lie below a directory (treeHits),
// with the level it gives.
type treeHit struct {
	cp    *compiledPath
	level gate.RiskLevel
}

// pickTree is the highest of hits whose last segment the glob segment
// name may match ("" any name).
func (cr *compiled) pickTree(hits []treeHit, name string) pathVerdict {
	var best pathVerdict
	for _, h := range hits {
		if h.level.Rank() <= best.level.Rank() || name != "" && !nameCompatible(h.cp.lastSeg, name) {
			continue
		}
		best = pathVerdict{level: h.level, id: h.cp.rule.ID, reason: h.cp.rule.Reason + ", which lies below it"}
	}
	return best
}

// treeHits appends to hits every rule (above safe, read or with write
// its write level) whose files may lie below the directory p, a known
// path (not below unknownMark), and those of p's treeAlias.
func (cr *compiled) treeHits(hits []treeHit, p string, skipHidden, write bool) []treeHit {
	p = foldCase(p)
	if alt, ok := procRootAlias(p); ok {
		p = alt
	}
	var sbuf [16]string
	segs := appendSegs(sbuf[:0], p)
	for i := range cr.paths {
		cp := &cr.paths[i]
		l := cp.rule.Read
		if write {
			l = cp.rule.Write
		}
		if l == "" || l.Rank() <= safe.Rank() || cp.first != "" && cp.first != segs[0] {
			continue
		}
		if cp.segs[0] == "**" {
			// A rule for a name anywhere (**/.git/hooks/**): p holds its
			// files when p ends in the rule's leading names (.git,
			// .git/hooks); any other directory may hold them only by
			// those names, which the rule sees where they are used.
			if write && starPrefixTail(cp.segs[1:], segs) {
				hits = append(hits, treeHit{cp, l})
			}
			continue
		}
		stars := 0
		for k := 1; k < len(cp.segs); k++ {
			// A prefix without "**" matches exactly k segments, one with
			// them at least k minus their number.
			if cp.segs[k-1] == "**" {
				stars++
			}
			if stars == 0 && len(segs) != k || len(segs) < k-stars {
				continue
			}
			if matchSegs(cp.segs[:k], segs) && !(skipHidden && hiddenSeg(cp.segs[k:])) {
				hits = append(hits, treeHit{cp, l})
				break
			}
		}
	}
	if alt, ok := treeAlias(p); ok {
		hits = cr.treeHits(hits, alt, skipHidden, write)
	}
	return hits
}

// starPrefixTail reports whether segs ends in a leading part of rule
// (rule[:k], 1 <= k < len(rule), literal or specific segments up to the
// first "**"): segs names a directory of rule's path.
func starPrefixTail(rule, segs []string) bool {
	for k := 1; k < len(rule) && k <= len(segs); k++ {
		if rule[k-1] == "**" || !specificTail(rule[k-1:k]) {
			return false
		}
		if matchSegs(rule[:k], segs[len(segs)-k:]) {
			return true
		}
	}
	return false
}

// treeAlias is the "~" form of a directory p that holds a home's
// contents, for matchTree: below a home directory the "~" rules apply; a
// tree that holds home directories (/home, /Users) holds what each of
// them holds; /root and /Users/NAME are homes. /home/NAME itself is not
// taken for one (in containers it is often a project directory: see
// matchPath), unless it is the user's own (resolved to "~" before this).
// p is folded (foldCase).
func treeAlias(p string) (string, bool) {
	if strings.HasPrefix(p, "~") {
		return "", false
	}
	alt, ok := homeAlias(p)
	switch {
	case p == "/" || p == "/home" || p == "/users":
		// The root holds every home.
		return "~", true
	case alt == "~" && p != "/root" && !strings.HasPrefix(p, "/users/"):
		return "", false
	}
	return alt, ok
}

// loc is where a resolved path lies.
type loc int

const (
	locWorkspace     loc = iota // inside the workspace (or relative, below the start directory)
	locWorkspaceRoot            // the workspace root itself
	locTemp                     // inside a temp dir
	locTempRoot                 // a temp dir itself
	locHome                     // the home directory itself
	locHomeSub                  // inside home, outside the workspace
	locRoot                     // "/"
	locParent                   // the workspace's parent or another ancestor
	locOutside                  // any other absolute path
)

// resolver turns words into resolved paths relative to a working
// directory. Paths are cleaned lexically (no symlinks are followed: the
// classifier never touches the file system). Home is "~"; with no
// workspace root, relative paths stay relative ("" is the start directory).
type resolver struct {
	workspace string // absolute workspace root, or ""
	home      string // absolute home, or ""
	temp      []string
}

// homeMark stands for "~" while cleaning when home is not known, so that
// ".." above home leaves it (see homeBase).
const homeMark = "/\x00home"

// resolve cleans p against cwd. cwd is "" (start directory), a relative
// path below it, "~…" or absolute. The result is absolute, "~" or "~/…",
// or relative to the start directory ("." for the start directory itself).
func (r *resolver) resolve(cwd, p string) string {
	if n, kind := tildeDir(p); kind == tildeCwd {
		// ~+ (and ~+0, ~0) is the working directory.
		p = "." + p[n:]
	} else if kind == tildeUnknown {
		// ~-, ~N, ~+N, ~-N: $OLDPWD or the directory stack.
		return unknownPath(p[n:])
	} else if u, rest, ok := tildeUser(p); ok {
		// ~NAME is NAME's home directory.
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
		// Below a directory only known at run time (cd "$X", cd ~-).
		return unknownPath(rest)
	}
	switch {
	case (p == "~" || strings.HasPrefix(p, "~/")) && cleanTail(p[1:]):
		// Already clean: the round trip through homeMark below would
		// give p back (and build two strings on the way). No /proc
		// link or root alias starts below home.
	default:
		marked := false
		if p == "~" || strings.HasPrefix(p, "~/") {
			p = r.homeBase() + strings.TrimPrefix(p, "~")
			marked = true
		}
		if q, ok := procWalk(p, r.markHome(cwd)); ok {
			if _, unk := unknownRest(q); unk {
				return q
			}
			p = q
		}
		p = path.Clean(p)
		if p == homeMark || hasPrefixThen(p, homeMark, '/') {
			p = "~" + strings.TrimPrefix(p, homeMark)
		} else if r.home == "" && strings.Contains(p, "\x00") {
			p = strings.ReplaceAll(p, "\x00", "")
		} else if marked && r.home == "" {
			// ".." above a home we do not know: below its parent,
			// which is only known at run time (~/../dev is /home/dev
			// when home is /home/NAME).
			return unknownPath(strings.TrimPrefix(p, "/"))
		}
		if alt, ok := procRootAlias(p); ok {
			// /proc/self/root/x, /private/etc/x, /Volumes/NAME/x: the
			// file it names.
			p = alt
		}
	}
	if r.home != "" && (p == r.home || hasPrefixThen(p, r.home, '/')) {
		p = "~" + strings.TrimPrefix(p, r.home)
	}
	return p
}

// homeBase is what "~" stands for while cleaning: the home directory
// when it is known (so ".." above it reaches its real parent: ~/../dev is
// /home/dev for home /home/NAME), else homeMark.
func (r *resolver) homeBase() string {
	if r.home != "" {
		return r.home
	}
	return homeMark
}

// markHome is cwd with "~" as homeBase (see procWalk).
func (r *resolver) markHome(cwd string) string {
	if cwd == "~" || strings.HasPrefix(cwd, "~/") {
		return r.homeBase() + cwd[1:]
	}
	return cwd
}

// cleanTail reports whether t, what follows "~" in a path, is "" or a
// clean rooted path other than "/" (no empty, "." or ".." segments, no
// trailing slash): path.Clean leaves homeMark+t as it is.
func cleanTail(t string) bool {
	return t == "" || t != "/" && path.Clean(t) == t
}

// tildeUser splits "~NAME/rest" (bash's tilde prefix naming a user's
// home directory) into NAME and "/rest".
func tildeUser(p string) (user, rest string, ok bool) {
	if len(p) < 2 || p[0] != '~' {
		return "", "", false
	}
	user, rest = p[1:], ""
	if i := strings.IndexByte(user, '/'); i >= 0 {
		user, rest = user[:i], user[i:]
	}
	if user == "" || user == "+" || user == "-" {
		return "", "", false
	}
	if _, kind := tildeDir(p); kind != tildeNone {
		// ~0, ~+1, ~-2: the directory stack, not a user.
		return "", "", false
	}
	for i := 0; i < len(user); i++ {
		c := user[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0 || c == '$' && i == len(user)-1) {
			return "", "", false
		}
	}
	return user, rest, true
}

// tildeKind is what a tilde prefix other than ~ and ~NAME stands for.
type tildeKind int

const (
	tildeNone    tildeKind = iota // not such a prefix
	tildeCwd                      // ~+, ~+0, ~0: $PWD
	tildeUnknown                  // ~-, ~N, ~+N, ~-N: $OLDPWD or the directory stack
)

// tildeDir reports whether p starts with one of bash's directory-stack
// tilde prefixes (~+, ~-, ~N, ~+N, ~-N, followed by "/" or the end) and
// how many bytes it takes.
func tildeDir(p string) (int, tildeKind) {
	if len(p) < 2 || p[0] != '~' {
		return 0, tildeNone
	}
	end := strings.IndexByte(p, '/')
	if end < 0 {
		end = len(p)
	}
	t := p[1:end]
	if t == "" {
		return 0, tildeNone
	}
	sign := byte(0)
	if t[0] == '+' || t[0] == '-' {
		sign, t = t[0], t[1:]
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return 0, tildeNone
		}
	}
	switch {
	case t == "" && sign == 0:
		return 0, tildeNone
	case t == "" && sign == '+', strings.Trim(t, "0") == "" && sign != '-':
		return end, tildeCwd
	}
	return end, tildeUnknown
}

// otherHome reports whether a resolved path is a home directory itself:
// /root, /home/NAME or /Users/NAME.
func otherHome(p string) bool {
	alias, ok := homeAlias(p)
	return ok && alias == "~"
}

// where classifies a resolved path.
func (r *resolver) where(p string) loc {
	if r.workspace != "" {
		if p == r.workspace {
			return locWorkspaceRoot
		}
		if hasPrefixThen(p, r.workspace, '/') {
			return locWorkspace
		}
		if hasPrefixThen(r.workspace, p, '/') || p == "/" && r.workspace != "/" {
			if p == "/" {
				return locRoot
			}
			if r.home != "" && p == "~" {
				return locHome
			}
			return locParent
		}
	}
	switch {
	case p == "/":
		return locRoot
	case p == "~":
		return locHome
	case strings.HasPrefix(p, "~/"):
		return locHomeSub
	case strings.HasPrefix(p, "/"):
		for _, t := range r.temp {
			if p == t {
				return locTempRoot
			}
			if hasPrefixThen(p, t, '/') {
				return locTemp
			}
		}
		return locOutside
	case p == ".":
		if r.workspace != "" {
			return locWorkspace
		}
		return locWorkspaceRoot
	case p == ".." || strings.HasPrefix(p, "../"):
		return locParent
	}
	return locWorkspace
}

// harmlessTarget reports writes that store nothing.
func harmlessTarget(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/full":
		return true
	}
	if fd, ok := strings.CutPrefix(p, "/dev/fd/"); ok {
		return stdFd(fd)
	}
	if fd, ok := strings.CutPrefix(p, "/proc/self/fd/"); ok {
		return stdFd(fd)
	}
	return strings.HasPrefix(p, "/dev/pts/")
}

// stdFd reports whether fd names standard input, output or error: any
// other descriptor may be a file the process has open (a file tool's
// /proc/self/fd/7 is whatever its agent has open there).
func stdFd(fd string) bool { return fd == "0" || fd == "1" || fd == "2" }

// Path classifies one file-tool operation on a path, with the default
// rules: reading is safe unless the path holds secrets; writing or
// deleting is review inside the workspace or a temp dir, review outside
// it, and high on sensitive paths (keys, shell rc files, /etc, devices,
// .git/hooks, cron). workspace is the absolute workspace root ("" when
// unknown: relative paths are then inside it). The path is normalised
// lexically (., .., duplicate slashes; ~ is the home directory); symlinks
// are never followed, so a relative path that leaves the workspace through
// ".." counts as outside it.
func Path(op Op, p, workspace string, opts ...Option) Risk {
	c, err := New(append([]Option{WithWorkspace(workspace)}, opts...)...)
	if err != nil {
		return configErrorRisk(err)
	}
	return c.Path(op, p)
}

// Path classifies one file-tool operation on a path with c's rules and
// workspace. See the package-level Path.
func (c *Classifier) Path(op Op, p string) Risk { return c.path(op, p, true) }

// path is Path; with expand, a glob's brace and extglob alternatives are
// judged one by one (globAlternatives).
func (c *Classifier) path(op Op, p string, expand bool) Risk {
	var fs []Finding
	add := func(l gate.RiskLevel, rule, reason string) {
		fs = append(fs, Finding{Level: l, Rule: rule, Reason: reason, Command: string(op) + " " + clip(p, 100), Line: 1, Col: 1})
	}
	switch op {
	case OpList, OpRead, OpSearch, OpWrite, OpDelete:
	default:
		add(high, "path.unknown-op", "unknown file operation "+clip(string(op), 20))
		return summarize(fs, "")
	}
	if p == "" || strings.ContainsRune(p, 0) || len(p) > 4096 {
		add(review, "path.invalid", "empty, over-long or NUL-bearing path")
		return summarize(fs, "")
	}
	if strings.HasPrefix(p, "$") || strings.Contains(p, "${") || strings.Contains(p, "$(") || strings.Contains(p, "`") {
		add(review, "path.dynamic", "path contains shell syntax the file tool will not expand")
	} else if alts, truncated := globAlternatives(p); expand && alts != nil {
		// The tools' glob libraries expand braces and extended globs:
		// the path is the worst of its alternatives.
		var worst Risk
		for i, a := range alts {
			if r := c.path(op, a, false); i == 0 || r.Level.Rank() > worst.Level.Rank() {
				worst = r
			}
		}
		if truncated && worst.Level.Rank() < review.Rank() {
			add(review, "limit.brace", fmt.Sprintf("glob with over %d alternatives", maxGlobAlts))
			return summarize(fs, "")
		}
		return worst
	}
	cwd := ""
	if c.cfg.workspace != "" {
		cwd = c.cfg.workspace
	}
	rp := c.res.resolve(cwd, p)
	write := op == OpWrite || op == OpDelete
	if v := c.rules.matchPath(rp, write); v.level != "" && v.level != safe && !(op == OpList && v.dir) {
		// (Listing a directory a rule names whole — ~, ~/.ssh — gives
		// names, not the secrets in it.)
		verb := "reads"
		switch op {
		case OpWrite:
			verb = "writes"
		case OpDelete:
			verb = "deletes"
		}
		add(v.level, v.id, verb+" "+v.reason)
	}
	if !write {
		// A recursive read reaches every file below the directory.
		tree, name := "", ""
		switch {
		case op == OpSearch && !hasGlob(rp):
			tree = rp
		case hasGlob(rp) && hasStarStar(rp):
			// A "**" in the path spans any number of directories, hidden
			// ones included: the glob reaches the tree below its literal
			// directory, the files whose names its last segment takes.
			tree = globRoot(rp)
			name = rp[strings.LastIndexByte(rp, '/')+1:]
		}
		if tree != "" {
			if v := c.rules.matchTreeNamed(tree, false, name); v.level != "" && v.level != safe {
				add(v.level, v.id, "reads recursively "+v.reason)
			}
		}
	}
	where := c.res.where(rp)
	if op == OpDelete {
		switch where {
		case locRoot, locHome, locParent, locWorkspaceRoot, locTempRoot:
			add(high, "path.delete-root", "deletes a root, home, workspace or temp directory")
		default:
			if otherHome(rp) {
				add(high, "path.delete-root", "deletes a home directory")
			}
		}
	}
	if write {
		if harmlessTarget(rp) {
			return summarize(nil, "writes to a discard device")
		}
		scoped := c.cfg.scopedWrites
		if op == OpDelete {
			scoped = review
		}
		switch where {
		case locWorkspace, locWorkspaceRoot:
			if scoped != safe {
				add(review, "path.write-workspace", string(op)+" inside the workspace")
			}
		case locTemp, locTempRoot:
			if scoped != safe {
				add(review, "path.write-temp", string(op)+" in a temp directory")
			}
		default:
			add(review, "path.write-outside", string(op)+" outside the workspace")
		}
	} else if c.cfg.workspace != "" && c.cfg.strictReads {
		switch where {
		case locWorkspace, locWorkspaceRoot, locTemp, locTempRoot:
		default:
			add(review, "path.read-outside", "reads outside the workspace")
		}
	}
	return summarize(fs, string(op)+" of an ordinary path")
}

// extglobAsStar rewrites bash's extended glob groups (@(a|b), !(x),
// +(x), ?(x), *(x)) as "*", which matches at least what they match.
func extglobAsStar(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if i+1 < len(p) && p[i+1] == '(' && strings.IndexByte("@!+?*", p[i]) >= 0 {
			if j := strings.IndexByte(p[i:], ')'); j > 0 && !strings.Contains(p[i:i+j], "/") {
				b.WriteByte('*')
				i += j
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// hiddenSeg reports whether a pattern names a hidden entry.
func hiddenSeg(segs []string) bool {
	for _, s := range segs {
		if strings.HasPrefix(s, ".") {
			return true
		}
	}
	return false
}

// hasStarStar reports whether the glob p has a "**" segment.
func hasStarStar(p string) bool {
	for _, sg := range strings.Split(p, "/") {
		if sg == "**" {
			return true
		}
	}
	return false
}

// nameCompatible reports whether some file name could match both a
// rule's last segment and the glob segment name (a name or a glob; Go's
// path.Match, so "*" takes hidden names too: conservative).
func nameCompatible(rule, name string) bool {
	switch {
	case rule == "**" || rule == name || segMatch(rule, name) || segMatch(name, rule):
		return true
	case hasGlob(rule) && hasGlob(name):
		return strings.Trim(name, "*") == "" || couldMatchSeg(rule, name, false)
	}
	return false
}

// globRoot is the directory of a resolved glob before its first segment
// with a glob character ("/" or "~" at least): what the glob can reach.
func globRoot(p string) string {
	segs := strings.Split(p, "/")
	for i, sg := range segs {
		if hasGlob(sg) {
			root := strings.Join(segs[:i], "/")
			switch {
			case root == "" && strings.HasPrefix(p, "/"):
				return "/"
			case root == "":
				return "."
			}
			return root
		}
	}
	return p
}

// foldCase is p in the lower case the path rules are compiled in (see
// compileRules): file systems that ignore case (macOS's default APFS,
// Windows's NTFS) open ~/.ssh/id_rsa for ~/.SSH/ID_RSA, so rules match
// paths case-insensitively (Unicode lower case, strings.ToLower). A path
// without upper-case or non-ASCII bytes is returned as it is.
func foldCase(p string) string {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c >= 0x80 || 'A' <= c && c <= 'Z' {
			return strings.ToLower(p)
		}
	}
	return p
}

// matchAnyBase returns the highest read rule a path could match whose
// leading part is unknown (a run-time word: "${PWD%/*}/.aws/credentials")
// and whose known rest is suffix (a relative path, cleaned): the rest
// names a secret when, below some directory, it matches a rule (some
// tail of the rule's segments matches it). Rules for a directory
// (compiledPath.dir) and tails that are only wildcards ("*", "**": any
// name) do not count, so ordinary names ("$DIR/README.md") stay safe.
func (cr *compiled) matchAnyBase(suffix string, write bool) pathVerdict {
	suffix = foldCase(path.Clean(suffix))
	for suffix == ".." || strings.HasPrefix(suffix, "../") {
		// The unknown part above absorbs "..".
		suffix = strings.TrimPrefix(strings.TrimPrefix(suffix, ".."), "/")
	}
	if suffix == "" || suffix == "." || strings.HasPrefix(suffix, "/") {
		return pathVerdict{}
	}
	// The unknown directory may be "/" or home.
	best := cr.matchPath("/"+suffix, write)
	if v := cr.matchPath("~/"+suffix, write); v.level.Rank() > best.level.Rank() {
		best = v
	}
	segs := splitPath(suffix)
	// Or home's parent, or a directory further above home (/home,
	// $X/dev/.aws/credentials with X=/home): a home-relative rule may
	// match below any of suffix's segments.
	for j := 1; j < len(segs); j++ {
		if v := cr.matchPath("~/"+strings.Join(segs[j:], "/"), write); v.level.Rank() > best.level.Rank() {
			best = v
		}
	}
	if best.level.Rank() > safe.Rank() {
		best.reason += " (below a directory known only at run time)"
	}
	for i := range cr.paths {
		cp := &cr.paths[i]
		l := cp.rule.Read
		if write {
			l = cp.rule.Write
		}
		if l == "" || l.Rank() <= best.level.Rank() || l.Rank() <= safe.Rank() {
			continue
		}
		if cp.last != "" && cp.last != segs[len(segs)-1] {
			// A tail ending in a literal name matches only a suffix
			// ending in it (matchSegsGlob matches whole segments).
			continue
		}
		for k := 1; k < len(cp.segs); k++ {
			tail := cp.segs[k:]
			if !specificTail(tail) || !matchSegsGlob(tail, segs) || tailExempt(cp.except, segs) {
				continue
			}
			best = pathVerdict{level: l, id: cp.rule.ID, reason: cp.rule.Reason + " (below a directory known only at run time)", dir: cp.dir && len(tail) == len(segs)}
			break
		}
	}
	return best
}

// treeAnyBase is matchTreeNamed for the directory rest below an unknown
// one (see unknownMark): the unknown directory itself may be "/" (it
// holds everything); below it, rest holds what a rule names further down
// past segments that match rest.
func (cr *compiled) treeAnyBase(rest string, skipHidden bool, name string) pathVerdict {
	rest = foldCase(path.Clean(rest))
	if rest == "" || rest == "." {
		return cr.matchTreeNamed("/", skipHidden, name)
	}
	segs := splitPath(rest)
	var best pathVerdict
	for i := range cr.paths {
		cp := &cr.paths[i]
		l := cp.rule.Read
		if l == "" || l.Rank() <= best.level.Rank() || l.Rank() <= safe.Rank() ||
			name != "" && name != "**" && !nameCompatible(cp.lastSeg, name) {
			continue
		}
		for k := 1; k+len(segs) < len(cp.segs); k++ {
			mid := cp.segs[k : k+len(segs)]
			if specificTail(mid) && matchSegsGlob(mid, segs) && !(skipHidden && hiddenSeg(cp.segs[k+len(segs):])) {
				best = pathVerdict{level: l, id: cp.rule.ID, reason: cp.rule.Reason + ", which may lie below it"}
				break
			}
		}
	}
	return best
}

// specificTail reports whether pattern segments name something: a
// literal segment or a specific glob (see specificGlob), not only "*"
// and "**".
func specificTail(segs []string) bool {
	for _, s := range segs {
		if s != "**" && (literalSeg(s) != "" || specificGlob(s)) {
			return true
		}
	}
	return false
}

// tailExempt reports whether some tail of an except pattern matches segs.
func tailExempt(excepts [][]string, segs []string) bool {
	for _, ex := range excepts {
		for k := 0; k < len(ex); k++ {
			if matchSegs(ex[k:], segs) {
				return true
			}
		}
	}
	return false
}
