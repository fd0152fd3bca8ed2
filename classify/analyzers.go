package classify

import (
	"path"
	"slices"
	"strings"
)

// analyzerFunc is a built-in argument analyzer: it reads one command
// line (actx), adds findings, may adjust the baseline level and the
// operands checked as files, and returns the stream traits it adds.
type analyzerFunc func(r *run, a *actx) traits

// builtinAnalyzers is the registry of built-in analyzers that
// CommandRule.Analyzer names: one name, one function. Each compiled rule
// set holds its own copy.
func builtinAnalyzers() map[string]analyzerFunc {
	return map[string]analyzerFunc{
		"rm":          (*run).anRm,
		"find":        (*run).anFind,
		"fd":          (*run).anFd,
		"ls":          (*run).anLs,
		"sed":         (*run).anSed,
		"awk":         (*run).anAwk,
		"git":         (*run).anGit,
		"tar":         (*run).anTar,
		"sort":        (*run).anSort,
		"uniq":        (*run).anUniq,
		"tee":         (*run).anTee,
		"copy":        (*run).anCopy,
		"ln":          (*run).anLn,
		"chmod":       (*run).anChmod,
		"dd":          (*run).anDd,
		"curl":        (*run).anCurl,
		"wget":        (*run).anWget,
		"nc":          (*run).anNc,
		"socat":       (*run).anSocat,
		"kill":        (*run).anKill,
		"pkill":       (*run).anPkill,
		"shell":       (*run).anShell,
		"interpreter": (*run).anInterp,
		"eval":        (*run).anEval,
		"source":      (*run).anSource,
		"printenv":    (*run).anPrintenv,
		"date":        func(r *run, a *actx) traits { r.anDate(a); return 0 },
		"compress":    func(r *run, a *actx) traits { r.anCompress(a); return 0 },
		"editor":      func(r *run, a *actx) traits { r.anEditor(a); return 0 },
		"pager":       func(r *run, a *actx) traits { r.anPager(a); return 0 },
		"ed":          func(r *run, a *actx) traits { r.anEd(a); return 0 },
		"tmux":        (*run).anTmux,
		"zip":         func(r *run, a *actx) traits { r.anZip(a); return 0 },
		"debugger":    func(r *run, a *actx) traits { r.anDebugger(a); return 0 },
		"history":     func(r *run, a *actx) traits { r.anHistory(a); return 0 },
		"ulimit":      func(r *run, a *actx) traits { r.anUlimit(a); return 0 },
		"umask":       (*run).anUmask,
		"fc":          (*run).anFc,
		"unset":       (*run).anUnset,
		"crontab":     (*run).anCrontab,
		"docker":      func(r *run, a *actx) traits { r.anDocker(a); return 0 },
		"kubectl":     func(r *run, a *actx) traits { r.anKubectl(a); return 0 },
		"sql":         func(r *run, a *actx) traits { r.anSQL(a); return 0 },
		"rsync":       func(r *run, a *actx) traits { r.anRsync(a); return 0 },
		"scp":         (*run).anScp,
		"man":         (*run).anMan,
		"rg":          (*run).anRg,
		"grep":        (*run).anGrep,
		"cd":          func(r *run, a *actx) traits { r.anCd(a); return 0 },
		"alias":       (*run).anAlias,
		"varname":     func(r *run, a *actx) traits { r.anVarName(a); return 0 },
		"rebind":      func(r *run, a *actx) traits { r.anRebind(a); return 0 },
		"trap":        (*run).anTrap,
		"xxd":         (*run).anXxd,
		"base64":      (*run).anBase64,
		"printf":      (*run).anPrintf,
		"echo":        (*run).anEcho,
		"systemctl":   func(r *run, a *actx) traits { r.anSystemctl(a); return 0 },
		"ssh":         func(r *run, a *actx) traits { r.anSSH(a); return 0 },
		"cloud":       func(r *run, a *actx) traits { r.anCloud(a); return 0 },
		"mount":       (*run).anMount,
		"keygen":      (*run).anKeygen,
		"capture":     (*run).anCapture,
		"jq":          (*run).anJq,
	}
}

// analyze runs a built-in argument analyzer.
func (r *run) analyze(name string, a *actx) traits {
	if f, ok := r.cr.analyzers[name]; ok {
		return f(r, a)
	}
	return 0
}

// anLs is the "ls" analyzer.
func (r *run) anLs(a *actx) traits {
	// ls GLOB prints the names the glob matches.
	if !anyGlob(a.args[1:]) {
		return 0
	}
	for _, o := range operands(a.args[1:], "-I", "--ignore", "-w", "--width", "-T", "--tabsize", "--sort", "--format", "--time-style", "--color", "--block-size") {
		if o.glob && !o.dyn {
			r.produce(o.s)
		}
	}
	return 0
}

// anUniq is the "uniq" analyzer.
func (r *run) anUniq(a *actx) traits {
	if ops := operands(a.args[1:], "-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"); len(ops) >= 2 {
		r.writePath(ops[1], "uniq", a.cx)
		a.files, a.filesSet = ops[:1], true
	}
	return 0
}

// anNc is the "nc" analyzer.
func (r *run) anNc(a *actx) traits {
	if hasFlag(a.args[1:], "-e", "-c", "--exec", "--sh-exec", "--lua-exec") {
		r.add(a.cx, high, "net.reverse-shell", a.key+" attaches a program to a network socket (reverse or bind shell)")
	}
	return 0
}

// anSocat is the "socat" analyzer.
func (r *run) anSocat(a *actx) traits {
	for _, f := range a.args[1:] {
		u := strings.ToUpper(f.s)
		if strings.Contains(u, "EXEC:") || strings.Contains(u, "SYSTEM:") {
			r.add(a.cx, high, "net.reverse-shell", "socat attaches a program to a network peer")
		}
	}
	return 0
}

// anPkill is the "pkill" analyzer.
func (r *run) anPkill(a *actx) traits {
	if hasFlag(a.args[1:], "-u", "-U", "--euid", "--uid", "--user") {
		r.add(a.cx, high, "kill.user", a.key+" kills every process of a user")
	}
	return 0
}

// anUmask is the "umask" analyzer.
func (r *run) anUmask(a *actx) traits {
	if ops := operands(a.args[1:]); len(ops) > 0 && !ops[0].dyn && !hasFlag(a.args[1:], "-p") {
		m := ops[0].s
		if d := m[len(m)-1]; d >= '0' && d <= '7' && (d-'0')&2 == 0 || strings.Contains(m, "o=") && strings.Contains(m, "w") || strings.Contains(m, "a=") && strings.Contains(m, "w") || strings.Contains(m, "o+w") {
			r.add(a.cx, review, "umask.permissive", "umask "+clip(m, 20)+" makes new files writable by every user")
		}
	}
	return 0
}

// anFc is the "fc" analyzer.
func (r *run) anFc(a *actx) traits {
	if !hasFlag(a.args[1:], "-l") {
		a.level, a.reason, a.id = review, "re-runs or edits commands from the history (which ones is unknown here)", "fc.rerun"
	}
	return 0
}

// anUnset is the "unset" analyzer.
func (r *run) anUnset(a *actx) traits {
	r.anVarName(a)
	for _, o := range operands(a.args[1:]) {
		if strings.HasPrefix(o.s, "HIST") {
			r.add(a.cx, review, "history.disable", "unset "+clip(o.s, 20)+" changes or disables shell history (covering tracks)")
		}
	}
	return 0
}

// anCrontab is the "crontab" analyzer.
func (r *run) anCrontab(a *actx) traits {
	ops := operands(a.args[1:], "-u")
	if len(ops) == 0 && hasFlag(a.args[1:], "-l") && !hasFlag(a.args[1:], "-r", "-e", "-i") {
		a.level = safe
	}
	return 0
}

// anScp is the "scp" analyzer.
func (r *run) anScp(a *actx) traits {
	ops := operands(a.args[1:], "-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J")
	for i, f := range ops {
		if i < len(ops)-1 && !strings.Contains(f.s, ":") {
			if r.readPath(f, a.cx) == high || hasFlag(a.args[1:], "-r") && r.readTree(f, false, a.cx) == high {
				r.add(a.cx, high, "net.exfiltration", "copies a secret off the machine")
			}
		}
	}
	return 0
}

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

// anTrap is the "trap" analyzer.
func (r *run) anTrap(a *actx) traits {
	ops := operands(a.args[1:])
	if len(ops) > 0 && !hasFlag(a.args[1:], "-p", "-l") && ops[0].s != "-" && ops[0].s != "" {
		if ops[0].dyn {
			r.dynamicScript(ops[0], a.cx)
		} else {
			r.nested(a.cx, ops[0].s)
		}
	}
	return 0
}

// anXxd is the "xxd" analyzer.
func (r *run) anXxd(a *actx) traits {
	if hasFlag(a.args[1:], "-r", "-revert") {
		if ops := operands(a.args[1:], "-c", "-g", "-l", "-s", "-o", "-n"); len(ops) >= 2 {
			r.writePath(ops[1], "xxd", a.cx)
		}
		return tDecode
	}
	if ops := operands(a.args[1:], "-c", "-g", "-l", "-s", "-o", "-n"); len(ops) >= 2 {
		r.writePath(ops[1], "xxd", a.cx)
		a.files, a.filesSet = ops[:1], true
	}
	return 0
}

// anBase64 is the "base64" analyzer.
func (r *run) anBase64(a *actx) traits {
	if hasFlag(a.args[1:], "-d", "--decode", "-D") {
		return tDecode
	}
	return 0
}

// anPrintf is the "printf" analyzer.
func (r *run) anPrintf(a *actx) traits {
	r.anVarName(a)
	ops := operands(a.args[1:], "-v")
	for _, f := range ops {
		if f.dyn && secretVarRef(f.s) && !hasFlag(a.args[1:], "-v") {
			r.add(a.cx, high, "env.secret", "prints a secret variable ("+clip(f.s, 40)+")")
			return tSecret
		}
	}
	if len(ops) > 0 && !hasFlag(a.args[1:], "-v") {
		args := make([]string, 0, len(ops)-1)
		for _, o := range ops[1:] {
			args = append(args, o.s)
		}
		if dyn, _ := anyDyn(ops); !dyn {
			r.pipeOut, r.hasPipeOut = printfFormat(ops[0].s, args), true
		} else {
			r.srcOut, r.hasSrcOut = printfFormat(ops[0].s, args), true
		}
	}
	if len(ops) > 0 && (strings.Contains(ops[0].s, "\\x") || strings.Contains(ops[0].s, "\\0") || strings.Contains(ops[0].s, "%b") || strings.Contains(ops[0].s, "\\u")) {
		return tDecode
	}
	return 0
}

// anEcho is the "echo" analyzer.
func (r *run) anEcho(a *actx) traits {
	var t traits
	for _, f := range a.args[1:] {
		if f.dyn && secretVarRef(f.s) {
			r.add(a.cx, high, "env.secret", "prints a secret variable ("+clip(f.s, 40)+")")
			t |= tSecret
		}
	}
	{
		dyn, _ := anyDyn(a.args[1:])
		ops := a.args[1:]
		esc := false
		for len(ops) > 0 && (ops[0].s == "-n" || ops[0].s == "-e" || ops[0].s == "-E" || ops[0].s == "-ne" || ops[0].s == "-en") {
			esc = esc || strings.Contains(ops[0].s, "e")
			ops = ops[1:]
		}
		text := joinFields(ops)
		if esc {
			text = ansiC(text)
		}
		if dyn {
			r.srcOut, r.hasSrcOut = text, true
		} else {
			r.pipeOut, r.hasPipeOut = text, true
		}
	}
	for _, f := range a.args[1:] {
		if strings.Contains(f.s, "\\x") || strings.Contains(f.s, "\\0") {
			if hasFlag(a.args[1:], "-e") {
				return t | tDecode
			}
		}
	}
	return t
}

// anMount is the "mount" analyzer.
func (r *run) anMount(a *actx) traits {
	if len(operands(a.args[1:], "-t", "--types", "-O", "--test-opts", "-L", "-U")) == 0 && !hasFlag(a.args[1:], "-a", "--all") {
		a.level, a.reason = safe, "lists mounts"
	}
	return 0
}

// anKeygen is the "keygen" analyzer.
func (r *run) anKeygen(a *actx) traits {
	if f, ok := flagValue(a.args[1:], "-f"); ok && !hasFlag(a.args[1:], "-l", "-y", "-F", "-R", "-e", "-B") {
		r.writePath(f, "ssh-keygen -f", a.cx)
	}
	return 0
}

// anCapture is the "capture" analyzer.
func (r *run) anCapture(a *actx) traits {
	if _, ok := flagValue(a.args[1:], "-r", "--read-file"); ok {
		a.level, a.reason = safe, "reads a capture file"
		if w, ok := flagValue(a.args[1:], "-w"); ok {
			a.level = review
			r.writePath(w, a.key+" -w", a.cx)
		}
	}
	return 0
}

// anJq is the "jq" analyzer.
func (r *run) anJq(a *actx) traits {
	for _, f := range operands(a.args[1:], "--arg", "--argjson", "--slurpfile", "--rawfile", "-f", "--from-file", "--indent", "--args", "--jsonargs") {
		if f.s == "env" || strings.Contains(f.s, "$ENV") || strings.Contains(f.s, "env.") || strings.HasPrefix(f.s, "env") && len(f.s) < 6 {
			a.level, a.reason, a.id = review, "dumps the environment, which may hold tokens", "env.dump"
			return tEnvDump
		}
		break
	}
	return 0
}

func (r *run) anRm(a *actx) traits {
	args := a.args[1:]
	recursive := hasFlag(args, "-r", "-R", "--recursive")
	force := hasFlag(args, "-f", "--force")
	if hasFlag(args, "--no-preserve-root") {
		r.add(a.cx, high, "delete.no-preserve-root", a.key+" --no-preserve-root disables root protection")
	}
	vf := []string{}
	if a.key == "shred" {
		force = true
		vf = []string{"-n", "-s", "--iterations", "--size", "--random-source"}
	}
	ops := operands(args, vf...)
	for _, f := range ops {
		r.deleteTarget(f, recursive || force, recursive, a.key, a.cx)
	}
	return 0
}

func (r *run) anFind(a *actx) traits {
	args := a.args[1:]
	var starts []field
	i := 0
	for i < len(args) && (args[i].s == "-H" || args[i].s == "-L" || args[i].s == "-P" || strings.HasPrefix(args[i].s, "-O") || args[i].s == "-D") {
		if args[i].s == "-D" {
			i++
		}
		i++
	}
	for i < len(args) && !strings.HasPrefix(args[i].s, "-") && args[i].s != "(" && args[i].s != "!" && args[i].s != "\\(" {
		starts = append(starts, args[i])
		i++
	}
	if len(starts) == 0 {
		starts = []field{{s: "."}}
	}
	var t traits
	expr := args[i:]
	nameLeaf := ""
	if v, ok := flagValue(expr, "-name", "-iname"); ok && !v.dyn && !strings.Contains(v.s, "/") {
		nameLeaf = v.s
	}
	if !hasFlag(expr, "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls", "-fprint0", "-quit") {
		for _, s := range starts {
			r.produce(treeGlob(s, nameLeaf))
		}
	}
	for j := 0; j < len(expr); j++ {
		switch p := expr[j].s; p {
		case "-delete":
			a.level, a.reason, a.id = review, "deletes the files it finds", "find.delete"
			for _, s := range starts {
				r.findDelete(s, a)
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			k := j + 1
			for k < len(expr) && expr[k].s != ";" && expr[k].s != "+" {
				k++
			}
			sub := make([]field, 0, k-j-1)
			leaf := "{}"
			if v, ok := flagValue(expr[:j], "-name", "-iname"); ok && !strings.Contains(v.s, "/") && v.s != "" {
				leaf = v.s
			}
			for _, f := range expr[j+1 : k] {
				if strings.Contains(f.s, "{}") {
					whole := f.s == "{}"
					f.s = strings.ReplaceAll(f.s, "{}", strings.TrimSuffix(starts[0].s, "/")+"/"+leaf)
					f.dyn = f.dyn || starts[0].dyn
					if whole && !isDeleter(expr[j+1].s) {
						// What the command reads is any name below
						// the start points (find ~/.aws -exec cat {} +).
						for _, s := range starts {
							f.addGlobs(treeGlob(s, nameLeaf))
						}
					}
				}
				sub = append(sub, f)
			}
			if len(sub) > 0 {
				if isDeleter(sub[0].s) {
					for _, s := range starts {
						r.findDelete(s, a)
					}
				}
				t |= r.argv(sub, a.cx)
			}
			j = k
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if j+1 < len(expr) {
				r.writePath(expr[j+1], "find "+p, a.cx)
			}
			j++
		}
	}
	return t
}

func isDeleter(n string) bool {
	switch path.Base(n) {
	case "rm", "unlink", "shred", "rmdir", "srm":
		return true
	}
	return false
}

// findDelete classifies deleting files below a find start path.
func (r *run) findDelete(s field, a *actx) {
	if s.dyn {
		r.add(a.cx, review, "delete.dynamic", "find deletes below a path computed at run time")
		return
	}
	rp := r.c.res.resolve(r.cwd, s.s)
	switch r.c.res.where(rp) {
	case locRoot, locHome, locHomeSub, locParent, locOutside:
		r.add(a.cx, high, "delete.outside-recursive", "find deletes files below "+clip(s.s, 60)+", outside the workspace")
	}
	if v := r.matchPath(rp+"/x", true); v.level == high {
		r.add(a.cx, high, v.id, "find deletes "+v.reason)
	}
}

func (r *run) anSed(a *actx) traits {
	args := a.args[1:]
	var scripts []string
	var files []field
	inplace, sandbox := false, false
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case s == "--in-place" || strings.HasPrefix(s, "--in-place="):
			inplace = true
		case s == "--sandbox":
			sandbox = true
		case s == "--expression" || s == "--file":
			if i+1 < len(args) {
				if s == "--file" {
					r.add(a.cx, review, "sed.script-file", "sed runs a script file")
				} else {
					scripts = append(scripts, args[i+1].s)
				}
				i++
			}
		case strings.HasPrefix(s, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(s, "--expression="))
		case strings.HasPrefix(s, "--file="):
			r.add(a.cx, review, "sed.script-file", "sed runs a script file")
		case strings.HasPrefix(s, "--"):
		case len(s) > 1 && s[0] == '-' && !args[i].dyn:
		bundle:
			for k := 1; k < len(s); k++ {
				switch s[k] {
				case 'i':
					inplace = true
					break bundle
				case 'e', 'f', 'l':
					v := s[k+1:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i].s
					}
					switch s[k] {
					case 'e':
						scripts = append(scripts, v)
					case 'f':
						r.add(a.cx, review, "sed.script-file", "sed runs a script file")
					}
					break bundle
				}
			}
		default:
			files = append(files, args[i])
		}
	}
	if len(scripts) == 0 && len(files) > 0 {
		scripts = append(scripts, files[0].s)
		if files[0].dyn {
			r.add(a.cx, review, "sed.dynamic-script", "sed script computed at run time")
		}
		files = files[1:]
	}
	a.files, a.filesSet = files, true
	if inplace {
		if len(files) == 0 {
			a.level, a.reason, a.id = review, "edits files in place", "sed.in-place"
		}
		for _, f := range files {
			r.writePath(f, "sed -i", a.cx)
		}
	}
	if sandbox {
		return 0
	}
	for _, sc := range scripts {
		ex, wr, rd := sedActions(sc)
		for _, e := range ex {
			r.add(a.cx, review, "sed.exec", "sed e command runs a shell command")
			if strings.TrimSpace(e) != "" {
				r.nested(a.cx, e)
			}
		}
		for _, w := range wr {
			if w == "/dev/stdout" || w == "/dev/stderr" {
				continue
			}
			r.writePath(field{s: w}, "sed w", a.cx)
		}
		for _, f := range rd {
			r.readPath(field{s: f}, a.cx)
		}
	}
	return 0
}

// sedActions parses a sed script for the commands that run programs (e,
// s///e), write files (w, W, s///w) and read files (r, R).
func sedActions(sc string) (execs, writes, reads []string) {
	i := 0
	n := len(sc)
	toEOL := func() string {
		j := i
		for j < n && sc[j] != '\n' {
			j++
		}
		v := sc[i:j]
		i = j
		return strings.TrimSpace(v)
	}
	skipRE := func(delim byte) {
		for i < n && sc[i] != delim {
			if sc[i] == '\\' {
				i++
			}
			i++
		}
		i++
	}
	addr := func() {
		for i < n {
			c := sc[i]
			switch {
			case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+' || c == ' ' || c == '!':
				i++
			case c == '/':
				i++
				skipRE('/')
				for i < n && (sc[i] == 'I' || sc[i] == 'M') {
					i++
				}
			case c == '\\' && i+1 < n:
				d := sc[i+1]
				i += 2
				skipRE(d)
			default:
				return
			}
		}
	}
	for i < n {
		for i < n && (sc[i] == ' ' || sc[i] == '\t' || sc[i] == '\n' || sc[i] == ';') {
			i++
		}
		addr()
		if i >= n {
			break
		}
		c := sc[i]
		i++
		switch c {
		case '{', '}', '=':
		case '#', ':', 'a', 'i', 'c':
			toEOL()
		case 'b', 't', 'T':
			for i < n && sc[i] != ';' && sc[i] != '\n' && sc[i] != '}' {
				i++
			}
		case 'r', 'R':
			reads = append(reads, toEOL())
		case 'w', 'W':
			writes = append(writes, toEOL())
		case 'e':
			execs = append(execs, toEOL())
		case 's', 'y':
			if i >= n {
				return
			}
			d := sc[i]
			i++
			skipRE(d)
			skipRE(d)
			if c == 'y' {
				continue
			}
			for i < n {
				f := sc[i]
				switch {
				case f == 'e':
					execs = append(execs, "")
					i++
				case f == 'w':
					i++
					writes = append(writes, toEOL())
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9':
					i++
				default:
					goto next
				}
			}
		next:
			continue
		case 'q', 'Q', 'l', 'L':
			for i < n && sc[i] >= '0' && sc[i] <= '9' {
				i++
			}
		}
	}
	return
}

func (r *run) anSort(a *actx) traits {
	args := a.args[1:]
	if v, ok := flagValue(args, "-o", "--output"); ok {
		r.writePath(v, "sort -o", a.cx)
	}
	if v, ok := flagValue(args, "--compress-program"); ok {
		r.add(a.cx, review, "sort.compress-program", "sort --compress-program runs a program")
		r.nested(a.cx, v.s)
	}
	a.files, a.filesSet = operands(args, "-o", "--output", "-S", "--buffer-size", "-T", "--temporary-directory", "-t", "--field-separator", "-k", "--key", "--parallel", "--batch-size", "--files0-from", "--random-source"), true
	return 0
}

func (r *run) anTee(a *actx) traits {
	ops := operands(a.args[1:], "--output-error")
	a.level = safe
	if a.cx.stdinArg {
		ops = append(ops, field{s: "$XARGS", dyn: true})
	}
	text, known := r.pipeIn, r.hasPipeIn
	if t, ok := r.stdinText(a.cx.stmt); ok && a.cx.stmt != nil {
		text, known = t, true
	}
	appendTo := hasFlag(a.args[1:], "-a", "--append")
	for _, f := range ops {
		if r.writePath(f, "tee", a.cx) != safe {
			a.level = review
		}
		r.markWritten(f, text, known, appendTo)
	}
	a.reason = "writes files"
	return 0
}

func (r *run) anTar(a *actx) traits {
	args := a.args[1:]
	mode := byte(0)
	setMode := func(s string) {
		for k := 0; k < len(s); k++ {
			switch s[k] {
			case 'c', 'x', 't', 'r', 'u', 'A', 'd':
				if mode == 0 {
					mode = s[k]
				}
			}
		}
	}
	for i, f := range args {
		s := f.s
		switch {
		case i == 0 && !strings.HasPrefix(s, "-"):
			setMode(s)
		case s == "--create":
			mode = 'c'
		case s == "--extract" || s == "--get":
			mode = 'x'
		case s == "--list":
			mode = 't'
		case strings.HasPrefix(s, "--checkpoint-action="):
			v := strings.TrimPrefix(s, "--checkpoint-action=")
			if cmd, ok := strings.CutPrefix(v, "exec="); ok {
				r.add(a.cx, review, "tar.checkpoint-exec", "tar runs a command at each checkpoint")
				r.nested(a.cx, cmd)
			}
		case strings.HasPrefix(s, "--to-command=") || strings.HasPrefix(s, "--use-compress-program=") || strings.HasPrefix(s, "--info-script=") || strings.HasPrefix(s, "--new-volume-script=") || strings.HasPrefix(s, "--rsh-command="):
			_, v, _ := strings.Cut(s, "=")
			r.add(a.cx, review, "tar.exec", "tar runs a program ("+clip(s, 40)+")")
			r.nested(a.cx, v)
		case s == "-I" || s == "--to-command" || s == "--use-compress-program" || s == "-F" || s == "--info-script":
			if i+1 < len(args) {
				r.add(a.cx, review, "tar.exec", "tar runs a program")
				r.nested(a.cx, args[i+1].s)
			}
		case strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--"):
			setMode(s[1:])
		}
	}
	arch, hasArch := flagValue(args, "-f", "--file")
	for i, f := range args {
		if hasArch || i+1 >= len(args) || strings.HasPrefix(f.s, "--") {
			continue
		}
		if i == 0 && !strings.HasPrefix(f.s, "-") || strings.HasPrefix(f.s, "-") && len(f.s) > 2 {
			if strings.HasSuffix(f.s, "f") {
				arch, hasArch = args[i+1], true
			}
		}
	}
	switch mode {
	case 't':
		a.level = safe
	case 'c':
		for _, src := range operands(args, "-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from", "-I", "-F", "-b", "-N", "--newer", "-g", "--exclude", "--transform", "--owner", "--group", "--mode") {
			if src.s == arch.s || !strings.HasPrefix(args[0].s, "-") && src.s == args[0].s {
				continue
			}
			r.readPath(src, a.cx)
			if !hasFlag(args, "--no-recursion") {
				r.readTree(src, false, a.cx)
			}
		}
		if hasArch && !arch.dyn && (arch.s == "-" || harmlessTarget(arch.s)) {
			a.level = safe
		} else if hasArch {
			r.writePath(arch, "tar", a.cx)
		}
	case 'x':
		if d, ok := flagValue(args, "-C", "--directory"); ok {
			r.writePath(d, "tar -x", a.cx)
		}
	}
	return 0
}

func (r *run) anCopy(a *actx) traits {
	args := a.args[1:]
	vf := []string{"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"}
	ops := operands(args, vf...)
	dest, hasDest := flagValue(args, "-t", "--target-directory")
	if a.cx.stdinArg {
		// xargs supplies more operands: sources, and the destination
		// unless -t names it.
		if !hasDest {
			r.writePath(field{s: "$XARGS", dyn: true}, a.key, a.cx)
		}
		if a.key == "mv" {
			r.add(a.cx, review, "delete.dynamic", "mv moves files named at run time")
		}
	}
	if len(ops) == 0 && !hasDest {
		return 0
	}
	var srcs []field
	switch {
	case hasDest:
		srcs = ops
	case len(ops) > 0:
		srcs, dest = ops[:len(ops)-1], ops[len(ops)-1]
	}
	for _, s := range srcs {
		if a.key == "mv" {
			r.deleteTarget(s, false, false, "mv", a.cx)
			if r.readPath(s, a.cx) == high {
				continue
			}
			r.writePath(s, "mv (source)", a.cx)
		} else {
			r.readPath(s, a.cx)
			if hasFlag(args, "-r", "-R", "--recursive", "-a", "--archive") {
				r.readTree(s, false, a.cx)
			}
		}
	}
	if a.key == "mv" && !dest.dyn && (dest.s == "/dev/null" || dest.s == "/dev/zero") {
		r.add(a.cx, high, "mv.devnull", "mv onto "+dest.s+" destroys the file")
		return 0
	}
	r.writePath(dest, a.key, a.cx)
	if a.cx.stdinArg {
		// xargs appends operands: every operand here may be a source.
		for _, s := range srcs {
			r.writePath(s, a.key+" (under xargs)", a.cx)
		}
	}
	if len(srcs) > 0 && !srcs[0].dyn && srcs[0].s == "/dev/null" {
		r.add(a.cx, review, "write.truncate", a.key+" empties a file")
	}
	return 0
}

func (r *run) anLn(a *actx) traits {
	ops := operands(a.args[1:], "-t", "--target-directory", "-S", "--suffix")
	if len(ops) == 0 {
		return 0
	}
	for _, s := range ops[:max(1, len(ops)-1)] {
		if r.readPath(s, a.cx) == high {
			r.add(a.cx, high, "ln.secret", "links a secret file to where it can be read")
		}
	}
	if len(ops) >= 2 || a.cx.stdinArg {
		for _, o := range ops[max(0, len(ops)-1):] {
			r.writePath(o, "ln", a.cx)
		}
		if a.cx.stdinArg {
			for _, o := range ops[:max(0, len(ops)-1)] {
				r.writePath(o, "ln (under xargs)", a.cx)
			}
		}
	}
	return 0
}

func (r *run) anChmod(a *actx) traits {
	args := a.args[1:]
	recursive := hasFlag(args, "-R", "--recursive") || a.key == "chattr" && hasFlag(args, "-R")
	ops := operands(args, "--reference", "--from")
	if len(ops) == 0 {
		return 0
	}
	targets := ops
	if a.key != "chattr" && a.key != "setfacl" && !hasFlagPrefix(args, "--reference") {
		mode := ops[0].s
		targets = ops[1:]
		if a.key == "chmod" && (strings.Contains(mode, "s") || len(mode) == 4 && (mode[0] == '4' || mode[0] == '2' || mode[0] == '6')) {
			r.add(a.cx, high, "chmod.setuid", "sets a setuid or setgid bit")
		}
	}
	for _, f := range targets {
		if f.dyn {
			continue
		}
		rp := r.c.res.resolve(r.cwd, f.s)
		w := r.c.res.where(rp)
		if recursive && (w == locRoot || w == locHome || w == locParent || w == locOutside || w == locHomeSub) {
			r.add(a.cx, high, "chmod.recursive-outside", a.key+" -R outside the workspace ("+clip(f.s, 40)+")")
			continue
		}
		if v := r.matchPath(rp, true); v.level == high && (v.id == "path.etc" || v.id == "path.system" || v.id == "path.device" || v.id == "path.shadow" || v.id == "path.sudoers") {
			r.add(a.cx, high, v.id, a.key+" changes "+v.reason)
		}
	}
	return 0
}

func hasFlagPrefix(args []field, p string) bool {
	for _, a := range args {
		if strings.HasPrefix(a.s, p) {
			return true
		}
	}
	return false
}

func isDisk(p string) bool {
	for _, d := range []string{"/dev/sd", "/dev/hd", "/dev/nvme", "/dev/disk", "/dev/rdisk", "/dev/mmcblk", "/dev/xvd", "/dev/vd", "/dev/md", "/dev/dm-", "/dev/mapper/", "/dev/loop", "/dev/mem", "/dev/kmem", "/dev/port"} {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

func (r *run) anDd(a *actx) traits {
	hasOf := false
	for _, f := range a.args[1:] {
		k, v, ok := strings.Cut(f.s, "=")
		if !ok {
			continue
		}
		vf := field{s: v, dyn: f.dyn}
		switch k {
		case "of":
			hasOf = true
			if isDisk(v) {
				r.add(a.cx, high, "disk.write", "dd writes a raw disk device")
				continue
			}
			r.writePath(vf, "dd", a.cx)
		case "if":
			if isDisk(v) {
				r.add(a.cx, high, "disk.read", "dd reads a raw disk (other users' data, deleted files)")
				continue
			}
			r.readPath(vf, a.cx)
		}
	}
	if !hasOf {
		a.level = safe
	}
	return 0
}

func (r *run) anCurl(a *actx) traits {
	args := a.args[1:]
	t := tFetch
	for i := 0; i < len(args); i++ {
		s := args[i].s
		val := func() (field, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return field{}, false
		}
		var v field
		var ok bool
		switch {
		case s == "-o" || s == "--output":
			v, ok = val()
			if ok && v.s != "-" {
				t &^= tFetch
				if r.writePath(v, "curl -o", a.cx) != safe {
					r.markFetched(v)
				}
			}
		case strings.HasPrefix(s, "--output="):
			t &^= tFetch
			r.markFetched(field{s: strings.TrimPrefix(s, "--output=")})
		case s == "-O" || s == "--remote-name" || s == "--remote-name-all":
			t &^= tFetch
			for _, u := range args {
				if strings.Contains(u.s, "://") {
					r.markFetched(field{s: path.Base(u.s)})
				}
			}
		case s == "-d" || s == "--data" || s == "--data-binary" || s == "--data-raw" || s == "--data-urlencode" || s == "--json" || s == "-F" || s == "--form" || s == "-T" || s == "--upload-file" || s == "--data-ascii":
			v, ok = val()
			if ok {
				r.curlUpload(s, v, a, &t)
			}
		case strings.HasPrefix(s, "--data") && strings.Contains(s, "="):
			_, vv, _ := strings.Cut(s, "=")
			r.curlUpload("--data", field{s: vv, dyn: args[i].dyn}, a, &t)
		case s == "-K" || s == "--config":
			r.add(a.cx, review, "curl.config", "curl reads options from a file")
			val()
		case strings.HasPrefix(s, "file://"):
			r.readPath(field{s: strings.TrimPrefix(s, "file://")}, a.cx)
		case strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && len(s) > 2 && strings.HasSuffix(s, "o"):
			v, ok = val()
			if ok && v.s != "-" {
				t &^= tFetch
				r.writePath(v, "curl -o", a.cx)
				r.markFetched(v)
			}
		case strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.Contains(s, "O") && !strings.ContainsAny(s, "o"):
			t &^= tFetch
			for _, u := range args {
				if strings.Contains(u.s, "://") {
					r.markFetched(field{s: path.Base(u.s)})
				}
			}
		case s == "-H" || s == "--header" || s == "-u" || s == "--user" || s == "-X" || s == "--request" || s == "-A" || s == "-e" || s == "-b" || s == "-c" || s == "--max-time" || s == "-m" || s == "-w" || s == "--connect-timeout" || s == "--retry" || s == "-x" || s == "--proxy" || s == "-r" || s == "--resolve" || s == "--cacert" || s == "--cert" || s == "--key":
			val()
		}
	}
	return t
}

func (r *run) curlUpload(flag string, v field, a *actx, t *traits) {
	s := v.s
	if flag == "-F" || flag == "--form" {
		_, s, _ = strings.Cut(s, "=")
		if i := strings.IndexByte(s, ';'); i >= 0 {
			s = s[:i]
		}
		if !strings.HasPrefix(s, "@") && !strings.HasPrefix(s, "<") {
			return
		}
		s = s[1:]
	} else if flag != "-T" && flag != "--upload-file" {
		if !strings.HasPrefix(s, "@") {
			return
		}
		s = s[1:]
	}
	if s == "-" || s == "." {
		*t |= tNetwork
		return
	}
	if r.readPath(field{s: s, dyn: v.dyn}, a.cx) == high {
		r.add(a.cx, high, "net.exfiltration", "uploads a secret file")
	} else {
		r.add(a.cx, review, "net.upload", "uploads a file")
	}
}

func (r *run) markFetched(f field) {
	if f.dyn {
		return
	}
	if r.fetched == nil {
		r.fetched = map[string]bool{}
	}
	r.fetched[r.c.res.resolve(r.cwd, f.s)] = true
}

func (r *run) anWget(a *actx) traits {
	args := a.args[1:]
	if v, ok := flagValue(args, "-O", "--output-document"); ok {
		if v.s == "-" {
			return tFetch
		}
		r.writePath(v, "wget -O", a.cx)
		r.markFetched(v)
		return 0
	}
	for _, f := range args {
		if strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "--") && strings.HasSuffix(f.s, "O-") {
			return tFetch
		}
	}
	if v, ok := flagValue(args, "--post-file", "--body-file"); ok {
		if r.readPath(v, a.cx) == high {
			r.add(a.cx, high, "net.exfiltration", "uploads a secret file")
		}
	}
	for _, f := range operands(args, "-P", "--directory-prefix", "-o", "-a", "-t", "-T", "-U", "--header", "-i", "-e", "--user", "--password") {
		if strings.Contains(f.s, "://") {
			r.markFetched(field{s: path.Base(f.s)})
		}
	}
	return 0
}

func (r *run) anKill(a *actx) traits {
	args := a.args[1:]
	for _, f := range args {
		if f.s == "-l" || f.s == "-L" || f.s == "--list" || f.s == "--table" {
			a.level = safe
			return 0
		}
	}
	pids := 0
	sig0, all := false, false
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "-0" || s == "-s" && i+1 < len(args) && args[i+1].s == "0" || s == "--signal" && i+1 < len(args) && args[i+1].s == "0":
			sig0 = true
			if s != "-0" {
				i++
			}
		case s == "-s" || s == "-n" || s == "--signal":
			i++
		case s == "--":
		case i == 0 && strings.HasPrefix(s, "-") && !args[i].dyn:
			// signal
		default:
			pids++
			if s == "-1" || s == "1" {
				all = true
			}
		}
	}
	switch {
	case sig0:
		a.level = safe
	case all:
		r.add(a.cx, high, "kill.all", "kill -1 signals every process the user owns (or init)")
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
			if rule, ok := r.cr.Commands[strings.ToLower(mod.s)]; ok && !mod.dyn && rule.Analyzer != "interpreter" && rule.Analyzer != "shell" {
				// python -m pytest is the pytest command.
				a.level = safe
				return r.command(strings.ToLower(mod.s), rule, args[i+1:], a.cx)
			}
			a.reason = "runs the module " + clip(mod.s, 40)
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

func (r *run) anPrintenv(a *actx) traits {
	ops := a.args[1:]
	switch a.key {
	case "printenv":
		names := operands(ops)
		if len(names) == 0 {
			a.level, a.reason, a.id = review, "dumps the environment, which may hold tokens", "env.dump"
			return tEnvDump
		}
		for _, n := range names {
			if secretName(n.s) {
				r.add(a.cx, high, "env.secret", "prints a secret variable ("+clip(n.s, 40)+")")
				return tSecret
			}
		}
	case "set":
		if len(ops) == 0 {
			a.level, a.reason, a.id = review, "dumps shell variables, which may hold tokens", "env.dump"
			return tEnvDump
		}
		for i, o := range ops {
			if (o.s == "+o" || o.s == "-o") && i+1 < len(ops) && ops[i+1].s == "history" && o.s == "+o" {
				r.add(a.cx, review, "history.disable", "set +o history stops recording commands (covering tracks)")
			}
		}
	case "declare", "export", "typeset":
		if len(ops) == 0 || len(ops) == 1 && (ops[0].s == "-p" || ops[0].s == "-x") {
			a.level, a.reason, a.id = review, "dumps shell variables, which may hold tokens", "env.dump"
			return tEnvDump
		}
	}
	return 0
}

// secretVarRef reports whether a field's text refers to a variable with a
// secret-looking name ($GITHUB_TOKEN).
func secretVarRef(s string) bool {
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			return false
		}
		s = s[i+1:]
		j := 0
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if secretName(s[:j]) {
			return true
		}
	}
}

func secretName(n string) bool {
	u := strings.ToUpper(n)
	for _, k := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "PRIVATE", "CREDENTIAL", "ACCESS_KEY", "AUTH"} {
		if strings.Contains(u, k) {
			return true
		}
	}
	return false
}

func (r *run) anGrep(a *actx) traits {
	args := a.args[1:]
	explicit := false
	var pattern string
	for i := 0; i < len(args); i++ {
		s := args[i].s
		if s == "--" {
			break
		}
		if s == "-e" || s == "--regexp" || s == "-f" || s == "--file" {
			explicit = true
			if i+1 < len(args) {
				pattern += " " + args[i+1].s
			}
			i++
		} else if strings.HasPrefix(s, "--regexp=") || strings.HasPrefix(s, "-e") && len(s) > 2 && !strings.HasPrefix(s, "--") {
			explicit = true
			pattern += " " + s
		}
	}
	vf := grepValueFlags
	if a.key == "rg" {
		vf = rgValueFlags
	}
	ops := operands(args, vf...)
	if !explicit && len(ops) > 0 {
		pattern = ops[0].s
		ops = ops[1:]
	}
	a.files, a.filesSet = ops, true
	t := traits(0)
	skipsHidden := a.key == "rg" || a.key == "ag" || a.key == "ack"
	if skipsHidden || hasFlag(args, "-r", "-R", "--recursive", "--dereference-recursive", "--directories=recurse") {
		hidden := skipsHidden && !hasFlag(args, "--hidden", "-.", "-uu", "-uuu", "--unrestricted", "-a", "--all-types")
		for _, f := range ops {
			if r.readTree(f, hidden, a.cx) == high {
				t |= tSecret
			}
		}
	}
	if secretPattern(pattern) {
		t |= tSecretFilter
		for _, f := range ops {
			if f.dyn {
				continue
			}
			switch r.c.res.where(r.c.res.resolve(r.cwd, f.s)) {
			case locRoot, locHome, locHomeSub, locParent, locOutside:
				r.add(a.cx, high, "grep.secrets", a.key+" searches outside the workspace for keys, tokens or passwords")
				return t | tSecret
			}
		}
	}
	return t
}

func secretPattern(p string) bool {
	l := strings.ToLower(p)
	for _, k := range []string{"token", "secret", "passw", "api_key", "apikey", "api-key", "credential", "aws_", "private", "auth", "begin rsa", "begin openssh", "ssh-rsa", "ssh-ed25519"} {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}

func (r *run) anCd(a *actx) {
	ops := operands(a.args[1:])
	if len(ops) == 0 {
		r.cwd, r.cwdKnown = "~", true
		return
	}
	f := ops[0]
	if f.dyn || f.s == "-" {
		r.cwd, r.cwdKnown = "/\x00unknown", false
		return
	}
	r.cwd = r.c.res.resolve(r.cwd, f.s)
	if r.cwd == "." {
		r.cwd = ""
	}
	r.cwdKnown = true
}

func (r *run) anDocker(a *actx) {
	for i, f := range a.rest {
		v := f.s
		if (f.s == "-v" || f.s == "--volume" || f.s == "--mount") && i+1 < len(a.rest) {
			v = a.rest[i+1].s
		} else if strings.HasPrefix(f.s, "--volume=") || strings.HasPrefix(f.s, "--mount=") {
			_, v, _ = strings.Cut(f.s, "=")
		} else {
			continue
		}
		src, _, _ := strings.Cut(strings.TrimPrefix(v, "type=bind,source="), ":")
		src = strings.TrimPrefix(src, "src=")
		if src == "/" || src == "/etc" || strings.HasSuffix(src, "docker.sock") || src == "~" || src == "$HOME" || src == "/root" {
			r.add(a.cx, high, "docker.host-mount", "container mounts a sensitive host path ("+clip(src, 40)+")")
		}
	}
}

func (r *run) anKubectl(a *actx) {
	ops := operands(a.rest, "-n", "--namespace", "--context", "-l", "--selector", "-o", "--output", "-f", "--filename", "-c", "--container")
	if strings.HasSuffix(a.id, ".get") && len(ops) > 0 && (ops[0].s == "secret" || ops[0].s == "secrets" || strings.HasPrefix(ops[0].s, "secret/")) {
		if o, ok := flagValue(a.rest, "-o", "--output"); ok && o.s != "name" && o.s != "wide" {
			r.add(a.cx, high, "kubectl.secret-read", "prints secret values from the cluster")
		}
	}
	if strings.HasSuffix(a.id, ".delete") {
		if hasFlag(a.rest, "--all", "-A", "--all-namespaces") || len(ops) > 0 && (ops[0].s == "namespace" || ops[0].s == "ns" || ops[0].s == "pv" || ops[0].s == "pvc") {
			r.add(a.cx, high, "kubectl.delete-wide", "deletes many resources or stored data")
		}
	}
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

func (r *run) anRsync(a *actx) {
	args := a.args[1:]
	if hasFlagPrefix(args, "--delete") || hasFlag(args, "--remove-source-files") {
		r.add(a.cx, high, "rsync.delete", "rsync deletes files at the destination or source")
	}
	if v, ok := flagValue(args, "-e", "--rsh"); ok {
		r.add(a.cx, review, "rsync.rsh", "rsync runs a remote shell program")
		if v.dyn {
			r.dynamicScript(v, a.cx)
		} else {
			r.nested(a.cx, v.s)
		}
	}
	ops := operands(args, "-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--exclude-from", "--include-from", "--files-from", "--backup-dir", "--suffix", "-T", "--temp-dir", "--chmod", "--chown", "--log-file", "--password-file", "-B", "--block-size", "--timeout", "--port", "--bwlimit")
	for i, f := range ops {
		remote := strings.Contains(f.s, ":") && !strings.HasPrefix(f.s, "/")
		if i < len(ops)-1 {
			if !remote && (r.readPath(f, a.cx) == high || hasFlag(args, "-r", "--recursive", "-a", "--archive") && r.readTree(f, false, a.cx) == high) {
				r.add(a.cx, high, "net.exfiltration", "copies a secret")
			}
		} else if !remote {
			r.writePath(f, "rsync", a.cx)
		}
	}
}

func (r *run) anSystemctl(a *actx) {
	ops := operands(a.args[1:], "-H", "--host", "-M", "--machine", "-t", "--type", "--state", "-p", "--property", "-n", "--lines", "-o", "--output")
	if len(ops) == 0 {
		a.level = safe
		return
	}
	verb := ops[0].s
	switch {
	case verb == "status" || verb == "show" || verb == "cat" || strings.HasPrefix(verb, "list-") || strings.HasPrefix(verb, "is-") || verb == "help" || verb == "get-default":
		a.level = safe
	case verb == "poweroff" || verb == "reboot" || verb == "halt" || verb == "kexec" || verb == "emergency" || verb == "rescue" || verb == "isolate" || verb == "suspend" || verb == "hibernate":
		r.add(a.cx, high, "system.power", "stops or restarts the machine")
	case verb == "stop" || verb == "disable" || verb == "mask" || verb == "kill":
		for _, u := range ops[1:] {
			l := strings.ToLower(u.s)
			for _, sec := range []string{"firewalld", "ufw", "iptables", "nftables", "apparmor", "auditd", "selinux", "fail2ban", "sshd", "crowdstrike", "falcon", "osquery"} {
				if strings.Contains(l, sec) {
					r.add(a.cx, high, "system.security-service", "stops a security service ("+clip(u.s, 30)+")")
				}
			}
		}
	}
}

func (r *run) anSSH(a *actx) {
	args := a.args[1:]
	vf := "bcDEeFIiJLlmOopQRSWwB"
	i := 0
	for i < len(args) {
		s := args[i].s
		if s == "--" {
			i++
			break
		}
		if len(s) < 2 || s[0] != '-' {
			break
		}
		opt := ""
		if s[1] == 'o' {
			if len(s) > 2 {
				opt = s[2:]
			} else if i+1 < len(args) {
				opt = args[i+1].s
			}
		}
		if opt != "" {
			k, v, _ := strings.Cut(opt, "=")
			if v == "" {
				k, v, _ = strings.Cut(opt, " ")
			}
			switch strings.ToLower(k) {
			case "proxycommand", "localcommand", "knownhostscommand":
				r.add(a.cx, review, "ssh.local-command", "ssh "+k+" runs a local command")
				r.nested(a.cx, v)
			}
		}
		if strings.IndexByte(vf, s[len(s)-1]) >= 0 && len(s) == 2 {
			i += 2
			continue
		}
		i++
	}
	if i+1 < len(args) {
		from := len(r.findings)
		r.nested(a.cx, joinFields(args[i+1:]))
		// The remote command runs on another machine: only what is
		// high there (destruction, escalation) matters here.
		if r.maxLevel(from) != high {
			r.findings = r.findings[:from]
		} else {
			r.add(a.cx, high, "ssh.remote-command", "runs a high-risk command on the remote host")
		}
	}
}

// cloudValueFlags are the global options of aws, gcloud and az that take a
// value.
var cloudValueFlags = []string{"--region", "--profile", "--output", "-o", "--query", "--endpoint-url", "--project", "--format",
	"--filter", "--limit", "--account", "--configuration", "--subscription", "--resource-group", "-g", "--zone", "--cli-input-json"}

// anCloud: read-only queries (describe-*, list-*, get-*, s3 ls, gcloud …
// list/describe, az … list/show) are safe; operations that print
// credentials or secret values are high; the rest stays review.
func (r *run) anCloud(a *actx) {
	ops := operands(a.args[1:], cloudValueFlags...)
	words := make([]string, 0, len(ops))
	for _, o := range ops {
		if strings.Contains(o.s, "/") || strings.Contains(o.s, ":") {
			break
		}
		words = append(words, strings.ToLower(o.s))
	}
	if len(words) == 0 {
		return
	}
	for _, w := range words {
		switch w {
		case "get-secret-value", "get-password-data", "get-session-token", "get-federation-token", "get-authorization-token",
			"get-login-password", "get-login", "print-access-token", "print-identity-token", "get-access-token", "batch-get-secret-value",
			"get-credentials-for-identity", "assume-role", "export-credentials", "get-role-credentials":
			r.add(a.cx, high, "cloud.secret-read", a.key+" "+w+" prints credentials or secret values")
			return
		}
	}
	if (words[0] == "ssm" && hasFlag(a.args[1:], "--with-decryption")) || words[0] == "configure" && len(words) > 1 && words[1] == "get" || words[0] == "configure" && len(words) > 1 && words[1] == "export-credentials" {
		r.add(a.cx, high, "cloud.secret-read", a.key+" prints decrypted parameters or stored credentials")
		return
	}
	last := words[len(words)-1]
	readOnly := false
	switch a.key {
	case "aws":
		readOnly = len(words) >= 2 && (words[0] == "s3" && words[1] == "ls" || strings.HasPrefix(words[1], "describe-") ||
			strings.HasPrefix(words[1], "list-") || strings.HasPrefix(words[1], "get-") || words[1] == "get-caller-identity") ||
			words[0] == "--version" || words[0] == "help"
	default:
		readOnly = last == "list" || last == "describe" || last == "show" || last == "list-all" || words[0] == "version" || words[0] == "info" ||
			len(words) >= 2 && words[0] == "config" && (words[1] == "list" || words[1] == "get-value" || words[1] == "get")
	}
	if readOnly {
		a.level, a.reason = safe, "read-only cloud query"
	}
}

// anDate: date -s/--set STRING and BSD's date [[[[[CC]YY]MM]DD]hh]mm[.SS]
// operand set the system clock.
func (r *run) anDate(a *actx) {
	set := false
	for _, f := range a.args[1:] {
		s := f.s
		switch {
		case f.dyn:
		case s == "--set" || strings.HasPrefix(s, "--set="):
			set = true
		case len(s) > 1 && s[0] == '-' && s[1] != '-':
		bundle:
			for k := 1; k < len(s); k++ {
				switch s[k] {
				case 'u', 'R', 'j', 'n':
				case 's':
					set = true
					break bundle
				default: // -d, -f, -r, -I, -v take a value
					break bundle
				}
			}
		case len(s) >= 8 && len(s) <= 15 && strings.Trim(s, "0123456789.") == "":
			set = true
		}
	}
	if set {
		r.add(a.cx, high, "clock.set", "date sets the system clock (privileged; breaks logs, certificates and audit timestamps)")
	}
}

// anZip: -TT/--unzip-command CMD runs CMD to test the archive.
func (r *run) anZip(a *actx) {
	if hasFlag(a.args[1:], "-r", "-R", "--recurse-paths", "--recurse-patterns") {
		ops := operands(a.args[1:], a.valueFlags...)
		for i, f := range ops {
			if i > 0 {
				r.readTree(f, false, a.cx)
			}
		}
	}
	if v, ok := flagValue(a.args[1:], "-TT", "--unzip-command"); ok {
		r.add(a.cx, review, "zip.exec", "zip -TT runs a command to test the archive")
		if v.dyn {
			r.dynamicScript(v, a.cx)
		} else {
			r.nested(a.cx, strings.ReplaceAll(v.s, "{}", "archive.zip"))
		}
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

// anHistory: -c and -d erase history (covering tracks); -w/-a write
// and -r/-n read the history file (an operand, or $HISTFILE).
func (r *run) anHistory(a *actx) {
	args := a.args[1:]
	if hasFlag(args, "-c", "-d") {
		r.add(a.cx, review, "history.clear", "history -c/-d erases shell history (covering tracks)")
	}
	ops := operands(args, "-d")
	switch {
	case hasFlag(args, "-w", "-a"):
		if len(ops) > 0 {
			r.writePath(ops[0], "history", a.cx)
		}
	case hasFlag(args, "-r", "-n"):
		if len(ops) > 0 {
			r.readPath(ops[0], a.cx)
		}
	case hasFlag(args, "-s"):
		r.add(a.cx, review, "history.forge", "history -s adds forged entries to the history")
	}
}

// anUlimit: showing limits is safe; setting one is review (ulimit -c
// unlimited writes core dumps holding process memory, secrets included;
// other limits can break the session).
func (r *run) anUlimit(a *actx) {
	for _, o := range operands(a.args[1:]) {
		if o.s != "" {
			r.add(a.cx, review, "ulimit.set", "ulimit "+clip(joinFields(a.args[1:]), 30)+" changes resource limits (core dumps keep process memory, secrets included)")
			return
		}
	}
}

// inPlaceFlag reports a perl or ruby -i option ("-i", "-i.bak", "-pi",
// "-pie") before the code.
func inPlaceFlag(args []field) bool {
	for _, f := range args {
		s := f.s
		if len(s) < 2 || s[0] != '-' || s[1] == '-' {
			continue
		}
		for _, c := range s[1:] {
			if c == 'i' {
				return true
			}
			if c == 'e' || c == 'E' || c == 'I' || c == 'M' || c == 'm' || c == 'r' || c == 'x' {
				break
			}
		}
	}
	return false
}

// anCompress: gzip, bzip2, xz, zstd, lz4 (and their un- forms) replace
// each operand with its (de)compressed file, which deletes the original;
// with -c/--stdout, -t or -l they only read.
func (r *run) anCompress(a *actx) {
	args := a.args[1:]
	vf := []string{"-S", "--suffix", "-T", "--threads", "-M", "--memlimit", "-F", "--format", "-C", "--check", "-o", "--output", "-b", "--block-size", "-L"}
	ops := operands(args, vf...)
	if hasFlag(args, "-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list") {
		for _, f := range ops {
			r.readPath(f, a.cx)
		}
		return
	}
	for _, f := range ops {
		if r.readPath(f, a.cx) == high {
			continue
		}
		r.deleteTarget(f, false, false, a.key, a.cx)
		r.writePath(f, a.key, a.cx)
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
func (r *run) anEditor(a *actx) {
	args := a.args[1:]
	if a.key == "nano" || a.key == "rnano" || a.key == "pico" {
		// nano's -s/--speller PROGRAM runs a spell-check command.
		for i, f := range args {
			if v, ok := strings.CutPrefix(f.s, "--speller="); ok {
				r.editorSpeller(a, field{s: v, dyn: f.dyn, sub: f.sub})
			} else if (f.s == "-s" || f.s == "--speller") && i+1 < len(args) {
				r.editorSpeller(a, args[i+1])
			}
		}
		return
	}
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
		case (s == "-S" || s == "-s" || s == "-l" || s == "--load" || s == "-u" || s == "--script" || s == "-x") && i+1 < len(args):
			r.add(a.cx, review, "editor.script", a.key+" runs a script file")
			i++
		}
	}
	for _, c := range cmds {
		if c.dyn {
			r.dynamicScript(c, a.cx)
			continue
		}
		if strings.Contains(c.s, "!") {
			// After ":!" or ":r !" a "|" belongs to the shell command.
			r.editorCommand(strings.TrimSpace(c.s), a)
			continue
		}
		for _, part := range strings.Split(c.s, "|") {
			r.editorCommand(strings.TrimSpace(part), a)
		}
	}
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
