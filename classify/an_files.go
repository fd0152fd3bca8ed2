package classify

// This file holds the analyzers for commands that read, write, copy, archive or delete files.

import (
	"path"
	"strings"
)

// anLs is the "ls" analyzer.
func (r *run) anLs(a *actx) traits {
	// ls GLOB prints the names the glob matches.
	if !anyGlob(a.args[1:]) {
		return 0
	}
	for _, o := range operands(a.args[1:], "-I", "--ignore", "-w", "--width", "-T", "--tabsize", "--sort", "--format", "--time-style", "--color", "--block-size") {
		if o.glob && !o.dyn {
			r.produce(listing{glob: o.s})
		}
	}
	return 0
}

// anNames is the analyzer of commands that print the names of their
// operands (realpath, readlink, stat) or of everything below them (du
// -a, hidden entries included; tree -f, with -a for hidden entries): a
// later stage may read what they name (realpath ~/.kube/config | xargs
// cat; du -a ~ | cut -f2 | xargs cat).
func (r *run) anNames(a *actx) traits {
	args := a.args[1:]
	switch a.key {
	case "du":
		if !hasFlag(args, "-a", "--all") {
			return 0
		}
		ops := operands(args, "-d", "--max-depth", "-B", "--block-size", "-t", "--threshold", "--exclude", "-X", "--exclude-from", "--time-style", "--files0-from")
		if len(ops) == 0 {
			ops = []field{{s: "."}}
		}
		for _, o := range ops {
			r.produce(listing{glob: treeGlob(o, ""), hidden: true})
		}
	case "tree":
		if !shortBundled(args, 'f') {
			return 0
		}
		ops := operands(args, "-L", "-P", "-I", "-o", "--charset", "--filelimit", "--timefmt", "--sort", "-H", "-T", "--fromfile")
		if len(ops) == 0 {
			ops = []field{{s: "."}}
		}
		for _, o := range ops {
			r.produce(listing{glob: treeGlob(o, ""), hidden: shortBundled(args, 'a')})
		}
	default: // realpath, readlink, stat
		for _, o := range operands(args, "-c", "--format", "--printf", "--relative-to", "--relative-base") {
			if !o.dyn {
				r.produce(listing{glob: o.s})
			}
		}
	}
	return 0
}

// shortBundled reports whether a short option letter is set alone or in
// a bundle (-fi, -afi) among args (tree's options take no bundled
// values but -L/-P/-I/-o, which do not hold these letters' meaning).
func shortBundled(args []field, letter byte) bool {
	for _, f := range args {
		if f.dyn || len(f.s) < 2 || f.s[0] != '-' || f.s[1] == '-' {
			continue
		}
		if strings.IndexByte(f.s[1:], letter) >= 0 && strings.IndexAny(f.s[1:2], "LPIo") < 0 {
			return true
		}
	}
	return false
}

// anUniq is the "uniq" analyzer.
func (r *run) anUniq(a *actx) traits {
	if ops := operands(a.args[1:], "-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"); len(ops) >= 2 {
		r.writePath(ops[1], "uniq", a.cx)
		a.files, a.filesSet = ops[:1], true
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
	fx := parseFind(args[i:])
	if fx.print != nil {
		if fx.depth0 {
			for _, s := range starts {
				if !s.dyn {
					r.produce(listing{glob: s.s})
				}
			}
		} else {
			r.produce(r.findFiles(starts, fx.print)...)
		}
	}
	expr := args[i:]
	for j := 0; j < len(expr); j++ {
		switch p := expr[j].s; p {
		case "-delete":
			a.level, a.reason, a.id = review, "deletes the files it finds", "find.delete"
			for _, s := range starts {
				r.findDelete(s, a)
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			for j < len(expr) && expr[j].s != ";" && expr[j].s != "+" {
				j++
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if j+1 < len(expr) {
				r.writePath(expr[j+1], "find "+p, a.cx)
			}
			j++
		}
	}
	for _, act := range fx.actions {
		if len(act.argv) == 0 {
			continue
		}
		sub := r.findCommand(act, starts, r.findFiles(starts, act.cond), fx.depth0)
		if isDeleter(sub[0].s) {
			for _, s := range starts {
				r.findDelete(s, a)
			}
		}
		t |= r.argv(sub, a.cx)
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
			b := s[1:]
			if k := strings.IndexAny(b, tarShortValue); k >= 0 {
				b = b[:k] // the rest is the option's value (-C/home/dev)
			}
			setMode(b)
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
		ta := parseTar(args)
		recursive := !hasFlag(args, "--no-recursion")
		for _, src := range ta.members {
			r.readPath(src, a.cx)
			if recursive {
				r.readTree(src, false, a.cx)
			}
		}
		r.tarListed(ta, recursive, a.cx)
		if hasArch && !arch.dyn && (arch.s == "-" || harmlessTarget(arch.s)) {
			a.level = safe
		} else if hasArch {
			r.writePath(arch, "tar", a.cx)
		}
	case 'x':
		if ta := parseTar(args); ta.hasDir {
			// The last -C in effect (each relative to the one before).
			r.extractInto(ta.dir, "tar -x", true, a.cx)
		} else {
			r.extractInto(field{s: "."}, "tar -x", false, a.cx)
		}
	}
	return 0
}

// extractInto judges a directory that an archive is extracted into (tar
// -x -C DIR, unzip -d DIR, 7z x -oDIR, or the working directory): the
// archive's member names are only known at run time, so every file below
// DIR may be created or overwritten. A directory holding a file that is
// high to write (home holds ~/.bashrc, ~/.config holds toolgate's policy,
// / holds /etc) is high, by that file's rule; otherwise, with named,
// the directory is an ordinary write target (writePath).
func (r *run) extractInto(dir field, what string, named bool, cx *callCtx) {
	if named && r.writePath(dir, what, cx) == high || dir.dyn || dir.proc {
		return
	}
	rp := r.c.res.resolve(r.cwd, dir.s)
	if v := r.cr.matchWriteTree(rp); v.level == high {
		name := dir.s
		if !named {
			name = rp + " (the working directory)"
		}
		r.add(cx, high, v.id, what+" extracts into "+clip(name, 60)+", where it may overwrite "+v.reason)
	}
}

// anExtract: unzip and 7z x/e extract into -d DIR / -oDIR or the working
// directory (see extractInto; OutputFlags makes DIR itself a write
// target); listing, testing and printing modes write nothing.
func (r *run) anExtract(a *actx) {
	args := a.args[1:]
	dirFlag := "-d"
	if a.key == "unzip" {
		if hasFlag(args, "-l", "-t", "-p", "-c", "-v", "-z", "-Z") {
			return
		}
	} else {
		dirFlag = "-o"
		if ops := operands(args); len(ops) == 0 || ops[0].dyn || ops[0].s != "x" && ops[0].s != "e" {
			return
		}
	}
	dir, ok := flagValue(args, dirFlag)
	if !ok {
		dir = field{s: "."}
	}
	r.extractInto(dir, a.key, false, a.cx)
}

func (r *run) anCopy(a *actx) traits {
	args := a.args[1:]
	if a.key == "cp" && hasFlag(args, "-s", "-l", "--symbolic-link", "--link") {
		// cp -s / cp -l make links, not copies: ln's rules (a link to a
		// file that is high to write lets a later ordinary write land there).
		r.add(a.cx, review, "cp.link", "cp makes links to its sources")
		return r.anLn(a)
	}
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
			if r.writePath(s, "mv (source)", a.cx) != high && !s.dyn && !s.proc {
				// Moving a directory away removes what it holds: a
				// startup file, an agent's settings, toolgate's policy.
				if v := r.cr.matchWriteTree(r.c.res.resolve(r.cwd, s.s)); v.level == high {
					r.add(a.cx, high, v.id, "mv moves away "+clip(s.s, 40)+", which holds "+v.reason)
				}
			}
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
		if s.dyn {
			continue
		}
		// A link to a file that is high to write (a shell rc file, an
		// agent's settings, toolgate's own files) turns a later ordinary
		// write of the link into a write of that file.
		rp := r.c.res.resolve(r.cwd, s.s)
		if v := r.matchPath(rp, true); v.level == high {
			r.add(a.cx, high, "ln.protected", "links "+v.reason+" ("+clip(s.s, 60)+") to where an ordinary write changes it")
			continue
		}
		if hasGlob(s.s) {
			continue // readPath judged what the glob may match
		}
		// A link to a directory exposes what lies below it: reads and
		// writes through the link are of ordinary paths (ln -s ~/.aws a;
		// cat a/credentials; ln -s .git/hooks h; echo x > h/pre-commit).
		if v := r.cr.matchTree(rp, false); v.level == high {
			r.add(a.cx, high, "ln.secret", "links a directory holding "+v.reason+" ("+clip(s.s, 60)+") to where it can be read")
		} else if v := r.cr.matchWriteTree(rp); v.level == high {
			r.add(a.cx, high, "ln.protected", "links a directory holding "+v.reason+" ("+clip(s.s, 60)+") to where an ordinary write changes it")
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
	// Every operand is judged as a target: "chmod -x FILE" reads as a
	// flag and one operand, and a mode ("755", "a-x") names no sensitive
	// path.
	for i, f := range ops {
		if f.dyn {
			continue
		}
		rp := r.c.res.resolve(r.cwd, f.s)
		w := r.c.res.where(rp)
		if recursive && i >= len(ops)-len(targets) && (w == locRoot || w == locHome || w == locParent || w == locOutside || w == locHomeSub) {
			r.add(a.cx, high, "chmod.recursive-outside", a.key+" -R outside the workspace ("+clip(f.s, 40)+")")
			continue
		}
		// System files, and the gate's own files and the agents' hook
		// settings: a hook made unreadable or not executable crashes,
		// and the agents then run the call (chmod 000 ~/bin/toolgate).
		if v := r.matchPath(rp, true); v.level == high && (v.id == "path.etc" || v.id == "path.system" || v.id == "path.device" || v.id == "path.shadow" || v.id == "path.sudoers" || v.id == "path.toolgate-self" || v.id == "path.agent-config") {
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

// anZip: -TT/--unzip-command CMD runs CMD to test the archive; -m/--move
// deletes the files it adds (each source is a delete, as for rm, and
// recursive with -r).
func (r *run) anZip(a *actx) {
	recursive := hasFlag(a.args[1:], "-r", "-R", "--recurse-paths", "--recurse-patterns")
	if recursive {
		ops := operands(a.args[1:], a.valueFlags...)
		for i, f := range ops {
			if i > 0 {
				r.readTree(f, false, a.cx)
			}
		}
	}
	if hasFlag(a.args[1:], "-m", "--move") {
		ops := operands(a.args[1:], a.valueFlags...)
		for i, f := range ops {
			if i > 0 {
				r.deleteTarget(f, recursive, recursive, "zip -m", a.cx)
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

// anSplit: split writes FILE's pieces to PREFIX followed by a generated
// suffix (aa, ab, … or digits, and --additional-suffix), csplit to
// -f/--prefix PREFIX (default "xx") followed by digits: each piece is a
// write of the glob PREFIX*SUFFIX, so that a prefix which a protected or
// startup file extends (split -a1 f ~/.bashr writes ~/.bashrc) is judged
// by that file. The default prefix ("x") is in the working directory.
func (r *run) anSplit(a *actx) {
	args := a.args[1:]
	prefix, suffix := field{s: "x"}, ""
	if a.key == "csplit" {
		prefix = field{s: "xx"}
		if v, ok := flagValue(args, "-f", "--prefix"); ok {
			prefix = v
		}
	} else {
		if ops := operands(args, a.valueFlags...); len(ops) >= 2 {
			prefix = ops[1]
		}
		if v, ok := flagValue(args, "--additional-suffix"); ok && !v.dyn {
			suffix = v.s
		}
	}
	if prefix.dyn {
		r.writePath(prefix, a.key, a.cx)
		return
	}
	out := prefix
	out.s, out.glob = prefix.s+"*"+suffix, true
	r.writePath(out, a.key, a.cx)
}
