package classify

// This file holds the analyzers for the environment, shell state and printing: variables, history, limits, echo and printf, grep for secrets.

import (
	"strings"
)

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

// psValueOption reports a ps option (procps, BSD, macOS) whose value is
// the next word: a format, a list of PIDs, users or terminals, a sort key.
func psValueOption(s string) bool {
	switch s {
	case "-o", "-O", "-p", "-q", "-t", "-u", "-U", "-g", "-G", "-C", "-s",
		"--format", "--pid", "--ppid", "--sid", "--tty", "--user", "--User", "--group", "--Group", "--sort", "--cols", "--columns", "--rows", "--lines", "--width":
		return true
	}
	return false
}

// anPs: ps with procps's BSD-style "e" (an option word without a dash:
// "ps e", "ps auxe", "ps eww") or macOS's "-E" prints every listed
// process's environment after its command: the data of /proc/*/environ
// (high, ps.environ). "-e" with a dash is procps's "every process". An
// option word only known at run time may be either (review).
func (r *run) anPs(a *actx) traits {
	args := a.args[1:]
	for i := 0; i < len(args); i++ {
		f := args[i]
		s := f.s
		if f.dyn {
			switch s {
			case "$$", "$!", "$PPID", "${PPID}", "$BASHPID", "${BASHPID}":
				continue
			}
			r.add(a.cx, review, "ps.dynamic", "ps with options computed at run time (ps e prints environments)")
			continue
		}
		switch {
		case s == "--":
			return 0
		case strings.HasPrefix(s, "--"):
			if !strings.Contains(s, "=") && psValueOption(s) {
				i++
			}
		case strings.HasPrefix(s, "-"):
			// UNIX options: -E (macOS) in any bundle; a value option
			// ends the bundle ("-eo pid,user": "pid,user" is its value).
			for k := 1; k < len(s); k++ {
				if s[k] == 'E' {
					r.add(a.cx, high, "ps.environ", "ps -E prints processes' environments (tokens), like /proc/*/environ")
					return tSecret
				}
				if psValueOption("-" + s[k:k+1]) {
					if k == len(s)-1 {
						i++
					}
					break
				}
			}
		default:
			// BSD options: letters without a dash; p, q, t, U, O, o and
			// k take a value (the rest of the word or the next word).
			for k := 0; k < len(s); k++ {
				if s[k] == 'e' {
					r.add(a.cx, high, "ps.environ", "ps "+clip(s, 20)+" prints processes' environments (tokens), like /proc/*/environ")
					return tSecret
				}
				if strings.IndexByte("pqtUOok", s[k]) >= 0 {
					if k == len(s)-1 {
						i++
					}
					break
				}
			}
		}
	}
	return 0
}
