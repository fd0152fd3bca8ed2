package classify

import (
	"encoding/base64"
	"strings"
	"unicode"
)

// decodeBase64Text decodes a literal that looks like base64 of printable
// text (a hidden shell command).
func decodeBase64Text(l string) (string, bool) {
	if len(l) < 8 || len(l) > 4096 || strings.ContainsAny(l, " .\n") {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(l)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(l); err != nil {
			return "", false
		}
	}
	s := string(b)
	for _, c := range s {
		if !unicode.IsPrint(c) && c != '\n' && c != '\t' {
			return "", false
		}
	}
	return s, strings.ContainsRune(s, ' ')
}

// inlineCode scans interpreter code (python -c, node -e, a here-document
// fed to python3 -) for what makes it high: deleting the home directory or
// system paths, running shell commands that are high themselves, reading
// secret files, or downloading and running code. Everything else stays at
// the interpreter's review.
func (r *run) inlineCode(code string, cx *callCtx) {
	lits := stringLiterals(code)
	lower := strings.ToLower(code)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(code, s) {
				return true
			}
		}
		return false
	}
	if has("rmtree", "rmSync", "rm_rf", "rm_r(", "remove_dir_all", "rimraf", "rmdirSync", "FileUtils.rm", "unlinkSync", "os.remove", "os.unlink", "removedirs", "Remove-Item", "File.delete", "fs.rm(", "deleteRecursively") {
		if has("expanduser", "homedir", "Path.home", "HOME", "'~'", "\"~\"", "'~/'", "\"~/\"", "'/'", "\"/\"", "/home/", "/Users/", "'/etc", "\"/etc", "'/usr", "\"/usr", "'/var", "\"/var", "getenv(\"HOME", "ENV['HOME", "Dir.home", "'..'", "\"..\"") {
			r.add(cx, high, "code.delete-home", "inline code deletes the home directory or system paths")
		}
	}
	if has("system(", "subprocess", "popen", "Popen", "child_process", "execSync", "spawnSync", "exec(", "execFile", "`", "os.exec", "Process.Start", "shell_exec", "passthru", "%x") {
		for _, l := range lits {
			if strings.ContainsAny(l, " |;&") && len(l) < 4096 {
				from := len(r.findings)
				r.nested(cx, l)
				// Keep only what makes the inline code worse than review.
				if r.maxLevel(from) != high {
					r.findings = r.findings[:from]
				}
			}
		}
	}
	for _, l := range lits {
		if len(l) > 200 || strings.ContainsAny(l, " \n") {
			continue
		}
		p := strings.TrimPrefix(l, "file://")
		if v := r.matchPath(r.c.res.resolve(r.cwd, p), false); v.level == high {
			r.add(cx, high, v.id, "inline code reads "+v.reason+" ("+clip(l, 40)+")")
		}
	}
	if has("decode_base64", "b64decode", "base64.decode", "atob(", "Base64.decode", "base64_decode", "unpack(\"m", "unpack('m", "'base64')", "\"base64\")") &&
		has("system(", "exec(", "eval(", "popen", "spawn", "Function(", "`") {
		r.add(cx, high, "code.decode-exec", "inline code decodes and runs a payload")
	}
	for _, l := range lits {
		if d, ok := decodeBase64Text(l); ok {
			from := len(r.findings)
			r.nested(cx, d)
			if r.maxLevel(from) != high {
				r.findings = r.findings[:from]
			}
		}
	}
	spawns := has("system(", "subprocess", "popen", "Popen", "child_process", "spawn", "exec(", "execl", "execv", "pty.", "Process.Start", "shell_exec", "passthru", "proc_open", "IO.popen", "%x", "`")
	sockets := has("socket", "Socket", "fsockopen", "TCPSocket", "net.connect", "Net::", "createConnection", "new net.", "TCPServer", "UDPSocket")
	if sockets && spawns {
		for _, l := range lits {
			switch strings.TrimSpace(l) {
			case "sh", "bash", "zsh", "dash", "ash", "ksh", "/bin/sh", "/bin/bash", "/bin/zsh", "/bin/dash", "/usr/bin/sh", "/usr/bin/bash", "sh -i", "bash -i", "/bin/sh -i", "/bin/bash -i", "cmd.exe", "powershell":
				r.add(cx, high, "net.reverse-shell", "inline code joins a shell to a network socket (reverse or bind shell)")
			}
		}
	}
	writes := has("open(", "write", "Write", "appendFile", "writeFile", "file_put_contents", "fopen", "File.new", "IO.write", "copyfile", "shutil.copy", "symlink", "rename", "createWriteStream", "spit", "tee")
	if writes {
		for _, l := range lits {
			if len(l) > 200 || strings.ContainsAny(l, " \n") {
				continue
			}
			p := strings.TrimPrefix(strings.TrimLeft(l, "<>+"), "file://")
			rp := r.c.res.resolve(r.cwd, p)
			if strings.HasPrefix(rp, "/dev/") && !strings.HasPrefix(rp, "/dev/tcp/") {
				continue
			}
			if v := r.matchPath(rp, true); v.level == high && v.id != "path.dotenv" && !strings.HasPrefix(v.id, "path.private-key") {
				r.add(cx, high, "code.sensitive-write", "inline code writes "+v.reason+" ("+clip(l, 40)+")")
				break
			}
		}
	}
	if has("rmtree", "rmSync", "rm_rf", "rm_r(", "remove_dir_all", "rimraf", "rmdirSync", "FileUtils.rm", "deleteRecursively", "rm(", "Remove-Item") &&
		has("'.'", "\".\"", "'./'", "\"./\"", "getcwd()", "process.cwd()", "Dir.pwd", "os.curdir", "Path.cwd()", "Path('.')", "Path(\".\")", "'*'", "\"*\"") {
		r.add(cx, high, "code.delete-workspace", "inline code deletes everything under the working directory")
	}
	if has("socket", "Socket", "fsockopen", "TCPSocket", "net.connect", "Net::") &&
		has("dup2", "pty.spawn", "/bin/sh", "/bin/bash", "cmd.exe", "spawn(\"sh", "exec(\"sh", "-i") {
		r.add(cx, high, "net.reverse-shell", "inline code connects a shell to a socket (reverse shell)")
	}
	fetch := strings.Contains(lower, "urlopen") || strings.Contains(lower, "requests.get") || strings.Contains(lower, "urllib") || strings.Contains(code, "fetch(") || strings.Contains(lower, "http.get") || strings.Contains(lower, "https.get") || strings.Contains(code, "Net::HTTP") || strings.Contains(code, "open-uri") || strings.Contains(code, "LWP::")
	run := strings.Contains(code, "exec(") || strings.Contains(code, "eval(") || strings.Contains(code, "Function(") || strings.Contains(code, "system(") || strings.Contains(code, "instance_eval")
	if fetch && run {
		r.add(cx, high, "code.fetch-exec", "inline code downloads and runs code")
	}
}

// stringLiterals returns the contents of the '…' and "…" literals of code.
func stringLiterals(code string) []string {
	var out []string
	for i := 0; i < len(code); i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		var sb strings.Builder
		j := i + 1
		for j < len(code) && code[j] != q {
			if code[j] == '\\' && j+1 < len(code) {
				j++
			}
			sb.WriteByte(code[j])
			j++
		}
		if j >= len(code) {
			break
		}
		out = append(out, sb.String())
		i = j
		if len(out) > 256 {
			break
		}
	}
	return out
}
