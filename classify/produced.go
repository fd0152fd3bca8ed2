package classify

import (
	"path"
	"strings"

	"github.com/toolgate/toolgate/gate"
)

// Paths produced at run time: a stage that lists files (find, fd, ls,
// locate) prints names that a later command reads, through a pipe into
// xargs or through a command substitution. They are judged by globs over
// what the listing can print: find ~ -name id_rsa prints "~/**/id_rsa".

// listing is a glob over the names a listing stage prints. With hidden,
// its "**" segments span hidden directories too, as find's walk does
// (find ~ -name credentials reaches ~/.aws/credentials); without it they
// are bash's (ls ~/**/x, fd without -H), which skip hidden names.
type listing struct {
	glob   string
	hidden bool
}

// producedSecret applies the read rules to the names a field's
// substitutions may print and reports whether one is a secret.
func (r *run) producedSecret(f field, cx *callCtx) bool {
	for _, g := range f.globs() {
		if r.readSecret(field{s: g.glob, glob: true}, cx) {
			return true
		}
		if v, ok := r.listedTree(g); ok {
			r.add(cx, high, v.id, "reads "+v.reason+" ("+clip(g.glob, 60)+")")
			return true
		}
	}
	return false
}

// listedTree judges a listing whose "**" spans hidden directories as
// the file tools' globs are (Classifier.Path): as the tree below its
// literal directory, for the names its last segment takes. It reports a
// high read rule that such a name may match.
func (r *run) listedTree(g listing) (pathVerdict, bool) {
	if !g.hidden {
		return pathVerdict{}, false
	}
	rp := r.c.res.resolve(r.cwd, g.glob)
	if !hasStarStar(rp) {
		return pathVerdict{}, false
	}
	root, name := globRoot(rp), rp[strings.LastIndexByte(rp, '/')+1:]
	var v pathVerdict
	if _, unk := unknownRest(foldCase(root)); unk || name == "**" {
		v = r.cr.matchTreeNamed(root, false, name)
	} else {
		// find's -o lists one glob per name below the same start: the
		// rules below it are found once (treeMemo), each name only
		// filters them.
		if !r.treeMemo.ok || r.treeMemo.root != root {
			r.treeMemo.hits = r.cr.treeHits(r.treeMemo.hits[:0], root, false, false)
			r.treeMemo.root, r.treeMemo.ok = root, true
		}
		v = r.cr.pickTree(r.treeMemo.hits, foldCase(name))
	}
	return v, v.level == high && !v.dir
}

// listingLevel is the read level of the names a listing may print
// (what producedSecret would report), without adding findings.
func (r *run) listingLevel(g listing) gate.RiskLevel {
	if v, ok := r.listedTree(g); ok {
		return v.level
	}
	if v := r.matchPath(r.c.res.resolve(r.cwd, g.glob), false); v.level == high && !v.dir {
		return high
	}
	return safe
}

// produce records the globs the current command prints as file names.
func (r *run) produce(globs ...listing) {
	for _, g := range globs {
		if g.glob != "" {
			r.pathsOut = append(r.pathsOut, g)
		}
	}
}

// treeGlob is the glob over what a recursive listing below start
// prints, for names matching leaf ("" for any name).
func treeGlob(start field, leaf string) string {
	if start.dyn {
		return ""
	}
	s := strings.TrimSuffix(start.s, "/")
	if s == "" {
		s = "/"
	}
	if leaf == "" || strings.Contains(leaf, "/") {
		leaf = "**"
	} else {
		leaf = "**/" + leaf
	}
	return path.Join(s, leaf)
}

// fdValueFlags are fd's options that take a value.
var fdValueFlags = []string{"-e", "--extension", "-t", "--type", "-E", "--exclude", "-d", "--max-depth", "--min-depth", "--exact-depth",
	"-S", "--size", "--changed-within", "--changed-before", "-o", "--owner", "-j", "--threads", "--base-directory", "--search-path",
	"-c", "--color", "--max-results", "--ignore-file", "--path-separator", "--format", "--batch-size"}

// anFd: fd [options] [pattern] [path…]; -x/--exec and -X/--exec-batch
// take the rest of the line (up to ";") as a command run for the matches,
// classified like find -exec with {} standing for a match below each
// search path. Without them fd prints names (see produce).
func (r *run) anFd(a *actx) traits {
	args := a.args[1:]
	var ops []field
	var execs [][]field
	for i := 0; i < len(args); i++ {
		f := args[i]
		s := f.s
		switch {
		case f.dyn:
			ops = append(ops, f)
		case s == "-x" || s == "--exec" || s == "-X" || s == "--exec-batch":
			k := i + 1
			for k < len(args) && args[k].s != ";" {
				k++
			}
			execs = append(execs, args[i+1:k])
			i = k
		case s == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(s, "--search-path="):
			f.s = strings.TrimPrefix(s, "--search-path=")
			ops = append(ops, field{s: "."}, f)
		case s == "--search-path" && i+1 < len(args):
			ops = append(ops, field{s: "."}, args[i+1])
			i++
		case strings.HasPrefix(s, "-") && len(s) > 1:
			i = skipFlag(args, i, fdValueFlags) - 1
		default:
			ops = append(ops, f)
		}
	}
	leaf := ""
	var starts []field
	if len(ops) > 0 {
		if p := ops[0]; !p.dyn && p.s != "." && p.s != "" && p.s != "^" && !strings.ContainsAny(p.s, "\\^$()[]|+") {
			leaf = "*" + strings.TrimSuffix(strings.TrimPrefix(p.s, "."), "*") + "*"
			if strings.HasPrefix(p.s, ".") {
				leaf = "." + leaf
			}
		}
		starts = ops[1:]
	}
	if len(starts) == 0 {
		starts = []field{{s: "."}}
	}
	if hasFlag(args, "-H", "--hidden", "-u", "--unrestricted") && leaf == "" {
		leaf = "*"
	}
	var t traits
	hidden := hasFlag(args, "-H", "--hidden", "-u", "--unrestricted")
	for _, s := range starts {
		r.produce(listing{glob: treeGlob(s, leaf), hidden: hidden})
	}
	one := leaf
	if one == "" {
		one = "*"
	}
	for _, ex := range execs {
		if len(ex) == 0 {
			continue
		}
		sub := make([]field, 0, len(ex)+1)
		placeholder := false
		for _, f := range ex {
			for _, ph := range []string{"{}", "{/}", "{//}", "{.}", "{/.}"} {
				if strings.Contains(f.s, ph) && !f.dyn {
					f.s = strings.ReplaceAll(f.s, ph, strings.TrimSuffix(starts[0].s, "/")+"/"+one)
					f.glob = true
					placeholder = true
				}
			}
			sub = append(sub, f)
		}
		if !placeholder {
			sub = append(sub, field{s: strings.TrimSuffix(starts[0].s, "/") + "/" + one, glob: true, dyn: starts[0].dyn})
		}
		if isDeleter(sub[0].s) {
			for _, s := range starts {
				r.findDelete(s, a)
			}
		}
		t |= r.argv(sub, a.cx)
	}
	return t
}

// pathKey is a memoised path-rule question.
type pathKey struct {
	p     string
	write bool
}

// matchPath is compiled.matchPath memoised for one classification: a
// command often asks about the same (glob) path several times (as a
// file, an argument, a produced name).
func (r *run) matchPath(p string, write bool) pathVerdict {
	if strings.Contains(p, "(") {
		// Extended glob groups: the worst of their alternatives
		// (globAlternatives), and of the "*" form matchOne gives.
		if alts, _ := globAlternatives(p); alts != nil {
			v := r.matchPathOne(p, write)
			for _, a := range alts {
				if va := r.matchPathOne(a, write); va.level.Rank() > v.level.Rank() {
					v = va
				}
			}
			return v
		}
	}
	return r.matchPathOne(p, write)
}

func (r *run) matchPathOne(p string, write bool) pathVerdict {
	if !hasGlob(p) {
		// Literal paths are cheap to match (see pathIndex).
		return r.cr.matchPath(p, write)
	}
	k := pathKey{p, write}
	m := r.pathMemo
	if m == nil {
		m = &pathMemo{}
		r.pathMemo = m
	}
	for i := range m.n {
		if m.keys[i] == k {
			return m.vals[i]
		}
	}
	v := r.cr.matchPath(p, write)
	m.keys[m.next], m.vals[m.next] = k, v
	m.next = (m.next + 1) % len(m.keys)
	m.n = min(m.n+1, len(m.keys))
	return v
}

// pathMemo remembers the last answers of the path rules (a small ring:
// repeats are close together, and a map costs more than it saves).
type pathMemo struct {
	keys    [8]pathKey
	vals    [8]pathVerdict
	next, n int
}

// anyGlob reports whether a field is an unquoted glob.
func anyGlob(fs []field) bool {
	for _, f := range fs {
		if f.glob {
			return true
		}
	}
	return false
}
