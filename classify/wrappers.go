package classify

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/shell"
)

// wrapper unwraps a command that runs another command and classifies the
// wrapped command.
func (r *run) wrapper(key string, w WrapperRule, args []field, cx *callCtx) traits {
	if w.Level.Rank() > safe.Rank() {
		reason := w.Reason
		if reason == "" {
			reason = "wrapper"
		}
		r.add(cx, w.Level, "wrapper."+key, key+": "+reason)
	}
	own := args[1:]
	ownVF := append(w.ValueFlags[:len(w.ValueFlags):len(w.ValueFlags)], w.OutputFlags...)
	for k := 1; k < len(args); {
		if a := args[k].s; args[k].dyn || a == "--" || len(a) < 2 || a[0] != '-' {
			own = args[1:k]
			break
		}
		k = skipFlag(args, k, ownVF)
		if k >= len(args) {
			own = args[1:min(k, len(args))]
		}
	}
	for _, of := range w.OutputFlags {
		if v, ok := flagValue(own, of); ok {
			r.writePath(v, key+" "+of, cx)
		} else if v, ok := bundledValue(args, of, w.ValueFlags); ok {
			r.writePath(v, key+" "+of, cx)
		}
	}
	if d, ok := chdirOf(key, args, w.ValueFlags); ok {
		// env -C DIR CMD, sudo -D DIR CMD: CMD runs in DIR.
		defer r.leaveDir(r.enterDir(d))
	}
	if f, ok := r.cr.wrappers[w.Analyzer]; ok && w.Analyzer != "" {
		if t, done := f(r, args, cx); done {
			return t
		}
	}
	return r.unwrap(key, w, args, cx)
}

// wrapperFunc is built-in handling for a wrapper with its own syntax; it
// reports whether it handled the command (false: unwrap it generically).
type wrapperFunc func(r *run, args []field, cx *callCtx) (traits, bool)

// builtinWrappers is the registry of wrapper analyzers that
// WrapperRule.Analyzer names.
func builtinWrappers() map[string]wrapperFunc {
	done := func(f func(r *run, args []field, cx *callCtx) traits) wrapperFunc {
		return func(r *run, args []field, cx *callCtx) (traits, bool) { return f(r, args, cx), true }
	}
	return map[string]wrapperFunc{
		"script":   done((*run).wrapScript),
		"sg":       done((*run).wrapSg),
		"bwrap":    done((*run).wrapBwrap),
		"env":      done((*run).wrapEnv),
		"xargs":    done((*run).wrapXargs),
		"parallel": done((*run).wrapParallel),
		"watch":    done((*run).wrapWatch),
		"busybox":  done((*run).wrapBusybox),
		"command": func(r *run, args []field, cx *callCtx) (traits, bool) {
			return 0, hasFlag(args[1:], "-v", "-V")
		},
	}
}

// wrapBusybox: busybox APPLET ARGS runs the applet.
func (r *run) wrapBusybox(args []field, cx *callCtx) traits {
	if len(args) > 1 && !strings.HasPrefix(args[1].s, "-") {
		return r.argv(args[1:], cx)
	}
	return 0
}

// wrapSg: sg GROUP [-c] COMMAND; the command is a shell script.
func (r *run) wrapSg(args []field, cx *callCtx) traits {
	ops := args[1:]
	if len(ops) > 0 && ops[0].s == "-" {
		ops = ops[1:]
	}
	if len(ops) < 2 {
		return 0
	}
	ops = ops[1:]
	if ops[0].s == "-c" {
		ops = ops[1:]
	}
	r.nested(cx, joinFields(ops))
	return tShell
}

// unwrap skips a wrapper's options (running a script option's value)
// and classifies the command it runs.
func (r *run) unwrap(key string, w WrapperRule, args []field, cx *callCtx) traits {
	i := 1
	for i < len(args) {
		a := args[i].s
		if args[i].dyn {
			break
		}
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if script, ok, next := scriptFlag(args, i, w.ScriptFlags); ok {
			if script.dyn {
				r.dynamicScript(script, cx)
			} else {
				r.nested(cx, script.s)
			}
			_ = next
			return tShell
		}
		i = skipFlag(args, i, w.ValueFlags)
	}
	i += w.Skip
	if i >= len(args) {
		return 0
	}
	if key == "flock" && i < len(args) && (args[i].s == "-c" || args[i].s == "--command") && i+1 < len(args) {
		r.nested(cx, args[i+1].s)
		return tShell
	}
	return r.argv(args[i:], cx)
}

// skipFlag returns the index after the flag at i and its value, if any.
// A short bundle ("-fo FILE") takes a value when its last letter does.
func skipFlag(args []field, i int, valueFlags []string) int {
	a := args[i].s
	if strings.HasPrefix(a, "--") {
		if strings.Contains(a, "=") {
			return i + 1
		}
		for _, v := range valueFlags {
			if a == v {
				return i + 2
			}
		}
		return i + 1
	}
	for j := 1; j < len(a); j++ {
		for _, v := range valueFlags {
			if len(v) == 2 && v[0] == '-' && v[1] == a[j] && !strings.HasPrefix(v, "--") {
				if j == len(a)-1 {
					return i + 2
				}
				return i + 1
			}
		}
	}
	return i + 1
}

// scriptFlag finds a flag taking a shell script ("-c SCRIPT", "-qc SCRIPT",
// "--command=SCRIPT") at args[i].
func scriptFlag(args []field, i int, flags []string) (field, bool, int) {
	a := args[i].s
	for _, f := range flags {
		switch {
		case a == f:
			if i+1 < len(args) {
				return args[i+1], true, i + 2
			}
		case strings.HasPrefix(f, "--") && hasPrefixThen(a, f, '='):
			v := args[i]
			v.s = a[len(f)+1:]
			return v, true, i + 1
		case len(f) == 2 && !strings.HasPrefix(a, "--") && strings.IndexByte(a[1:], f[1]) >= 0:
			k := strings.IndexByte(a[1:], f[1]) + 1
			if k < len(a)-1 {
				v := args[i]
				v.s = a[k+1:]
				return v, true, i + 1
			}
			if i+1 < len(args) {
				return args[i+1], true, i + 2
			}
		}
	}
	return field{}, false, i
}

// dynamicScript classifies a script only known at run time.
func (r *run) dynamicScript(f field, cx *callCtx) {
	switch {
	case f.sub&tFetch != 0:
		r.add(cx, high, "exec.fetched-code", "runs code downloaded at run time")
	case f.sub&tDecode != 0:
		r.add(cx, high, "exec.decoded-code", "runs code decoded at run time")
	default:
		r.add(cx, review, "exec.dynamic-script", "runs a script computed at run time")
	}
}

// wrapEnv: env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... [CMD ARGS].
func (r *run) wrapEnv(args []field, cx *callCtx) traits {
	var genv map[string]string // GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n pairs
	defer func() {
		if genv != nil {
			r.gitEnvPairs(cx, genv)
		}
	}()
	i := 1
	for i < len(args) {
		a := args[i]
		switch {
		case a.s == "--":
			i++
		case a.s == "-S" || a.s == "--split-string" || strings.HasPrefix(a.s, "--split-string=") || strings.HasPrefix(a.s, "-S") && len(a.s) > 2:
			v := ""
			switch {
			case a.s == "-S" || a.s == "--split-string":
				if i+1 < len(args) {
					v = args[i+1].s
					i++
				}
			case strings.HasPrefix(a.s, "--split-string="):
				v = strings.TrimPrefix(a.s, "--split-string=")
			default:
				v = a.s[2:]
			}
			return r.argv(append(r.splitString(v), args[i+1:]...), cx)
		case strings.HasPrefix(a.s, "-") && len(a.s) > 1 && !a.dyn:
			i = skipFlag(args, i, []string{"-u", "--unset", "-C", "--chdir", "-P", "--default-signal", "--ignore-signal", "--block-signal"})
			continue
		case strings.Contains(a.s, "=") && !strings.HasPrefix(a.s, "="):
			name, val, _ := strings.Cut(a.s, "=")
			r.envRule(name, val, !a.dyn, cx.stmt)
			if !a.dyn && (strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")) {
				if genv == nil {
					genv = map[string]string{}
				}
				genv[name] = val
			}
		default:
			return r.argv(args[i:], cx)
		}
		if i < len(args) && args[i].s == "--" {
			i++
			if i < len(args) {
				return r.argv(args[i:], cx)
			}
			break
		}
		i++
	}
	r.add(cx, review, "env.dump", "env: dumps the environment, which may hold tokens")
	return tEnvDump
}

// wrapXargs: xargs [options] [command [initial-arguments]]; the command
// gets more operands from stdin, which analyzers see as stdinArg (they
// then treat every operand as possibly a destination).
func (r *run) wrapXargs(args []field, cx *callCtx) traits {
	vf := []string{"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-L", "-l", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var", "--eof", "--max-lines", "--replace"}
	i := 1
	for i < len(args) {
		a := args[i].s
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' || args[i].dyn {
			break
		}
		if a == "-i" || strings.HasPrefix(a, "-i") || a == "-I" {
			if a == "-I" {
				i += 2
			} else {
				i++
			}
			continue
		}
		i = skipFlag(args, i, vf)
	}
	if af, ok := flagValue(args[1:], "-a", "--arg-file"); ok {
		r.readPath(af, cx)
	}
	sub := args[i:]
	if len(sub) == 0 {
		sub = []field{{s: "echo"}}
	}
	inner := &callCtx{stmt: cx.stmt, pos: cx.pos, end: cx.end, stdinArg: true}
	withInput := r.xargsInput(args[1:i], sub, cx)
	if len(withInput) == len(sub) && &withInput[0] == &sub[0] {
		return r.argv(sub, inner)
	}
	// Judge the command with and without the input words: either can be
	// the worse reading (printenv alone dumps everything).
	return r.argv(sub, inner) | r.argv(withInput, inner)
}

// xargsInput returns the command xargs runs with what arrives on stdin:
// the words of a static text (echo / | xargs rm -rf), globs over the
// names a listing stage prints (find ~/.ssh | xargs cat), or, when the
// input is unknown, a glob matching any name. With -I/-i/--replace the
// input replaces the placeholder; substituted into shell code it is
// review (a file name becomes code).
func (r *run) xargsInput(opts, sub []field, cx *callCtx) []field {
	repl := ""
	for k, o := range opts {
		switch {
		case o.s == "-I" && k+1 < len(opts):
			repl = opts[k+1].s
		case strings.HasPrefix(o.s, "-I") && len(o.s) > 2:
			repl = o.s[2:]
		case o.s == "-i" || o.s == "--replace":
			repl = "{}"
		case strings.HasPrefix(o.s, "-i"):
			repl = o.s[2:]
		case strings.HasPrefix(o.s, "--replace="):
			repl = strings.TrimPrefix(o.s, "--replace=")
		}
	}
	var inputs []field
	switch {
	case cx.stmt != nil && hasStdinRedirect(cx.stmt):
	case r.hasPipeIn:
		for _, w := range strings.Fields(r.pipeIn) {
			if len(inputs) >= 64 {
				break
			}
			inputs = append(inputs, field{s: w})
		}
	case len(r.pathsIn) > 0:
		// Names listed at run time: what they may be is judged for
		// reads (find ~/.ssh | xargs cat); deleting or writing them is
		// a run-time target.
		in := field{s: "$XARGS", dyn: true}
		in.addGlobs(r.pathsIn...)
		inputs = append(inputs, in)
	}
	if repl == "" {
		if len(inputs) == 0 {
			return sub
		}
		return append(sub[:len(sub):len(sub)], inputs...)
	}
	in := field{s: "*", glob: true}
	static := false
	if len(inputs) > 0 {
		in, static = inputs[0], r.hasPipeIn
	}
	out := make([]field, len(sub))
	for k, f := range sub {
		if strings.Contains(f.s, repl) && !f.dyn && (static || !strings.ContainsAny(f.s, " \t;|&")) {
			if static {
				f.s = strings.ReplaceAll(f.s, repl, in.s)
			} else {
				// An unknown name: for reads, any name there
				// (ls ~/.ssh | xargs -I% cat ~/.ssh/%), and any
				// name the listing stage prints.
				g := strings.ReplaceAll(f.s, repl, "*")
				f.addGlobs(append([]listing{{glob: g}}, in.globs()...)...)
			}
		}
		out[k] = f
	}
	if len(sub) > 2 && !static {
		if rule, ok := r.cr.Commands[strings.ToLower(path.Base(sub[0].s))]; ok && rule.Analyzer == "shell" {
			for _, f := range sub[1:] {
				if strings.Contains(f.s, repl) {
					r.add(cx, review, "xargs.shell-substitution", "xargs substitutes its input into shell code (a file name becomes code)")
					break
				}
			}
		}
	}
	return out
}

// wrapParallel: parallel [options] command ::: inputs.
func (r *run) wrapParallel(args []field, cx *callCtx) traits {
	i := 1
	for i < len(args) && strings.HasPrefix(args[i].s, "-") && args[i].s != "--" {
		i = skipFlag(args, i, []string{"-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter", "-I", "--joblog", "--results", "--timeout", "--retries", "-n", "-N", "-L"})
	}
	cmd := args[i:]
	var inputs []field
	for j, a := range cmd {
		if a.s == ":::" || a.s == "::::" || a.s == ":::+" {
			inputs = cmd[j+1:]
			cmd = cmd[:j]
			break
		}
	}
	var t traits
	if len(cmd) == 1 && strings.ContainsAny(cmd[0].s, " \t;|&") {
		script := cmd[0].s
		if len(inputs) > 0 {
			script = strings.ReplaceAll(script, "{}", inputs[0].s)
		}
		r.nested(cx, script)
		return tShell
	}
	if len(cmd) == 0 {
		r.add(cx, review, "parallel.stdin", "parallel runs command lines read from stdin")
		return tShell
	}
	if len(inputs) == 0 {
		inputs = []field{{s: "$PARALLEL", dyn: true}}
	}
	for _, in := range inputs {
		t |= r.argv(append(cmd[:len(cmd):len(cmd)], in), cx)
	}
	return t
}

// wrapWatch: watch [options] command...; without -x the words are joined
// and run by sh -c.
func (r *run) wrapWatch(args []field, cx *callCtx) traits {
	i := 1
	exec := false
	for i < len(args) && strings.HasPrefix(args[i].s, "-") {
		if args[i].s == "-x" || args[i].s == "--exec" {
			exec = true
		}
		i = skipFlag(args, i, []string{"-n", "--interval", "-q", "--equexit"})
	}
	if i >= len(args) {
		return 0
	}
	if exec {
		return r.argv(args[i:], cx)
	}
	r.nested(cx, joinFields(args[i:]))
	return 0
}

// checkPath flags a PATH that puts non-system directories first.
func (r *run) checkPath(val string, dyn bool, cx *callCtx) {
	for _, d := range strings.Split(val, ":") {
		if d == "$PATH" || d == "${PATH}" {
			continue
		}
		if dyn || d == "" || !strings.HasPrefix(d, "/") || !r.cr.systemDir(strings.TrimSuffix(d, "/")) {
			r.add(cx, review, "env.path", "PATH includes "+clip(d, 40)+", so commands may resolve to other programs")
			return
		}
	}
}

// wrapScript: script [options] [FILE]; -c runs a command, FILE (default
// ./typescript) is written, and so are the -I/-O/-B/-T log files.
func (r *run) wrapScript(args []field, cx *callCtx) traits {
	vf := []string{"-E", "--echo", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T", "--log-timing", "-m", "--logging-format", "-o", "--output-limit", "-t", "--timing", "-c", "--command"}
	var t traits
	for i := 1; i < len(args); i++ {
		if script, ok, _ := scriptFlag(args, i, []string{"-c", "--command"}); ok && strings.HasPrefix(args[i].s, "-") && !args[i].dyn {
			if script.dyn {
				r.dynamicScript(script, cx)
			} else {
				r.nested(cx, script.s)
			}
			t = tShell
			break
		}
	}
	if ops := operands(args[1:], vf...); len(ops) > 0 {
		r.writePath(ops[0], "script", cx)
	}
	return t
}

// wrapBwrap: bwrap [options] COMMAND; its options take zero, one or two
// values.
func (r *run) wrapBwrap(args []field, cx *callCtx) traits {
	two := []string{"--bind", "--ro-bind", "--dev-bind", "--bind-try", "--ro-bind-try", "--dev-bind-try", "--symlink", "--setenv", "--file", "--bind-data", "--ro-bind-data", "--chmod"}
	one := []string{"--uid", "--gid", "--hostname", "--chdir", "--unsetenv", "--dir", "--tmpfs", "--proc", "--dev", "--mqueue", "--remount-ro", "--exec-label", "--file-label", "--seccomp", "--info-fd", "--lock-file", "--sync-fd", "--block-fd", "--userns-block-fd", "--json-status-fd", "--userns", "--userns2", "--pidns", "--cap-add", "--cap-drop", "--perms", "--size", "--argv0", "--args", "--add-seccomp-fd"}
	i := 1
	for i < len(args) && strings.HasPrefix(args[i].s, "--") && !args[i].dyn {
		a := args[i].s
		i++
		if a == "--" {
			break
		}
		switch {
		case slices.Contains(two, a):
			i += 2
		case slices.Contains(one, a):
			i++
		}
	}
	if i >= len(args) {
		return 0
	}
	return r.argv(args[i:], cx)
}

// bundledValue finds a one-letter flag at the end of a short-option
// bundle ("strace -fo FILE") among a wrapper's options (args[0] is the
// wrapper) and returns the next argument, its value.
func bundledValue(args []field, flag string, valueFlags []string) (field, bool) {
	if len(flag) != 2 || flag[0] != '-' || flag[1] == '-' {
		return field{}, false
	}
	for i := 1; i < len(args); {
		s := args[i].s
		if args[i].dyn || s == "--" || len(s) < 2 || s[0] != '-' {
			return field{}, false
		}
		if len(s) > 2 && s[1] != '-' && s[len(s)-1] == flag[1] && i+1 < len(args) {
			return args[i+1], true
		}
		i = skipFlag(args, i, valueFlags)
	}
	return field{}, false
}

// splitString splits env -S's string the way env does: white space
// separates words, and single quotes, double quotes and backslashes quote
// (so `sh -c "rm -rf ~"` is three words); ${VAR} is expanded when its value
// is known statically (HOME is ~) and makes the word dynamic otherwise.
// Unbalanced quotes fall back to white space.
func (r *run) splitString(v string) []field {
	const mark = "\x00"
	words, err := shell.Fields(v, func(name string) string {
		if val, ok := r.lookup(name); ok {
			return val
		}
		return mark + "${" + name + "}"
	})
	if err != nil {
		words = strings.Fields(v)
	}
	fs := make([]field, 0, len(words))
	for _, w := range words {
		dyn := strings.Contains(w, mark) || strings.Contains(w, "$")
		fs = append(fs, field{s: strings.ReplaceAll(w, mark, ""), dyn: dyn})
	}
	return fs
}
