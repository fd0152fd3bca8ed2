package classify

// This file holds the analyzers for processes, services, containers, clusters, mounts, schedulers and keys.

import (
	"strings"
)

// anPkill is the "pkill" analyzer.
func (r *run) anPkill(a *actx) traits {
	if hasFlag(a.args[1:], "-u", "-U", "--euid", "--uid", "--user") {
		r.add(a.cx, high, "kill.user", a.key+" kills every process of a user")
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

func (r *run) anCd(a *actx) {
	ops := operands(a.args[1:])
	if len(ops) == 0 {
		r.cwd, r.cwdKnown = "~", true
		r.rejudgeTraps()
		return
	}
	f := ops[0]
	if f.dyn || f.s == "-" {
		r.cwd, r.cwdKnown = unknownMark, false
		return
	}
	r.cwd = r.c.res.resolve(r.cwd, f.s)
	if r.cwd == "." {
		r.cwd = ""
	}
	r.cwdKnown = true
	r.rejudgeTraps()
}

func (r *run) anDocker(a *actx) {
	for i := range a.rest {
		v, ok := mountValue(a.rest, i)
		if !ok {
			continue
		}
		src := mountSource(v)
		if src != "/" {
			src = strings.TrimRight(src, "/")
		}
		if src == "/" || src == "/etc" || strings.HasSuffix(src, "docker.sock") || src == "~" || src == "$HOME" || src == "/root" {
			r.add(a.cx, high, "docker.host-mount", "container mounts a sensitive host path ("+clip(src, 40)+")")
			continue
		}
		if src == "" || strings.HasPrefix(src, "$") && !strings.HasPrefix(src, "$HOME/") {
			continue
		}
		// A bind mount exposes what lies below its source (and a write
		// in the container is a write there): judged as a link to it.
		if strings.HasPrefix(src, "$HOME/") {
			src = "~" + src[len("$HOME"):]
		}
		rp := r.c.res.resolve(r.cwd, src)
		if pv := r.matchPath(rp, false); pv.level == high {
			r.add(a.cx, high, "docker.host-mount", "container mounts "+pv.reason+" ("+clip(src, 40)+")")
		} else if pv := r.cr.matchTree(rp, false); pv.level == high {
			r.add(a.cx, high, "docker.host-mount", "container mounts a directory holding "+pv.reason+" ("+clip(src, 40)+")")
		} else if pv := r.cr.matchWriteTree(rp); pv.level == high {
			r.add(a.cx, high, "docker.host-mount", "container mounts a directory holding "+pv.reason+" ("+clip(src, 40)+"), writable by the container")
		}
	}
}

// mountValue is the value of a volume or mount option at args[i], the
// way docker's flag parser (pflag) reads it: -v VAL, -v=VAL, -vVAL, a
// bundle ending in v (-itv VAL), --volume VAL, --volume=VAL, --mount
// VAL, --mount=VAL.
func mountValue(args []field, i int) (string, bool) {
	s := args[i].s
	next := func() (string, bool) {
		if i+1 < len(args) {
			return args[i+1].s, true
		}
		return "", false
	}
	switch {
	case args[i].dyn:
		return "", false
	case s == "--volume" || s == "--mount":
		return next()
	case strings.HasPrefix(s, "--volume=") || strings.HasPrefix(s, "--mount="):
		_, v, _ := strings.Cut(s, "=")
		return v, true
	case len(s) >= 2 && s[0] == '-' && s[1] != '-':
		k := strings.IndexByte(s, 'v')
		if k < 0 || strings.ContainsAny(s[1:k], "=") {
			return "", false
		}
		switch rest := s[k+1:]; {
		case rest == "":
			return next()
		case rest[0] == '=':
			return rest[1:], true
		default:
			return rest, true
		}
	}
	return "", false
}

// mountSource is the host path of a -v/--volume SRC:DST[:opts] or a
// --mount type=bind,source=SRC,… value ("" for a named volume or none).
// --mount is CSV with case-insensitive keys, and the last source wins.
func mountSource(v string) string {
	if strings.Contains(v, "=") {
		src := ""
		for _, kv := range strings.Split(v, ",") {
			kv = strings.Trim(kv, `"'`)
			k, val, _ := strings.Cut(kv, "=")
			if k = strings.ToLower(strings.TrimSpace(k)); k == "source" || k == "src" {
				src = strings.Trim(val, `"'`)
			}
		}
		return src
	}
	src, _, _ := strings.Cut(v, ":")
	if src != "" && !strings.ContainsAny(src[:1], "/~.$") {
		return "" // a named volume
	}
	return src
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
