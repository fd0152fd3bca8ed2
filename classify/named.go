package classify

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// namedSecrets rates review every static path to a file whose read is
// high (a secret) that stands where the walk does not follow it to a use:
// a for list, `set --`, an array element, a parameter expansion's
// default, a here-string, `printf -v`, echo's operands written to a file
// (a list a later step reads: xargs -a l cat), a shell function's argument — when
// no finding of the script already rates it high. The walk follows
// values into operands through plain assignments only; these other ways
// carry a path the model wrote out into a read the walk judges as nothing
// (for f in ~/.ssh/id_rsa; do cat "$f"; done). Review, not high: naming a
// key is not always reading it (chmod 600 ~/.ssh/id_rsa).
func (r *run) namedSecrets(f *syntax.File, from int) {
	if r.maxLevel(from) == high {
		return
	}
	r.historyUses(f)
	checkText := func(s string, w *syntax.Word) bool {
		if v, ok := r.secretText(s); ok {
			shown := strings.Replace(s, unknownMark+"/", "…/", 1)
			r.addAt(review, "secret.named", "names "+v.reason+" ("+clip(shown, 60)+") in a word whose use is not followed", w.Pos(), w.End())
			return true
		}
		return false
	}
	check := func(w *syntax.Word) {
		if w == nil {
			return
		}
		for _, s := range r.namedTexts(w) {
			if checkText(s, w) {
				return
			}
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.WordIter: // for f in WORDS; select f in WORDS
			for _, w := range x.Items {
				check(w)
			}
		case *syntax.ArrayExpr: // a=(WORDS), declare -a a=(…)
			for _, e := range x.Elems {
				check(e.Value)
			}
		case *syntax.ParamExp: // ${x:-WORD}, ${x:=WORD}, ${x:+WORD}
			if x.Exp != nil {
				check(x.Exp.Word)
			}
		case *syntax.Redirect: // <<< WORD
			if x.Op == syntax.WordHdoc {
				check(x.Word)
			}
		case *syntax.Stmt: // echo WORDS > list: a file list a later step reads (xargs -a list cat)
			call, ok := x.Cmd.(*syntax.CallExpr)
			if !ok || len(call.Args) < 2 || !writesFile(x.Redirs) {
				break
			}
			if name, _ := staticText(call.Args[0]); name == "echo" {
				for _, w := range call.Args[1:] {
					check(w)
				}
			}
		case *syntax.CallExpr:
			if len(x.Args) < 2 {
				break
			}
			name, _ := staticText(x.Args[0])
			switch {
			case name == "set", name == "printf", name == "mapfile", name == "readarray", r.funcs[name]:
				// set -- WORDS, printf -v x WORD, a function's arguments.
				for _, w := range x.Args[1:] {
					check(w)
				}
				if name == "printf" {
					if s, ok := r.printfText(x.Args[1:]); ok {
						checkText(s, x.Args[len(x.Args)-1])
					}
				}
			}
		}
		return true
	})
}

// secretText is the high read rule a word's text names as a path (a
// secret file, not a directory), when it looks like one.
func (r *run) secretText(s string) (pathVerdict, bool) {
	if s == "" || !(strings.HasPrefix(s, "~") || strings.HasPrefix(s, ".") || strings.Contains(s, "/")) || !r.cr.secrets.may(s) {
		return pathVerdict{}, false
	}
	v := r.matchPath(r.c.res.resolve(r.cwd, s), false)
	return v, v.level == high && !v.dir
}

// writesFile reports whether redirs send standard output to a file.
func writesFile(redirs []*syntax.Redirect) bool {
	for _, rd := range redirs {
		switch rd.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			return true
		}
	}
	return false
}

// namedTexts are the texts a word may stand for, for namedSecrets: each
// brace expansion of it (~/.aws/{credentials,config}), expanded with the
// values the walk knows ($HOME is "~"); a part known only at run time
// leading the word stands for an unknown directory ($X/.aws/credentials),
// elsewhere it makes the text unknown. A word that runs a command gives
// nothing.
func (r *run) namedTexts(w *syntax.Word) []string {
	if s, ok := staticText(w); ok && !strings.Contains(s, "{") {
		return []string{s}
	}
	return r.namedTextsWith(w, "", "")
}

// namedTextsWith is namedTexts with the variable name reading as val.
func (r *run) namedTextsWith(w *syntax.Word, name, val string) []string {
	var out []string
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	syntax.SplitBraces(cp) // on a copy: the walk's tree stays as parsed
	words := []*syntax.Word{w}
	if braceCount(cp) <= maxBraceWords {
		// expand.Braces builds every word before any cap applies:
		// {a,b}{a,b}… thirty times over is 2^30 words.
		words = expand.Braces(cp)
	}
	for _, bw := range words {
		env := &knownEnv{r: r, dirs: true, name: name, val: val}
		s, err := expand.Literal(&expand.Config{Env: env}, bw)
		if err != nil {
			continue
		}
		if rest, lead := strings.CutPrefix(s, unknownValue); lead {
			s = unknownMark + "/" + rest
		}
		if strings.Contains(s, unknownValue) {
			continue
		}
		out = append(out, s)
		if len(out) >= 16 {
			break
		}
	}
	return out
}

// maxBraceWords bounds the words a brace expansion may give for
// namedTexts to expand it (past it the word is taken as written).
const maxBraceWords = 64

// braceCount is an upper bound of the words w's brace expansions give:
// the product of every brace's alternatives (a sequence {1..N} counted
// as past any bound).
func braceCount(w *syntax.Word) int {
	n := 1
	syntax.Walk(w, func(node syntax.Node) bool {
		b, ok := node.(*syntax.BraceExp)
		if !ok || n > maxBraceWords {
			return n <= maxBraceWords
		}
		if b.Sequence {
			n = maxBraceWords + 1
			return false
		}
		n *= max(len(b.Elems), 1)
		return true
	})
	return n
}

// printfText is the text printf -v VAR FORMAT ARGS… stores when FORMAT
// is made of %s directives and literal text only (printf -v f
// '%s/.aws/credentials' ~).
func (r *run) printfText(args []*syntax.Word) (string, bool) {
	if len(args) < 3 {
		return "", false
	}
	if v, _ := staticText(args[0]); v != "-v" {
		return "", false
	}
	args = args[2:]
	format, ok := staticText(args[0])
	if !ok || strings.Count(format, "%") != strings.Count(format, "%s") {
		return "", false
	}
	var b strings.Builder
	vals := args[1:]
	for {
		i := strings.Index(format, "%s")
		if i < 0 {
			b.WriteString(format)
			break
		}
		b.WriteString(format[:i])
		format = format[i+2:]
		if len(vals) > 0 {
			texts := r.namedTexts(vals[0])
			if len(texts) != 1 {
				return "", false
			}
			b.WriteString(texts[0])
			vals = vals[1:]
		}
	}
	return b.String(), true
}

// staticText is the text of a word made of literals and quotes only.
func staticText(w *syntax.Word) (string, bool) {
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok {
			return l.Value, true
		}
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// historyUses rates review every word that expands a variable which was
// assigned, somewhere in the command, a value that makes the word a
// secret's path, when the walk's own value for it at that point is
// another: the walk tracks one value per variable and takes every
// assignment as run, so a value kept by a branch not taken, a subshell, a
// pipeline stage, a function not called, readonly, or an earlier loop
// (x=~/.ssh/id_rsa; (x=README.md); cat $x) would otherwise be judged as
// the other value. A here-string read into a variable (read f <<< PATH)
// is one of its values.
func (r *run) historyUses(f *syntax.File) {
	if strings.Contains(r.sc.src, "<<<") {
		r.hereStringReads(f)
	}
	stale := false // some variable had a value other than the walk's last
	for name, h := range r.history {
		if cur, known := r.vars[name]; len(h) > 1 || !known || h[0] != cur {
			stale = true
			break
		}
	}
	if !stale {
		return
	}
	r.staleUses(f)
}

// hereStringReads remembers the text of read VAR <<< TEXT (and of a
// while read loop fed by a here-string) as a value of VAR.
func (r *run) hereStringReads(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok || st.Cmd == nil {
			return true
		}
		for _, rd := range st.Redirs {
			if rd.Op != syntax.WordHdoc {
				continue
			}
			text, ok := staticText(rd.Word)
			if !ok {
				continue
			}
			// read VAR <<< TEXT, and while read VAR; do …; done <<< TEXT.
			syntax.Walk(st.Cmd, func(m syntax.Node) bool {
				call, ok := m.(*syntax.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				if name, _ := staticText(call.Args[0]); name == "read" {
					for _, a := range call.Args[1:] {
						if v, ok := staticText(a); ok && v != "" && v[0] != '-' {
							r.rememberValue(v, strings.TrimSpace(text))
						}
					}
				}
				return true
			})
		}
		return true
	})
}

// staleUses is historyUses' check of every word.
func (r *run) staleUses(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		w, ok := n.(*syntax.Word)
		if !ok {
			return true
		}
		for _, name := range paramNames(w) {
			cur, known := r.vars[name]
			for _, v := range r.history[name] {
				if known && v == cur {
					continue
				}
				for _, s := range r.namedTextsWith(w, name, v) {
					if pv, ok := r.secretText(s); ok {
						r.addAt(review, "secret.maybe", "$"+name+" may hold "+clip(v, 40)+" (assigned earlier in the command): then this names "+pv.reason, w.Pos(), w.End())
						return false
					}
				}
			}
		}
		return true
	})
}

// paramNames are the variables a word expands plainly ($x, ${x}, "$x"),
// at most four.
func paramNames(w *syntax.Word) []string {
	var out []string
	var visit func(parts []syntax.WordPart)
	visit = func(parts []syntax.WordPart) {
		for _, p := range parts {
			switch x := p.(type) {
			case *syntax.ParamExp:
				if x.Param != nil && len(out) < 4 {
					out = append(out, x.Param.Value)
				}
			case *syntax.DblQuoted:
				visit(x.Parts)
			}
		}
	}
	visit(w.Parts)
	return out
}
