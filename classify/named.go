package classify

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// namedSecrets rates review every static path to a file whose read is
// high (a secret) that stands where the walk does not follow it to a use:
// a for list, `set --`, an array element, a parameter expansion's
// default, a here-string, `printf -v`, a shell function's argument — when
// no finding of the script already rates it high. The walk follows
// values into operands through plain assignments only; these other ways
// carry a path the model wrote out into a read the walk judges as nothing
// (for f in ~/.ssh/id_rsa; do cat "$f"; done). Review, not high: naming a
// key is not always reading it (chmod 600 ~/.ssh/id_rsa).
func (r *run) namedSecrets(f *syntax.File, from int) {
	if r.maxLevel(from) == high {
		return
	}
	check := func(w *syntax.Word) {
		if w == nil {
			return
		}
		s, ok := staticText(w)
		if !ok || s == "" || !(strings.HasPrefix(s, "~") || strings.HasPrefix(s, ".") || strings.Contains(s, "/")) || !r.cr.secrets.may(s) {
			return
		}
		if v := r.matchPath(r.c.res.resolve(r.cwd, s), false); v.level == high && !v.dir {
			r.addAt(review, "secret.named", "names "+v.reason+" ("+clip(s, 60)+") in a word whose use is not followed", w.Pos(), w.End())
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
			}
		}
		return true
	})
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
