package classify

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Text bash evaluates later as a variable name or an arithmetic
// expression: an array subscript inside it ("a[$(cmd)]") is expanded,
// command substitutions included, when bash evaluates it — in printf -v,
// read, test -v, declare, namerefs, ${!x}, and every arithmetic context
// ($((x)), ((…)), let, array indices, ${x:off:len}, [[ x -eq y ]]) that
// reads a variable holding it. So:
//
//   - a static string with a command substitution inside a subscript has
//     that substitution classified as a nested script wherever it appears
//     (it may be stored and evaluated later), and is review where bash
//     takes it as a name (eval.subscript);
//   - a name or arithmetic operand only known at run time is review
//     (eval.dynamic-name, eval.arith-dynamic, eval.indirect).

// subscriptCode classifies the command substitutions inside the array
// subscripts of s (text bash may evaluate as a name or expression) as a
// nested script and reports whether there were any.
func (r *run) subscriptCode(s string, pos, end syntax.Pos) bool {
	i := strings.IndexByte(s, '[')
	if i < 0 {
		return false
	}
	rest := s[i:]
	if !strings.Contains(rest, "$(") && !strings.Contains(rest, "`") {
		return false
	}
	from := len(r.findings)
	r.document(rest, pos)
	if len(r.findings) == from {
		// Nothing parsed as a substitution (or nothing risky in it):
		// still a substitution bash would run.
		return strings.Contains(rest, "$(") || strings.Count(rest, "`") >= 2
	}
	return true
}

// evalName checks a word bash takes as a variable name (printf -v NAME,
// read NAME, test -v NAME, unset NAME, a nameref's target): a run-time
// name is review, a subscript with a substitution runs it. The variable
// then holds a value only known at run time.
func (r *run) evalName(f field, what string, cx *callCtx) {
	if f.dyn {
		r.add(cx, review, "eval.dynamic-name", what+" takes a variable name computed at run time (an array subscript in it runs code)")
		return
	}
	if r.subscriptCode(f.s, cx.pos, cx.end) {
		r.add(cx, review, "eval.subscript", what+" evaluates an array subscript that runs a command ("+clip(f.s, 40)+")")
	}
	name := f.s
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	r.forget(name)
}

// staticItems reports whether a for loop's items are static words (or
// the output of seq): the loop variable then holds one of them.
func (r *run) staticItems(items []field, words []*syntax.Word) bool {
	if len(words) == 1 && len(words[0].Parts) == 1 {
		if cs, ok := words[0].Parts[0].(*syntax.CmdSubst); ok && numericSubst(cs) {
			return true
		}
	}
	for _, f := range items {
		if f.dyn {
			return false
		}
	}
	return true
}

// rebound classifies a command name that hash -p or an alias rebound
// earlier in the same command as what it now runs.
func (r *run) rebound(n string, args []field, cx *callCtx) (traits, bool) {
	if p, ok := r.rebind[n]; ok {
		delete(r.rebind, n)
		defer func() { r.rebind[n] = p }()
		alt := append([]field{{s: p, pos: args[0].pos}}, args[1:]...)
		return r.argv(alt, cx), true
	}
	if v, ok := r.aliases[n]; ok {
		delete(r.aliases, n)
		defer func() { r.aliases[n] = v }()
		parts := []string{v}
		for _, a := range args[1:] {
			parts = append(parts, shellWord(a))
		}
		r.nested(cx, strings.Join(parts, " "))
		return tShell, true
	}
	return 0, false
}

// shellWord writes a field back as one shell word (tilde kept).
func shellWord(f field) string {
	if f.dyn {
		return `"$X"`
	}
	plain := f.s != ""
	for i := 0; i < len(f.s); i++ {
		c := f.s[i]
		if !isNameChar(c) && !strings.ContainsRune("./~:=@%+,-", rune(c)) {
			plain = false
			break
		}
	}
	if plain {
		return f.s
	}
	q, err := syntax.Quote(f.s, syntax.LangBash)
	if err != nil {
		return `"$X"`
	}
	return q
}

// forget marks a variable as holding a value only known at run time.
func (r *run) forget(name string) {
	delete(r.vars, name)
	delete(r.arithNum, name)
}

// numericParams are variables bash sets to numbers (or that the
// environment sets, not the command): safe in arithmetic.
var numericParams = map[string]bool{
	"#": true, "?": true, "$": true, "!": true, "-": true, "RANDOM": true, "SRANDOM": true, "SECONDS": true,
	"LINENO": true, "BASHPID": true, "PPID": true, "UID": true, "EUID": true, "COLUMNS": true, "LINES": true,
	"OPTIND": true, "SHLVL": true, "HISTCMD": true, "EPOCHSECONDS": true, "EPOCHREALTIME": true,
	"BASH_SUBSHELL": true, "HOSTTYPE": true,
}

// arithSafe reports whether evaluating variable name in arithmetic runs
// nothing: a number bash sets, a variable assigned a number by
// arithmetic or a loop over static words, or a value known statically
// whose own names are safe.
func (r *run) arithSafe(name string, depth int) bool {
	if numericParams[name] || r.arithNum[name] {
		return true
	}
	v, ok := r.lookup(name)
	if !ok || depth > 4 {
		return false
	}
	return r.arithText(v, depth+1)
}

// arithText reports whether static text evaluated as arithmetic runs
// nothing: no expansions, and every name in it is arithSafe.
func (r *run) arithText(s string, depth int) bool {
	if strings.ContainsAny(s, "$`") {
		return false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if isNameStart(c) && (i == 0 || !isNameChar(s[i-1]) && s[i-1] != '#') {
			j := i + 1
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			k := j
			for k < len(s) && s[k] == ' ' {
				k++
			}
			if k < len(s) && s[k] == '=' && (k+1 == len(s) || s[k+1] != '=') {
				// An assignment target ("i=1"): holds a number after.
				r.setNum(s[i:j])
			} else if !r.arithSafe(s[i:j], depth) {
				return false
			}
			i = j
			continue
		}
		i++
	}
	return true
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

// arith checks an arithmetic expression: an operand only known at run
// time (a variable from the environment or read at run time, a command
// substitution's output) is evaluated as an expression itself, so it is
// review. Variables it assigns hold numbers afterwards.
func (r *run) arith(x syntax.ArithmExpr, pos, end syntax.Pos) {
	if x == nil {
		return
	}
	if what := r.arithDyn(x); what != "" {
		r.addAt(review, "eval.arith-dynamic", "arithmetic evaluates "+clip(what, 40)+", a value only known at run time (an array subscript in it runs code)", pos, end)
	}
}

// arithDyn returns the first run-time operand of x ("" if none) and
// records the variables x assigns.
func (r *run) arithDyn(x syntax.ArithmExpr) string {
	switch x := x.(type) {
	case *syntax.BinaryArithm:
		d := r.arithDyn(x.Y)
		if arithAssign(x.Op) {
			if n := arithName(x.X); n != "" {
				if x.Op != syntax.Assgn && !r.arithSafe(n, 0) && d == "" {
					d = n
				}
				r.setNum(n)
				return d
			}
		}
		if d2 := r.arithDyn(x.X); d == "" {
			d = d2
		}
		return d
	case *syntax.UnaryArithm:
		d := r.arithDyn(x.X)
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			if n := arithName(x.X); n != "" {
				r.setNum(n)
			}
		}
		return d
	case *syntax.ParenArithm:
		return r.arithDyn(x.X)
	case *syntax.Word:
		return r.arithWord(x.Parts)
	}
	return ""
}

func arithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn,
		syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// arithName returns the variable an assignment operand names.
func arithName(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return ""
	}
	if l, ok := w.Parts[0].(*syntax.Lit); ok && l.Value != "" && isNameStart(l.Value[0]) {
		return l.Value
	}
	return ""
}

func (r *run) setNum(name string) {
	delete(r.vars, name)
	if r.arithNum == nil {
		r.arithNum = map[string]bool{}
	}
	r.arithNum[name] = true
}

func (r *run) arithWord(parts []syntax.WordPart) string {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if !r.arithText(p.Value, 0) {
				return p.Value
			}
		case *syntax.SglQuoted:
			if !r.arithText(p.Value, 0) {
				return p.Value
			}
		case *syntax.DblQuoted:
			if d := r.arithWord(p.Parts); d != "" {
				return d
			}
		case *syntax.ParamExp:
			if d := r.arithParam(p); d != "" {
				return d
			}
		case *syntax.ArithmExp:
			if d := r.arithDyn(p.X); d != "" {
				return d
			}
		case *syntax.CmdSubst:
			if v, ok := r.staticSubst(p); ok && r.arithText(v, 0) {
				continue
			}
			if numericSubst(p) {
				continue
			}
			return "$(…)"
		default:
			return "an expansion"
		}
	}
	return ""
}

// numericSubst: substitutions whose output is a number (wc -l, nproc,
// date +%s, seq, expr, id -u).
func numericSubst(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 {
		return false
	}
	s := cs.Stmts[0]
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.Pipe {
		s = b.Y
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return false
	}
	switch call.Args[0].Lit() {
	case "wc", "nproc", "seq", "expr":
		return true
	case "date":
		for _, a := range call.Args[1:] {
			if l := a.Lit(); l == "+%s" || l == "+%s%N" || l == "+%N" {
				return true
			}
		}
	case "id":
		return len(call.Args) == 2 && (call.Args[1].Lit() == "-u" || call.Args[1].Lit() == "-g")
	}
	return false
}

// arithParam checks a parameter expansion inside arithmetic.
func (r *run) arithParam(p *syntax.ParamExp) string {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	if p.Index != nil && !allIndex(p.Index) && !r.assoc[name] {
		if d := r.arithDyn(p.Index); d != "" {
			return d
		}
	}
	if p.Slice != nil {
		if d := r.arithDyn(p.Slice.Offset); d != "" {
			return d
		}
		if d := r.arithDyn(p.Slice.Length); d != "" {
			return d
		}
	}
	switch {
	case p.Length:
		return ""
	case p.Excl:
		return "${!" + name + "}"
	case p.Index != nil:
		// An array element: its value is not tracked.
		return name + "[…]"
	case !r.arithSafe(name, 0):
		return "$" + name
	}
	return ""
}

// allIndex reports whether an index is @ or * (every element).
func allIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	l := w.Lit()
	return l == "@" || l == "*"
}

// paramExp checks the parts of a parameter expansion that bash evaluates
// as arithmetic or as a name: the index of an indexed array, the offset
// and length of a slice, and the target of an indirect expansion.
func (r *run) paramExp(x *syntax.ParamExp) {
	name := ""
	if x.Param != nil {
		name = x.Param.Value
	}
	if x.Index != nil && !allIndex(x.Index) && !r.assoc[name] {
		r.arith(x.Index, x.Pos(), x.End())
	}
	if x.Slice != nil {
		r.arith(x.Slice.Offset, x.Pos(), x.End())
		r.arith(x.Slice.Length, x.Pos(), x.End())
	}
	if x.Excl && x.Names == 0 && x.Index == nil {
		v, ok := r.lookup(name)
		switch {
		case !ok && !numericParams[name]:
			r.addAt(review, "eval.indirect", "${!"+clip(name, 30)+"} expands a variable named by a value only known at run time (an array subscript in it runs code)", x.Pos(), x.End())
		case ok && r.subscriptCode(v, x.Pos(), x.End()):
			r.addAt(review, "eval.subscript", "${!"+clip(name, 30)+"} evaluates an array subscript that runs a command", x.Pos(), x.End())
		}
	}
}

// testClause walks [[ … ]]: -v takes a variable name, the arithmetic
// comparisons evaluate their operands as arithmetic.
func (r *run) testClause(tc *syntax.TestClause) {
	var walk func(x syntax.TestExpr)
	walk = func(x syntax.TestExpr) {
		switch x := x.(type) {
		case *syntax.BinaryTest:
			walk(x.X)
			walk(x.Y)
			switch x.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				for _, o := range []syntax.TestExpr{x.X, x.Y} {
					if w, ok := o.(*syntax.Word); ok {
						r.arith(w, x.Pos(), x.End())
					}
				}
			}
		case *syntax.UnaryTest:
			if w, ok := x.X.(*syntax.Word); ok && (x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar) {
				for _, f := range r.fieldsOf([]*syntax.Word{w}) {
					r.evalName(f, "[[ -v ]]", &callCtx{pos: x.Pos(), end: x.End()})
				}
				return
			}
			walk(x.X)
		case *syntax.ParenTest:
			walk(x.X)
		case *syntax.Word:
			for _, f := range r.fieldsOf([]*syntax.Word{x}) {
				if !f.dyn {
					r.subscriptCode(f.s, x.Pos(), x.End())
				}
			}
		}
	}
	walk(tc.X)
}

// anVarName handles builtins that take variable names or arithmetic
// expressions as arguments.
func (r *run) anVarName(a *actx) {
	args := a.args[1:]
	switch a.key {
	case "read":
		vf := []string{"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"}
		if v, ok := flagValue(args, "-a"); ok {
			r.evalName(v, "read -a", a.cx)
		}
		for _, f := range operands(args, vf...) {
			r.evalName(f, "read", a.cx)
		}
	case "mapfile", "readarray":
		ops := operands(args, "-d", "-n", "-O", "-s", "-u", "-C", "-c")
		if len(ops) > 0 {
			r.evalName(ops[0], a.key, a.cx)
		} else {
			r.forget("MAPFILE")
		}
	case "test", "[":
		for i := 0; i+1 < len(args); i++ {
			if !args[i].dyn && (args[i].s == "-v" || args[i].s == "-R") {
				r.evalName(args[i+1], "test -v", a.cx)
			}
		}
	case "getopts":
		if ops := operands(args); len(ops) >= 2 {
			r.evalName(ops[1], "getopts", a.cx)
		}
	case "wait":
		if v, ok := flagValue(args, "-p"); ok {
			r.evalName(v, "wait -p", a.cx)
		}
	case "let":
		for _, f := range args {
			if f.dyn {
				r.add(a.cx, review, "eval.arith-dynamic", "let evaluates an expression only known at run time (an array subscript in it runs code)")
				continue
			}
			if r.subscriptCode(f.s, a.cx.pos, a.cx.end) {
				r.add(a.cx, review, "eval.subscript", "let evaluates an array subscript that runs a command")
			}
			r.arithString(f.s, a.cx)
		}
	case "unset":
		if hasFlag(args, "-f") {
			return
		}
		for _, f := range operands(args) {
			r.evalName(f, "unset", a.cx)
		}
	case "printf":
		if v, ok := flagValue(args, "-v"); ok {
			r.evalName(v, "printf -v", a.cx)
		}
	}
}

// arithString checks static text evaluated as an arithmetic expression
// (the arguments of let run through builtin or command; a plain let is
// a LetClause).
func (r *run) arithString(s string, cx *callCtx) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader("(("+s+"))"), "")
	if err != nil || len(f.Stmts) != 1 {
		return
	}
	if ac, ok := f.Stmts[0].Cmd.(*syntax.ArithmCmd); ok {
		if d := r.arithDyn(ac.X); d != "" {
			r.add(cx, review, "eval.arith-dynamic", "let evaluates "+clip(d, 40)+", a value only known at run time (an array subscript in it runs code)")
		}
	}
}

// declArgs handles declare, typeset, local, export and readonly
// arguments that are not plain assignments (quoted or computed words):
// bash takes each as NAME[=VALUE], so the name is evaluated. -n makes
// the value a name too (a nameref); -A makes the names associative
// arrays (their subscripts are strings, not arithmetic).
func (r *run) declArgs(d *syntax.DeclClause) (nameref, intAttr bool) {
	for _, a := range d.Args {
		if a.Name != nil || a.Value == nil {
			continue
		}
		l := a.Value.Lit()
		if strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+") {
			if strings.Contains(l, "n") && strings.HasPrefix(l, "-") {
				nameref = true
			}
			if strings.Contains(l, "i") && strings.HasPrefix(l, "-") {
				intAttr = true
				for _, b := range d.Args {
					if b.Name != nil {
						if r.intVars == nil {
							r.intVars = map[string]bool{}
						}
						r.intVars[b.Name.Value] = true
					}
				}
			}
			if strings.Contains(l, "A") && strings.HasPrefix(l, "-") {
				for _, b := range d.Args {
					if b.Name != nil {
						if r.assoc == nil {
							r.assoc = map[string]bool{}
						}
						r.assoc[b.Name.Value] = true
					}
				}
			}
		}
	}
	return nameref, intAttr
}

// declWord checks one computed or quoted declare argument.
func (r *run) declWord(d *syntax.DeclClause, f field, s *syntax.Stmt) {
	if strings.HasPrefix(f.s, "-") || strings.HasPrefix(f.s, "+") {
		return
	}
	cx := &callCtx{stmt: s, pos: s.Pos(), end: s.End()}
	what := d.Variant.Value
	if f.dyn {
		// "$x=1", "$(cmd)": a run-time NAME[=VALUE].
		name, _, _ := strings.Cut(f.s, "=")
		if strings.Contains(name, "$") {
			r.add(cx, review, "eval.dynamic-name", what+" takes a variable name computed at run time (an array subscript in it runs code)")
			return
		}
	}
	name, _, _ := strings.Cut(f.s, "=")
	if r.subscriptCode(name, cx.pos, cx.end) {
		r.add(cx, review, "eval.subscript", what+" evaluates an array subscript that runs a command ("+clip(name, 40)+")")
	}
	r.subscriptCode(f.s[len(name):], cx.pos, cx.end)
}

// anRebind handles builtins that change what a later command name runs:
// hash -p PATH NAME binds NAME to PATH (later uses of NAME in the same
// command are classified as PATH); enable -f loads a builtin from a
// shared object and enable -n hides a builtin.
func (r *run) anRebind(a *actx) {
	args := a.args[1:]
	switch a.key {
	case "hash":
		p, ok := flagValue(args, "-p")
		if !ok {
			return
		}
		a.level, a.id = review, "rebind.hash"
		a.reason = "makes a command name run another program"
		names := operands(args, "-p", "-d", "-t")
		for _, n := range names {
			if n.dyn || p.dyn {
				continue
			}
			if r.rebind == nil {
				r.rebind = map[string]string{}
			}
			r.rebind[n.s] = p.s
		}
		if p.dyn {
			a.reason = "makes a command name run a program only known at run time"
		}
	case "enable":
		switch {
		case hasFlag(args, "-f"):
			a.level, a.id, a.reason = review, "rebind.enable", "loads a builtin from a shared object (native code) that replaces a command name"
		case hasFlag(args, "-d", "-n"):
			a.level, a.id, a.reason = review, "rebind.enable", "disables or removes a builtin, so its name runs another program"
		}
	}
}

// shadowedName reports whether defining a function or alias called name
// changes what an existing command runs.
func (r *run) shadowedName(name string) bool {
	key := strings.ToLower(name)
	if _, ok := r.cr.Commands[key]; ok {
		return true
	}
	if _, ok := r.cr.Wrappers[key]; ok {
		return true
	}
	switch name {
	case "command_not_found_handle", "cd", "exit", "exec", "source", ".", "eval", "builtin", "command":
		return true
	}
	return false
}

// argSecrets applies the read rules to every argument of a command, its
// option values included ("--file=F", "-fF"): a program given a secret
// file's name may print it (date -f, cmp -l, git diff --no-index, look,
// error messages that quote the lines they cannot parse). Only high
// verdicts for files count (naming a directory lists it); commands that
// only handle names or metadata are left out (nameOnly).
func (r *run) argSecrets(key string, args []field, cx *callCtx, skipOps map[syntax.Pos]bool) traits {
	if nameOnly[key] {
		return r.readOptionSecrets(key, args, cx)
	}
	var t traits
	check := func(f field, s string) {
		if s == "" || s == "-" || !r.cr.secrets.may(s) {
			return
		}
		if !f.glob && hasGlob(s) && !f.dyn {
			// Quoted glob characters: a pattern for the program (grep
			// --include, find -name), not a file bash expands.
			return
		}
		f.s = s
		if r.readSecret(f, cx) {
			t |= tSecret
		}
	}
	skip := nameOnlyFlags[key]
	for i, f := range args {
		if f.paths != nil && r.producedSecret(f, cx) {
			t |= tSecret
		}
		if f.proc || f.s == "" || skipOps[f.pos] && f.pos.IsValid() {
			continue
		}
		if i > 0 && skip != nil && !args[i-1].dyn {
			p := args[i-1].s
			if skip[p] || len(p) > 2 && p[0] == '-' && p[1] != '-' && skip[string([]byte{'-', p[len(p)-1]})] {
				continue
			}
		}
		if skip != nil && strings.HasPrefix(f.s, "--") {
			if n, _, ok := strings.Cut(f.s, "="); ok && skip[n] {
				continue
			}
		}
		s := f.s
		if f.dyn && r.dynSecret(f, false, cx) {
			t |= tSecret
			continue
		}
		if f.dyn {
			s = dynGlob(s)
			if s == "" {
				continue
			}
		}
		if !strings.HasPrefix(s, "--") || !strings.Contains(s, "=") {
			// "--opt=value" names no file; its value may.
			check(f, s)
		}
		for _, v := range embeddedPaths(s) {
			check(f, v)
		}
	}
	return t
}

// embeddedPaths returns the parts of an argument that can name a file
// inside another syntax: an option's value ("--file=F", "-fF"), a
// response file ("@F"), a URL or spec ("file:F", "file://F"), a git
// object name ("REV:PATH"), an assignment-style operand ("if=F").
func embeddedPaths(s string) []string {
	var out []string
	if strings.HasPrefix(s, "-") {
		if _, v, ok := strings.Cut(s, "="); ok {
			out = append(out, v)
			s = v
		} else if len(s) > 2 && s[1] != '-' && strings.ContainsAny(s[2:], "/~.") {
			out = append(out, s[2:])
			s = s[2:]
		}
	}
	if strings.HasPrefix(s, "@") && len(s) > 1 {
		out = append(out, s[1:])
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 && i+1 < len(s) {
		v := strings.TrimPrefix(s[i+1:], "//")
		if v != "" {
			out = append(out, v)
		}
	}
	if !strings.HasPrefix(s, "-") {
		if _, v, ok := strings.Cut(s, "="); ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// readOptions are options whose value is a file the program reads and
// may echo (names to process, patterns, configuration): checked for
// every command, those that only handle names included.
var readOptions = map[string]bool{"--files0-from": true, "--files-from": true, "--from-file": true, "--exclude-from": true,
	"--include-from": true, "--file": true, "--config": true, "--rcfile": true, "--init-file": true, "--env-file": true,
	"--magic-file": true, "--exclude-file": true}

// readShort are short options of name-only commands whose value is a
// file they read (file -f NAMES, du -X PATTERNS).
var readShort = map[string]map[string]bool{"file": {"-f": true, "-m": true}, "du": {"-X": true}, "ls": {}, "wc": {}}

// readOptionSecrets applies the read rules to the values of readOptions.
func (r *run) readOptionSecrets(key string, args []field, cx *callCtx) traits {
	var t traits
	short := readShort[key]
	for i, a := range args {
		if a.dyn || !strings.HasPrefix(a.s, "-") {
			continue
		}
		if a.s == "--" {
			break
		}
		// Every readOptions name is long: a short option ("-la") is
		// only looked up in short.
		long := strings.HasPrefix(a.s, "--")
		v, ok := field{}, false
		if n, val, eq := strings.Cut(a.s, "="); eq && long && readOptions[n] {
			v, ok = a, true
			v.s = val
		} else if (long && readOptions[a.s] || short[a.s]) && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok && !v.proc && v.s != "" && r.cr.secrets.may(v.s) && r.readSecret(v, cx) {
			t |= tSecret
		}
	}
	return t
}

// readSecret adds the high verdict of the read rules for a file name, if
// any, and reports whether there was one.
func (r *run) readSecret(f field, cx *callCtx) bool {
	rp := r.c.res.resolve(r.cwd, f.s)
	v := r.matchPath(rp, false)
	if v.level != high || v.dir {
		return false
	}
	r.add(cx, high, v.id, "reads "+v.reason+" ("+clip(f.s, 60)+")")
	return true
}

// dynGlob turns the source form of a field with run-time parts
// ("/proc/$PPID/environ", "$DIR/.env") into a glob over what it may be,
// or "" when nothing literal is left to judge.
func dynGlob(s string) string {
	var sb strings.Builder
	lit := false
	for i := 0; i < len(s); {
		if s[i] != '$' {
			sb.WriteByte(s[i])
			lit = lit || s[i] != '/'
			i++
			continue
		}
		i = dynPartEnd(s, i)
		sb.WriteByte('*')
	}
	if !lit {
		return ""
	}
	return sb.String()
}

// dynPartEnd is the index after the run-time part of a field's source
// form that starts at s[i] == '$': "$((…))", "$(…)", "$NAME", "$?" and
// the like.
func dynPartEnd(s string, i int) int {
	switch {
	case strings.HasPrefix(s[i:], "$((…))"):
		return i + len("$((…))")
	case strings.HasPrefix(s[i:], "$(…)"):
		return i + len("$(…)")
	case i+1 < len(s) && isNameStart(s[i+1]):
		i++
		for i < len(s) && isNameChar(s[i]) {
			i++
		}
		return i
	case i+1 < len(s):
		return i + 2
	}
	return i + 1
}

// dynSuffix is the known rest of a field with run-time parts after its
// last one, as a relative path: "${PWD%/*}/.aws/credentials" (source
// form "$PWD/.aws/credentials") gives ".aws/credentials", "$X.d/id_rsa"
// gives "id_rsa"; "" when no whole segment follows.
func dynSuffix(s string) string {
	end := -1
	for i := 0; i < len(s); {
		if s[i] != '$' {
			i++
			continue
		}
		i = dynPartEnd(s, i)
		end = i
	}
	if end < 0 || end == len(s) {
		return ""
	}
	rest := s[end:]
	if rest[0] != '/' {
		// The rest of a run-time segment ("$X.pem") is dynGlob's.
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return ""
		}
		rest = rest[i:]
	}
	return strings.TrimLeft(rest, "/")
}

// nameOnly commands take file names without printing what the files
// hold (listing, metadata, permissions, path manipulation), or have
// their own rules for the files they touch.
var nameOnly = map[string]bool{
	"ls": true, "dir": true, "vdir": true, "stat": true, "test": true, "[": true, "file": true, "du": true,
	"realpath": true, "readlink": true, "basename": true, "dirname": true, "chmod": true, "chown": true,
	"chgrp": true, "chattr": true, "lsattr": true, "setfacl": true, "getfacl": true, "touch": true, "echo": true,
	"printf": true, "which": true, "type": true, "mkdir": true, "cd": true, "pushd": true, "find": true,
	"fd": true, "fdfind": true, "locate": true, "rm": true, "unlink": true, "rmdir": true, "shred": true,
	"srm": true, "ln": true, "ssh-add": true, "ssh-keygen": true, "wc": true, "md5sum": true, "sha1sum": true,
	"sha256sum": true, "sha512sum": true, "shasum": true, "b2sum": true, "cksum": true, "sum": true, "md5": true,
	"lsof": true, "fuser": true, "hash": true, "alias": true, "export": true, "declare": true, "local": true,
	"typeset": true, "readonly": true, "unset": true, "set": true, "trap": true, "history": true, "mv": true,
}

// nameOnlyFlags: options whose value is a key a program authenticates
// with, a pattern, or a command classified on its own — not a file it
// prints.
var nameOnlyFlags = map[string]map[string]bool{
	"grep":        {"-e": true, "--regexp": true, "--include": true, "--exclude": true, "--exclude-dir": true},
	"egrep":       {"-e": true, "--regexp": true, "--include": true, "--exclude": true, "--exclude-dir": true},
	"fgrep":       {"-e": true, "--regexp": true, "--include": true, "--exclude": true, "--exclude-dir": true},
	"rg":          {"-e": true, "--regexp": true, "-g": true, "--glob": true, "--iglob": true},
	"rsync":       {"-e": true, "--rsh": true},
	"ssh":         {"-i": true},
	"scp":         {"-i": true},
	"sftp":        {"-i": true},
	"autossh":     {"-i": true},
	"ssh-copy-id": {"-i": true},
	"curl":        {"--key": true, "--cert": true, "-E": true, "--cacert": true, "--proxy-key": true, "--proxy-cert": true},
	"wget":        {"--private-key": true, "--certificate": true, "--ca-certificate": true},
	"git":         {"-i": true},
}

// outputOptions are long options that name an output file in most
// programs; their value is checked against the write rules for every
// command (only a high verdict counts: "--output" is a format elsewhere).
// outputShort are the short ones, for unknown programs only.
var (
	outputOptions = map[string]bool{"--output": true, "--output-file": true, "--outfile": true, "--out-file": true,
		"--out": true, "--log-file": true, "--logfile": true, "--output-document": true, "--result-file": true,
		"--save": true, "--dump-file": true, "--write": true}
	outputShort = map[string]bool{"-o": true, "-O": true, "-w": true, "-l": true}
)

// argOutputs flags an output option of any command whose value names a
// persistence or system path (high). The command's own OutputFlags are
// writes already.
func (r *run) argOutputs(key string, rule *CommandRule, known bool, args []field, cx *callCtx) {
	for i, a := range args {
		s := a.s
		if a.dyn || len(s) < 2 || s[0] != '-' {
			continue
		}
		if s == "--" {
			return
		}
		name, val, eq := s, "", false
		if s[1] == '-' {
			name, val, eq = strings.Cut(s, "=")
			if !outputOptions[name] {
				continue
			}
		} else {
			if known || !outputShort[s[:2]] {
				continue
			}
			name = s[:2]
			if len(s) > 2 {
				val, eq = s[2:], true
			}
		}
		v := a
		switch {
		case eq:
			v.s = val
		case i+1 < len(args):
			v = args[i+1]
		default:
			continue
		}
		if v.dyn || v.proc || known && ruleHasOutput(rule, name) {
			continue
		}
		rp := r.c.res.resolve(r.cwd, v.s)
		if vv := r.matchPath(rp, true); vv.level == high && !harmlessTarget(rp) {
			r.add(cx, high, vv.id, key+" "+name+" writes "+vv.reason+" ("+clip(v.s, 60)+")")
		}
	}
}

func ruleHasOutput(rule *CommandRule, o string) bool {
	if rule == nil {
		return false
	}
	for _, x := range rule.OutputFlags {
		if x == o {
			return true
		}
	}
	return false
}
