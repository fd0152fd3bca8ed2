package classify

// This file holds the analyzers for network tools and remote copies.

import (
	"path"
	"strings"
)

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
			"get-credentials-for-identity", "assume-role", "export-credentials", "get-role-credentials", "get-token", "config-helper":
			r.add(a.cx, high, "cloud.secret-read", a.key+" "+w+" prints credentials or secret values")
			return
		}
	}
	if hasFlag(a.args[1:], "--expose-token") {
		// az acr login --expose-token prints a registry access token.
		r.add(a.cx, high, "cloud.secret-read", a.key+" --expose-token prints an access token")
		return
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

// servesDir flags a server that publishes a directory holding secrets
// (python -m http.server --directory ~/.ssh): the whole directory can be
// downloaded by anyone who reaches the port.
func (r *run) servesDir(dir field, cx *callCtx) {
	if dir.dyn {
		return
	}
	rp := r.c.res.resolve(r.cwd, dir.s)
	v := r.matchPath(rp, false)
	if v.level != high {
		v = r.cr.matchTree(rp, false)
	}
	if v.level == high {
		r.add(cx, high, "net.serve-secret", "serves "+v.reason+" over the network ("+clip(dir.s, 40)+")")
	}
}
