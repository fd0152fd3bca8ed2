package classify

import (
	"path"
	"slices"
	"strings"
)

// gitExecKey reports whether a git config key names a program git runs
// (Rules.GitExecKeys; "*" matches one or more characters).
func (r *run) gitExecKey(key string) bool {
	k := strings.ToLower(key)
	for _, p := range r.cr.GitExecKeys {
		p = strings.ToLower(p)
		if p == k {
			return true
		}
		if strings.Contains(p, "*") {
			pre, suf, _ := strings.Cut(p, "*")
			if strings.HasPrefix(k, pre) && strings.HasSuffix(k, suf) && len(k) > len(pre)+len(suf) {
				return true
			}
		}
	}
	return false
}

// gitConfigValue handles one key=value from git -c (persistent false),
// git config (persistent true) or the GIT_CONFIG_PARAMETERS /
// GIT_CONFIG_KEY_n environment (persistent false; via names the source).
// For a key naming a program git runs (Rules.GitExecKeys), the value is
// classified as a nested command (alias.* only with a leading "!"), and
// the setting itself is at least review for -c, high for git config, and
// high for either when the value runs a shell or interpreter with inline
// code (sh -c, python -c …) or a program by a path outside the workspace
// and the system directories. Keys whose value is a directory or file of
// programs (core.hooksPath, init.templateDir, include.path …) are high.
func (r *run) gitConfigValue(cx *callCtx, via, key, val string, persistent bool) {
	if !r.gitExecKey(key) {
		return
	}
	lk := strings.ToLower(key)
	v := strings.TrimSpace(val)
	if (strings.HasPrefix(lk, "alias.") || strings.HasPrefix(lk, "submodule.")) && !strings.HasPrefix(v, "!") {
		return
	}
	what := via + " " + key
	if persistent {
		r.add(cx, high, "git.config-exec", "git config sets "+key+", which runs a program on later git commands")
	} else {
		r.add(cx, review, "git.config-exec", what+" runs a program")
	}
	switch {
	case strings.HasSuffix(lk, "hookspath") || strings.HasSuffix(lk, "templatedir") || strings.HasSuffix(lk, ".path") || lk == "core.worktree" || lk == "http.sslkeylogfile":
		if !persistent {
			r.add(cx, high, "git.config-exec", what+" points git at programs in "+clip(val, 40))
		}
		return
	case strings.HasPrefix(lk, "protocol.") || lk == "ssh.variant" || lk == "receive.procreceiverefs" || lk == "web.browser":
		// Enables or selects behaviour; no command in the value.
		return
	}
	cmd := strings.TrimSpace(strings.TrimPrefix(v, "!"))
	if cmd == "" {
		return
	}
	if why := r.gitCommandValue(cmd); why != "" {
		r.add(cx, high, "git.config-exec", what+" "+why)
	}
	r.nested(cx, cmd)
}

// gitCommandValue reports why a command-valued git setting is high on
// its own: it runs a shell or interpreter with inline code, or a program
// by a path outside the workspace and the system directories.
func (r *run) gitCommandValue(cmd string) string {
	fs := strings.Fields(cmd)
	for len(fs) > 0 && (fs[0] == "env" || fs[0] == "exec" || fs[0] == "command" || strings.Contains(fs[0], "=") && !strings.HasPrefix(fs[0], "=")) {
		fs = fs[1:]
	}
	if len(fs) == 0 {
		return ""
	}
	prog := strings.Trim(fs[0], `'"`)
	base := strings.ToLower(path.Base(prog))
	if rule, ok := r.cr.Commands[strings.TrimRight(base, "0123456789.")]; ok && (rule.Analyzer == "shell" || rule.Analyzer == "interpreter" || rule.Analyzer == "eval") {
		lang := strings.TrimRight(base, "0123456789.")
		for _, f := range fs[1:] {
			f = strings.Trim(f, `'"`)
			if rule.Analyzer == "eval" || rule.Analyzer == "shell" && strings.HasPrefix(f, "-") && !strings.HasPrefix(f, "--") && strings.Contains(f, "c") || slices.Contains(interpCodeFlags(lang), f) || lang == "python" && f == "-c" {
				return "runs " + base + " with inline code"
			}
		}
	}
	if strings.Contains(prog, "/") || strings.HasPrefix(prog, "~") {
		dir := path.Dir(prog)
		if r.cr.systemDir(dir) {
			return ""
		}
		switch r.c.res.where(r.c.res.resolve(r.cwd, prog)) {
		case locWorkspace, locWorkspaceRoot:
			if r.c.cfg.workspace != "" {
				return ""
			}
		}
		return "runs " + clip(prog, 40) + ", a program outside the workspace"
	}
	return ""
}

// gitEnvConfig applies gitConfigValue to GIT_CONFIG_PARAMETERS, whose
// value is git's own quoting: 'key'='value' pairs (or 'key=value'),
// separated by spaces, with ' written as '\”.
func (r *run) gitEnvConfig(cx *callCtx, val string) {
	var words []string
	var cur strings.Builder
	in, have := false, false
	for i := 0; i < len(val); i++ {
		c := val[i]
		switch {
		case c == '\'':
			in = !in
			have = true
		case c == '\\' && !in && i+1 < len(val):
			i++
			cur.WriteByte(val[i])
		case (c == ' ' || c == '\t' || c == '\n') && !in:
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		r.gitConfigValue(cx, "GIT_CONFIG_PARAMETERS", k, v, false)
	}
}

// gitEnvPairs applies gitConfigValue to GIT_CONFIG_KEY_n /
// GIT_CONFIG_VALUE_n pairs set on a command (env) or earlier in the
// command (vars).
func (r *run) gitEnvPairs(cx *callCtx, env map[string]string) {
	for name, k := range env {
		n, ok := strings.CutPrefix(name, "GIT_CONFIG_KEY_")
		if !ok {
			continue
		}
		v, ok := env["GIT_CONFIG_VALUE_"+n]
		if !ok {
			v, ok = r.vars["GIT_CONFIG_VALUE_"+n]
		}
		if ok {
			r.gitConfigValue(cx, "GIT_CONFIG_KEY_"+n, k, v, false)
		}
	}
}

func (r *run) anGit(a *actx) traits {
	args := a.args[1:]
	i := 0
	for i < len(args) {
		f := args[i]
		s := f.s
		if f.dyn && strings.HasPrefix(s, "$") {
			r.add(a.cx, review, "git.dynamic", "git with arguments computed at run time")
			return 0
		}
		if !strings.HasPrefix(s, "-") {
			break
		}
		switch {
		case s == "-c":
			if i+1 < len(args) {
				k, v, _ := strings.Cut(args[i+1].s, "=")
				r.gitConfigValue(a.cx, "git -c", k, v, false)
				i++
			}
		case strings.HasPrefix(s, "-c") && len(s) > 2:
			k, v, _ := strings.Cut(s[2:], "=")
			r.gitConfigValue(a.cx, "git -c", k, v, false)
		case s == "--config-env" || strings.HasPrefix(s, "--config-env="):
			r.add(a.cx, review, "git.config-env", "git --config-env sets config from the environment")
			if s == "--config-env" {
				i++
			}
		case s == "-C" || s == "--git-dir" || s == "--work-tree" || s == "--namespace" || s == "--super-prefix" || s == "--list-cmds" || s == "--attr-source":
			if s == "--git-dir" || s == "--work-tree" {
				r.add(a.cx, review, "git.repo-override", "git "+s+" points at another repository, whose config can run programs")
			}
			i++
		case strings.HasPrefix(s, "--git-dir=") || strings.HasPrefix(s, "--work-tree="):
			r.add(a.cx, review, "git.repo-override", "git "+clip(s, 40)+" points at another repository, whose config can run programs")
		case strings.HasPrefix(s, "--exec-path="):
			r.add(a.cx, review, "git.exec-path", "git --exec-path runs git helpers from another directory")
		case s == "-p" || s == "--paginate":
			r.add(a.cx, review, "git.paginate", "git --paginate runs the configured pager, which can be any program")
		}
		i++
	}
	if i >= len(args) {
		a.level = safe
		return 0
	}
	subName := args[i].s
	rest := args[i+1:]
	sub, ok := a.subcommands[subName]
	if !ok {
		a.level, a.reason, a.id = review, "git "+clip(subName, 30)+" (unknown or custom subcommand, may be an alias)", "git.unknown"
		return 0
	}
	a.level, a.reason, a.id = sub.Level, sub.Reason, "git."+subName
	hi := func(id, reason string) { r.add(a.cx, high, id, "git "+subName+": "+reason) }
	rv := func(id, reason string) { r.add(a.cx, review, id, "git "+subName+": "+reason) }
	// Options that make read commands write or run programs.
	if v, ok := flagValue(rest, "--output"); ok {
		r.writePath(v, "git "+subName+" --output", a.cx)
	}
	if hasFlag(rest, "--ext-diff") {
		rv("git.ext-diff", "--ext-diff runs the configured external diff program")
	}
	if hasFlag(rest, "--textconv") || subName == "cat-file" && hasFlag(rest, "--filters", "--textconv") {
		rv("git.textconv", "runs textconv or filter programs from the repository config")
	}
	if subName == "grep" && (hasFlag(rest, "--open-files-in-pager") || hasFlag(rest, "-O") || hasFlagPrefix(rest, "-O")) {
		rv("git.open-in-pager", "--open-files-in-pager runs a chosen program")
	}
	if hasFlagPrefix(rest, "--exec=") || hasFlag(rest, "--exec", "-x") && (subName == "rebase") || subName == "bisect" && len(rest) > 0 && rest[0].s == "run" {
		rv("git.exec", "runs a shell command")
		if v, ok := flagValue(rest, "--exec", "-x"); ok {
			r.nested(a.cx, v.s)
		}
	}
	ops := operands(rest, "-m", "--message", "-F", "--file", "-C", "-c", "-b", "-B", "--author", "--date", "-u", "--upstream", "--set-upstream-to", "-t", "--track", "--format", "--pretty", "--sort", "-n", "--max-count", "-L", "-S", "-G", "--grep", "--since", "--until", "-o", "--origin", "--depth", "--reference", "--template", "-X", "--strategy-option", "-s", "--strategy", "--onto", "--exec", "-x", "--contains", "--merged", "--no-merged", "--points-at", "--column", "--abbrev")
	switch subName {
	case "push":
		if hasFlag(rest, "-f", "--force", "--force-if-includes", "--mirror", "-d", "--delete", "--prune") {
			hi("git.push-force", "force push, mirror or delete rewrites or removes remote history")
		}
		for _, o := range ops {
			if strings.HasPrefix(o.s, "+") {
				hi("git.push-force", "+refspec force-pushes")
			}
			if strings.HasPrefix(o.s, ":") && len(o.s) > 1 {
				hi("git.push-delete", "empty source refspec deletes a remote branch")
			}
		}
	case "reset":
		if hasFlag(rest, "--hard", "--merge", "--keep") {
			hi("git.reset-hard", "discards uncommitted work")
		}
	case "clean":
		switch {
		case hasFlag(rest, "-n", "--dry-run"):
			a.level, a.reason = safe, "dry run"
		case hasFlag(rest, "-f", "--force"):
			hi("git.clean-force", "deletes untracked files irrecoverably")
		}
	case "checkout", "switch":
		if hasFlag(rest, "-f", "--force", "--discard-changes") {
			hi("git.checkout-force", "discards local changes")
		}
		dashdash := false
		for _, f := range rest {
			if f.s == "--" {
				dashdash = true
				continue
			}
			if (dashdash || subName == "checkout") && (f.s == "." || f.s == "*" || f.s == ":/" || f.s == "./") {
				hi("git.checkout-discard", "discards all uncommitted changes")
				break
			}
		}
	case "restore":
		staged := hasFlag(rest, "-S", "--staged") && !hasFlag(rest, "-W", "--worktree")
		if !staged {
			for _, o := range operands(rest, "-s", "--source", "--pathspec-from-file") {
				if o.s == "." || o.s == "*" || o.s == ":/" || o.s == "./" {
					hi("git.restore-all", "discards all uncommitted changes")
					break
				}
			}
		}
	case "stash":
		if len(ops) > 0 {
			switch ops[0].s {
			case "clear":
				hi("git.stash-clear", "deletes every stash")
			case "list", "show":
				a.level = safe
			}
		}
	case "branch":
		switch {
		case hasFlag(rest, "-D") || hasFlag(rest, "-d", "--delete") && hasFlag(rest, "-f", "--force"):
			hi("git.branch-force-delete", "force-deletes a branch")
		case hasFlag(rest, "-d", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-u", "--set-upstream-to", "--unset-upstream", "--edit-description", "-f", "--force", "-t", "--track"):
		case len(ops) == 0 || hasFlag(rest, "-l", "--list", "-a", "--all", "-r", "--remotes", "--contains", "--merged", "--no-merged", "--points-at", "--show-current"):
			a.level, a.reason = safe, "lists branches"
		}
	case "tag":
		if len(ops) == 0 || hasFlag(rest, "-l", "--list", "-n", "--contains", "--points-at", "--merged", "--no-merged", "-v", "--verify") && !hasFlag(rest, "-d", "--delete", "-f", "--force", "-a", "-s", "-m") {
			a.level, a.reason = safe, "lists tags"
		}
	case "remote":
		if len(ops) == 0 || ops[0].s == "show" || ops[0].s == "get-url" {
			a.level, a.reason = safe, "lists remotes"
		}
	case "reflog":
		if len(ops) > 0 && (ops[0].s == "expire" || ops[0].s == "delete") {
			hi("git.reflog-expire", "deletes reflog entries (recovery points)")
		} else if len(ops) == 0 || ops[0].s == "show" || ops[0].s == "list" || ops[0].s == "exists" {
			a.level = safe
		}
	case "worktree":
		if len(ops) > 0 && ops[0].s == "list" {
			a.level = safe
		}
	case "submodule":
		if len(ops) == 0 || ops[0].s == "status" || ops[0].s == "summary" {
			a.level = safe
		}
		if len(ops) > 1 && ops[0].s == "foreach" {
			rv("git.exec", "submodule foreach runs a shell command")
			r.nested(a.cx, joinFields(ops[1:]))
		}
	case "notes":
		if len(ops) == 0 || ops[0].s == "list" || ops[0].s == "show" {
			a.level = safe
		}
	case "gc", "prune":
		if hasFlagPrefix(rest, "--prune=now") || hasFlag(rest, "--aggressive") && hasFlagPrefix(rest, "--prune") {
			rv("git.prune", "prunes unreachable objects immediately")
		}
	case "config":
		r.anGitConfig(a, rest)
	case "credential", "credential-store", "credential-cache", "credential-osxkeychain", "credential-libsecret", "credential-manager", "credential-manager-core":
		// "git credential fill" and a helper's "get" print the stored
		// password for the host named on stdin.
		if len(ops) > 0 && (ops[0].s == "fill" || ops[0].s == "get") {
			hi("git.credential-read", "prints a stored password or token")
		}
	case "grep":
		r.gitGrepReads(rest, a.cx)
	}
	if a.level == safe && r.c.cfg.untrusted {
		a.level, a.reason, a.id = review, "repository config in an untrusted workspace can make git run programs", "git.untrusted-workspace"
	}
	return 0
}

func (r *run) anGitConfig(a *actx, rest []field) {
	read, write := false, false
	scoped := ""
	var ops []field
	for i := 0; i < len(rest); i++ {
		s := rest[i].s
		switch s {
		case "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool", "--show-origin", "--show-scope", "--name-only", "-z", "--null", "--type", "--default":
			read = read || s != "--show-origin" && s != "--show-scope" && s != "--name-only" && s != "-z" && s != "--null"
			if s == "--type" || s == "--default" {
				i++
			}
		case "--global", "--system", "--local", "--worktree":
			scoped = s
		case "-f", "--file", "--blob":
			scoped = s
			i++
		case "--unset", "--unset-all", "--rename-section", "--remove-section", "--add", "--replace-all", "--edit", "-e":
			write = true
		default:
			ops = append(ops, rest[i])
		}
	}
	if len(ops) > 0 && (ops[0].s == "get" || ops[0].s == "list") {
		read = true
	}
	if !write && (read || len(ops) == 1) {
		a.level, a.reason = safe, "reads git config"
		return
	}
	if len(ops) > 0 && (ops[0].s == "set" || ops[0].s == "unset") {
		ops = ops[1:]
	}
	if len(ops) >= 2 {
		r.gitConfigValue(a.cx, "git config", ops[0].s, ops[1].s, true)
	}
	a.level, a.reason = review, "writes git config"
	if scoped == "--system" {
		r.add(a.cx, high, "git.config-system", "writes system-wide git config")
	}
}

// gitGrepReads judges the files git grep searches as a recursive read:
// its pathspecs, or the working directory (git -C ~/.aws grep
// --no-index -h "" prints every file there; a home kept in git has its
// secrets tracked). The pattern is the first operand unless -e or -f
// gives it; with "--", the operands before it are revisions.
func (r *run) gitGrepReads(rest []field, cx *callCtx) {
	vf := []string{"-e", "-f", "-A", "-B", "-C", "-m", "--max-count", "--max-depth", "--threads", "--context", "--after-context", "--before-context", "--color", "--column", "--open-files-in-pager"}
	ops := operands(rest, vf...)
	if !hasFlag(rest, "-e", "-f") && len(ops) > 0 {
		ops = ops[1:]
	}
	for k, f := range rest {
		if f.s == "--" && !f.dyn {
			ops = rest[k+1:]
			break
		}
	}
	if len(ops) == 0 {
		ops = []field{{s: "."}}
	}
	for _, f := range ops {
		if r.readPath(f, cx) != high {
			r.readTree(f, false, cx)
		}
	}
}
