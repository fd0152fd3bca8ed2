package classify

import (
	"fmt"
	"mvdan.cc/sh/v3/expand"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// field is one argument after bash's word expansions, as far as they can
// be known without running anything.
type field struct {
	s    string // the text; unknown parts keep their source form ($X, $(…))
	dyn  bool   // some part is only known at run time
	lead bool   // the field starts with an unknown expansion ("$DIR/x")
	glob bool   // an unquoted glob metacharacter (pathname expansion)
	proc bool   // a process substitution <(…) or >(…)
	sub  traits // traits of the substitutions inside
	pos  syntax.Pos
	// paths are globs over the file names a substitution in the field
	// prints ($(find ~ -name id_rsa): "~/**/id_rsa"), judged like the
	// names themselves.
	paths *[]listing
}

// globs returns the field's produced-name globs (see field.paths).
func (f *field) globs() []listing {
	if f.paths == nil {
		return nil
	}
	return *f.paths
}

// addGlobs adds produced-name globs to the field (a new list: fields are
// copied, their lists shared).
func (f *field) addGlobs(gs ...listing) {
	if len(gs) == 0 {
		return
	}
	l := append(slices.Clip(f.globs()), gs...)
	f.paths = &l
}

// maxBraceFields bounds brace expansion.
const maxBraceFields = 256

// fieldsOf expands words into fields: brace expansion, tilde, parameter,
// command and arithmetic substitution (statically where possible), field
// splitting on IFS and quote removal. Substitutions are classified as a
// side effect.
func (r *run) fieldsOf(words []*syntax.Word) []field {
	out := make([]field, 0, len(words))
	for _, w := range words {
		out = r.appendWord(out, w)
	}
	return out
}

func (r *run) appendWord(out []field, w *syntax.Word) []field {
	if w == nil || len(w.Parts) == 0 {
		return out
	}
	if len(w.Parts) == 1 {
		// Fast path for the common plain word: no quotes to remove, no
		// expansion, no glob.
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if !plainWordSpecial.any(p.Value) {
				return append(out, field{s: p.Value, pos: w.Pos()})
			}
		case *syntax.SglQuoted:
			if !p.Dollar {
				return append(out, field{s: p.Value, pos: w.Pos()})
			}
		}
	}
	if hasBrace(w) {
		w2 := &syntax.Word{Parts: slices.Clone(w.Parts)}
		if syntax.SplitBraces(w2) {
			exp, truncated := expandBraces(w2.Parts, maxBraceFields)
			if truncated {
				r.addAt(review, "limit.brace", fmt.Sprintf("brace expansion over %d words", maxBraceCover), w.Pos(), w.End())
			}
			for _, parts := range exp {
				out = r.expandParts(out, parts, w.Pos())
			}
			return out
		}
	}
	return r.expandParts(out, w.Parts, w.Pos())
}

func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			return true
		}
	}
	return false
}

// expandBraces turns parts with BraceExp nodes into the list of plain part
// lists bash would produce. When the full product would exceed limit, it
// returns a covering set instead: every alternative of every brace
// appears at least once, with the first alternative of the other braces,
// so that no alternative escapes the rules ("cat {a,b,…,~/.ssh/id_rsa}"
// with thousands of decoys). The result has at most maxBraceCover lists;
// truncated reports whether anything was left out even so.
func expandBraces(parts []syntax.WordPart, limit int) (out [][]syntax.WordPart, truncated bool) {
	type slot struct {
		part syntax.WordPart
		alts [][]syntax.WordPart
	}
	slots := make([]slot, 0, len(parts))
	product := 1
	for _, p := range parts {
		be, ok := p.(*syntax.BraceExp)
		if !ok {
			slots = append(slots, slot{part: p})
			continue
		}
		var alts [][]syntax.WordPart
		if be.Sequence {
			alts = braceSequence(be)
		} else {
			for _, e := range be.Elems {
				sub, tr := expandBraces(e.Parts, limit)
				truncated = truncated || tr
				alts = append(alts, sub...)
			}
		}
		if len(alts) == 0 {
			alts = [][]syntax.WordPart{nil}
		}
		if len(alts) > maxBraceCover {
			alts, truncated = alts[:maxBraceCover], true
		}
		product = min(product*len(alts), limit+1)
		slots = append(slots, slot{alts: alts})
	}
	build := func(choice func(i int) []syntax.WordPart) []syntax.WordPart {
		var w []syntax.WordPart
		for i, sl := range slots {
			if sl.alts == nil {
				w = append(w, sl.part)
			} else {
				w = append(w, choice(i)...)
			}
		}
		return w
	}
	if product <= limit {
		out = [][]syntax.WordPart{nil}
		for _, sl := range slots {
			if sl.alts == nil {
				for i := range out {
					out[i] = append(out[i], sl.part)
				}
				continue
			}
			next := make([][]syntax.WordPart, 0, len(out)*len(sl.alts))
			// Every combination is carved from one batch, each capped
			// at its length so that later appends copy.
			n := 0
			for _, pre := range out {
				for _, a := range sl.alts {
					n += len(pre) + len(a)
				}
			}
			batch := make([]syntax.WordPart, 0, n)
			for _, pre := range out {
				for _, a := range sl.alts {
					k := len(batch)
					batch = append(append(batch, pre...), a...)
					next = append(next, batch[k:len(batch):len(batch)])
				}
			}
			out = next
		}
		return out, truncated
	}
	for i, sl := range slots {
		for k := range sl.alts {
			if k == 0 && i > 0 && len(out) > 0 {
				continue // the all-first combination is already there
			}
			if len(out) >= maxBraceCover {
				return out, true
			}
			out = append(out, build(func(j int) []syntax.WordPart {
				if j == i {
					return slots[j].alts[k]
				}
				return slots[j].alts[0]
			}))
		}
	}
	return out, truncated
}

// maxBraceCover bounds a covering brace expansion (see expandBraces).
const maxBraceCover = 4096

func braceSequence(be *syntax.BraceExp) [][]syntax.WordPart {
	if len(be.Elems) < 2 {
		return nil
	}
	from, to := be.Elems[0].Lit(), be.Elems[1].Lit()
	// The alternatives' parts and literals come from two batches (one
	// allocation each instead of two per alternative).
	const maxSeq = 32
	var (
		out   [][]syntax.WordPart
		lits  []syntax.Lit
		parts []syntax.WordPart
	)
	lit := func(s string) []syntax.WordPart {
		if lits == nil {
			lits, parts = make([]syntax.Lit, maxSeq), make([]syntax.WordPart, maxSeq)
			out = make([][]syntax.WordPart, 0, maxSeq)
		}
		i := len(out)
		lits[i].Value = s
		parts[i] = &lits[i]
		return parts[i : i+1 : i+1]
	}
	a, err1 := strconv.Atoi(from)
	b, err2 := strconv.Atoi(to)
	if err1 == nil && err2 == nil {
		step := 1
		if a > b {
			step = -1
		}
		for i := a; len(out) < maxSeq; i += step {
			out = append(out, lit(strconv.Itoa(i)))
			if i == b {
				break
			}
		}
		return out
	}
	if len(from) == 1 && len(to) == 1 {
		x, y := from[0], to[0]
		step := 1
		if x > y {
			step = -1
		}
		for i := int(x); len(out) < maxSeq; i += step {
			out = append(out, lit(string(rune(i))))
			if i == int(y) {
				break
			}
		}
	}
	return out
}

// builder accumulates fields while expanding one word.
type builder struct {
	out     []field
	cur     field
	started bool
	sb      strings.Builder
	// expanded counts the bytes variable values added (see
	// maxWordExpansion).
	expanded int
}

// maxWordExpansion bounds the bytes of known variable values one word's
// expansion takes ($a$a$a… with a 16 KiB value): past it a value is a
// part known only at run time.
const maxWordExpansion = 64 << 10

// fits reports whether a value of n bytes may still be expanded, and
// counts it.
func (b *builder) fits(n int) bool {
	if b.expanded+n > maxWordExpansion {
		return false
	}
	b.expanded += n
	return true
}

func (b *builder) lit(s string) {
	b.sb.WriteString(s)
	b.started = true
}

func (b *builder) flush() {
	if b.started {
		b.cur.s = b.sb.String()
		b.out = append(b.out, b.cur)
	}
	b.sb.Reset()
	b.cur = field{pos: b.cur.pos}
	b.started = false
}

// split adds an unquoted expansion's value, splitting it on ifs.
func (b *builder) split(val, ifs string) {
	for _, c := range val {
		if strings.ContainsRune(ifs, c) {
			if c == ' ' || c == '\t' || c == '\n' {
				if b.started {
					b.flush()
				}
				continue
			}
			b.started = true
			b.flush()
			continue
		}
		b.sb.WriteRune(c)
		b.started = true
	}
}

func (b *builder) dynamic(src string) {
	if !b.started || b.sb.Len() == 0 {
		b.cur.lead = true
	}
	b.cur.dyn = true
	b.lit(src)
}

func (r *run) expandParts(out []field, parts []syntax.WordPart, pos syntax.Pos) []field {
	b := &builder{out: out, cur: field{pos: pos}}
	for i, p := range parts {
		r.expandPart(b, p, false, i == 0)
	}
	b.flush()
	return b.out
}

func (r *run) expandPart(b *builder, p syntax.WordPart, quoted, first bool) {
	switch x := p.(type) {
	case *syntax.Lit:
		v := x.Value
		if quoted {
			b.lit(unescapeDouble(v))
			return
		}
		if globBytes.any(v) && v != "[" {
			// A lone "[" (the test command) matches nothing but itself.
			b.cur.glob = true
		}
		if first && (v == "~" || strings.HasPrefix(v, "~/")) {
			b.lit("~")
			v = v[1:]
		}
		b.lit(unescapeUnquoted(v))
	case *syntax.SglQuoted:
		if x.Dollar {
			b.lit(ansiC(x.Value))
		} else {
			b.lit(x.Value)
		}
	case *syntax.DblQuoted:
		b.started = true
		for _, q := range x.Parts {
			r.expandPart(b, q, true, false)
		}
	case *syntax.ParamExp:
		r.expandParam(b, x, quoted)
	case *syntax.CmdSubst:
		t := r.subst(x, x.Stmts)
		b.cur.sub |= t
		b.cur.addGlobs(r.substPaths[x]...)
		if v, ok := r.staticSubst(x); ok {
			if quoted {
				b.lit(v)
			} else {
				b.split(v, r.ifs)
			}
			return
		}
		b.dynamic("$(…)")
	case *syntax.ArithmExp:
		r.scan(x)
		r.arith(x.X, x.Pos(), x.End())
		b.dynamic("$((…))")
	case *syntax.ProcSubst:
		t := r.subst(x, x.Stmts)
		b.cur.sub |= t
		b.cur.proc = true
		b.lit("/dev/fd/63")
	case *syntax.ExtGlob:
		b.cur.glob = true
		b.lit(x.Op.String() + x.Pattern.Value + ")")
	default:
		r.scan(x)
		b.dynamic("?")
	}
}

func (r *run) expandParam(b *builder, x *syntax.ParamExp, quoted bool) {
	if x.Exp != nil || x.Repl != nil || x.Slice != nil || x.Index != nil || x.NestedParam != nil {
		r.scan(x)
	}
	if x.Index != nil || x.Slice != nil || x.Excl {
		r.paramExp(x)
	}
	name := ""
	if x.Param != nil {
		name = x.Param.Value
	}
	if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && strings.Contains(x.Exp.Word.Lit(), "P") {
		// ${x@P}: prompt expansion runs the command substitutions in x.
		if v, ok := r.vars[name]; ok {
			r.document(v, x.Pos())
		} else {
			r.addAt(review, "expansion.prompt", "prompt expansion of an unknown value can run commands", x.Pos(), x.End())
		}
	}
	simple := x.Exp == nil && x.Repl == nil && x.Slice == nil && x.Index == nil && !x.Length && !x.Excl && x.Names == 0 && x.NestedParam == nil
	if simple {
		if v, ok := r.lookup(name); ok && b.fits(len(v)) {
			if quoted {
				b.lit(v)
			} else {
				b.split(v, r.ifs)
			}
			return
		}
	}
	if !simple && !x.Length && x.Names == 0 {
		// ${x%…}, ${x/…/…}, ${x,,}, ${x:3}, ${x@Q}, ${!ref}: the
		// shell's own expansion of the known values.
		if v, ok := r.evalParam(x); ok && b.fits(len(v)) {
			for i, piece := range strings.Split(v, unknownValue) {
				if i > 0 {
					b.dynamic("$" + name)
				}
				if quoted {
					b.lit(piece)
				} else {
					b.split(piece, r.ifs)
				}
			}
			return
		}
	}
	if x.Length {
		b.lit("0")
		b.cur.dyn = true
		return
	}
	b.dynamic("$" + name)
}

// evalParam expands x with mvdan.cc/sh's expand package over the values
// lookup knows. A variable it does not know (and HOME or PWD unless
// assigned in the command) expands to unknownValue, which the caller turns back
// into a run-time part: ${HOME/x/y}/shadow is "$HOME/shadow", judged by
// its known suffix. ok is false when x runs a command, the expansion
// fails, an unknown value is a pattern, an offset or an index (what it
// removes or keeps is unknown), or an operator cut an unknown value.
func (r *run) evalParam(x *syntax.ParamExp) (string, bool) {
	ok := true
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			ok = false
		}
		return ok
	})
	if !ok {
		return "", false
	}
	var patterns []syntax.Node
	if x.Repl != nil && x.Repl.Orig != nil {
		patterns = append(patterns, x.Repl.Orig)
	}
	if x.Exp != nil && x.Exp.Word != nil {
		switch x.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull,
			syntax.AssignUnset, syntax.AssignUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		default:
			patterns = append(patterns, x.Exp.Word)
		}
	}
	if x.Slice != nil {
		patterns = append(patterns, x.Slice.Offset, x.Slice.Length)
	}
	if x.Index != nil {
		patterns = append(patterns, x.Index)
	}
	env := &knownEnv{r: r}
	// The expansion's size is bounded by the values it reads (a
	// replacement repeats its text once per match): small values only.
	size := 0
	syntax.Walk(x, func(n syntax.Node) bool {
		if pe, isParam := n.(*syntax.ParamExp); isParam && pe.Param != nil {
			if v, known := r.lookup(pe.Param.Value); known {
				size += len(v)
			}
		}
		return true
	})
	if size > maxEvalInput {
		return "", false
	}
	for _, p := range patterns {
		if p == nil || isNilNode(p) {
			continue
		}
		syntax.Walk(p, func(n syntax.Node) bool {
			if pe, isParam := n.(*syntax.ParamExp); isParam && pe.Param != nil {
				env.Get(pe.Param.Value)
			}
			return true
		})
	}
	if env.miss {
		return "", false
	}
	if x.Repl != nil {
		if v, handled, ok := r.evalReplace(x, env); handled {
			cut := env.miss && strings.Count(v, "\x00") != 2*strings.Count(v, unknownValue)
			return v, ok && !cut && len(v) <= maxKnownValue
		}
	}
	v, err := expand.Literal(&expand.Config{Env: env}, &syntax.Word{Parts: []syntax.WordPart{x}})
	if err != nil || len(v) > maxKnownValue {
		return "", false
	}
	if env.miss && strings.Count(v, "\x00") != 2*strings.Count(v, unknownValue) {
		return "", false // an operator cut an unknown value
	}
	return v, true
}

// maxEvalInput bounds the bytes of the known values one evalParam
// expansion reads: its result is then at most about maxEvalInput squared
// (${a//x/$a$a}), and a chain of such assignments stays small.
const maxEvalInput = 1 << 10

// evalReplace evaluates ${x/pat/rep} where expand's semantics differ
// from bash 5.2's: the anchors ${x/#pat/rep} and ${x/%pat/rep} (expand
// matches "#pat" literally) and "&" in rep, which bash 5.2 replaces with
// the matched text (patsub_replacement, on by default; "\&" is a literal
// "&"). handled is false when neither applies (expand's answer stands);
// ok is false when x's pattern is a glob or a value is unknown, where the
// word stays known only at run time.
func (r *run) evalReplace(x *syntax.ParamExp, env *knownEnv) (v string, handled, ok bool) {
	orig := ""
	if x.Repl.Orig != nil {
		var static bool
		if orig, static = staticText(x.Repl.Orig); !static {
			orig = "?" // not literal
		}
	}
	var with string
	withAmp := false
	if x.Repl.With != nil {
		if lit, static := staticText(x.Repl.With); static {
			with, withAmp = lit, strings.Contains(lit, "&")
		} else if raw := x.Repl.With.Lit(); strings.Contains(raw, "&") {
			withAmp = true
		}
	}
	anchor := byte(0)
	if orig != "" && (orig[0] == '#' || orig[0] == '%') {
		anchor, orig = orig[0], orig[1:]
	}
	if anchor == 0 && !withAmp {
		return "", false, false
	}
	if strings.ContainsAny(orig, "*?[\\") || x.Param == nil {
		return "", true, false
	}
	val, known := r.lookup(x.Param.Value)
	if !known || env.miss {
		return "", true, false
	}
	if x.Repl.With != nil && !withAmp {
		// A value known only at run time stays unknownValue in rep.
		w, err := expand.Literal(&expand.Config{Env: env}, x.Repl.With)
		if err != nil {
			return "", true, false
		}
		with = w
	}
	if withAmp {
		if _, static := staticText(x.Repl.With); !static {
			return "", true, false
		}
		var b strings.Builder
		for i := 0; i < len(with); i++ {
			switch {
			case with[i] == '\\' && i+1 < len(with) && with[i+1] == '&':
				b.WriteByte('&')
				i++
			case with[i] == '&':
				b.WriteString(orig)
			default:
				b.WriteByte(with[i])
			}
		}
		with = b.String()
	}
	switch {
	case anchor == '#':
		if strings.HasPrefix(val, orig) {
			val = with + val[len(orig):]
		}
	case anchor == '%':
		if strings.HasSuffix(val, orig) {
			val = val[:len(val)-len(orig)] + with
		}
	case orig == "":
	case x.Repl.All:
		val = strings.ReplaceAll(val, orig, with)
	default:
		val = strings.Replace(val, orig, with, 1)
	}
	return val, true, true
}

// isNilNode reports whether n is a typed nil (an absent ArithmExpr).
func isNilNode(n syntax.Node) bool {
	switch n := n.(type) {
	case syntax.ArithmExpr:
		return n == nil
	}
	return false
}

// unknownValue stands for a variable's value known only at run time in
// evalParam's expansion: no pattern, case or quoting operator changes
// it, and it holds no character a path or glob gives.
const unknownValue = "\x00\x01\x02\x01\x00"

// knownEnv is the expand.Environ of a run's statically known variables
// (lookup); others are unknownValue, and miss records that one was read.
type knownEnv struct {
	r    *run
	miss bool
	// name, when set, reads as val (historyUses).
	name, val string
	// dirs: HOME and PWD are lookup's "~" and "." (a path's text, for
	// namedTexts), not unknown.
	dirs bool
}

func (e *knownEnv) Get(name string) expand.Variable {
	if e.name != "" && name == e.name {
		return expand.Variable{Set: true, Kind: expand.String, Str: e.val}
	}
	v, ok := e.r.lookup(name)
	if _, set := e.r.vars[name]; ok && !e.dirs && !set && !e.r.namerefs[name] && (name == "HOME" || name == "PWD") {
		// lookup's "~" and "." stand for directories, they are not
		// their text; and an operator over them is a path computed
		// at run time, judged by what it could produce.
		ok = false
	}
	if !ok {
		e.miss = true
		return expand.Variable{Set: true, Kind: expand.String, Str: unknownValue}
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: v}
}

func (e *knownEnv) Each(fn func(name string, vr expand.Variable) bool) {
	e.miss = true // a listing of names: not every variable is known
	for n, v := range e.r.vars {
		if !fn(n, expand.Variable{Set: true, Kind: expand.String, Str: v}) {
			return
		}
	}
}

// lookup returns a variable's value when it is known statically; a
// nameref (declare -n) gives the value of the variable it names.
func (r *run) lookup(name string) (string, bool) {
	for range 8 {
		if !r.namerefs[name] {
			break
		}
		target, ok := r.vars[name]
		if !ok {
			return "", false
		}
		name = target
	}
	if r.namerefs[name] {
		return "", false // a cycle, or too deep
	}
	if v, ok := r.vars[name]; ok {
		return v, true
	}
	switch name {
	case "HOME":
		return "~", true
	case "IFS":
		return r.ifs, true
	case "PWD":
		if r.cwd == "" {
			return ".", true
		}
		return r.cwd, true
	}
	return "", false
}

// unescapeUnquoted removes backslashes as bash does outside quotes.
func unescapeUnquoted(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// unescapeDouble removes backslashes as bash does inside double quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// ansiC decodes the body of a $'…' string.
func ansiC(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'a':
			sb.WriteByte(7)
		case 'b':
			sb.WriteByte(8)
		case 'e', 'E':
			sb.WriteByte(27)
		case 'f':
			sb.WriteByte(12)
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte(11)
		case 'c':
			if i+1 < len(s) {
				i++
				sb.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				sb.WriteByte('\\')
				sb.WriteByte(s[i])
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if s[i] == 'x' {
				sb.WriteByte(byte(n))
			} else if utf8.ValidRune(rune(n)) {
				sb.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			sb.WriteByte(byte(n))
			i = j - 1
		default:
			sb.WriteByte(s[i])
		}
	}
	return sb.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// printfFormat renders a printf format with %s/%b/%d/%c and escapes, enough
// to resolve command names built with printf.
func printfFormat(format string, args []string) string {
	var sb strings.Builder
	ai := 0
	next := func() string {
		if ai < len(args) {
			ai++
			return args[ai-1]
		}
		return ""
	}
	for {
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c == '\\' && i+1 < len(format) {
				j := i + 1
				k := j + 1
				if format[j] == 'x' || format[j] >= '0' && format[j] <= '7' {
					for k < len(format) && k-j < 4 && (isHex(format[k]) && format[j] == 'x' || format[k] >= '0' && format[k] <= '7' && format[j] != 'x') {
						k++
					}
				}
				sb.WriteString(ansiC(format[i:k]))
				i = k - 1
				continue
			}
			if c == '%' && i+1 < len(format) {
				j := i + 1
				for j < len(format) && strings.IndexByte("-+ #0123456789.", format[j]) >= 0 {
					j++
				}
				if j >= len(format) {
					break
				}
				switch format[j] {
				case '%':
					sb.WriteByte('%')
				case 'b':
					sb.WriteString(ansiC(next()))
				case 'c':
					if a := next(); a != "" {
						sb.WriteByte(a[0])
					}
				default:
					sb.WriteString(next())
				}
				i = j
				continue
			}
			sb.WriteByte(c)
		}
		if ai == 0 || ai >= len(args) || sb.Len() > 4096 {
			break
		}
	}
	return sb.String()
}
