package classify

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolgate/toolgate/gate"
)

// traits describe what a command does with its standard streams, for the
// composite rules over pipelines.
type traits uint16

const (
	tFetch        traits = 1 << iota // writes fetched network data to stdout
	tDecode                          // writes decoded (base64, hex) data to stdout
	tEnvDump                         // writes the environment to stdout
	tSecret                          // writes secret file content to stdout
	tShell                           // runs what it reads on stdin as code
	tNetwork                         // sends what it reads on stdin to the network
	tFilter                          // filters its input (grep); see tSecretFilter
	tSecretFilter                    // filters for tokens, keys or passwords
)

var traitBits = map[string]traits{"fetch": tFetch, "decode": tDecode, "envdump": tEnvDump, "shell": tShell, "network": tNetwork, "filter": tFilter}

// scope is the script being walked: the top-level command or a nested
// script (sh -c, eval, a here-document fed to a shell).
type scope struct {
	src   string
	outer *Finding // position to report for nested scripts
}

// run is the state of one classification.
type run struct {
	c        *Classifier
	cr       *compiled
	sc       scope
	findings []Finding
	commands int
	depth    int
	limitHit bool
	vars     map[string]string
	ifs      string
	cwd      string
	cwdKnown bool
	fetched  map[string]bool   // files written by a download earlier in the command
	written  map[string]string // files written earlier in the command with content known statically
	gitEnv   map[string]string // GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n set by the current statement
	funcs    map[string]bool
	arithNum map[string]bool   // variables holding numbers (assigned by arithmetic, static loops)
	assoc    map[string]bool   // associative arrays (declare -A): subscripts are strings
	intVars  map[string]bool   // declare -i: assignments are evaluated as arithmetic
	rebind   map[string]string // hash -p PATH NAME
	aliases  map[string]string // alias NAME=VALUE
	traps    []trapCode        // trap handlers set so far (see anTrap)
	inTraps  bool              // rejudgeTraps is running
	// history: every value a variable was assigned in the command
	// (rememberValue), for the uses a value may still reach (a branch
	// not taken, a subshell, a function not called: see historyUses).
	history    map[string][]string
	funcBodies map[string]*syntax.Stmt // function bodies, walked again where called
	inFunc     map[string]bool         // function bodies being walked at a call
	loopWalks  int                     // loop bodies walked once per item (see loopItems)
	// treeMemo: the rules below the last start listedTree looked at.
	treeMemo struct {
		root string
		ok   bool
		hits []treeHit
	}
	namerefs map[string]bool // declare -n NAME: NAME's value is the name of the variable it stands for
	substs   map[syntax.Node]traits
	// substPaths: globs over the file names a substitution prints.
	substPaths map[syntax.Node][]listing
	inGlob     bool
	// pathsOut are globs over the file names the current stage prints
	// (find, fd, ls, locate); pathsIn are those of the stage feeding
	// the current one through a pipe.
	pathsOut, pathsIn []listing
	pathMemo          *pathMemo // globs only, allocated on first use
	frames            *frames   // analyzer and call contexts (see pushActx), kept across runs
	nActx, nCx        int
	// Static text flowing through a pipe: what an echo or printf stage
	// writes (pipeOut) and what the current stage reads (pipeIn).
	pipeIn, pipeOut       string
	hasPipeIn, hasPipeOut bool
	// srcOut is what an echo or printf stage with run-time parts writes,
	// those parts kept in source form ($HOME): the text a file written
	// from it holds when run as a script (exec.written-script).
	srcOut    string
	hasSrcOut bool
	// parser and rd are reused by every parse of the run (and of later
	// runs: see Classifier.runs); a Parser can parse again once done.
	parser *syntax.Parser
	rd     strings.Reader
}

// lineFilter reports whether a pipeline stage passes lines of its input
// through (some of them, reordered, or reshaped): sort, uniq, head,
// tail, grep, tac, shuf, tee, cut, awk, sed, tr, cat with no operand.
func lineFilter(s *syntax.Stmt) bool {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return false
	}
	name, _ := staticText(call.Args[0])
	switch name {
	case "sort", "uniq", "head", "tail", "grep", "egrep", "fgrep", "rg", "tac", "shuf", "tee",
		"cut", "awk", "gawk", "mawk", "sed", "tr", "nl", "column", "paste", "fmt", "rev", "fold", "expand", "unexpand":
		// (cut, awk, sed and tr reshape lines: what they pass on is
		// judged as the names that came in.)
		return true
	case "cat":
		return len(call.Args) == 1
	}
	return false
}

// maxKnownValue bounds the bytes of a variable's value the walk tracks
// (a longer value is one known only at run time).
const maxKnownValue = 16 << 10

// maxLoopWalks bounds the loop bodies a run walks once per item: a few
// short static lists (for f in ~/.ssh/id_rsa ~/.aws/credentials), never
// a product of nested loops.
const maxLoopWalks = 16

// loopItems walks a for loop's body once per item of a short static
// list, the loop variable bound to the item, as the shell runs it (so
// for f in ~/.aws/credentials; do cat "$f"; done reads what it names);
// it reports false, walking nothing, when an item is known only at run
// time or the run's budget (maxLoopWalks) is spent.
func (r *run) loopItems(name string, items []field, body []*syntax.Stmt, t *traits) bool {
	if len(items) == 0 || r.loopWalks+len(items) > maxLoopWalks {
		return false
	}
	for _, f := range items {
		if f.dyn || f.glob {
			return false
		}
	}
	r.loopWalks += len(items)
	if r.vars == nil {
		r.vars = map[string]string{}
	}
	for _, f := range items {
		r.vars[name] = f.s
		delete(r.arithNum, name)
		*t |= r.stmts(body)
	}
	return true
}

// parse parses src as bash with the run's parser.
func (r *run) parse(src string) (*syntax.File, error) {
	if r.parser == nil {
		r.parser = syntax.NewParser(syntax.Variant(syntax.LangBash))
	}
	r.rd.Reset(src)
	return r.parser.Parse(&r.rd, "")
}

// newRun returns a cleared run for c, reusing a parser and an emptied
// path memo from c.runs.
func (c *Classifier) newRun(command string) *run {
	r, _ := c.runs.Get().(*run)
	if r == nil {
		r = &run{}
	}
	m := r.pathMemo
	if m != nil {
		m.n, m.next = 0, 0 // reused, empty (entries past n are never read)
	}
	*r = run{c: c, cr: c.rules, ifs: " \t\n", sc: scope{src: command}, parser: r.parser, pathMemo: m, findings: r.findings[:0], frames: r.frames, traps: r.traps[:0]}
	return r
}

// verdict summarizes the run's findings into a Risk that owns them: the
// run's list is a buffer kept across runs (appending finding by finding
// to a new list was a reallocation per finding), so the Risk gets a copy
// of exactly its length.
func (r *run) verdict(safeReason string) Risk {
	var fs []Finding
	if len(r.findings) > 0 {
		fs = make([]Finding, len(r.findings))
		copy(fs, r.findings)
	}
	return summarize(fs, safeReason)
}

// putRun returns r to c.runs. It is cleared when next taken (newRun),
// not here: clearing twice costs more than the memory a pooled run
// holds on to until then (sync.Pool lets go of it over two collections).
func (c *Classifier) putRun(r *run) { c.runs.Put(r) }

// Bash classifies a shell command with the default rules and opts. It
// never fails: parse errors, inputs over the limits and configuration
// errors are review or high, never safe.
func Bash(command string, opts ...Option) Risk {
	c, err := New(opts...)
	if err != nil {
		return configErrorRisk(err)
	}
	return c.Bash(command)
}

// Bash classifies a shell command (bash syntax). See the package
// documentation for what is walked and docs/classifier.md for the rules.
func (c *Classifier) Bash(command string) (risk Risk) {
	r := c.newRun(command)
	if c.cfg.workspace != "" {
		r.cwd, r.cwdKnown = c.cfg.workspace, true
	}
	defer func() {
		if v := recover(); v != nil {
			// The run (and its parser) may be half-way through anything:
			// it is not reused (so its findings can be the Risk's).
			risk = summarize(append(r.findings, Finding{Level: review, Rule: "classify.internal-error",
				Reason: clip(fmt.Sprint("internal error: ", v), 120), Command: clip(command, 120), Line: 1, Col: 1}), "")
			return
		}
		c.putRun(r)
	}()
	if strings.TrimSpace(command) == "" {
		return summarize(nil, "empty command")
	}
	if len(command) > c.cfg.maxBytes {
		r.findings = append(r.findings, Finding{Level: review, Rule: "limit.size", Reason: fmt.Sprintf("command over %d bytes", c.cfg.maxBytes), Command: clip(command, 120), Line: 1, Col: 1})
		return r.verdict("")
	}
	if !utf8.ValidString(command) {
		r.findings = append(r.findings, Finding{Level: review, Rule: "obfuscation.invalid-utf8", Reason: "command is not valid UTF-8", Command: clip(command, 120), Line: 1, Col: 1})
	}
	r.hiddenChars(command)
	r.script(command, nil)
	return r.verdict("read-only")
}

// hiddenChars flags characters that make a command display differently
// from what runs: bidi overrides, zero-width characters and a bare CR.
func (r *run) hiddenChars(s string) {
	// Every character flagged below is a CR or starts with the byte 0xE2
	// (U+2000–U+2FFF) or 0xEF (U+F000–U+FFFF): without those bytes
	// (three vectorized searches) nothing can hide.
	if strings.IndexByte(s, '\r') < 0 && strings.IndexByte(s, 0xE2) < 0 && strings.IndexByte(s, 0xEF) < 0 {
		return
	}
	// Plain ASCII other than CR cannot hide anything: skip it bytewise.
	i0 := 0
	for i0 < len(s) && s[i0] < utf8.RuneSelf && s[i0] != '\r' {
		i0++
	}
	if i0 == len(s) {
		return
	}
	for i, c := range s[i0:] {
		i += i0
		bad := ""
		switch {
		case c >= 0x202A && c <= 0x202E, c >= 0x2066 && c <= 0x2069:
			bad = "bidirectional override character"
		case c == 0x200B || c == 0x200C || c == 0x200D || c == 0x2060 || c == 0xFEFF:
			bad = "zero-width character"
		case c == '\r' && (i+1 >= len(s) || s[i+1] != '\n'):
			bad = "carriage return that hides text when displayed"
		}
		if bad != "" {
			r.findings = append(r.findings, Finding{Level: review, Rule: "obfuscation.hidden-char", Reason: bad, Command: clip(s, 120), Offset: i, Line: 1, Col: 1})
			return
		}
	}
}

// script parses and walks src; outer is the position to report for a
// nested script (nil at top level).
func (r *run) script(src string, outer *Finding) {
	if r.depth >= r.c.cfg.maxDepth {
		r.limit(outer, "limit.depth", fmt.Sprintf("nesting deeper than %d levels", r.c.cfg.maxDepth))
		return
	}
	r.depth++
	saved := r.sc
	r.sc = scope{src: src, outer: outer}
	defer func() { r.sc = saved; r.depth-- }()
	f, err := r.parse(src)
	if err != nil && strings.Contains(src, "$((") {
		// Bash reads "$((cmd) | x)" as a command substitution when it is
		// not valid arithmetic; so do we.
		if f2, err2 := r.parse(strings.ReplaceAll(src, "$((", "$( (")); err2 == nil {
			f, err = f2, nil
			src = strings.ReplaceAll(src, "$((", "$( (")
			r.sc.src = src
		}
	}
	if err != nil {
		fnd := Finding{Level: review, Rule: "parse.error", Reason: "not valid bash: " + clip(err.Error(), 80), Command: clip(src, 120), Line: 1, Col: 1}
		var pe syntax.ParseError
		if perr, ok := err.(syntax.ParseError); ok {
			pe = perr
			fnd.Offset, fnd.Line, fnd.Col = int(pe.Pos.Offset()), int(pe.Pos.Line()), int(pe.Pos.Col())
		}
		r.addFinding(fnd)
	}
	if f != nil {
		from := len(r.findings)
		r.stmts(f.Stmts)
		if r.depth == 1 {
			r.rejudgeTraps() // EXIT handlers run at the end, with the end's state
		}
		r.namedSecrets(f, from)
	}
}

// document walks the substitutions of src as if in double quotes (prompt
// expansion, unquoted here-documents fed to nothing).
func (r *run) document(src string, pos syntax.Pos) {
	if r.depth >= r.c.cfg.maxDepth {
		return
	}
	w, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(src))
	if err != nil || w == nil {
		return
	}
	outer := r.findingAt(review, "", "", pos, pos)
	r.depth++
	saved := r.sc
	r.sc = scope{src: src, outer: &outer}
	r.scan(w)
	r.sc = saved
	r.depth--
}

func (r *run) limit(outer *Finding, rule, reason string) {
	if r.limitHit {
		return
	}
	r.limitHit = true
	f := Finding{Level: review, Rule: rule, Reason: reason, Command: clip(r.sc.src, 120), Line: 1, Col: 1}
	if outer != nil {
		f.Offset, f.Line, f.Col = outer.Offset, outer.Line, outer.Col
	}
	r.addFinding(f)
}

// tick counts a command against the limit.
func (r *run) tick() bool {
	r.commands++
	if r.commands > r.c.cfg.maxCommands {
		r.limit(r.sc.outer, "limit.commands", fmt.Sprintf("more than %d commands", r.c.cfg.maxCommands))
		return false
	}
	return true
}

func (r *run) findingAt(l gate.RiskLevel, rule, reason string, pos, end syntax.Pos) Finding {
	f := Finding{Level: l, Rule: rule, Reason: reason}
	if o := r.sc.outer; o != nil {
		f.Offset, f.Line, f.Col = o.Offset, o.Line, o.Col
	} else if pos.IsValid() {
		f.Offset, f.Line, f.Col = int(pos.Offset()), int(pos.Line()), int(pos.Col())
	} else {
		f.Line, f.Col = 1, 1
	}
	src := r.sc.src
	if pos.IsValid() && end.IsValid() {
		a, b := int(pos.Offset()), int(end.Offset())
		if a >= 0 && b <= len(src) && a < b {
			f.Command = clip(src[a:b], 120)
		}
	}
	if f.Command == "" {
		f.Command = clip(src, 120)
	}
	return f
}

func (r *run) addAt(l gate.RiskLevel, rule, reason string, pos, end syntax.Pos) {
	if l.Rank() <= safe.Rank() {
		return
	}
	r.addFinding(r.findingAt(l, rule, reason, pos, end))
}

func (r *run) addFinding(f Finding) {
	for i := range r.findings {
		fi := &r.findings[i]
		if fi.Rule == f.Rule && fi.Offset == f.Offset && fi.Command == f.Command {
			if f.Level.Rank() > fi.Level.Rank() {
				fi.Level, fi.Reason = f.Level, f.Reason
			}
			return
		}
	}
	r.findings = append(r.findings, f)
}

// maxLevel returns the highest level among findings from index i on.
func (r *run) maxLevel(from int) gate.RiskLevel {
	l := safe
	for _, f := range r.findings[from:] {
		l = l.Max(f.Level)
	}
	return l
}

func (r *run) stmts(ss []*syntax.Stmt) traits {
	var t traits
	for _, s := range ss {
		t |= r.stmt(s)
	}
	return t
}

// subst classifies a command or process substitution once and caches its
// traits.
func (r *run) subst(n syntax.Node, ss []*syntax.Stmt) traits {
	if t, ok := r.substs[n]; ok {
		return t
	}
	if r.substs == nil {
		r.substs = map[syntax.Node]traits{}
	}
	r.substs[n] = 0
	if r.depth >= r.c.cfg.maxDepth {
		r.limit(r.sc.outer, "limit.depth", "substitutions nested too deeply")
		return 0
	}
	r.depth++
	cwd, known := r.cwd, r.cwdKnown
	r.pathsOut = nil
	t := r.stmts(ss)
	if r.pathsOut != nil {
		if r.substPaths == nil {
			r.substPaths = map[syntax.Node][]listing{}
		}
		r.substPaths[n] = r.pathsOut
		r.pathsOut = nil
	}
	r.cwd, r.cwdKnown = cwd, known
	r.depth--
	r.substs[n] = t
	return t
}

// scan classifies every substitution inside a node the walker does not
// interpret (arithmetic, tests, parameter operands).
func (r *run) scan(n syntax.Node) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(x syntax.Node) bool {
		switch x := x.(type) {
		case *syntax.CmdSubst:
			r.subst(x, x.Stmts)
			return false
		case *syntax.ProcSubst:
			r.subst(x, x.Stmts)
			return false
		}
		return true
	})
}

func (r *run) stmt(s *syntax.Stmt) traits {
	if s == nil {
		return 0
	}
	if !r.tick() {
		return 0
	}
	var t traits
	switch x := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		r.pipeOut, r.hasPipeOut = "", false
		r.pathsOut = nil
		r.srcOut, r.hasSrcOut = "", false
		t = r.call(x, s)
		if !r.hasPipeOut {
			r.pipeOut, r.hasPipeOut = r.catStdin(x, s)
		}
		if r.hasPipeOut {
			r.srcOut, r.hasSrcOut = r.pipeOut, true
		}
	case *syntax.BinaryCmd:
		t = r.binary(x)
	case *syntax.Subshell:
		cwd, known := r.cwd, r.cwdKnown
		t = r.stmts(x.Stmts)
		r.cwd, r.cwdKnown = cwd, known
	case *syntax.Block:
		t = r.stmts(x.Stmts)
	case *syntax.IfClause:
		for cl := x; cl != nil; cl = cl.Else {
			r.stmts(cl.Cond)
			t |= r.stmts(cl.Then)
		}
	case *syntax.WhileClause:
		r.stmts(x.Cond)
		t = r.stmts(x.Do)
	case *syntax.ForClause:
		if wi, ok := x.Loop.(*syntax.WordIter); ok {
			items := r.fieldsOf(wi.Items)
			if wi.Name != nil {
				r.forget(wi.Name.Value)
				if r.loopItems(wi.Name.Value, items, x.Do, &t) {
					r.forget(wi.Name.Value)
					break
				}
				for _, it := range items {
					if !it.dyn {
						r.rememberValue(wi.Name.Value, it.s)
					}
				}
				if r.staticItems(items, wi.Items) {
					r.setNum(wi.Name.Value)
				}
			}
		} else {
			r.scan(x.Loop)
			if cl, ok := x.Loop.(*syntax.CStyleLoop); ok {
				r.arith(cl.Init, cl.Pos(), cl.End())
				r.arith(cl.Cond, cl.Pos(), cl.End())
				r.arith(cl.Post, cl.Pos(), cl.End())
			}
		}
		t = r.stmts(x.Do)
	case *syntax.CaseClause:
		r.fieldsOf([]*syntax.Word{x.Word})
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				r.scan(p)
			}
			t |= r.stmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		r.funcDecl(x)
	case *syntax.DeclClause:
		r.decl(x, s)
	case *syntax.TimeClause:
		t = r.stmt(x.Stmt)
	case *syntax.CoprocClause:
		t = r.stmt(x.Stmt)
	case *syntax.ArithmCmd:
		r.scan(x)
		r.arith(x.X, x.Pos(), x.End())
	case *syntax.LetClause:
		r.scan(x)
		for _, e := range x.Exprs {
			if w, ok := e.(*syntax.Word); ok {
				for _, f := range r.fieldsOf([]*syntax.Word{w}) {
					if !f.dyn && r.subscriptCode(f.s, x.Pos(), x.End()) {
						r.addAt(review, "eval.subscript", "let evaluates an array subscript that runs a command", x.Pos(), x.End())
					}
				}
			}
			r.arith(e, x.Pos(), x.End())
		}
	case *syntax.TestClause:
		r.scan(x)
		r.testClause(x)
	default:
		r.scan(x)
	}
	r.redirects(s, t)
	return t
}

// binary walks && || | |&, applying the composite pipeline rules.
func (r *run) binary(b *syntax.BinaryCmd) traits {
	if b.Op != syntax.Pipe && b.Op != syntax.PipeAll {
		return r.stmt(b.X) | r.stmt(b.Y)
	}
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if bc, ok := s.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) && len(s.Redirs) == 0 {
			flatten(bc.X)
			flatten(bc.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(b.X)
	flatten(b.Y)
	var up traits // what flows into the current stage
	var all traits
	prevText, hasText := "", false
	var prevPaths []listing
	for i, s := range stages {
		r.pipeIn, r.hasPipeIn = prevText, hasText
		r.pathsIn = prevPaths
		r.pipeOut, r.hasPipeOut = "", false
		r.pathsOut = nil
		t := r.stmt(s)
		prevText, hasText = r.pipeOut, r.hasPipeOut && !stdoutRedirected(s)
		if len(r.pathsOut) == 0 && len(r.pathsIn) > 0 && lineFilter(s) {
			// find ~ -name config | sort | xargs cat: a filter passes
			// (some of) the names on.
			r.pathsOut = r.pathsIn
		}
		prevPaths = r.pathsOut
		if stdoutRedirected(s) {
			prevPaths = nil
		}
		r.pipeIn, r.hasPipeIn, r.pipeOut, r.hasPipeOut = "", false, "", false
		r.pathsIn, r.pathsOut = nil, nil
		if i > 0 {
			r.composite(up, t, s)
		}
		if stdoutRedirected(s) {
			up = 0
		} else if t&tFilter != 0 {
			up = up&(tFetch|tDecode|tEnvDump|tSecret) | t&^tFilter
		} else {
			up = t | up&(tFetch|tDecode|tEnvDump|tSecret)&traitsPassThrough(t)
		}
		all |= t
	}
	return up | all&(tShell|tNetwork)
}

// traitsPassThrough: data keeps its taint through a stage unless the stage
// is a sink.
func traitsPassThrough(t traits) traits {
	if t&(tShell|tNetwork) != 0 {
		return 0
	}
	return ^traits(0)
}

func stdoutRedirected(s *syntax.Stmt) bool {
	for _, rd := range s.Redirs {
		if (rd.Op == syntax.RdrOut || rd.Op == syntax.AppOut || rd.Op == syntax.RdrAll || rd.Op == syntax.AppAll || rd.Op == syntax.RdrClob) && (rd.N == nil || rd.N.Value == "1") {
			return true
		}
	}
	return false
}

// composite applies the rules over data flowing from earlier stages (in)
// into a stage with traits t.
func (r *run) composite(in, t traits, s *syntax.Stmt) {
	switch {
	case in&tFetch != 0 && t&tShell != 0:
		r.addAt(high, "pipe.fetch-to-shell", "downloaded data piped into a shell or interpreter", s.Pos(), s.End())
	case in&tDecode != 0 && t&tShell != 0:
		r.addAt(high, "pipe.decode-to-shell", "decoded data piped into a shell or interpreter", s.Pos(), s.End())
	case in&(tEnvDump|tSecret) != 0 && t&tNetwork != 0:
		r.addAt(high, "pipe.exfiltration", "environment or secrets piped to the network", s.Pos(), s.End())
	case in&tEnvDump != 0 && t&tSecretFilter != 0:
		r.addAt(high, "pipe.env-secrets", "extracts tokens or passwords from the environment", s.Pos(), s.End())
	case in&tShell != 0 && t&tNetwork != 0 && t&tFetch != 0:
		r.addAt(high, "net.reverse-shell", "a shell's output piped to a network connection (reverse shell)", s.Pos(), s.End())
	case in&(tEnvDump|tSecret) != 0 && t&tShell != 0:
		r.addAt(high, "pipe.secret-to-interpreter", "environment or secrets piped into a program", s.Pos(), s.End())
	}
}

// funcDecl records a function and classifies its body; a body that calls
// itself in a pipeline or in the background is a fork bomb.
func (r *run) funcDecl(fd *syntax.FuncDecl) {
	name := ""
	if fd.Name != nil {
		name = fd.Name.Value
	}
	if r.funcs == nil {
		r.funcs = map[string]bool{}
	}
	r.funcs[name] = true
	if r.shadowedName(name) {
		why := "defines a function that replaces the command " + clip(name, 30)
		if name == "command_not_found_handle" {
			why = "defines command_not_found_handle, which runs for every unknown command"
		}
		r.addAt(review, "rebind.function", why, fd.Pos(), fd.End())
	}
	if fd.Body == nil {
		return
	}
	self, fork := false, false
	syntax.Walk(fd.Body, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			if len(x.Args) > 0 && x.Args[0].Lit() == name {
				self = true
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				fork = true
			}
		case *syntax.Stmt:
			if x.Background {
				fork = true
			}
		}
		return true
	})
	if self && fork {
		r.addAt(high, "fork-bomb", "function spawns copies of itself without bound", fd.Pos(), fd.End())
	}
	if r.funcBodies == nil {
		r.funcBodies = map[string]*syntax.Stmt{}
	}
	r.funcBodies[name] = fd.Body
	// Judged where defined; the variables it sets are set where it is
	// called (callFunc), not here.
	saved := maps.Clone(r.vars)
	r.depth++
	r.stmt(fd.Body)
	r.depth--
	r.vars = saved
}

// callFunc walks a function's body again where it is called, in the
// working directory and with the variables of the call (f() { cat
// config; }; cd ~/.kube; f), within the run's loop budget and not into
// itself.
func (r *run) callFunc(name string) {
	body := r.funcBodies[name]
	if body == nil || r.inFunc[name] || r.loopWalks >= maxLoopWalks {
		return
	}
	r.loopWalks++
	if r.inFunc == nil {
		r.inFunc = map[string]bool{}
	}
	r.inFunc[name] = true
	defer delete(r.inFunc, name)
	r.depth++
	r.stmt(body)
	r.depth--
}

// decl handles export, declare, local, readonly and typeset.
func (r *run) decl(d *syntax.DeclClause, s *syntax.Stmt) {
	r.gitEnv = nil
	defer func() {
		if r.gitEnv != nil {
			r.gitEnvPairs(&callCtx{stmt: s, pos: s.Pos(), end: s.End()}, r.gitEnv)
			r.gitEnv = nil
		}
	}()
	nameref, intAttr := r.declArgs(d)
	named := false
	for _, a := range d.Args {
		if a.Name != nil {
			named = true
		} else if a.Value != nil && !strings.HasPrefix(a.Value.Lit(), "-") && !strings.HasPrefix(a.Value.Lit(), "+") {
			named = true // a name without "=", or a word known only at run time
		}
	}
	if !named {
		// declare, typeset, export, local, readonly with no names (or only
		// -p, -x, …) print the variables, with the tokens exported to the
		// agent: as env and set do.
		r.add(&callCtx{stmt: s, pos: s.Pos(), end: s.End()}, review, "env.dump", d.Variant.Value+" dumps shell variables, which may hold tokens")
	}
	for _, a := range d.Args {
		if a.Name == nil {
			if a.Value != nil {
				for _, f := range r.fieldsOf([]*syntax.Word{a.Value}) {
					r.declWord(d, f, s)
				}
			}
			continue
		}
		r.assign(a, s, true)
		if nameref {
			if r.namerefs == nil {
				r.namerefs = map[string]bool{}
			}
			r.namerefs[a.Name.Value] = true
		}
		if (nameref || intAttr) && a.Value != nil {
			cx := &callCtx{stmt: s, pos: s.Pos(), end: s.End()}
			if _, known := r.vars[a.Name.Value]; !known {
				if nameref {
					r.add(cx, review, "eval.dynamic-name", "a nameref to a variable name computed at run time (an array subscript in it runs code)")
				} else {
					r.add(cx, review, "eval.arith-dynamic", "an integer variable assigned a value only known at run time is evaluated as arithmetic")
				}
			} else if v := r.vars[a.Name.Value]; nameref && strings.IndexByte(v, '[') >= 0 && r.subscriptCode(v, s.Pos(), s.End()) {
				r.add(cx, review, "eval.subscript", "a nameref to an array subscript that runs a command")
			}
		}
	}
}

// assign records a variable and applies the environment rules.
func (r *run) assign(a *syntax.Assign, s *syntax.Stmt, persist bool) {
	if a.Name == nil {
		return
	}
	name := a.Name.Value
	if a.Array != nil {
		r.scan(a.Array)
		delete(r.vars, name)
		return
	}
	r.scan(a.Index)
	if a.Index != nil && !r.assoc[name] {
		r.arith(a.Index, a.Pos(), a.End())
	}
	val, known := "", true
	if a.Value != nil {
		fs := r.expandParts(nil, a.Value.Parts, a.Value.Pos())
		parts := make([]string, 0, len(fs))
		for _, f := range fs {
			if f.dyn {
				known = false
			}
			parts = append(parts, f.s)
		}
		val = strings.Join(parts, " ")
		if len(val) > maxKnownValue {
			// a=$a$a doubling (or operators growing a value): past the
			// bound the value is known only at run time, so that a
			// command cannot make the walk build gigabytes.
			known, val = false, ""
		}
		if known {
			r.subscriptCode(val, a.Pos(), a.End())
		}
	}
	if a.Naked {
		// export x, declare x, readonly x: the value stays.
		r.envRule(name, "", false, s)
		return
	}
	if known {
		r.rememberValue(name, val)
	}
	r.envRule(name, val, known, s)
	if known && (strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")) {
		if r.gitEnv == nil {
			r.gitEnv = map[string]string{}
		}
		r.gitEnv[name] = val
	}
	if !persist {
		return
	}
	if r.vars == nil {
		r.vars = map[string]string{}
	}
	if a.Append {
		known = false
	}
	delete(r.arithNum, name)
	if r.intVars[name] && !known {
		r.addAt(review, "eval.arith-dynamic", name+" is an integer variable: a value only known at run time is evaluated as arithmetic", a.Pos(), a.End())
	}
	switch {
	case a.Index != nil && !zeroIndex(a.Index):
		// x[1]=v: $x is x[0], unchanged.
	case name == "IFS" && known:
		r.ifs = val
	case known:
		r.vars[name] = val
	default:
		delete(r.vars, name)
	}
}

// zeroIndex reports whether an array subscript is the literal 0.
func zeroIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && w.Lit() == "0"
}

// maxHistory bounds the values rememberValue keeps per variable.
const maxHistory = 8

// rememberValue records that name was assigned val (see run.history).
func (r *run) rememberValue(name, val string) {
	if val == "" || len(val) > 4096 {
		return
	}
	h := r.history[name]
	for _, v := range h {
		if v == val {
			return
		}
	}
	if len(h) >= maxHistory {
		// Full: a value that may name a secret takes the place of the
		// oldest that cannot (x=1; …; x=8; x=~/.ssh/id_rsa; (x=a); cat $x).
		secret := func(v string) bool { return r.matchPath(r.c.res.resolve(r.cwd, v), false).level == high }
		if !secret(val) {
			return
		}
		for i, v := range h {
			if !secret(v) {
				h[i] = val
				return
			}
		}
		return
	}
	if r.history == nil {
		r.history = map[string][]string{}
	}
	r.history[name] = append(h, val)
}

// envRule applies Rules.Env to setting name=val.
func (r *run) envRule(name, val string, known bool, s *syntax.Stmt) {
	if name == "PATH" {
		r.checkPath(val, !known, &callCtx{stmt: s, pos: s.Pos(), end: s.End()})
		return
	}
	if name == "GIT_CONFIG_PARAMETERS" && known {
		r.gitEnvConfig(&callCtx{stmt: s, pos: s.Pos(), end: s.End()}, val)
	}
	if name == "LESS" && known {
		r.lessEnv(val, &callCtx{stmt: s, pos: s.Pos(), end: s.End()})
	}
	rule, ok := r.cr.Env[name]
	if !ok && strings.HasPrefix(name, "BASH_FUNC_") {
		rule, ok = EnvRule{Level: high, Reason: "defines an exported shell function"}, true
	}
	if !ok {
		return
	}
	r.addAt(rule.Level, "env."+strings.ToLower(name), name+" "+rule.Reason, s.Pos(), s.End())
	if rule.Command {
		if !known {
			r.addAt(review, "env.dynamic-command", name+" set to a value computed at run time", s.Pos(), s.End())
			return
		}
		outer := r.findingAt(review, "", "", s.Pos(), s.End())
		if name == "LESSOPEN" || name == "LESSCLOSE" {
			val = strings.ReplaceAll(strings.TrimLeft(val, "|-"), "%s", "FILE")
		}
		r.script(val, &outer)
	}
}

// redirects classifies a statement's redirections.
func (r *run) redirects(s *syntax.Stmt, t traits) {
	for _, rd := range s.Redirs {
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if rd.Hdoc != nil && !quotedDelim(rd.Word) {
				r.scan(rd.Hdoc)
			}
			continue
		case syntax.WordHdoc:
			r.fieldsOf([]*syntax.Word{rd.Word})
			continue
		}
		fs := r.fieldsOf([]*syntax.Word{rd.Word})
		if len(fs) != 1 {
			r.addAt(review, "redirect.ambiguous", "redirect target expands to several words", rd.Pos(), rd.End())
			continue
		}
		f := fs[0]
		switch rd.Op {
		case syntax.DplIn, syntax.DplOut:
			if isFD(f.s) && !f.dyn {
				continue
			}
			if rd.Op == syntax.DplIn {
				continue
			}
		case syntax.RdrIn:
			r.readPath(f, &callCtx{stmt: s, pos: rd.Pos(), end: rd.End()})
			continue
		}
		r.writePath(f, "redirect", &callCtx{stmt: s, pos: rd.Pos(), end: rd.End()})
		if rd.N == nil || rd.N.Value == "1" {
			switch rd.Op {
			case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll:
				r.markWritten(f, r.srcOut, r.hasSrcOut, false)
			case syntax.AppOut, syntax.AppAll:
				r.markWritten(f, r.srcOut, r.hasSrcOut, true)
			}
		}
		if t&(tFetch|tDecode) != 0 && (rd.N == nil || rd.N.Value == "1") && rd.Op != syntax.DplOut {
			// A download or decoded payload saved to a file: running
			// that file later in the command is running it directly.
			r.markFetched(f)
		}
	}
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	if s == "" {
		return false
	}
	for _, c := range strings.TrimSuffix(s, "-") {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(x.Value, "\\") {
				return true
			}
		}
	}
	return false
}

// heredocText returns the body of a here-document or here-string feeding
// s, as the program would read it.
func (r *run) stdinText(s *syntax.Stmt) (text string, ok bool) {
	for i := len(s.Redirs) - 1; i >= 0; i-- {
		rd := s.Redirs[i]
		if rd.N != nil && rd.N.Value != "0" {
			continue
		}
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if rd.Hdoc == nil {
				return "", true
			}
			return r.rawText(rd.Hdoc), true
		case syntax.WordHdoc:
			fs := r.expandParts(nil, rd.Word.Parts, rd.Word.Pos())
			parts := make([]string, len(fs))
			for i, f := range fs {
				parts[i] = f.s
			}
			return strings.Join(parts, " "), true
		case syntax.RdrIn:
			if rd.Word != nil && r.written != nil {
				if p := rd.Word.Lit(); p != "" {
					text, ok = r.written[r.c.res.resolve(r.cwd, p)]
					return text, ok
				}
			}
			return "", false
		}
	}
	return "", false
}

func (r *run) rawText(n syntax.Node) string {
	a, b := int(n.Pos().Offset()), int(n.End().Offset())
	if n.Pos().IsValid() && n.End().IsValid() && a >= 0 && b <= len(r.sc.src) && a <= b {
		return r.sc.src[a:b]
	}
	if w, ok := n.(*syntax.Word); ok {
		return w.Lit()
	}
	return ""
}

// hasStdinRedirect reports whether s reads stdin from a file or document.
func hasStdinRedirect(s *syntax.Stmt) bool {
	for _, rd := range s.Redirs {
		if rd.N != nil && rd.N.Value != "0" {
			continue
		}
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.RdrIn:
			return true
		}
	}
	return false
}

// call classifies a simple command.
func (r *run) call(x *syntax.CallExpr, s *syntax.Stmt) traits {
	r.gitEnv = nil
	for _, a := range x.Assigns {
		r.assign(a, s, len(x.Args) == 0)
	}
	if r.gitEnv != nil {
		r.gitEnvPairs(&callCtx{stmt: s, pos: s.Pos(), end: s.End()}, r.gitEnv)
		r.gitEnv = nil
	}
	if len(x.Args) == 0 {
		return 0
	}
	args := r.fieldsOf(x.Args)
	cx := r.pushCallCtx()
	defer r.popCallCtx()
	*cx = callCtx{stmt: s, pos: s.Pos(), end: s.End()}
	for _, f := range args[1:] {
		if !f.dyn {
			r.subscriptCode(f.s, cx.pos, cx.end)
		}
	}
	return r.argv(args, cx)
}

// callCtx is what an analyzer knows about the simple command it looks at.
type callCtx struct {
	stmt     *syntax.Stmt
	pos, end syntax.Pos
	stdinArg bool // xargs: more operands arrive on stdin
}

func (r *run) add(cx *callCtx, l gate.RiskLevel, rule, reason string) {
	r.addAt(l, rule, reason, cx.pos, cx.end)
}

// nested classifies a script string found in an argument.
func (r *run) nested(cx *callCtx, script string) {
	outer := r.findingAt(review, "", "", cx.pos, cx.end)
	r.script(script, &outer)
}

// nestedLevel classifies a script string and returns the highest level it
// added.
func (r *run) nestedLevel(cx *callCtx, script string) gate.RiskLevel {
	from := len(r.findings)
	r.nested(cx, script)
	return r.maxLevel(from)
}

// argv classifies one command line after expansion.
func (r *run) argv(args []field, cx *callCtx) traits {
	if len(args) == 0 {
		return 0
	}
	if r.depth >= r.c.cfg.maxDepth+8 {
		r.limit(r.sc.outer, "limit.depth", "wrappers nested too deeply")
		return 0
	}
	name := args[0]
	if name.dyn {
		return r.dynamicName(args, cx)
	}
	n := name.s
	if n == "" {
		r.add(cx, review, "name.empty", "empty command name")
		return 0
	}
	if odd := oddName(n); odd != "" {
		r.add(cx, review, "obfuscation.name", "command name with "+odd)
		return 0
	}
	if name.glob {
		return r.globName(args, cx)
	}
	base := n
	if strings.Contains(n, "/") {
		dir, b := path.Split(n)
		base = b
		dir = path.Clean(dir)
		rp := r.c.res.resolve(r.cwd, n)
		if r.fetched[rp] {
			r.add(cx, high, "download.execute", "runs a file downloaded earlier in the command")
		}
		r.writtenScript(name, cx, false)
		if !r.cr.systemDir(dir) {
			r.add(cx, review, "name.path-qualified", "runs "+clip(n, 60)+", a program outside the system directories")
			if _, known := r.cr.Commands[strings.ToLower(base)]; !known || r.funcs[base] {
				r.argOutputs(base, nil, false, args[1:], cx)
				return r.argSecrets("", args[1:], cx, nil)
			}
			// A program named like one the rules know (bin/auditq,
			// ./rm) is judged by that rule too: a copy of a tool in the
			// workspace does what the tool does.
		}
	}
	key := strings.ToLower(base)
	if r.funcs[base] {
		r.callFunc(base)
		return 0
	}
	if t, ok := r.rebound(n, args, cx); ok {
		return t
	}
	r.interactive(key, cx)
	if w, ok := r.cr.Wrappers[key]; ok {
		return r.wrapper(key, w, args, cx)
	}
	rule, ok := r.cr.commands[key]
	if !ok {
		if k := strings.TrimRight(key, "0123456789."); k != key {
			rule, ok = r.cr.commands[k]
			key = k
		}
	}
	if !ok {
		if strings.HasPrefix(key, "mkfs.") || strings.HasPrefix(key, "mkfs_") {
			r.add(cx, high, "disk.mkfs", "formats a filesystem")
			return 0
		}
		r.add(cx, r.cr.Unknown, "command.unknown", "unknown command "+clip(base, 40))
		r.argOutputs(key, nil, false, args[1:], cx)
		return r.argSecrets(key, args[1:], cx, nil)
	}
	return r.command(key, rule, args, cx)
}

// oddName describes characters bash would not resolve to a normal
// command: non-ASCII (fullwidth, homoglyphs, zero-width) and controls.
func oddName(n string) string {
	for _, c := range n {
		if c > unicode.MaxASCII {
			return "non-ASCII characters (homoglyph or invisible character)"
		}
		if c < 0x20 || c == 0x7f {
			return "control characters"
		}
	}
	return ""
}

// dynamicName handles a command name only known at run time: review at
// least, high when the arguments would be destructive for rm or run a
// script for sh.
func (r *run) dynamicName(args []field, cx *callCtx) traits {
	worst := review
	for _, cand := range []string{"rm", "sh"} {
		from := len(r.findings)
		alt := append([]field{{s: cand}}, args[1:]...)
		r.argv(alt, cx)
		worst = worst.Max(r.maxLevel(from))
		r.findings = r.findings[:from]
	}
	r.argSecrets("", args[1:], cx, nil)
	if worst == high {
		r.add(cx, high, "name.dynamic-destructive", "command name computed at run time, with arguments that delete or run code")
	} else {
		r.add(cx, review, "name.dynamic", "command name computed at run time")
	}
	return tShell
}

// appendGlobMatches appends the names of sorted that match the glob pat:
// only those starting with pat's literal prefix are tried.
func appendGlobMatches(out, sorted []string, pat string) []string {
	pre := litPrefix(pat)
	i, _ := slices.BinarySearch(sorted, pre)
	for ; i < len(sorted) && strings.HasPrefix(sorted[i], pre); i++ {
		if ok, _ := path.Match(pat, sorted[i]); ok {
			out = append(out, sorted[i])
		}
	}
	return out
}

// globName handles a command name with glob characters (/bin/r[m]): it
// is at least review, and as bad as any known command it can match. A
// pattern matching many commands (*) only gets review.
func (r *run) globName(args []field, cx *callCtx) traits {
	r.add(cx, review, "name.glob", "command name contains glob characters")
	if r.inGlob {
		return tShell
	}
	_, pat := path.Split(args[0].s)
	pat = strings.ToLower(pat)
	var names []string
	for _, all := range [][]string{r.cr.commandNames, r.cr.wrapperNames} {
		names = appendGlobMatches(names, all, pat)
	}
	if len(names) > 16 {
		return tShell
	}
	r.inGlob = true
	defer func() { r.inGlob = false }()
	var t traits
	for _, name := range names {
		alt := append([]field{{s: name}}, args[1:]...)
		t |= r.argv(alt, cx)
	}
	return t
}

// staticSubst evaluates a command substitution whose output is known
// without running anything: echo, printf, which/command -v, pwd.
func (r *run) staticSubst(cs *syntax.CmdSubst) (string, bool) {
	if len(cs.Stmts) != 1 {
		return "", false
	}
	s := cs.Stmts[0]
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(s.Redirs) > 0 || len(call.Args) == 0 || len(call.Assigns) > 0 {
		return "", false
	}
	var args []string
	for _, w := range call.Args {
		fs := r.expandParts(nil, w.Parts, w.Pos())
		for _, f := range fs {
			if f.dyn || f.glob {
				return "", false
			}
			args = append(args, f.s)
		}
	}
	if len(args) == 0 {
		return "", false
	}
	switch args[0] {
	case "echo":
		a := args[1:]
		for len(a) > 0 && (a[0] == "-n" || a[0] == "-e" || a[0] == "-E" || a[0] == "-ne" || a[0] == "-en") {
			a = a[1:]
		}
		return strings.Join(a, " "), true
	case "printf":
		if len(args) < 2 {
			return "", false
		}
		return strings.TrimRight(printfFormat(args[1], args[2:]), "\n"), true
	case "which", "command", "type":
		a := args[1:]
		for len(a) > 0 && strings.HasPrefix(a[0], "-") {
			a = a[1:]
		}
		if len(a) == 1 && !strings.Contains(a[0], "/") {
			return "/usr/bin/" + a[0], true
		}
	case "pwd":
		if r.cwd == "" {
			return ".", true
		}
		return r.cwd, true
	}
	return "", false
}

// catStdin returns what `cat` with no file operands (or "-") prints when
// its stdin is a here-document or here-string: the document's text.
func (r *run) catStdin(x *syntax.CallExpr, s *syntax.Stmt) (string, bool) {
	if len(x.Args) == 0 || x.Args[0].Lit() != "cat" {
		return "", false
	}
	for _, w := range x.Args[1:] {
		if l := w.Lit(); l != "-" {
			return "", false
		}
	}
	return r.stdinText(s)
}

// markWritten records what a command wrote to file f: its content when
// known statically (known), or that the content is no longer known. A
// later command in the same list that runs f runs that content
// (Rules: exec.written-script). appendTo appends to known content.
func (r *run) markWritten(f field, content string, known, appendTo bool) {
	if f.dyn || f.s == "" || f.s == "/dev/null" || strings.HasPrefix(f.s, "/dev/") {
		return
	}
	p := r.c.res.resolve(r.cwd, f.s)
	if r.written == nil {
		r.written = map[string]string{}
	}
	prev, had := r.written[p]
	switch {
	case !known:
		delete(r.written, p)
	case appendTo && had:
		r.written[p] = prev + "\n" + content
	case appendTo:
		// Appending to a file whose earlier content is unknown: the
		// new lines still run.
		r.written[p] = content
	default:
		r.written[p] = content
	}
	if len(r.written[p]) > r.c.cfg.maxBytes {
		r.written[p] = r.written[p][:r.c.cfg.maxBytes]
	}
}

// writtenScript classifies the content of f when an earlier command in
// the same list wrote it with static content; code runs it as an
// interpreter's source instead of a shell script.
func (r *run) writtenScript(f field, cx *callCtx, code bool) {
	if f.dyn || r.written == nil {
		return
	}
	content, ok := r.written[r.c.res.resolve(r.cwd, f.s)]
	if !ok {
		return
	}
	r.add(cx, review, "exec.written-script", "runs "+clip(f.s, 60)+", written earlier in the command")
	if first, _, _ := strings.Cut(content, "\n"); strings.HasPrefix(first, "#!") && !shellShebang(first) {
		code = true
	}
	if code {
		r.inlineCode(content, cx)
		return
	}
	r.nested(cx, content)
}

// shellShebang reports whether a #! line names a POSIX-like shell.
func shellShebang(line string) bool {
	fs := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fs) == 0 {
		return true
	}
	prog := path.Base(fs[0])
	if prog == "env" && len(fs) > 1 {
		prog = path.Base(fs[len(fs)-1])
		for _, f := range fs[1:] {
			if !strings.HasPrefix(f, "-") {
				prog = path.Base(f)
				break
			}
		}
	}
	switch prog {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash":
		return true
	}
	return false
}
