package classify

import (
	"strings"
)

// anPager handles pagers whose startup options run pager commands:
// less's "+cmd" and "++cmd" (any less command, run before the first
// screen: "!cmd" runs a shell command, "|Xcmd" pipes to one, "v" runs an
// editor, "s file" writes a file; LESS(1) "OPTIONS", "+"), less's lesskey
// files (-k, --lesskey-file, --lesskey-src, --lesskey-content, which can
// set LESSOPEN), and more's "+num" / "+/pattern" (anything else is
// unknown). A plain goto or search is safe; a shell escape is review and
// its command is classified as a nested script; any other command is
// review.
func (r *run) anPager(a *actx) {
	args := a.args[1:]
	var files []field
	less := a.key != "more"
	for i := 0; i < len(args); i++ {
		f := args[i]
		s := f.s
		if s == "--" && !f.dyn {
			files = append(files, args[i+1:]...)
			break
		}
		switch {
		case strings.HasPrefix(s, "+") && len(s) > 1:
			r.pagerCommand(a.key, f, less, a.cx)
		case less && (s == "-k" || s == "--lesskey-file" || s == "--lesskey-src" || s == "--lesskey-content"):
			r.add(a.cx, review, "pager.lesskey", a.key+" "+s+" loads key bindings and environment settings (LESSOPEN runs a program)")
			i++
		case less && (strings.HasPrefix(s, "--lesskey") || strings.HasPrefix(s, "-k") && len(s) > 2 && !strings.HasPrefix(s, "--")):
			r.add(a.cx, review, "pager.lesskey", a.key+" "+clip(s, 30)+" loads key bindings and environment settings (LESSOPEN runs a program)")
		case less && slicesContains(a.valueFlags, s):
			i++
		default:
			if !strings.HasPrefix(s, "-") || s == "-" || f.dyn {
				files = append(files, f)
			}
		}
	}
	a.files, a.filesSet = files, true
}

func slicesContains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// lessEnv applies the pager rules to the options in $LESS, which less
// reads as if given first on its command line; there a string option
// such as "+cmd" runs to a "$" or the end of the value.
func (r *run) lessEnv(val string, cx *callCtx) {
	for i := 0; i < len(val); i++ {
		if val[i] != '+' || i > 0 && val[i-1] != ' ' && val[i-1] != '$' && val[i-1] != '\t' {
			continue
		}
		end := strings.IndexByte(val[i:], '$')
		if end < 0 {
			end = len(val) - i
		}
		r.pagerCommand("LESS", field{s: val[i : i+end]}, true, cx)
		i += end
	}
	for _, w := range strings.Fields(val) {
		if strings.HasPrefix(w, "-k") || strings.HasPrefix(w, "--lesskey") {
			r.add(cx, review, "pager.lesskey", "LESS loads a lesskey file (key bindings and environment settings)")
		}
	}
}

// pagerCommand classifies one "+cmd" startup option.
func (r *run) pagerCommand(key string, f field, less bool, cx *callCtx) {
	if f.dyn {
		r.add(cx, review, "pager.command", key+" runs a pager command computed at run time")
		r.dynamicScript(field{s: strings.TrimLeft(f.s, "+"), dyn: true, sub: f.sub}, cx)
		return
	}
	c := strings.TrimPrefix(f.s, "+")
	if less {
		c = strings.TrimPrefix(c, "+")
	}
	if c == "" {
		return
	}
	if strings.ContainsAny(c, "\n\r") {
		r.add(cx, review, "pager.command", key+" +cmd runs several pager commands")
		for _, line := range strings.FieldsFunc(c, func(r rune) bool { return r == '\n' || r == '\r' }) {
			r.pagerCommand(key, field{s: "+" + line}, less, cx)
		}
		return
	}
	if gotoCommand(c, less) || c[0] == '/' || less && (c[0] == '?' || c[0] == '&') {
		return
	}
	if !less {
		r.add(cx, review, "pager.command", key+" "+clip(f.s, 40)+" is not a line number or search")
		return
	}
	switch {
	case c[0] == '!':
		r.add(cx, review, "pager.shell", key+" "+clip(f.s, 40)+" runs a shell command")
		if cmd := strings.TrimSpace(strings.ReplaceAll(c[1:], "%", "FILE")); cmd != "" && cmd != "!" {
			r.nested(cx, cmd)
		}
	case c[0] == '|' && len(c) > 2:
		r.add(cx, review, "pager.shell", key+" "+clip(f.s, 40)+" pipes the file to a shell command")
		r.nested(cx, strings.TrimSpace(strings.ReplaceAll(c[2:], "%", "FILE")))
	default:
		r.add(cx, review, "pager.command", key+" "+clip(f.s, 40)+" runs a pager command (editor, save to file, option change) before the first screen")
	}
}

// gotoCommand reports whether c is a plain movement: [N]g, [N]G, [N]p,
// [N]%, a bare number, F (follow) or, for more, a line number.
func gotoCommand(c string, less bool) bool {
	i := 0
	for i < len(c) && c[i] >= '0' && c[i] <= '9' {
		i++
	}
	rest := c[i:]
	if !less {
		return rest == "" && i > 0
	}
	switch rest {
	case "", "g", "G", "p", "P", "%", "F", "j", "k", "e", "y", "f", "b", "d", "u", "<", ">", "R":
		return true
	}
	return false
}

// anEd handles ed and red: a file operand starting with "!" reads the
// output of a shell command, and a script fed on stdin may run "!cmd",
// "r !cmd", "w !cmd" or "e !cmd" (ED(1) "COMMANDS").
//
// A file operand is the file ed edits: its "w" writes it, so it is a
// write target (ed -s ~/.bashrc is high); -p/--prompt takes a value.
func (r *run) anEd(a *actx) {
	var files []field
	args := a.args[1:]
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.s == "-p" || f.s == "--prompt" {
			i++
			continue
		}
		if strings.HasPrefix(f.s, "!") && len(f.s) > 1 {
			r.add(a.cx, review, "ed.shell", a.key+" "+clip(f.s, 40)+" reads the output of a shell command")
			r.nested(a.cx, f.s[1:])
			continue
		}
		if !strings.HasPrefix(f.s, "-") {
			files = append(files, f)
		}
	}
	a.files, a.filesSet = files, true
	for _, f := range files {
		r.writePath(f, a.key, a.cx)
	}
	text, ok := "", false
	if a.cx.stmt != nil {
		text, ok = r.stdinText(a.cx.stmt)
	}
	if !ok && r.hasPipeIn {
		text, ok = r.pipeIn, true
	}
	if !ok {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		i := strings.Index(t, "!")
		if i < 0 {
			continue
		}
		// "!cmd", "ADDR!cmd", "[ADDR]r !cmd", "[ADDR]w !cmd", "e !cmd".
		switch strings.TrimSpace(strings.TrimLeft(t[:i], "0123456789.,$;+- ")) {
		case "", "r", "w", "W", "e", "E":
		default:
			continue
		}
		r.add(a.cx, review, "ed.shell", a.key+" script runs a shell command")
		if cmd := strings.TrimSpace(t[i+1:]); cmd != "" {
			r.nested(a.cx, cmd)
		}
	}
}

// anDc handles dc: "!" runs the rest of the line as a shell command
// (DC(1) "Miscellaneous"; "!<", "!>" and "!=" are negated comparisons),
// in a script given with -e/--expression, read from a file (-f/--file or
// an operand: review, its text is unknown) or from stdin.
func (r *run) anDc(a *actx) {
	var scripts []string
	args := a.args[1:]
	for i := 0; i < len(args); i++ {
		f := args[i]
		switch {
		case f.s == "-e" || f.s == "--expression":
			if i+1 < len(args) {
				i++
				r.dcScript(a, args[i])
			}
		case strings.HasPrefix(f.s, "--expression="):
			r.dcScript(a, field{s: strings.TrimPrefix(f.s, "--expression="), dyn: f.dyn})
		case strings.HasPrefix(f.s, "-e") && len(f.s) > 2:
			r.dcScript(a, field{s: f.s[2:], dyn: f.dyn})
		case f.s == "-f" || f.s == "--file" || strings.HasPrefix(f.s, "--file=") || strings.HasPrefix(f.s, "-f") && len(f.s) > 2:
			if (f.s == "-f" || f.s == "--file") && i+1 < len(args) {
				i++
			}
			r.add(a.cx, review, "dc.script-file", a.key+" runs a script file (dc's \"!\" runs shell commands)")
		case f.s == "-" || !strings.HasPrefix(f.s, "-"):
			if f.s != "-" {
				r.add(a.cx, review, "dc.script-file", a.key+" runs a script file (dc's \"!\" runs shell commands)")
			}
		}
	}
	text, ok := "", false
	if a.cx.stmt != nil {
		text, ok = r.stdinText(a.cx.stmt)
	}
	if !ok && r.hasPipeIn {
		text, ok = r.pipeIn, true
	}
	if ok {
		scripts = append(scripts, text)
	}
	for _, s := range scripts {
		r.dcScript(a, field{s: s})
	}
}

// dcScript classifies the shell commands a dc script runs.
func (r *run) dcScript(a *actx, f field) {
	if f.dyn {
		r.add(a.cx, review, "dc.dynamic-script", a.key+" script computed at run time (dc's \"!\" runs shell commands)")
		return
	}
	s := f.s
	for {
		i := strings.IndexByte(s, '!')
		if i < 0 {
			return
		}
		s = s[i+1:]
		if s != "" && strings.IndexByte("<>=", s[0]) >= 0 {
			continue
		}
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		r.add(a.cx, review, "dc.shell", a.key+" script runs a shell command")
		if cmd := strings.TrimSpace(line); cmd != "" {
			r.nested(a.cx, cmd)
			if j := strings.IndexByte(cmd, ']'); j > 0 {
				// Inside a string run as a macro: the command ends there.
				r.nested(a.cx, cmd[:j])
			}
		}
	}
}

// anJobs handles the jobs builtin: "jobs -x COMMAND ARGS" runs COMMAND.
func (r *run) anJobs(a *actx) traits {
	for i, f := range a.args[1:] {
		if f.s == "-x" {
			if rest := a.args[i+2:]; len(rest) > 0 {
				r.add(a.cx, review, "jobs.exec", a.key+" -x runs a command")
				return r.argv(rest, a.cx)
			}
			return 0
		}
		if !strings.HasPrefix(f.s, "-") {
			return 0
		}
	}
	return 0
}
