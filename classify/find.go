package classify

// find's expression: which files each action runs for.

import (
	"path"
	"strings"
)

// findTest is one of find's tests on a file's name or path: -name and
// -iname (a glob over the last segment), -path, -wholename, -ipath and
// -iwholename (a glob over the whole path whose "*" and "?" also match
// "/"), -regex and -iregex (a regular expression over the whole path).
type findTest struct {
	op, pat string
}

// findConj is a conjunction of tests; none: any file.
type findConj []findTest

// findCond over-approximates the files for which part of an expression
// is true, or an action runs: a union of conjunctions.
type findCond []findConj

// maxFindConj bounds a condition (a product of unions grows fast);
// past it the condition is any file.
const maxFindConj = 16

// anyFile is the condition that takes every file.
func anyFile() findCond { return findCond{nil} }

func (c findCond) and(d findCond) findCond {
	if len(c)*len(d) > maxFindConj {
		return anyFile()
	}
	out := make(findCond, 0, len(c)*len(d))
	for _, x := range c {
		for _, y := range d {
			out = append(out, append(x[:len(x):len(x)], y...))
		}
	}
	return out
}

func (c findCond) or(d findCond) findCond {
	if len(c)+len(d) > maxFindConj {
		return anyFile()
	}
	return append(c[:len(c):len(c)], d...)
}

// findAction is an action of the expression (-exec, -execdir, -ok,
// -okdir: the command words between it and ";" or "+") with the
// condition under which it runs.
type findAction struct {
	op   string
	argv []field
	cond findCond
}

// findExpr is a parsed find expression: its actions, the condition of
// the implicit -print (for an expression without actions), and
// -maxdepth 0 (the start points themselves are the only files).
type findExpr struct {
	actions []findAction
	print   findCond
	depth0  bool
}

// findArgs is how many arguments find's primaries take (those not
// listed take none).
func findArgs(p string) int {
	switch p {
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname",
		"-type", "-xtype", "-user", "-group", "-uid", "-gid", "-perm", "-size", "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin",
		"-newer", "-anewer", "-cnewer", "-inum", "-links", "-samefile", "-maxdepth", "-mindepth", "-regextype", "-fstype", "-used",
		"-printf", "-fprint", "-fprint0", "-fls", "-context", "-files0-from":
		return 1
	case "-fprintf":
		return 2
	}
	if strings.HasPrefix(p, "-newer") {
		return 1 // -newerXY REF
	}
	return 0
}

// parseFind parses find's expression (the arguments after the start
// points) with find's precedence: "!" / -not, then juxtaposition / -a /
// -and, then -o / -or, then ",". An action's condition is what the
// tests before it in its conjunction require (of an enclosing group
// too); a negated test or one after -o narrows nothing.
func parseFind(expr []field) findExpr {
	p := findParser{expr: expr, whole: anyFile()} // no expression: -print of every file
	for p.i < len(p.expr) {
		p.comma(anyFile())
		if p.i < len(p.expr) {
			p.i++ // an unmatched ")"
		}
	}
	if !p.acted {
		p.fx.print = p.fx.print.or(p.whole)
	}
	return p.fx
}

type findParser struct {
	expr  []field
	i     int
	fx    findExpr
	acted bool     // an action other than the tests (-exec, -print, -delete, …)
	whole findCond // the condition of the whole expression
}

func (p *findParser) peek() string {
	if p.i < len(p.expr) {
		return p.expr[p.i].s
	}
	return ""
}

// comma, or, and and unary parse one precedence level each; ctx is what
// holds when the part runs; they return when the part is true.
func (p *findParser) comma(ctx findCond) findCond {
	c := p.or(ctx)
	for p.peek() == "," {
		p.i++
		c = p.or(ctx)
	}
	p.whole = c
	return c
}

func (p *findParser) or(ctx findCond) findCond {
	c := p.and(ctx)
	for s := p.peek(); s == "-o" || s == "-or"; s = p.peek() {
		p.i++
		c = c.or(p.and(ctx))
	}
	return c
}

func (p *findParser) and(ctx findCond) findCond {
	c := p.unary(ctx)
	for {
		s := p.peek()
		switch s {
		case "", ")", "\\)", "-o", "-or", ",":
			return c
		case "-a", "-and":
			p.i++
		}
		c = c.and(p.unary(ctx.and(c)))
	}
}

func (p *findParser) unary(ctx findCond) findCond {
	if p.i >= len(p.expr) {
		return anyFile()
	}
	f := p.expr[p.i]
	p.i++
	switch s := f.s; {
	case f.dyn:
		return anyFile()
	case s == "!" || s == "-not":
		p.unary(ctx)
		return anyFile()
	case s == "(" || s == "\\(":
		c := p.comma(ctx)
		if s := p.peek(); s == ")" || s == "\\)" {
			p.i++
		}
		return c
	case s == "-exec" || s == "-execdir" || s == "-ok" || s == "-okdir":
		k := p.i
		for k < len(p.expr) && p.expr[k].s != ";" && p.expr[k].s != "+" {
			k++
		}
		p.fx.actions = append(p.fx.actions, findAction{op: s, argv: p.expr[p.i:k], cond: ctx})
		p.acted = true
		p.i = min(k+1, len(p.expr))
		return anyFile()
	case s == "-name" || s == "-iname" || s == "-path" || s == "-ipath" || s == "-wholename" || s == "-iwholename" || s == "-regex" || s == "-iregex":
		if p.i >= len(p.expr) || p.expr[p.i].dyn {
			p.i++
			return anyFile()
		}
		p.i++
		return findCond{{{op: s, pat: p.expr[p.i-1].s}}}
	case s == "-maxdepth":
		if p.i < len(p.expr) && p.expr[p.i].s == "0" {
			p.fx.depth0 = true
		}
	case s == "-print" || s == "-print0" || s == "-printf" || s == "-ls":
		// Names printed to stdout, for a later stage to read.
		p.fx.print = p.fx.print.or(ctx)
		p.acted = true
	case s == "-delete" || s == "-fprint" || s == "-fprint0" || s == "-fprintf" || s == "-fls" || s == "-quit":
		p.acted = true
	}
	p.i += findArgs(f.s)
	return anyFile()
}

// findGlob is a glob (its "**" spanning hidden directories) over the
// files below start that a conjunction of tests takes: start/**/NAME for
// a name test; for a path or regex test, the tree below its literal
// directory (when inside start) for the names its last segment takes.
// A pattern it cannot read takes any file.
func (r *run) findGlob(start field, t findTest) string {
	switch t.op {
	case "-name", "-iname":
		return treeGlob(start, t.pat)
	case "-regex", "-iregex":
		g, ok := regexGlob(t.pat)
		if !ok {
			return treeGlob(start, "")
		}
		t.pat = g
	}
	return r.pathTestGlob(start, t.pat)
}

// pathTestGlob is findGlob for a -path pattern pat: "*" and "?" match
// "/" too, so the name is what follows the pattern's last wildcard
// ("*/.aws/credentials": credentials, "*/keys/*.pem": *.pem, "*/.aws/*":
// any name), below the pattern's literal leading directories when they
// lie inside start ("/home/dev/.aws/*" below "~": ~/.aws).
func (r *run) pathTestGlob(start field, pat string) string {
	name := pat[strings.LastIndexByte(pat, '/')+1:]
	if hasGlob(name) {
		if sfx := litSuffix(name); sfx != "" && !strings.ContainsAny(sfx, "]\\") {
			name = "*" + sfx
		} else {
			name = ""
		}
	}
	root := start
	if dir := globRoot(pat); !hasGlob(pat[:1]) && dir != pat && !start.dyn {
		// The pattern's literal directory, when it is start or below it.
		d := r.c.res.resolve(r.cwd, dir)
		s := r.c.res.resolve(r.cwd, start.s)
		if d == s || strings.HasPrefix(d, strings.TrimSuffix(s, "/")+"/") {
			root = field{s: d}
		}
	}
	return treeGlob(root, name)
}

// regexGlob turns a find -regex into a -path pattern matching at least
// the same paths, when it has no groups, alternatives or intervals:
// ".*" and "X*" are "*", "." is "?", "\." is ".".
func regexGlob(re string) (string, bool) {
	var b []byte
	re = strings.TrimSuffix(strings.TrimPrefix(re, "^"), "$")
	for i := 0; i < len(re); i++ {
		c := re[i]
		var tok []byte
		switch c {
		case '\\':
			if i+1 >= len(re) || strings.IndexByte("()|{}wWsSbB<>`'", re[i+1]) >= 0 {
				return "", false // a group, an alternative, a class
			}
			tok = []byte{re[i+1]}
			if strings.IndexByte(globMeta+"]\\", re[i+1]) >= 0 {
				tok = []byte{'?'}
			}
			i++
		case '.':
			tok = []byte{'?'}
		case '[':
			k := i + 1
			if k < len(re) && re[k] == '^' {
				k++
			}
			if k < len(re) && re[k] == ']' {
				k++
			}
			for k < len(re) && re[k] != ']' {
				k++
			}
			if k >= len(re) {
				return "", false
			}
			tok = []byte("?")
			i = k
		case '(', ')', '|', '{', '}':
			return "", false
		case '*', '+', '?':
			return "", false // a quantifier with nothing before it
		default:
			tok = []byte{c}
		}
		if i+1 < len(re) && (re[i+1] == '*' || re[i+1] == '+' || re[i+1] == '?') {
			tok = []byte{'*'}
			i++
		}
		if len(b) > 0 && b[len(b)-1] == '*' && tok[0] == '*' {
			continue
		}
		b = append(b, tok...)
	}
	return string(b), true
}

// findFiles returns the globs over the files a condition takes below
// each start: for each conjunction, the glob of its test whose names
// are least sensitive (the files meet every test).
func (r *run) findFiles(starts []field, cond findCond) []listing {
	var out []listing
	for _, s := range starts {
		if s.dyn {
			continue
		}
		for _, conj := range cond {
			g := treeGlob(s, "")
			if len(conj) > 0 {
				best := ""
				for _, t := range conj {
					tg := r.findGlob(s, t)
					if best == "" || r.listingLevel(listing{glob: tg, hidden: true}).Rank() < r.listingLevel(listing{glob: best, hidden: true}).Rank() {
						best = tg
					}
				}
				g = best
			}
			out = append(out, listing{glob: g, hidden: true})
		}
	}
	return out
}

// findCommand builds the command an -exec (-execdir, -ok, -okdir) action
// runs: "{}" — alone or inside a word ({}/.aws/credentials) — is a file
// the condition takes below a start (the start itself with -maxdepth 0),
// and for -execdir and -okdir, which run in the file's directory, other
// relative words are names in a directory below a start (or the one
// holding it).
func (r *run) findCommand(act findAction, starts []field, files []listing, depth0 bool) []field {
	sub := make([]field, 0, len(act.argv))
	leaf := "{}"
	for _, conj := range act.cond {
		for _, t := range conj {
			if (t.op == "-name" || t.op == "-iname") && !strings.Contains(t.pat, "/") && t.pat != "" {
				leaf = t.pat
			}
		}
	}
	inDir := act.op == "-execdir" || act.op == "-okdir"
	for k, f := range act.argv {
		switch {
		case strings.Contains(f.s, "{}"):
			word := f.s
			if depth0 {
				f.s = strings.ReplaceAll(word, "{}", strings.TrimSuffix(starts[0].s, "/"))
			} else {
				f.s = strings.ReplaceAll(word, "{}", strings.TrimSuffix(starts[0].s, "/")+"/"+leaf)
			}
			f.dyn = f.dyn || starts[0].dyn
			if !isDeleter(act.argv[0].s) {
				for _, s := range starts[1:] {
					if depth0 && !s.dyn {
						f.addGlobs(listing{glob: strings.ReplaceAll(word, "{}", strings.TrimSuffix(s.s, "/"))})
					}
				}
				if !depth0 {
					for _, g := range files {
						f.addGlobs(listing{glob: strings.ReplaceAll(word, "{}", g.glob), hidden: true})
					}
				}
			}
		case inDir && k > 0 && !f.dyn && f.s != "" && !strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "/") && !strings.HasPrefix(f.s, "~"):
			for _, s := range starts {
				if s.dyn {
					continue
				}
				f.addGlobs(listing{glob: path.Join(path.Dir(strings.TrimSuffix(s.s, "/")), f.s)})
				if !depth0 {
					f.addGlobs(listing{glob: path.Join(strings.TrimSuffix(s.s, "/"), "**", f.s), hidden: true})
				}
			}
		}
		sub = append(sub, f)
	}
	return sub
}
