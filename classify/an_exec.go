package classify

// This file holds the analyzers for commands that run other code: shells, interpreters, debuggers, editors, multiplexers, database clients, aliases and traps.

import (
	"fmt"
	"mvdan.cc/sh/v3/syntax"
	"slices"
	"strings"
)

// anMan is the "man" analyzer.
func (r *run) anMan(a *actx) traits {
	if v, ok := flagValue(a.args[1:], "-P", "--pager", "-H", "--html"); ok {
		r.add(a.cx, review, "man.pager", "man runs a chosen pager or browser")
		r.nested(a.cx, v.s)
	}
	return 0
}

// anRg is the "rg" analyzer.
func (r *run) anRg(a *actx) traits {
	if v, ok := flagValue(a.args[1:], "--pre"); ok {
		r.add(a.cx, review, "rg.pre", "rg --pre runs a program on every file")
		r.nested(a.cx, v.s)
	}
	return r.anGrep(a)
}

// anAlias is the "alias" analyzer.
func (r *run) anAlias(a *actx) traits {
	for _, f := range a.args[1:] {
		n, v, ok := strings.Cut(f.s, "=")
		if !ok {
			continue
		}
		a.level, a.id, a.reason = review, "rebind.alias", "defines an alias, which changes what a command name runs"
		if f.dyn {
			continue
		}
		r.nested(a.cx, v)
		if r.aliases == nil {
			r.aliases = map[string]string{}
		}
		r.aliases[n] = v
	}
	return 0
}

// anTrap is the "trap" analyzer. The handler runs later, in whatever
// directory the script is in then: it is judged now, and again after
// every cd (see rejudgeTraps), so that trap 'cat credentials' EXIT;
// cd ~/.aws is judged as reading ~/.aws/credentials.
func (r *run) anTrap(a *actx) traits {
	ops := operands(a.args[1:])
	if len(ops) > 0 && !hasFlag(a.args[1:], "-p", "-l") && ops[0].s != "-" && ops[0].s != "" {
		if ops[0].dyn {
			r.dynamicScript(ops[0], a.cx)
		} else {
			r.nested(a.cx, ops[0].s)
			if len(r.traps) < maxTraps {
				r.traps = append(r.traps, trapCode{script: ops[0].s, pos: a.cx.pos, end: a.cx.end, stmt: a.cx.stmt})
			} else {
				r.add(a.cx, review, "trap.many", fmt.Sprintf("more than %d trap handlers: the later ones are judged only where they are set", maxTraps))
			}
		}
	}
	return 0
}

// maxTraps bounds the trap handlers a run re-judges after each cd (a
// handler set more often than this is judged where it is set only).
const maxTraps = 8

// trapCode is a trap handler set earlier in the command, and where.
type trapCode struct {
	script   string
	pos, end syntax.Pos
	stmt     *syntax.Stmt
}

// rejudgeTraps judges the trap handlers set so far in the current
// working directory and with the variables known now (called after cd
// changes it, and at the end of the command, where EXIT handlers run). A
// handler's own cd does not re-judge the handlers again, nor move the
// command's working directory.
func (r *run) rejudgeTraps() {
	if r.inTraps {
		return
	}
	r.inTraps = true
	cwd, known := r.cwd, r.cwdKnown // a handler's cd is the handler's, when it runs
	defer func() { r.inTraps, r.cwd, r.cwdKnown = false, cwd, known }()
	for _, t := range r.traps {
		r.nested(&callCtx{stmt: t.stmt, pos: t.pos, end: t.end}, t.script)
	}
}

// shoptGlob are the shell options that change what a glob or a
// parameter pattern matches: names starting with "." (dotglob), any
// depth (globstar), case (nocaseglob; nocasematch for ${x/pat/…}),
// extended patterns (extglob).
func shoptGlob(name string) bool {
	return name == "dotglob" || name == "globstar" || name == "nocaseglob" || name == "nocasematch" || name == "extglob"
}

// anShopt is the "shopt" analyzer: setting a glob option makes later
// globs match what the classifier judges them not to (cat ~/*/credentials
// after shopt -s dotglob reads ~/.aws/credentials).
func (r *run) anShopt(a *actx) traits {
	args := a.args[1:]
	if !hasFlag(args, "-s") {
		return 0
	}
	for _, f := range operands(args) {
		if f.dyn || shoptGlob(f.s) {
			r.add(a.cx, review, "shopt.glob", "shopt -s "+clip(f.s, 20)+" changes what later globs match (they are judged without it)")
			return 0
		}
	}
	return 0
}

func (r *run) anShell(a *actx) traits {
	args := a.args[1:]
	i := 0
	cmode, stdin := false, false
	for i < len(args) {
		s := args[i].s
		if args[i].dyn || len(s) < 2 || s[0] != '-' && s[0] != '+' {
			break
		}
		if s == "--" || s == "-" {
			i++
			break
		}
		if strings.HasPrefix(s, "--") {
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
			i++
			continue
		}
		takes := 0
		for _, c := range s[1:] {
			switch c {
			case 'c':
				cmode = true
			case 's':
				stdin = true
			case 'o', 'O':
				takes++
			}
		}
		i += 1 + takes
	}
	ops := []field{}
	if i < len(args) {
		ops = args[i:]
	}
	if cmode {
		if len(ops) == 0 {
			return 0
		}
		a.level = safe
		if ops[0].dyn {
			r.dynamicScript(ops[0], a.cx)
			return 0
		}
		r.nested(a.cx, ops[0].s)
		return 0
	}
	if len(ops) > 0 && !stdin {
		return r.runsFile(ops[0], a, "shell script")
	}
	if text, ok := r.stdinText(a.cx.stmt); ok && a.cx.stmt != nil {
		a.level = safe
		r.nested(a.cx, text)
		return 0
	}
	a.reason = "runs a script read from stdin"
	if r.hasPipeIn {
		a.reason = "runs text piped into a shell"
		r.nested(a.cx, r.pipeIn)
	}
	return tShell
}

// runsFile handles a shell or interpreter running a script file.
func (r *run) runsFile(f field, a *actx, what string) traits {
	switch {
	case f.proc && f.sub&tFetch != 0:
		r.add(a.cx, high, "exec.fetched-code", "runs a downloaded "+what+" (process substitution)")
	case f.proc && f.sub&tDecode != 0:
		r.add(a.cx, high, "exec.decoded-code", "runs a decoded "+what+" (process substitution)")
	case f.proc:
		a.reason = "runs a " + what + " produced by a command"
	case f.dyn:
		r.dynamicScript(f, a.cx)
	default:
		if r.fetched[r.c.res.resolve(r.cwd, f.s)] {
			r.add(a.cx, high, "download.execute", "runs a "+what+" downloaded earlier in the command")
		}
		r.writtenScript(f, a.cx, a.analyzer == "interpreter")
		if f.s == "/dev/stdin" {
			return tShell
		}
		a.reason = "runs the " + what + " " + clip(f.s, 60)
	}
	return 0
}

func (r *run) anInterp(a *actx) traits {
	args := a.args[1:]
	lang := a.key
	if strings.HasPrefix(lang, "python") || lang == "pypy" || lang == "pypy3" || lang == "ipython" {
		lang = "python"
	}
	codeFlags := interpCodeFlags(lang)
	valueFlags := interpValueFlags
	if len(args) == 1 && (args[0].s == "-V" || args[0].s == "-v" && lang != "perl" && lang != "python") {
		a.level = safe
		return 0
	}
	if lang == "php" && hasFlag(args, "-S") {
		// php -S ADDR [-t DIR]: a web server for DIR (default: here).
		dir := field{s: "."}
		if v, ok := flagValue(args, "-t"); ok {
			dir = v
		}
		a.reason = "serves files over HTTP"
		r.servesDir(dir, a.cx)
		return 0
	}
	var codes []field
	script := -1
	stdin := false
	for i := 0; i < len(args); i++ {
		s := args[i].s
		if s == "-" {
			stdin = true
			break
		}
		if s == "--" {
			if i+1 < len(args) {
				script = i + 1
			}
			break
		}
		if !strings.HasPrefix(s, "-") || args[i].dyn {
			if lang == "deno" && s == "eval" && i+1 < len(args) {
				codes = append(codes, args[i+1])
				break
			}
			script = i
			break
		}
		matched := false
		for _, cf := range codeFlags {
			if s == cf || strings.HasPrefix(s, cf) && len(cf) == 2 && len(s) > 2 && lang == "python" {
				if s == cf {
					if i+1 < len(args) {
						codes = append(codes, args[i+1])
						i++
					}
				} else {
					f := args[i]
					f.s = s[2:]
					codes = append(codes, f)
				}
				matched = true
				break
			}
			if len(cf) == 2 && len(s) > 2 && s[0] == '-' && s[1] != '-' && s[len(s)-1] == cf[1] && (lang == "perl" || lang == "ruby") {
				if i+1 < len(args) {
					codes = append(codes, args[i+1])
					i++
				}
				if strings.Contains(s, "i") && lang == "perl" {
					r.add(a.cx, review, "interp.in-place", "perl -i edits files in place")
				}
				matched = true
				break
			}
		}
		if matched {
			if lang == "python" || lang == "php" {
				break
			}
			continue
		}
		if s == "-m" && i+1 < len(args) && lang == "python" {
			mod := args[i+1]
			if rule, ok := r.cr.commands[strings.ToLower(mod.s)]; ok && !mod.dyn && rule.Analyzer != "interpreter" && rule.Analyzer != "shell" {
				// python -m pytest is the pytest command.
				a.level = safe
				return r.command(strings.ToLower(mod.s), rule, args[i+1:], a.cx)
			}
			a.reason = "runs the module " + clip(mod.s, 40)
			if mod.s == "http.server" || mod.s == "SimpleHTTPServer" {
				dir := field{s: "."}
				if v, ok := flagValue(args[i+2:], "-d", "--directory"); ok {
					dir = v
				}
				r.servesDir(dir, a.cx)
			}
			return 0
		}
		for _, v := range valueFlags {
			if s == v {
				i++
				break
			}
		}
	}
	if (lang == "perl" || lang == "ruby") && script >= 0 && inPlaceFlag(args[:script]) {
		// perl -pi -e CODE FILE…: the files are rewritten.
		for _, f := range args[script:] {
			if !strings.HasPrefix(f.s, "-") || f.dyn {
				r.writePath(f, a.key+" -i", a.cx)
			}
		}
	}
	if len(codes) > 0 {
		a.reason = "runs inline code"
		for _, c := range codes {
			if c.dyn {
				r.dynamicScript(c, a.cx)
				continue
			}
			r.inlineCode(c.s, a.cx)
		}
		return 0
	}
	if script >= 0 && !stdin {
		return r.runsFile(args[script], a, "script")
	}
	if text, ok := r.stdinText(a.cx.stmt); ok && a.cx.stmt != nil {
		a.reason = "runs inline code from a here-document"
		r.inlineCode(text, a.cx)
		return 0
	}
	a.reason = "runs code read from stdin"
	if r.hasPipeIn {
		r.inlineCode(r.pipeIn, a.cx)
	}
	return tShell
}

// interpCodeFlags returns the flags that take inline code for a language.
func interpCodeFlags(lang string) []string {
	switch lang {
	case "python":
		return []string{"-c"}
	case "node", "nodejs", "bun":
		return []string{"-e", "--eval", "-p", "--print"}
	case "deno":
		return []string{"eval"}
	case "perl":
		return []string{"-e", "-E"}
	case "php":
		return []string{"-r"}
	case "julia":
		return []string{"-e", "--eval"}
	case "ruby", "lua", "luajit", "osascript", "rscript":
		return []string{"-e"}
	}
	return nil
}

// Read-only flag tables of the analyzers.
var (
	interpValueFlags = []string{"-m", "-W", "-X", "-r", "--require", "-M", "-I", "-f", "-Q", "--import", "-C"}
	rgValueFlags     = []string{"-e", "--regexp", "-f", "--file", "-m", "--max-count", "-A", "-B", "-C", "--after-context", "--before-context", "--context", "-d", "-D", "--include", "--exclude", "--exclude-dir", "--label", "-t", "--type", "-g", "--glob", "-T", "--type-not", "-j", "--threads", "--pre", "--pre-glob", "-M", "--max-columns", "--color", "--colors", "--sort", "--sortr", "-E", "--encoding", "--max-depth", "--maxdepth", "--engine", "--field-match-separator", "-r", "--replace", "--path-separator", "--context-separator"}
	grepValueFlags   = []string{"-e", "--regexp", "-f", "--file", "-m", "--max-count", "-A", "-B", "-C", "--after-context", "--before-context", "--context", "-d", "-D", "--include", "--exclude", "--exclude-dir", "--label", "--color", "--colors"}
)

func (r *run) anEval(a *actx) traits {
	ops := a.args[1:]
	if len(ops) == 0 {
		a.level = safe
		return 0
	}
	dyn, sub := anyDyn(ops)
	if dyn {
		switch {
		case sub&tFetch != 0:
			r.add(a.cx, high, "exec.fetched-code", "eval runs downloaded code")
		case sub&tDecode != 0:
			r.add(a.cx, high, "exec.decoded-code", "eval runs decoded code")
		default:
			a.reason = "evaluates a string computed at run time"
		}
		return tShell
	}
	a.level = safe
	r.nested(a.cx, joinFields(ops))
	return 0
}

func (r *run) anSource(a *actx) traits {
	ops := operands(a.args[1:])
	if len(ops) == 0 {
		return 0
	}
	return r.runsFile(ops[0], a, "script")
}

func (r *run) anSQL(a *actx) {
	var text string
	for i, f := range a.args[1:] {
		if (f.s == "-c" || f.s == "--command" || f.s == "-e" || f.s == "--execute" || f.s == "--eval" || f.s == "--query" || f.s == "-q") && i+2 < len(a.args) {
			text += " " + a.args[i+2].s
		}
	}
	if text == "" {
		ops := operands(a.args[1:])
		if a.key == "sqlite3" && len(ops) > 1 {
			text = joinFields(ops[1:])
		}
	}
	if t, ok := r.stdinText(a.cx.stmt); ok && a.cx.stmt != nil {
		text += " " + t
	}
	r.sqlShellEscapes(text, a)
	u := strings.ToUpper(text)
	for _, k := range []string{"DROP DATABASE", "DROP SCHEMA", "DROP TABLE", "TRUNCATE", "FLUSHALL", "FLUSHDB", "DROPDATABASE", "DROP USER"} {
		if strings.Contains(u, k) {
			r.add(a.cx, high, "sql.destructive", "destroys database data ("+strings.ToLower(k)+")")
			return
		}
	}
	if strings.Contains(u, "DELETE FROM") && !strings.Contains(u, "WHERE") {
		r.add(a.cx, high, "sql.destructive", "deletes every row of a table")
	}
}

// anDebugger: gdb -ex/--eval-command/-iex/--init-eval-command and lldb
// -o/--one-line/-O/-k run debugger commands; "shell CMD", "!CMD",
// "pipe … | CMD" and "platform shell CMD" run shell commands, "python
// CODE" / "script CODE" run Python. -x/--command/-s/--source run a
// command file (review).
func (r *run) anDebugger(a *actx) {
	args := a.args[1:]
	cmdFlags := []string{"-ex", "--ex", "-eval-command", "--eval-command", "-iex", "--iex", "-init-eval-command", "--init-eval-command"}
	fileFlags := []string{"-x", "--x", "-command", "--command", "-ix", "--init-command"}
	if a.key == "lldb" {
		cmdFlags = []string{"-o", "--one-line", "-O", "--one-line-before-file", "-k", "--one-line-on-crash", "-K"}
		fileFlags = []string{"-s", "--source", "-S", "--source-before-file", "--source-on-crash"}
	}
	for i := 0; i < len(args); i++ {
		s := args[i].s
		name, val, eq := strings.Cut(s, "=")
		var v field
		switch {
		case slices.Contains(cmdFlags, s) && i+1 < len(args):
			v = args[i+1]
			i++
		case eq && slices.Contains(cmdFlags, name):
			v = args[i]
			v.s = val
		case slices.Contains(fileFlags, s) || eq && slices.Contains(fileFlags, name):
			r.add(a.cx, review, "debugger.script", a.key+" runs a command file")
			if !eq {
				i++
			}
			continue
		default:
			continue
		}
		r.debuggerCommand(v, a)
	}
}

func (r *run) debuggerCommand(v field, a *actx) {
	if v.dyn {
		r.dynamicScript(v, a.cx)
		return
	}
	c := strings.TrimSpace(v.s)
	word, rest, _ := strings.Cut(c, " ")
	rest = strings.TrimSpace(rest)
	switch {
	case strings.HasPrefix(c, "!"):
		word, rest = "shell", strings.TrimSpace(c[1:])
	case word == "platform" && strings.HasPrefix(rest, "shell"):
		word, rest = "shell", strings.TrimSpace(strings.TrimPrefix(rest, "shell"))
	case word == "pipe" || word == "|":
		if i := strings.LastIndexByte(rest, '|'); i >= 0 {
			word, rest = "shell", rest[i+1:]
		}
	}
	switch word {
	case "shell", "she", "shel":
		r.add(a.cx, review, "debugger.shell", a.key+" runs a shell command")
		r.nested(a.cx, rest)
	case "python", "py", "python-interactive", "pi", "script":
		r.add(a.cx, review, "debugger.python", a.key+" runs Python code")
		r.inlineCode(rest, a.cx)
	}
}

// sqlShellEscapes classifies the shell commands a database client's
// meta-commands run: psql and mysql "\! CMD", mysql "system CMD",
// sqlite3 ".shell CMD" / ".system CMD", and the files ".output FILE",
// ".once FILE", "\o FILE" write.
func (r *run) sqlShellEscapes(text string, a *actx) {
	for _, line := range strings.FieldsFunc(text, func(c rune) bool { return c == '\n' || c == ';' }) {
		l := strings.TrimSpace(line)
		if i := strings.Index(l, "\\"); i > 0 && (a.key == "psql" || a.key == "mysql" || a.key == "mariadb") {
			l = l[i:] // a meta-command after a query on the same line
		}
		word, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToLower(word) {
		case "\\!", ".shell", ".system", "system":
			if word == "system" && a.key != "mysql" && a.key != "mariadb" {
				continue
			}
			r.add(a.cx, review, "sql.shell", a.key+" runs a shell command ("+word+")")
			if rest != "" {
				r.nested(a.cx, rest)
			}
		case ".output", ".once", "\\o", "\\out", "tee", "\\t":
			if rest != "" && rest != "stdout" && !strings.HasPrefix(rest, "|") && !strings.HasPrefix(rest, "-") {
				file := strings.Trim(strings.Fields(rest)[0], "'\"")
				r.writePath(field{s: file, dyn: strings.Contains(file, "$")}, a.key+" "+word, a.cx)
			} else if strings.HasPrefix(rest, "|") {
				r.add(a.cx, review, "sql.shell", a.key+" pipes output to a command")
				r.nested(a.cx, strings.TrimPrefix(rest, "|"))
			}
		}
	}
}

// anEditor: vim's -c CMD / +CMD / --cmd CMD and emacs's --eval EXPR run
// editor commands before any file is opened: ":!CMD", ":r !CMD",
// ":w !CMD", "call system('CMD')" and emacs's (shell-command "CMD") run
// shell commands; ":w FILE" writes. Files named on the command line are
// what the user edits (review).
// anEditor: vim and its relatives, emacs, nano. Commands given on the
// command line (-c, +CMD, --cmd, --eval) are classified; script files are
// review. A file operand is the file the editor edits and may write (a
// scripted "vim -es FILE", "ex -sc wq FILE" or an interactive session):
// it is a write target (vim ~/.bashrc is high), except in read-only
// mode (view, -R, -M) unless a command writes (":w", ":wq", ":x").
func (r *run) anEditor(a *actx) {
	args := a.args[1:]
	var files []field
	if a.key == "nano" || a.key == "rnano" || a.key == "pico" {
		// nano's -s/--speller PROGRAM runs a spell-check command.
		for i := 0; i < len(args); i++ {
			f := args[i]
			switch {
			case strings.HasPrefix(f.s, "--speller="):
				r.editorSpeller(a, field{s: strings.TrimPrefix(f.s, "--speller="), dyn: f.dyn, sub: f.sub})
			case f.s == "-s" || f.s == "--speller":
				if i+1 < len(args) {
					r.editorSpeller(a, args[i+1])
				}
				i++
			case nanoValueFlag(f.s):
				i++
			case f.s == "--":
				files = append(files, args[i+1:]...)
				i = len(args)
			case strings.HasPrefix(f.s, "-") && !f.dyn || strings.HasPrefix(f.s, "+"):
			default:
				files = append(files, f)
			}
		}
		for _, f := range files {
			r.writePath(f, a.key, a.cx)
		}
		return
	}
	// vim's -s is a script to type unless in Ex mode (ex, -e, -E, -es),
	// where it means silent.
	exMode := a.key == "ex"
	readOnly := a.key == "view"
	var cmds []field
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case (s == "-c" || s == "--cmd" || s == "--eval" || s == "-eval" || s == "--execute") && i+1 < len(args):
			cmds = append(cmds, args[i+1])
			i++
		case strings.HasPrefix(s, "--eval="):
			f := args[i]
			f.s = strings.TrimPrefix(s, "--eval=")
			cmds = append(cmds, f)
		case strings.HasPrefix(s, "+") && len(s) > 1:
			f := args[i]
			f.s = s[1:]
			cmds = append(cmds, f)
		case s == "-s" && exMode:
		case (s == "-S" || s == "-s" || s == "-l" || s == "--load" || s == "-u" || s == "--script" || s == "-x") && i+1 < len(args):
			r.add(a.cx, review, "editor.script", a.key+" runs a script file")
			i++
		case (s == "-w" || s == "-W") && a.key != "emacs" && i+1 < len(args):
			// vim -w/-W FILE records the typed keys into FILE.
			r.writePath(args[i+1], a.key+" "+s, a.cx)
			i++
		case editorValueFlag(a.key, s):
			i++
		case s == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && len(s) > 1 && a.key != "emacs":
			// A bundle of vim's one-letter flags ("-es", "-Es", "-nR").
			for _, c := range s[1:] {
				switch c {
				case 'e', 'E':
					exMode = true
				case 'R', 'M':
					readOnly = true
				}
			}
			// The bundle's last letter may take the next word.
			if i+1 >= len(args) {
				break
			}
			switch last := s[len(s)-1]; {
			case last == 'c':
				cmds = append(cmds, args[i+1])
				i++
			case last == 'w' || last == 'W':
				r.writePath(args[i+1], a.key+" -"+string(last), a.cx)
				i++
			case last == 'S' || last == 'u' || last == 's' && !exMode:
				r.add(a.cx, review, "editor.script", a.key+" runs a script file")
				i++
			case strings.IndexByte("iTtqU", last) >= 0:
				i++
			}
		case strings.HasPrefix(s, "-") && !args[i].dyn:
		default:
			files = append(files, args[i])
		}
	}
	writes := !readOnly
	for _, c := range cmds {
		if c.dyn {
			r.dynamicScript(c, a.cx)
			writes = true
			continue
		}
		if editorWritesBuffer(c.s) {
			writes = true
		}
		if strings.Contains(c.s, "!") {
			// After ":!" or ":r !" a "|" belongs to the shell command.
			r.editorCommand(strings.TrimSpace(c.s), a)
			continue
		}
		for _, part := range strings.Split(c.s, "|") {
			if editorWritesBuffer(part) {
				writes = true
			}
			r.editorCommand(strings.TrimSpace(part), a)
		}
	}
	if writes {
		for _, f := range files {
			r.writePath(f, a.key, a.cx)
		}
	}
}

// editorWritesBuffer reports an Ex command that writes the file being
// edited (":w", ":w!", ":wq", ":x", ":update", ":wall", …) rather than
// another file named after it (":w FILE", judged by editorCommand).
func editorWritesBuffer(c string) bool {
	c = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(c), ": %"))
	switch c {
	case "w", "w!", "wq", "wq!", "x", "x!", "xit", "exit", "up", "update", "wa", "wall", "wqa", "wqall", "xa", "xall", "write", "write!":
		return true
	}
	return false
}

// editorValueFlag reports an option of vim (and its relatives) or emacs
// whose value is the next word.
func editorValueFlag(key, s string) bool {
	if key == "emacs" {
		switch s {
		case "-L", "--directory", "-f", "--funcall", "--file", "--find-file", "--visit", "--insert", "-t", "--terminal", "-d", "--display", "--dump-file", "--chdir", "--user", "--bg", "--fg", "--font", "-fn", "--name", "--title", "-T":
			return true
		}
		return false
	}
	switch s {
	case "-i", "-T", "-t", "-q", "-U", "-r", "--servername", "--remote", "--remote-silent", "--remote-wait", "--remote-tab", "--remote-send", "--remote-expr", "--startuptime", "--log", "--listen", "--server", "--socketid", "--cmd":
		return true
	}
	return false
}

// nanoValueFlag reports a nano option whose value is the next word.
func nanoValueFlag(s string) bool {
	switch s {
	case "-C", "--backupdir", "-Q", "--quotestr", "-T", "--tabsize", "-X", "--wordchars", "-Y", "--syntax", "-o", "--operatingdir", "-r", "--fill", "-f", "--rcfile", "-J", "--guidestripe":
		return true
	}
	return false
}

func (r *run) editorSpeller(a *actx, f field) {
	r.add(a.cx, review, "editor.shell", a.key+" --speller runs a program")
	if f.dyn {
		r.dynamicScript(f, a.cx)
		return
	}
	r.nested(a.cx, f.s+" FILE")
}

func (r *run) editorCommand(c string, a *actx) {
	c = strings.TrimLeft(c, ": ")
	shell := func(cmd string) {
		r.add(a.cx, review, "editor.shell", a.key+" runs a shell command")
		if cmd = strings.TrimSpace(cmd); cmd != "" {
			r.nested(a.cx, cmd)
		}
	}
	for _, call := range []string{"shell-command", "call-process-shell-command", "async-shell-command", "system(", "systemlist(", "term ", "terminal "} {
		if i := strings.Index(c, call); i >= 0 {
			lits := stringLiterals(c[i:])
			if len(lits) > 0 {
				shell(lits[0])
			} else {
				shell("")
			}
			return
		}
	}
	switch {
	case strings.HasPrefix(c, "!"):
		shell(c[1:])
	case strings.HasPrefix(c, "r !") || strings.HasPrefix(c, "r!") || strings.HasPrefix(c, "read !") || strings.HasPrefix(c, "w !") || strings.HasPrefix(c, "w!") && strings.Contains(c, " !"):
		shell(c[strings.IndexByte(c, '!')+1:])
	case strings.HasPrefix(c, "w ") || strings.HasPrefix(c, "w! ") || strings.HasPrefix(c, "write ") || strings.HasPrefix(c, "saveas "):
		if f := strings.Fields(c); len(f) > 1 {
			r.writePath(field{s: f[1]}, a.key+" :w", a.cx)
		}
	case strings.HasPrefix(c, "py ") || strings.HasPrefix(c, "py3 ") || strings.HasPrefix(c, "python ") || strings.HasPrefix(c, "python3 ") || strings.HasPrefix(c, "pyx "):
		r.add(a.cx, review, "editor.python", a.key+" runs Python code")
		_, code, _ := strings.Cut(c, " ")
		r.inlineCode(code, a.cx)
	case strings.HasPrefix(c, "so ") || strings.HasPrefix(c, "source "):
		r.add(a.cx, review, "editor.script", a.key+" runs a script file")
	}
}

// anTmux: new-session, new-window, split-window, respawn-pane/-window
// and run-shell run a shell command (the last operands); send-keys types
// text into a pane's shell (key names like Enter or C-m dropped).
func (r *run) anTmux(a *actx) traits {
	args := a.args[1:]
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].s, "-") {
		i = skipFlag(args, i, []string{"-L", "-S", "-f", "-c", "-T"})
	}
	if i >= len(args) {
		return 0
	}
	sub := args[i].s
	rest := args[i+1:]
	vf := []string{"-c", "-e", "-f", "-F", "-n", "-s", "-t", "-x", "-y", "-l", "-p", "-T", "-w", "-h"}
	if sub == "split-window" || sub == "splitw" || sub == "run-shell" || sub == "run" || sub == "pipe-pane" || sub == "pipep" {
		vf = vf[:len(vf)-2] // -w and -h are plain flags here
	}
	switch sub {
	case "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp", "respawn-window", "respawnw", "run-shell", "run", "if-shell", "if", "display-popup", "popup", "pipe-pane", "pipep":
		k := firstOperand(rest, vf)
		if k < 0 {
			return 0
		}
		ops := rest[k:]
		r.add(a.cx, review, "tmux.command", "tmux "+sub+" runs a shell command")
		dyn, _ := anyDyn(ops)
		if dyn {
			r.dynamicScript(ops[0], a.cx)
			return tShell
		}
		r.nested(a.cx, joinFields(ops))
		return tShell
	case "send-keys", "send":
		var words []string
		for _, o := range operands(rest, "-t", "-N") {
			switch o.s {
			case "Enter", "C-m", "KPEnter", "C-j", "Escape", "Tab", "Space":
				words = append(words, "\n")
				continue
			}
			words = append(words, o.s)
		}
		text := strings.ReplaceAll(strings.Join(words, " "), " \n", "\n")
		if strings.TrimSpace(text) != "" {
			r.add(a.cx, review, "tmux.send-keys", "tmux send-keys types commands into a shell")
			r.nested(a.cx, text)
		}
		return tShell
	case "ls", "list-sessions", "list-windows", "lsw", "list-panes", "lsp", "has-session", "has", "display-message", "display", "capture-pane", "capturep", "show-options", "show", "info", "list-keys", "lsk", "list-buffers", "lsb", "show-buffer", "showb":
		a.level = safe
	}
	return 0
}
