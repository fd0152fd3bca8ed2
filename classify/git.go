package classify

import (
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

// gitConfigValue handles one key=value from git -c or git config.
func (r *run) gitConfigValue(a *actx, key, val string, persistent bool) {
	if !r.gitExecKey(key) {
		return
	}
	lk := strings.ToLower(key)
	if strings.HasPrefix(lk, "alias.") && !strings.HasPrefix(strings.TrimSpace(val), "!") {
		return
	}
	if persistent {
		r.add(a.cx, high, "git.config-exec", "git config sets "+key+", which runs a program on later git commands")
		return
	}
	r.add(a.cx, review, "git.config-exec", "git -c "+key+" runs a program")
	cmd := strings.TrimPrefix(strings.TrimSpace(val), "!")
	if cmd != "" && !strings.HasSuffix(lk, "hookspath") && !strings.HasSuffix(lk, "templatedir") && !strings.HasSuffix(lk, ".path") {
		r.nested(a.cx, cmd)
	} else {
		r.add(a.cx, high, "git.config-exec", "git -c "+key+" points git at programs in "+clip(val, 40))
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
				r.gitConfigValue(a, k, v, false)
				i++
			}
		case strings.HasPrefix(s, "-c") && len(s) > 2:
			k, v, _ := strings.Cut(s[2:], "=")
			r.gitConfigValue(a, k, v, false)
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
	sub, ok := a.rule.Subcommands[subName]
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
		r.gitConfigValue(a, ops[0].s, ops[1].s, true)
	}
	a.level, a.reason = review, "writes git config"
	if scoped == "--system" {
		r.add(a.cx, high, "git.config-system", "writes system-wide git config")
	}
}
