package classify

import (
	"strings"
)

func (r *run) anAwk(a *actx) traits {
	args := a.args[1:]
	var prog *field
	var files []field
	inplace := false // gawk -i inplace edits the files
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--":
			if prog == nil && i+1 < len(args) {
				p := args[i+1]
				prog = &p
				i++
			}
			files = append(files, args[i+1:]...)
			i = len(args)
		case s == "-f" || s == "--file" || strings.HasPrefix(s, "-f") && len(s) > 2 && !strings.HasPrefix(s, "--"):
			r.add(a.cx, review, "awk.program-file", "awk runs a program file")
			prog = &field{}
			if s == "-f" || s == "--file" {
				i++
			}
		case s == "-v" || s == "-F" || s == "--assign" || s == "--field-separator" || s == "-i" || s == "--include" || s == "-l" || s == "--load":
			if (s == "-i" || s == "--include") && i+1 < len(args) && strings.TrimSuffix(args[i+1].s, ".awk") == "inplace" {
				inplace = true
			}
			i++
		case s == "--include=inplace" || s == "-iinplace":
			inplace = true
		case s == "-e" || s == "--source":
			if i+1 < len(args) {
				p := args[i+1]
				prog = &p
				i++
			}
		case strings.HasPrefix(s, "-") && len(s) > 1 && !args[i].dyn:
		default:
			if prog == nil {
				p := args[i]
				prog = &p
			} else {
				files = append(files, args[i])
			}
		}
	}
	a.files, a.filesSet = files, true
	if inplace {
		for _, f := range files {
			r.writePath(f, a.key+" -i inplace", a.cx)
		}
	}
	if prog == nil || prog.s == "" {
		return 0
	}
	if prog.dyn {
		r.add(a.cx, review, "awk.dynamic", "awk program computed at run time")
	}
	r.awkProgram(prog.s, a)
	return 0
}

// awkProgram finds system(), print/printf redirections, pipes to and from
// commands and getline from files in an awk program.
func (r *run) awkProgram(p string, a *actx) {
	toks := awkTokens(p)
	inPrint := false
	depth := 0
	for i, t := range toks {
		switch {
		case t == "print" || t == "printf":
			inPrint, depth = true, 0
		case t == ";" || t == "}" || t == "{" || t == "\n":
			inPrint = false
		case t == "(":
			depth++
		case t == ")":
			depth--
		case t == "system":
			r.add(a.cx, review, "awk.system", "awk system() runs a shell command")
			if i+2 < len(toks) && toks[i+1] == "(" && isAwkString(toks[i+2]) {
				r.nested(a.cx, awkUnquote(toks[i+2]))
			}
		case (t == ">" || t == ">>") && inPrint && depth <= 0:
			if i+1 < len(toks) && isAwkString(toks[i+1]) {
				r.writePath(field{s: awkUnquote(toks[i+1])}, "awk print", a.cx)
			} else {
				r.add(a.cx, review, "awk.write", "awk writes to a file named at run time")
			}
		case t == "|" || t == "|&":
			switch {
			case inPrint && i+1 < len(toks) && isAwkString(toks[i+1]):
				r.add(a.cx, review, "awk.pipe", "awk pipes output into a command")
				r.nested(a.cx, awkUnquote(toks[i+1]))
			case i+1 < len(toks) && toks[i+1] == "getline" && i > 0 && isAwkString(toks[i-1]):
				r.add(a.cx, review, "awk.pipe", "awk runs a command and reads its output")
				r.nested(a.cx, awkUnquote(toks[i-1]))
			case inPrint || i+1 < len(toks) && toks[i+1] == "getline":
				r.add(a.cx, review, "awk.pipe", "awk runs a command named at run time")
			}
		case t == "<" && (i > 0 && toks[i-1] == "getline" || i > 1 && toks[i-2] == "getline"):
			if i+1 < len(toks) && isAwkString(toks[i+1]) {
				r.readPath(field{s: awkUnquote(toks[i+1])}, a.cx)
			}
		}
	}
}

func isAwkString(t string) bool { return len(t) >= 2 && t[0] == '"' }

func awkUnquote(t string) string {
	t = strings.TrimSuffix(strings.TrimPrefix(t, "\""), "\"")
	return unescapeDouble(strings.ReplaceAll(t, "\\\"", "\""))
}

// awkTokens splits an awk program into strings, regexes, words and
// operators (enough to tell print redirections from comparisons).
func awkTokens(p string) []string {
	var toks []string
	prevValue := false // the previous token ends an operand (so / is division)
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == ' ' || c == '\t' || c == '\\' && i+1 < len(p) && p[i+1] == '\n':
			i++
			if c == '\\' {
				i++
			}
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
		case c == '"':
			j := i + 1
			for j < len(p) && p[j] != '"' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(p))
			toks = append(toks, p[i:j])
			i, prevValue = j, true
		case c == '/' && !prevValue:
			j := i + 1
			for j < len(p) && p[j] != '/' && p[j] != '\n' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(p))
			toks = append(toks, "/re/")
			i, prevValue = j, true
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '$' || c == '.':
			j := i
			for j < len(p) && (p[j] == '_' || p[j] >= 'a' && p[j] <= 'z' || p[j] >= 'A' && p[j] <= 'Z' || p[j] >= '0' && p[j] <= '9' || p[j] == '$' || p[j] == '.') {
				j++
			}
			w := p[i:j]
			toks = append(toks, w)
			i = j
			prevValue = !(w == "print" || w == "printf" || w == "return" || w == "in" || w == "getline")
		default:
			op := string(c)
			if i+1 < len(p) {
				two := p[i : i+2]
				switch two {
				case ">>", ">=", "<=", "==", "!=", "||", "&&", "|&", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", "!~":
					op = two
				}
			}
			toks = append(toks, op)
			i += len(op)
			prevValue = op == ")" || op == "]" || op == "++" || op == "--"
		}
		if len(toks) > 10000 {
			break
		}
	}
	return toks
}
