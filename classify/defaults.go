package classify

import "github.com/toolgate/toolgate/gate"

const (
	safe   = gate.RiskSafe
	review = gate.RiskReview
	high   = gate.RiskHigh
)

func cmdr(level gate.RiskLevel, reason string) CommandRule {
	return CommandRule{Level: level, Reason: reason}
}

func reader(reason string) CommandRule {
	return CommandRule{Level: safe, Reason: reason, ReadsFiles: true}
}

func withAnalyzer(c CommandRule, a string) CommandRule { c.Analyzer = a; return c }

// DefaultRules returns a fresh copy of the built-in rule set: the
// labelling policy of docs/classifier.md as data. Callers may modify the
// copy (or Merge their own rules onto it) before passing it to WithRules.
func DefaultRules() *Rules {
	r := &Rules{
		Unknown:    review,
		SystemDirs: []string{"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/opt/homebrew/bin"},
		TempDirs:   []string{"/tmp", "/var/tmp", "/private/tmp", "/dev/shm"},
		Commands:   map[string]CommandRule{},
		Wrappers:   defaultWrappers(),
		Env:        defaultEnv(),
		Paths:      defaultPaths(),
		GitExecKeys: []string{
			"core.pager", "core.fsmonitor", "core.sshCommand", "core.hooksPath", "core.editor", "core.askPass",
			"core.gitProxy", "core.alternateRefsCommand", "core.worktree", "diff.external", "diff.*.command",
			"diff.*.textconv", "merge.*.driver", "filter.*.clean", "filter.*.smudge", "filter.*.process",
			"credential.helper", "credential.*.helper", "sequence.editor", "gpg.program", "gpg.*.program",
			"uploadpack.packObjectsHook", "pager.*", "init.templateDir", "include.path", "includeIf.*.path",
			"remote.*.uploadpack", "remote.*.receivepack", "protocol.ext.allow", "protocol.allow", "alias.*",
			"ssh.variant", "mergetool.*.cmd", "difftool.*.cmd", "web.browser", "browser.*.cmd", "sendemail.smtpServer",
			"http.sslKeyLogFile", "receive.procReceiveRefs", "submodule.*.update",
		},
	}
	c := r.Commands
	// Read-only utilities whose operands are files they read.
	for _, n := range []string{"cat", "tac", "head", "tail", "less", "more", "nl", "strings", "od", "hexdump",
		"cut", "paste", "join", "fold", "fmt", "expand", "unexpand", "rev", "column", "diff", "comm", "jq", "yq", "bat", "view",
		"zcat", "bzcat", "xzcat", "zless", "zgrep", "iconv", "csvlook", "tr", "readelf", "objdump", "pr", "zipinfo"} {
		c[n] = reader("reads files")
	}
	c["iconv"] = CommandRule{Level: safe, Reason: "converts text to stdout", ReadsFiles: true, OutputFlags: []string{"-o", "--output"}, ValueFlags: []string{"-f", "--from-code", "-t", "--to-code", "-o", "--output"}}
	c["shuf"] = CommandRule{Level: safe, Reason: "shuffles to stdout", ReadsFiles: true, OutputFlags: []string{"-o", "--output"}, ValueFlags: []string{"-o", "--output", "-n", "--head-count", "-i", "--input-range", "--random-source"}}
	for _, n := range []string{"less", "zless"} {
		c[n] = withAnalyzer(CommandRule{Level: safe, Reason: "reads files", ReadsFiles: true, OutputFlags: []string{"-o", "-O", "--log-file", "--LOG-FILE"}, ValueFlags: []string{"-o", "-O", "--log-file", "--LOG-FILE", "-p", "-t", "-x", "-y", "-z", "-b", "-h", "-j", "-k", "-T"}}, "pager")
	}
	c["more"] = withAnalyzer(reader("reads files"), "pager")
	for _, n := range []string{"ed", "red"} {
		c[n] = withAnalyzer(cmdr(review, "edits files (line editor)"), "ed")
	}
	for _, n := range []string{"nano", "rnano", "pico"} {
		c[n] = withAnalyzer(cmdr(review, "opens an interactive editor"), "editor")
	}
	// Read files but print only counts, hashes or types.
	for _, n := range []string{"wc", "md5", "shasum", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "b2sum", "sum", "file", "cmp", "nm", "ldd"} {
		c[n] = cmdr(safe, "summarises files")
	}
	c["grep"] = withAnalyzer(CommandRule{Level: safe, Reason: "searches files", ReadsFiles: true, Traits: []string{"filter"}}, "grep")
	for _, n := range []string{"egrep", "fgrep", "ag", "ack"} {
		c[n] = withAnalyzer(CommandRule{Level: safe, Reason: "searches files", ReadsFiles: true, Traits: []string{"filter"}}, "grep")
	}
	c["rg"] = withAnalyzer(CommandRule{Level: safe, Reason: "searches files", ReadsFiles: true, Traits: []string{"filter"}}, "rg")
	// Read-only utilities without file operands worth checking.
	for _, n := range []string{"ls", "dir", "vdir", "tree", "stat", "du", "df", "pwd", "id", "whoami", "groups",
		"which", "whereis", "type", "hostname", "uname", "date", "cal", "true", "false", "test", "[", "sleep",
		"seq", "basename", "dirname", "realpath", "readlink", "ps", "pgrep", "pidof", "free", "uptime", "w", "who",
		"lsof", "nproc", "lscpu", "lsblk", "locale", "getconf", "tput", "clear", "arch", "logname", "users",
		"apropos", "whatis", "info", "help", "hash", "jobs", "wait", "exit", "return", "break", "continue",
		"shift", "read", "set", "unalias", "getopts", "let", "pushd", "popd", "dirs",
		"times", "fd", "fdfind", "locate", "tldr", "numfmt", "factor",
		"expr", "bc", "dc", "yes", "top", "htop", "vmstat", "iostat", "ss", "netstat",
		"sw_vers", "lsb_release", "declare", "typeset", "local", "readonly",
		"colordiff", "look", "ptx", "tsort", "uuidgen", "mktemp", "tty", "pstree",
		"export", ":", "getent", "ipcs", "finger", "uuid", "bg", "fg", "disown"} {
		c[n] = cmdr(safe, "read-only")
	}
	// getent shadow prints /etc/shadow's entries (as root).
	c["getent"] = CommandRule{Level: safe, Reason: "read-only", Subcommands: map[string]CommandRule{
		"shadow":  {Level: high, Reason: "prints password hashes (/etc/shadow)"},
		"gshadow": {Level: high, Reason: "prints group password hashes (/etc/gshadow)"},
	}}
	// Calculators and builtins with a command escape.
	c["dc"] = withAnalyzer(cmdr(safe, "desk calculator"), "dc")
	c["jobs"] = withAnalyzer(cmdr(safe, "lists jobs"), "jobs")
	c["jq"] = withAnalyzer(reader("queries JSON"), "jq")
	c["fd"] = withAnalyzer(cmdr(safe, "lists files"), "fd")
	c["ls"] = withAnalyzer(cmdr(safe, "read-only"), "ls")
	for _, n := range []string{"realpath", "readlink", "stat", "du"} {
		c[n] = withAnalyzer(cmdr(safe, "read-only"), "names")
	}
	c["ps"] = withAnalyzer(cmdr(safe, "lists processes"), "ps")
	c["fdfind"] = c["fd"]
	// Builtins that take variable names or arithmetic expressions.
	for _, n := range []string{"read", "test", "[", "getopts", "wait", "let"} {
		c[n] = withAnalyzer(cmdr(safe, "read-only"), "varname")
	}
	for _, n := range []string{"mapfile", "readarray"} {
		c[n] = withAnalyzer(cmdr(safe, "reads lines into an array"), "varname")
	}
	// Builtins that change what a command name runs.
	c["hash"] = withAnalyzer(cmdr(safe, "lists remembered command locations"), "rebind")
	c["enable"] = withAnalyzer(cmdr(safe, "lists builtins"), "rebind")
	c["tree"] = withAnalyzer(CommandRule{Level: safe, Reason: "lists files", OutputFlags: []string{"-o"}, ValueFlags: []string{"-o", "-L", "-P", "-I", "--filelimit", "--timefmt", "--charset", "--sort"}}, "names")
	c["date"] = withAnalyzer(cmdr(safe, "prints the date"), "date")
	c["hwclock"] = CommandRule{Level: safe, Reason: "reads the hardware clock", Flags: []FlagRule{{Flags: []string{"--set", "--systohc", "--hctosys", "--adjust", "-w", "-s", "-a", "--predict", "--param-set"}, Level: high, ID: "clock.set", Reason: "sets the system or hardware clock (privileged; breaks logs, certificates and audit timestamps)"}}}
	c["timedatectl"] = CommandRule{Level: review, Reason: "changes time settings", Subcommands: map[string]CommandRule{
		"status": cmdr(safe, "shows time settings"), "show": cmdr(safe, "shows time settings"), "list-timezones": cmdr(safe, "lists time zones"),
		"timesync-status": cmdr(safe, "shows time sync"), "show-timesync": cmdr(safe, "shows time sync"),
		"set-time":     {Level: high, Reason: "sets the system clock (privileged; breaks logs, certificates and audit timestamps)"},
		"set-timezone": {Level: high, Reason: "changes the system time zone (privileged)"}, "set-ntp": {Level: high, Reason: "turns network time sync on or off (privileged)"},
		"set-local-rtc": {Level: high, Reason: "changes how the hardware clock is read (privileged)"},
	}}
	for _, n := range []string{"ntpdate", "rdate", "sntp", "chronyd"} {
		c[n] = cmdr(high, "sets the system clock (privileged)")
	}
	c["history"] = withAnalyzer(cmdr(safe, "lists shell history"), "history")
	c["ulimit"] = withAnalyzer(cmdr(safe, "shows resource limits"), "ulimit")
	c["umask"] = withAnalyzer(cmdr(safe, "shows the file creation mask"), "umask")
	c["fc"] = withAnalyzer(cmdr(safe, "lists shell history"), "fc")
	c["unset"] = withAnalyzer(cmdr(safe, "unsets variables"), "unset")
	c["sponge"] = withAnalyzer(cmdr(review, "writes files"), "tee")
	c["echo"] = withAnalyzer(cmdr(safe, "prints its arguments"), "echo")
	c["printf"] = withAnalyzer(cmdr(safe, "prints its arguments"), "printf")
	c["cd"] = withAnalyzer(cmdr(safe, "changes directory"), "cd")
	c["pushd"] = withAnalyzer(cmdr(safe, "changes directory"), "cd")
	c["alias"] = withAnalyzer(cmdr(safe, "defines an alias"), "alias")
	c["trap"] = withAnalyzer(cmdr(safe, "sets a signal handler"), "trap")
	c["shopt"] = withAnalyzer(cmdr(safe, "sets shell options"), "shopt")
	c["man"] = withAnalyzer(cmdr(safe, "reads documentation"), "man")
	c["printenv"] = withAnalyzer(CommandRule{Level: safe, Reason: "prints variables", Traits: []string{"envdump"}}, "printenv")
	c["set"] = withAnalyzer(cmdr(safe, "sets shell options"), "printenv")
	c["export"] = withAnalyzer(cmdr(safe, "exports variables"), "printenv")
	c["declare"] = withAnalyzer(cmdr(safe, "declares variables"), "printenv")
	c["base64"] = withAnalyzer(CommandRule{Level: safe, Reason: "encodes data", ReadsFiles: true, OutputFlags: []string{"-o", "--output"}, ValueFlags: []string{"-o", "--output", "-i", "--input", "-w", "--wrap", "-b", "--break"}}, "base64")
	c["base32"] = withAnalyzer(CommandRule{Level: safe, Reason: "encodes data", ReadsFiles: true}, "base64")
	c["xxd"] = withAnalyzer(CommandRule{Level: safe, Reason: "hex dump", ReadsFiles: true}, "xxd")
	c["openssl"] = CommandRule{Level: review, Reason: "crypto tool; may read keys or decode payloads", Traits: []string{"decode"}, OutputFlags: []string{"-out", "-keyout"}}

	// Argument-sensitive read-only tools.
	c["find"] = withAnalyzer(cmdr(safe, "lists files"), "find")
	c["sed"] = withAnalyzer(CommandRule{Level: safe, Reason: "stream editor to stdout", ReadsFiles: true}, "sed")
	for _, n := range []string{"awk", "gawk", "mawk", "nawk"} {
		c[n] = withAnalyzer(CommandRule{Level: safe, Reason: "text processing to stdout", ReadsFiles: true}, "awk")
	}
	c["sort"] = withAnalyzer(CommandRule{Level: safe, Reason: "sorts to stdout", ReadsFiles: true}, "sort")
	c["uniq"] = withAnalyzer(CommandRule{Level: safe, Reason: "filters to stdout", ReadsFiles: true}, "uniq")
	c["tee"] = withAnalyzer(cmdr(review, "writes files"), "tee")
	c["tar"] = withAnalyzer(cmdr(review, "archives or extracts files"), "tar")
	for _, n := range []string{"unzip", "7z", "unrar", "gzip", "bzip2", "xz", "zstd"} {
		c[n] = cmdr(review, "writes archive or extracted files")
	}
	for _, n := range []string{"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "zstd", "unzstd", "lz4", "compress", "uncompress", "pigz", "unpigz", "brotli"} {
		c[n] = withAnalyzer(cmdr(review, "replaces files with their (de)compressed form"), "compress")
	}
	c["unzip"] = CommandRule{Level: review, Reason: "writes extracted files", Analyzer: "extract", OutputFlags: []string{"-d"}}
	for _, n := range []string{"7z", "7za", "7zz", "7zr"} {
		c[n] = CommandRule{Level: review, Reason: "writes archive or extracted files", Analyzer: "extract", OutputFlags: []string{"-o"}}
	}
	c["link"] = withAnalyzer(cmdr(review, "creates a hard link"), "ln")
	c["split"] = CommandRule{Level: review, Reason: "writes a file's pieces", Analyzer: "split", ValueFlags: []string{"-a", "--suffix-length", "-b", "--bytes", "-C", "--line-bytes", "-l", "--lines", "-n", "--number", "-t", "--separator", "--additional-suffix", "--filter"}}
	c["csplit"] = CommandRule{Level: review, Reason: "writes a file's pieces", Analyzer: "split", ValueFlags: []string{"-b", "--suffix-format", "-f", "--prefix", "-n", "--digits"}}
	c["zip"] = CommandRule{Level: review, Reason: "writes an archive", ReadsFiles: true, Analyzer: "zip", ValueFlags: []string{"-x", "-i", "-b", "-n", "-t", "-tt", "-P", "--password", "-TT", "--unzip-command", "-O", "--output-file"}, OutputFlags: []string{"-O", "--output-file"}}

	// File changes.
	c["rm"] = withAnalyzer(cmdr(review, "deletes files"), "rm")
	c["unlink"] = withAnalyzer(cmdr(review, "deletes a file"), "rm")
	c["rmdir"] = withAnalyzer(cmdr(review, "removes directories"), "rm")
	c["shred"] = withAnalyzer(cmdr(review, "overwrites files irrecoverably"), "rm")
	c["srm"] = withAnalyzer(cmdr(review, "securely deletes files"), "rm")
	for _, n := range []string{"cp", "mv", "install"} {
		c[n] = withAnalyzer(cmdr(safe, "copies or moves files"), "copy")
	}
	c["ln"] = withAnalyzer(cmdr(review, "creates links"), "ln")
	for _, n := range []string{"touch", "mkdir", "mkfifo"} {
		c[n] = CommandRule{Level: safe, Reason: "creates or changes files", WritesFiles: true, ValueFlags: []string{"-m", "--mode", "-d", "--date", "-r", "--reference", "-t"}}
	}
	c["truncate"] = CommandRule{Level: safe, Reason: "truncates files", WritesFiles: true, ValueFlags: []string{"-s", "--size", "-r", "--reference", "-o"}}
	c["patch"] = CommandRule{Level: review, Reason: "changes files", WritesFiles: true, OutputFlags: []string{"-o", "--output", "-r", "--reject-file"},
		ValueFlags: []string{"-i", "--input", "-d", "--directory", "-o", "--output", "-r", "--reject-file", "-B", "--prefix", "-F", "--fuzz", "-z", "--suffix", "-D", "--ifdef", "-V", "--version-control", "-p", "--strip", "-Y", "--basename-prefix"}}
	c["chmod"] = withAnalyzer(cmdr(review, "changes permissions"), "chmod")
	c["chown"] = withAnalyzer(cmdr(review, "changes ownership"), "chmod")
	c["chgrp"] = withAnalyzer(cmdr(review, "changes group"), "chmod")
	c["chattr"] = withAnalyzer(cmdr(review, "changes file attributes"), "chmod")
	c["setfacl"] = withAnalyzer(cmdr(review, "changes ACLs"), "chmod")
	c["dd"] = withAnalyzer(cmdr(review, "copies raw data"), "dd")
	for _, n := range []string{"mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "gdisk", "parted", "cfdisk",
		"sgdisk", "blkdiscard", "hdparm", "cryptsetup", "mdadm", "lvremove", "vgremove", "pvremove", "zpool", "diskutil"} {
		c[n] = cmdr(high, "formats, partitions or erases storage")
	}
	c["crontab"] = withAnalyzer(cmdr(high, "installs or removes cron jobs"), "crontab")
	c["at"] = cmdr(high, "schedules a command (persistence)")
	c["batch"] = cmdr(high, "schedules a command (persistence)")
	for _, n := range []string{"shutdown", "reboot", "halt", "poweroff", "init", "telinit", "killall5"} {
		c[n] = cmdr(high, "stops or restarts the machine")
	}
	for _, n := range []string{"useradd", "userdel", "usermod", "groupadd", "groupdel", "passwd", "chpasswd",
		"visudo", "setenforce", "iptables", "ip6tables", "nft", "ufw", "modprobe", "insmod", "rmmod", "sysctl",
		"umount", "swapoff", "launchctl", "csrutil", "spctl", "dscl", "setcap",
		"capsh", "auditctl", "aa-disable", "update-alternatives"} {
		c[n] = cmdr(high, "changes system configuration")
	}
	c["kill"] = withAnalyzer(cmdr(review, "signals processes"), "kill")
	c["pkill"] = withAnalyzer(cmdr(review, "signals processes by name"), "pkill")
	c["killall"] = withAnalyzer(cmdr(review, "signals processes by name"), "pkill")
	c["systemctl"] = withAnalyzer(cmdr(review, "controls services"), "systemctl")
	c["service"] = cmdr(review, "controls services")
	c["mount"] = withAnalyzer(cmdr(high, "mounts file systems"), "mount")
	c["journalctl"] = CommandRule{Level: safe, Reason: "reads logs", Flags: []FlagRule{
		{Flags: []string{"--vacuum-time", "--vacuum-size", "--vacuum-files", "--rotate"}, Level: high, ID: "logs.destroy", Reason: "deletes system journal entries (destroys evidence)"},
		{Flags: []string{"--flush", "--relinquish-var", "--smart-relinquish-var", "--setup-keys", "--update-catalog"}, Level: review, ID: "journalctl.admin", Reason: "changes journal storage"},
	}}
	c["dmesg"] = CommandRule{Level: safe, Reason: "reads the kernel log", Flags: []FlagRule{
		{Flags: []string{"-C", "--clear", "-c", "--read-clear"}, Level: review, ID: "logs.clear", Reason: "clears the kernel ring buffer (destroys evidence)"},
		{Flags: []string{"-D", "--console-off", "-E", "--console-on", "-n", "--console-level"}, Level: review, ID: "dmesg.console", Reason: "changes kernel console logging"},
	}}
	c["view"] = withAnalyzer(reader("reads files"), "editor")
	for _, n := range []string{"vim", "vi", "nvim", "ex", "gvim", "vimdiff"} {
		c[n] = withAnalyzer(cmdr(review, "opens an interactive editor"), "editor")
	}
	c["emacs"] = withAnalyzer(cmdr(review, "opens an interactive editor"), "editor")
	c["tmux"] = withAnalyzer(cmdr(review, "terminal multiplexer (runs commands in sessions)"), "tmux")

	// Shells, interpreters and code runners.
	for _, n := range []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash"} {
		c[n] = withAnalyzer(CommandRule{Level: review, Reason: "runs a shell script", Traits: []string{"shell"}}, "shell")
	}
	for _, n := range []string{"python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun",
		"perl", "ruby", "php", "lua", "luajit", "tclsh", "Rscript", "rscript", "osascript", "jshell", "irb", "ipython", "julia", "groovy"} {
		c[n] = withAnalyzer(CommandRule{Level: review, Reason: "runs interpreter code", Traits: []string{"shell"}}, "interpreter")
	}
	c["eval"] = withAnalyzer(cmdr(review, "evaluates a string as shell code"), "eval")
	c["source"] = withAnalyzer(cmdr(review, "runs a script in this shell"), "source")
	c["."] = withAnalyzer(cmdr(review, "runs a script in this shell"), "source")
	for _, n := range []string{"make", "gmake", "cmake", "ninja", "meson", "bazel", "gradle", "gradlew", "mvn",
		"ant", "sbt", "pytest", "tox", "nox", "jest", "vitest", "mocha", "tsc", "eslint", "prettier", "black",
		"ruff", "flake8", "mypy", "pylint", "javac", "java", "gcc", "g++", "cc", "clang", "clang++", "rustc",
		"ld", "as", "dotnet", "swift", "swiftc", "kotlinc", "scalac", "ghc", "cabal", "stack", "mix", "elixir",
		"erl", "rebar3", "zig", "nim", "crystal", "dart", "flutter", "xcodebuild", "phpunit", "rspec", "rake",
		"composer", "pre-commit", "coverage", "nosetests", "ctest", "valgrind", "gdb", "lldb"} {
		c[n] = cmdr(review, "builds or runs project code")
	}
	for _, n := range []string{"gcc", "g++", "cc", "clang", "clang++", "rustc", "ld", "as", "tcc"} {
		c[n] = CommandRule{Level: review, Reason: "builds or runs project code", OutputFlags: []string{"-o"}}
	}
	c["valgrind"] = CommandRule{Level: review, Reason: "builds or runs project code", OutputFlags: []string{"--log-file", "--xml-file"}}
	c["unittest"] = cmdr(review, "runs project tests")
	for _, n := range []string{"py_compile", "compileall"} {
		c[n] = cmdr(review, "compiles Python files")
	}
	c["pytest"] = CommandRule{Level: review, Reason: "builds or runs project code", OutputFlags: []string{"--junitxml", "--junit-xml", "--resultlog", "--result-log"}}
	c["gdb"] = withAnalyzer(cmdr(review, "builds or runs project code"), "debugger")
	c["lldb"] = withAnalyzer(cmdr(review, "builds or runs project code"), "debugger")
	pm := func(reason string, safeSubs ...string) CommandRule {
		cr := CommandRule{Level: review, Reason: reason, Subcommands: map[string]CommandRule{}}
		for _, s := range safeSubs {
			cr.Subcommands[s] = cmdr(safe, "read-only package query")
		}
		return cr
	}
	c["npm"] = pm("runs package scripts or installs packages", "ls", "list", "ll", "la", "view", "info", "show", "outdated", "search", "help", "ping", "whoami", "root", "prefix", "bin", "fund", "docs")
	c["pnpm"] = pm("runs package scripts or installs packages", "ls", "list", "outdated", "why", "info", "view")
	c["yarn"] = pm("runs package scripts or installs packages", "list", "info", "why", "outdated")
	c["pip"] = pm("installs packages (runs their build)", "list", "show", "freeze", "check", "search", "help", "index", "inspect")
	c["pip3"] = c["pip"]
	c["uv"] = pm("installs packages or runs code", "tree")
	c["poetry"] = pm("installs packages or runs code", "show", "check", "env-info")
	c["conda"] = pm("installs packages", "list", "info", "search")
	c["gem"] = pm("installs gems", "list", "search", "info", "query")
	c["cargo"] = pm("builds or installs crates", "tree", "metadata", "search", "version", "help")
	c["go"] = pm("builds or runs Go code", "version", "env", "list", "doc", "help")
	c["go"] = CommandRule{Level: review, Reason: c["go"].Reason, Subcommands: c["go"].Subcommands, OutputFlags: []string{"-o"}}
	c["brew"] = pm("installs packages", "list", "info", "search", "deps", "outdated", "config", "doctor", "leaves")
	for _, n := range []string{"apt", "apt-get", "dnf", "yum", "apk", "pacman", "zypper", "snap", "flatpak", "port"} {
		c[n] = pm("installs system packages", "list", "search", "show", "info", "policy", "depends")
	}
	runner := func(name, sub string, valueFlags ...string) {
		cr := c[name]
		if cr.Subcommands == nil {
			cr.Subcommands = map[string]CommandRule{}
		}
		cr.Subcommands[sub] = CommandRule{Level: review, Reason: "runs a command in the project environment", Wraps: true, ValueFlags: valueFlags}
		c[name] = cr
	}
	runner("uv", "run", "--with", "--python", "-p", "--package", "--extra", "--group", "--env-file", "--directory", "--project", "--index", "--index-url")
	runner("poetry", "run", "-C", "--directory", "-P", "--project")
	c["pipenv"] = pm("installs packages or runs code", "graph", "--venv", "--where")
	runner("pipenv", "run")
	c["pdm"] = pm("installs packages or runs code", "list", "show", "info")
	runner("pdm", "run", "-p", "--project")
	c["hatch"] = pm("builds or runs code", "version", "status")
	runner("hatch", "run", "-e", "--env")
	runner("conda", "run", "-n", "--name", "-p", "--prefix", "--cwd")
	c["bundle"] = pm("installs gems or runs code", "list", "show", "info", "outdated", "check")
	runner("bundle", "exec", "--gemfile")
	for _, n := range []string{"pyenv", "rbenv", "nodenv", "asdf"} {
		c[n] = pm("manages runtime versions", "versions", "version", "which", "list", "current")
		runner(n, "exec")
	}
	c["mise"] = pm("manages runtime versions", "ls", "list", "current", "which", "version")
	runner("mise", "exec", "-C", "--cd", "-E", "--env")
	runner("mise", "x", "-C", "--cd", "-E", "--env")
	c["apt-cache"] = cmdr(safe, "package query")
	c["dpkg"] = CommandRule{Level: review, Reason: "installs packages", Subcommands: map[string]CommandRule{}, Flags: nil}
	c["npx"] = cmdr(review, "downloads and runs a package")
	c["pipx"] = cmdr(review, "installs or runs a package")
	c["bunx"] = cmdr(review, "downloads and runs a package")
	c["git"] = gitRule()
	c["gh"] = ghRule()
	c["docker"] = withAnalyzer(dockerRule(), "docker")
	c["podman"] = c["docker"]
	c["kubectl"] = withAnalyzer(kubectlRule(), "kubectl")
	// toolgate's auditor CLI: answering approvals from an agent's tool call
	// would let the model approve its own asks.
	selfApprove := cmdr(high, "answers toolgate approval requests: an agent must not approve its own asks")
	auditqValues := []string{"--inbox", "--dsn", "--format", "-o", "--output", "--since", "--until", "--agent", "--run", "--as", "--reason", "--call-hash", "--addr", "--status", "--older-than", "--limit"}
	c["auditq"] = CommandRule{Level: review, Reason: "toolgate's audit CLI", ValueFlags: auditqValues, Subcommands: map[string]CommandRule{
		"approve": selfApprove,
		"decline": selfApprove,
		"approvals": {Level: review, Reason: "reads toolgate approval requests", ValueFlags: auditqValues, Subcommands: map[string]CommandRule{
			"approvers": cmdr(high, "registers toolgate approvers: an agent must not make itself an approver"),
			"serve":     cmdr(high, "serves the toolgate approval page: an agent must not answer its own asks"),
		}},
	}}
	c["terraform"] = CommandRule{Level: review, Reason: "changes infrastructure", Subcommands: map[string]CommandRule{
		"plan": cmdr(review, "plans infrastructure changes"), "show": cmdr(safe, "shows state"), "validate": cmdr(safe, "validates configuration"),
		"version": cmdr(safe, "prints version"), "output": cmdr(review, "prints outputs (may include secrets)"),
		"destroy": cmdr(high, "destroys infrastructure"), "fmt": cmdr(review, "formats files"),
	}, Flags: []FlagRule{{Flags: []string{"-destroy"}, Level: high, ID: "terraform.destroy", Reason: "destroys infrastructure"}}}
	c["tofu"] = c["terraform"]
	c["gsutil"] = CommandRule{Level: review, Reason: "cloud storage call", ReadsFiles: true, Flags: []FlagRule{{Flags: []string{"-r", "-R"}, Level: review, ID: "gsutil.recursive", Reason: "recursive copy or delete"}}}
	c["aws"] = CommandRule{Level: review, Reason: "cloud API call", ReadsFiles: true, Analyzer: "cloud", Flags: []FlagRule{{Flags: []string{"--recursive"}, Level: high, ID: "aws.recursive", Reason: "recursive cloud operation (s3 rm --recursive)"}}}
	c["gcloud"] = withAnalyzer(CommandRule{Level: review, Reason: "cloud API call", ReadsFiles: true}, "cloud")
	c["az"] = withAnalyzer(CommandRule{Level: review, Reason: "cloud API call", ReadsFiles: true}, "cloud")
	c["helm"] = CommandRule{Level: review, Reason: "changes cluster releases", Subcommands: map[string]CommandRule{
		"list": cmdr(safe, "lists releases"), "ls": cmdr(safe, "lists releases"), "status": cmdr(safe, "shows a release"),
		"history": cmdr(safe, "shows release history"), "show": cmdr(safe, "shows a chart"), "search": cmdr(safe, "searches charts"),
		"version": cmdr(safe, "prints version"), "template": cmdr(safe, "renders templates"), "lint": cmdr(safe, "lints a chart"),
	}}
	for _, n := range []string{"psql", "mysql", "mariadb", "sqlite3", "mongosh", "mongo", "redis-cli", "clickhouse-client", "cqlsh"} {
		c[n] = withAnalyzer(cmdr(review, "database client"), "sql")
	}
	c["psql"] = CommandRule{Level: review, Reason: "database client", Analyzer: "sql", OutputFlags: []string{"-o", "--output", "-L", "--log-file"}}
	c["mysql"] = CommandRule{Level: review, Reason: "database client", Analyzer: "sql", OutputFlags: []string{"--tee"}}
	c["mariadb"] = c["mysql"]
	c["gpg"] = CommandRule{Level: review, Reason: "crypto tool", OutputFlags: []string{"-o", "--output"}, Flags: []FlagRule{
		{Flags: []string{"--export-secret-keys", "--export-secret-subkeys", "--export-ssh-key"}, Level: high, ID: "gpg.export-secret", Reason: "exports private keys"},
		{Flags: []string{"--delete-secret-keys", "--delete-secret-and-public-key"}, Level: high, ID: "gpg.delete-secret", Reason: "deletes private keys"},
	}}
	c["ssh-keygen"] = withAnalyzer(cmdr(review, "creates or changes keys"), "keygen")
	// OS keychains and password managers: printing a secret is high.
	secretGet := func(reason string, reads ...string) CommandRule {
		cr := CommandRule{Level: review, Reason: "password manager", Subcommands: map[string]CommandRule{}}
		for _, s := range reads {
			cr.Subcommands[s] = cmdr(high, reason)
		}
		return cr
	}
	c["security"] = secretGet("reads a secret from the macOS keychain", "find-generic-password", "find-internet-password", "find-certificate", "dump-keychain", "export", "find-identity", "show-keychain-info", "unlock-keychain", "delete-generic-password", "delete-internet-password", "delete-keychain")
	c["security"].Subcommands["list-keychains"] = cmdr(safe, "lists keychains")
	c["secret-tool"] = secretGet("reads a secret from the desktop keyring", "lookup", "search", "clear")
	c["pass"] = CommandRule{Level: high, Reason: "prints a password from the password store", Subcommands: map[string]CommandRule{
		"ls": cmdr(review, "lists password names"), "list": cmdr(review, "lists password names"), "find": cmdr(review, "lists password names"), "version": cmdr(safe, "prints version"), "help": cmdr(safe, "prints help"),
	}}
	c["gopass"] = c["pass"]
	c["op"] = secretGet("reads a secret from 1Password", "read", "item", "document", "inject", "run", "signin", "connect")
	c["bw"] = secretGet("reads a secret from Bitwarden", "get", "export", "list", "unlock", "serve")
	c["lpass"] = secretGet("reads a secret from LastPass", "show", "export", "login")
	c["keyring"] = secretGet("reads a secret from the system keyring", "get", "del", "set")
	c["vault"] = secretGet("reads secrets from Vault", "read", "kv", "token", "login", "write", "delete", "print")
	c["kwallet-query"] = cmdr(high, "reads a secret from KWallet")
	// CLIs' own commands that print the token they are logged in with.
	c["glab"] = CommandRule{Level: review, Reason: "GitLab CLI", Subcommands: map[string]CommandRule{
		"auth": {Level: review, Reason: "GitLab authentication", Subcommands: map[string]CommandRule{"status": {Level: safe, Reason: "shows login status", Flags: showTokenFlags()}}},
	}}
	printsToken := func(reason string) map[string]CommandRule {
		return map[string]CommandRule{"token": cmdr(high, reason)}
	}
	c["heroku"] = CommandRule{Level: review, Reason: "Heroku CLI", Subcommands: map[string]CommandRule{
		"auth:token": cmdr(high, "prints the Heroku API token"),
		"auth":       {Level: review, Reason: "Heroku authentication", Subcommands: printsToken("prints the Heroku API token")},
	}}
	for _, n := range []string{"fly", "flyctl"} {
		c[n] = CommandRule{Level: review, Reason: "Fly.io CLI", Subcommands: map[string]CommandRule{
			"auth": {Level: review, Reason: "Fly.io authentication", Subcommands: printsToken("prints the Fly.io API token")},
		}}
	}
	// Docker credential helpers: "get" prints the secret stored for the
	// registry named on stdin.
	for _, n := range []string{"desktop", "osxkeychain", "pass", "secretservice", "wincred", "ecr-login", "gcloud", "gcr", "acr-env"} {
		c["docker-credential-"+n] = CommandRule{Level: review, Reason: "Docker credential helper", Subcommands: map[string]CommandRule{
			"get":  cmdr(high, "prints a stored registry credential"),
			"list": cmdr(review, "lists registries and user names"),
		}}
	}
	c["ssh-add"] = cmdr(review, "loads keys into the agent")

	// Network.
	c["curl"] = withAnalyzer(CommandRule{Level: review, Reason: "network request", Traits: []string{"fetch", "network"},
		OutputFlags: []string{"-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc"}}, "curl")
	c["wget"] = withAnalyzer(CommandRule{Level: review, Reason: "network download", Traits: []string{"fetch", "network"},
		OutputFlags: []string{"-o", "--output-file", "-a", "--append-output"}}, "wget")
	for _, n := range []string{"nc", "ncat", "netcat"} {
		c[n] = withAnalyzer(CommandRule{Level: review, Reason: "raw network connection", Traits: []string{"fetch", "network"}}, "nc")
	}
	c["socat"] = withAnalyzer(CommandRule{Level: review, Reason: "raw network relay", Traits: []string{"fetch", "network"}}, "socat")
	c["telnet"] = CommandRule{Level: review, Reason: "raw network connection", Traits: []string{"fetch", "network"}}
	c["ssh"] = withAnalyzer(CommandRule{Level: review, Reason: "remote session or command", Traits: []string{"network"}, OutputFlags: []string{"-E"}}, "ssh")
	c["scp"] = withAnalyzer(CommandRule{Level: review, Reason: "copies files over the network", Traits: []string{"network"}}, "scp")
	c["sftp"] = CommandRule{Level: review, Reason: "remote file transfer", Traits: []string{"network"}}
	c["rsync"] = withAnalyzer(CommandRule{Level: review, Reason: "synchronises files", Traits: []string{"network"}}, "rsync")
	c["ftp"] = CommandRule{Level: review, Reason: "remote file transfer", Traits: []string{"network"}}
	c["http"] = CommandRule{Level: review, Reason: "network request", Traits: []string{"fetch", "network"}}
	c["xh"] = c["http"]
	for _, n := range []string{"ping", "dig", "nslookup", "host", "traceroute", "whois", "mtr"} {
		c[n] = CommandRule{Level: review, Reason: "network query (its arguments leave the machine)", Traits: []string{"network"}}
	}
	for _, n := range []string{"tshark", "tcpdump"} {
		c[n] = withAnalyzer(CommandRule{Level: review, Reason: "captures network traffic", OutputFlags: []string{"-w"}}, "capture")
	}
	for _, n := range []string{"nmap", "masscan"} {
		c[n] = CommandRule{Level: review, Reason: "network scan", OutputFlags: []string{"-oN", "-oX", "-oG", "-oS", "-oA", "-oJ", "-oL", "-oB"}}
	}
	c["pandoc"] = CommandRule{Level: review, Reason: "converts documents", OutputFlags: []string{"-o", "--output"}}
	addRuns(c)
	return r
}

func gitRule() CommandRule {
	sub := map[string]CommandRule{}
	for _, s := range []string{"status", "log", "show", "diff", "blame", "annotate", "ls-files", "ls-tree",
		"rev-parse", "describe", "shortlog", "grep", "cat-file", "reflog", "show-ref", "for-each-ref", "merge-base",
		"name-rev", "rev-list", "count-objects", "check-ignore", "check-attr", "version", "help", "whatchanged",
		"cherry", "diff-tree", "diff-files", "diff-index", "var", "show-branch", "verify-commit", "verify-tag", "fsck", "range-diff"} {
		sub[s] = cmdr(safe, "read-only git query")
	}
	for _, s := range []string{"add", "commit", "pull", "fetch", "clone", "checkout", "switch", "merge", "rebase",
		"cherry-pick", "revert", "stash", "reset", "rm", "mv", "restore", "config", "init", "am", "apply",
		"submodule", "worktree", "tag", "clean", "branch", "remote", "gc", "notes", "bisect", "prune", "repack", "lfs",
		"format-patch", "archive", "bundle", "sparse-checkout", "maintenance", "push", "update-index", "ls-remote"} {
		sub[s] = cmdr(review, "changes repository state")
	}
	sub["fetch"] = cmdr(review, "network operation")
	sub["pull"] = cmdr(review, "fetches and merges")
	sub["ls-remote"] = cmdr(review, "network operation")
	sub["clone"] = cmdr(review, "downloads a repository")
	sub["push"] = cmdr(review, "publishes commits")
	sub["commit"] = cmdr(review, "creates a commit; hooks may run")
	// git credential fill and the helpers' get print a stored password
	// (the git analyzer: git.credential-read).
	for _, s := range []string{"credential", "credential-store", "credential-cache", "credential-osxkeychain", "credential-libsecret", "credential-manager", "credential-manager-core"} {
		sub[s] = cmdr(review, "runs the credential helper protocol")
	}
	for _, s := range []string{"filter-branch", "filter-repo", "update-ref", "replace"} {
		sub[s] = cmdr(high, "rewrites history or refs")
	}
	return CommandRule{Level: review, Reason: "git command", Analyzer: "git", Subcommands: sub}
}

// showTokenFlags: gh's and glab's auth status -t/--show-token print the
// token they report on.
func showTokenFlags() []FlagRule {
	return []FlagRule{{Flags: []string{"-t", "--show-token"}, Level: high, ID: "auth.show-token", Reason: "prints the stored token"}}
}

func ghRule() CommandRule {
	showToken := showTokenFlags()
	view := func(extra ...string) CommandRule {
		cr := CommandRule{Level: review, Reason: "changes GitHub state", Subcommands: map[string]CommandRule{}}
		for _, s := range append([]string{"view", "list", "status", "diff", "checks"}, extra...) {
			cr.Subcommands[s] = cmdr(safe, "read-only GitHub query")
		}
		return cr
	}
	repo := view()
	repo.Subcommands["delete"] = cmdr(high, "deletes a repository")
	repo.Subcommands["archive"] = cmdr(high, "archives a repository")
	return CommandRule{Level: review, Reason: "GitHub CLI", Subcommands: map[string]CommandRule{
		"pr": view(), "issue": view(), "run": view("watch"), "release": view(), "workflow": view(),
		"repo":   repo,
		"auth":   {Level: review, Reason: "GitHub authentication", Subcommands: map[string]CommandRule{"status": {Level: safe, Reason: "shows login status", Flags: showToken}, "token": cmdr(high, "prints the GitHub token")}},
		"secret": {Level: high, Reason: "manages repository secrets", Subcommands: map[string]CommandRule{"list": cmdr(safe, "lists secret names")}},
		"search": cmdr(safe, "searches GitHub"), "browse": cmdr(safe, "opens a browser"), "--version": cmdr(safe, "prints version"),
		"api": {Level: safe, Reason: "GitHub API query", Flags: []FlagRule{{Flags: []string{"-X", "--method", "-f", "-F", "--field", "--raw-field", "--input"}, Level: review, ID: "gh.api-write", Reason: "GitHub API call that may change state"}}},
	}}
}

func dockerRule() CommandRule {
	sub := map[string]CommandRule{}
	for _, s := range []string{"ps", "images", "logs", "inspect", "version", "info", "top", "stats", "port", "diff", "history", "search"} {
		sub[s] = cmdr(safe, "read-only container query")
	}
	sub["system"] = CommandRule{Level: review, Reason: "system command", Subcommands: map[string]CommandRule{
		"df": cmdr(safe, "disk usage"), "info": cmdr(safe, "info"),
		"prune": {Level: review, Reason: "removes unused data", Flags: []FlagRule{{Flags: []string{"-a", "--all", "--volumes"}, Level: high, ID: "docker.prune-all", Reason: "deletes all unused images or volumes"}}},
	}}
	sub["volume"] = CommandRule{Level: review, Reason: "volume command", Subcommands: map[string]CommandRule{
		"ls": cmdr(safe, "lists volumes"), "inspect": cmdr(safe, "inspects volumes"),
		"rm": cmdr(high, "deletes volumes and their data"), "prune": cmdr(high, "deletes unused volumes and their data"),
	}}
	for _, s := range []string{"run", "create"} {
		sub[s] = CommandRule{Level: review, Reason: "runs a container", Flags: dockerRunFlags()}
	}
	return CommandRule{Level: review, Reason: "container command", Subcommands: sub,
		ValueFlags: []string{"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"}}
}

func dockerRunFlags() []FlagRule {
	return []FlagRule{
		{Flags: []string{"--privileged"}, Level: high, ID: "docker.privileged", Reason: "privileged container gives host access"},
		{Flags: []string{"--pid=host", "--ipc=host", "--userns=host", "--cap-add=ALL", "--cap-add=SYS_ADMIN", "--security-opt=apparmor=unconfined", "--security-opt=seccomp=unconfined"}, Level: high, ID: "docker.host-namespace", Reason: "container shares host namespaces or capabilities"},
	}
}

func kubectlRule() CommandRule {
	sub := map[string]CommandRule{}
	for _, s := range []string{"get", "describe", "logs", "explain", "version", "api-resources", "api-versions", "cluster-info", "top", "events", "wait", "auth"} {
		sub[s] = cmdr(safe, "read-only cluster query")
	}
	sub["config"] = CommandRule{Level: review, Reason: "changes kubeconfig", Subcommands: map[string]CommandRule{
		"view":         {Level: safe, Reason: "shows kubeconfig (secrets redacted)", Flags: []FlagRule{{Flags: []string{"--raw"}, Level: high, ID: "kubectl.config-raw", Reason: "prints cluster credentials"}}},
		"get-contexts": cmdr(safe, "lists contexts"), "current-context": cmdr(safe, "shows the context"), "get-clusters": cmdr(safe, "lists clusters"),
	}}
	sub["delete"] = cmdr(review, "deletes cluster resources")
	sub["create"] = CommandRule{Level: review, Reason: "creates cluster resources", Subcommands: map[string]CommandRule{
		"token": cmdr(high, "prints a new service-account token"),
	}}
	sub["exec"] = cmdr(review, "runs a command in a pod")
	return CommandRule{Level: review, Reason: "changes cluster state", Subcommands: sub,
		ValueFlags: []string{"-n", "--namespace", "--context", "--kubeconfig", "-l", "--selector", "-o", "--output", "-f", "--filename", "-c", "--container", "--cluster", "--user", "-s", "--server"}}
}

func defaultWrappers() map[string]WrapperRule {
	return map[string]WrapperRule{
		"sudo":             {Level: high, Reason: "privilege escalation", ValueFlags: []string{"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user"}},
		"doas":             {Level: high, Reason: "privilege escalation", ValueFlags: []string{"-u", "-C"}},
		"su":               {Level: high, Reason: "privilege escalation (switch user)", ValueFlags: []string{"-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"}, ScriptFlags: []string{"-c", "--command", "--session-command"}},
		"run0":             {Level: high, Reason: "privilege escalation"},
		"env":              {Analyzer: "env"},
		"timeout":          {ValueFlags: []string{"-s", "--signal", "-k", "--kill-after"}, Skip: 1},
		"nice":             {ValueFlags: []string{"-n", "--adjustment"}},
		"renice":           {ValueFlags: []string{"-n", "-g", "-u", "-p"}},
		"ionice":           {ValueFlags: []string{"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}},
		"setsid":           {},
		"stdbuf":           {ValueFlags: []string{"-i", "-o", "-e", "--input", "--output", "--error"}},
		"nohup":            {},
		"time":             {ValueFlags: []string{"-f", "--format", "-o", "--output"}, OutputFlags: []string{"-o", "--output"}},
		"command":          {Analyzer: "command"},
		"builtin":          {},
		"exec":             {ValueFlags: []string{"-a"}},
		"xargs":            {Analyzer: "xargs"},
		"parallel":         {Analyzer: "parallel"},
		"strace":           {ValueFlags: []string{"-o", "--output", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-O", "-S", "-X"}, OutputFlags: []string{"-o", "--output"}},
		"ltrace":           {ValueFlags: []string{"-o", "--output", "-e", "-p", "-s", "-u", "-a", "-n", "-l"}, OutputFlags: []string{"-o", "--output"}},
		"script":           {Analyzer: "script", OutputFlags: []string{"-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T", "--log-timing", "-t", "--timing"}, Level: review, Reason: "records a terminal session"},
		"unshare":          {Level: review, Reason: "runs a command in new namespaces", ValueFlags: []string{"-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd", "--map-user", "--map-group", "--map-users", "--map-groups", "--propagation", "--setgroups"}},
		"nsenter":          {Level: high, Reason: "enters another process's namespaces (container escape)", ValueFlags: []string{"-t", "--target", "-S", "--setuid", "-G", "--setgid"}},
		"chroot":           {Level: high, Reason: "changes the root directory (privileged)", ValueFlags: []string{"--userspec", "--groups"}, Skip: 1},
		"pkexec":           {Level: high, Reason: "privilege escalation", ValueFlags: []string{"--user"}},
		"runuser":          {Level: high, Reason: "privilege escalation (switch user)", ValueFlags: []string{"-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"}, ScriptFlags: []string{"-c", "--command", "--session-command"}},
		"setpriv":          {Level: review, Reason: "changes privileges or capabilities", ValueFlags: []string{"--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule"}},
		"sg":               {Analyzer: "sg", Level: review, Reason: "runs a command with another group"},
		"bwrap":            {Analyzer: "bwrap"},
		"proot":            {ValueFlags: []string{"-r", "--rootfs", "-b", "--bind", "-m", "--mount", "-w", "--pwd", "--cwd", "-q", "--qemu", "-k", "--kernel-release"}},
		"cpulimit":         {ValueFlags: []string{"-l", "--limit", "-p", "--pid", "-e", "--exe", "-c", "--cpu"}},
		"prlimit":          {ValueFlags: []string{"-p", "--pid", "-o", "--output"}},
		"setarch":          {Skip: 1, ValueFlags: []string{"--uname-2.6"}},
		"linux32":          {},
		"linux64":          {},
		"fakeroot":         {ValueFlags: []string{"-l", "--lib", "--faked", "-s", "-i"}},
		"ssh-agent":        {ValueFlags: []string{"-a", "-E", "-P", "-t"}},
		"dbus-run-session": {ValueFlags: []string{"--config-file", "--dbus-daemon"}},
		"trickle":          {ValueFlags: []string{"-d", "-u", "-w", "-t", "-l", "-n"}},
		"ccache":           {},
		"sem":              {Analyzer: "parallel"},
		"gosu":             {Level: high, Reason: "runs a command as another user (privilege change)", Skip: 1},
		"su-exec":          {Level: high, Reason: "runs a command as another user (privilege change)", Skip: 1},
		"setuidgid":        {Level: high, Reason: "runs a command as another user (privilege change)", Skip: 1},
		"s6-setuidgid":     {Level: high, Reason: "runs a command as another user (privilege change)", Skip: 1},
		"chpst":            {ValueFlags: []string{"-u", "-U", "-b", "-e", "-/", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c", "-r", "-t"}},
		"envdir":           {Skip: 1},
		"xcrun":            {ValueFlags: []string{"--sdk", "--toolchain"}},
		"screen":           {ValueFlags: []string{"-S", "-c", "-t", "-e", "-h", "-p", "-X", "-T", "-s", "-L", "-Logfile"}},
		"busybox":          {Analyzer: "busybox"},
		"toybox":           {Analyzer: "busybox"},
		"flock":            {ValueFlags: []string{"-w", "--timeout", "-E", "--conflict-exit-code"}, ScriptFlags: []string{"-c", "--command"}, Skip: 1},
		"chronic":          {},
		"unbuffer":         {},
		"caffeinate":       {},
		"systemd-run":      {Level: review, Reason: "runs a command as a transient service", ValueFlags: []string{"-u", "--unit", "-p", "--property", "--description", "--slice", "-E", "--setenv", "--on-active", "--on-boot", "--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--timer-property", "--path-property", "--socket-property", "-H", "--host", "-M", "--machine", "--uid", "--gid", "--nice", "--working-directory", "-d"}},
		"watch":            {Analyzer: "watch"},
		"noglob":           {},
		"nocorrect":        {},
		"chrt":             {Skip: 1},
		"taskset":          {Skip: 1},
		"numactl":          {ValueFlags: []string{"-C", "-N", "-m", "-p", "-i", "--physcpubind", "--cpunodebind", "--membind", "--preferred", "--interleave"}},
		"firejail":         {},
		"proxychains":      {ValueFlags: []string{"-f"}},
		"torsocks":         {},
		"catchsegv":        {},
		"faketime":         {Skip: 1},
		"dbus-launch":      {},
		"xvfb-run":         {ValueFlags: []string{"-n", "-s", "-e", "--error-file", "-f", "--auth-file", "-p", "-w"}, OutputFlags: []string{"-e", "--error-file"}},
		"uv-run":           {},
	}
}

func defaultEnv() map[string]EnvRule {
	e := map[string]EnvRule{}
	for _, n := range []string{"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "LD_LIBRARY_PATH"} {
		e[n] = EnvRule{Level: high, Reason: "injects a library into every program started"}
	}
	for _, n := range []string{"PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "GIT_SSH_COMMAND", "GIT_SSH",
		"GIT_EXTERNAL_DIFF", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL", "GIT_ASKPASS", "SSH_ASKPASS",
		"SUDO_ASKPASS", "PS4", "LESSOPEN", "LESSCLOSE", "BROWSER", "GIT_PROXY_COMMAND", "RSYNC_RSH", "FCEDIT", "SSH_ORIGINAL_COMMAND"} {
		e[n] = EnvRule{Level: review, Reason: "names a program that will be run", Command: true}
	}
	// Variables naming a program a tool runs (pagers, editors, helpers).
	for _, n := range []string{"BAT_PAGER", "DELTA_PAGER", "GH_PAGER", "GH_EDITOR", "PSQL_PAGER", "MYSQL_PAGER", "SUDO_EDITOR",
		"SYSTEMD_EDITOR", "KUBE_EDITOR", "RSYNC_CONNECT_PROG", "PERL5DB", "TERMINAL", "SHELL",
		"CC", "CXX"} {
		e[n] = EnvRule{Level: review, Reason: "names a program that will be run", Command: true}
	}
	// Variables naming a configuration file or default options that can
	// make a "reader" run programs (rg --pre, tar --to-command, less's
	// LESSOPEN, man's pager).
	for _, n := range []string{"RIPGREP_CONFIG_PATH", "TAR_OPTIONS", "ZIPOPT", "UNZIP", "GREP_OPTIONS", "MANOPT", "LESSKEY", "LESSKEYIN",
		"LESSKEY_CONTENT", "FZF_DEFAULT_COMMAND", "FZF_DEFAULT_OPTS", "BAT_CONFIG_PATH", "WGETRC", "CURL_HOME", "PARALLEL", "XARGS_OPTS",
		"GIT_CONFIG_NOSYSTEM", "INPUTRC", "NPM_CONFIG_USERCONFIG", "npm_config_userconfig", "DOCKER_CONFIG", "KUBECONFIG"} {
		e[n] = EnvRule{Level: review, Reason: "points a tool at a configuration that can make it run programs"}
	}
	for _, n := range []string{"BASH_ENV", "ENV", "PROMPT_COMMAND", "ZDOTDIR", "BASH_FUNC"} {
		e[n] = EnvRule{Level: high, Reason: "makes the shell run code at startup or prompt", Command: true}
	}
	// Variables that change what later words name: ~ and a bare cd
	// (HOME), cd's search path (CDPATH), globs (GLOBIGNORE also turns
	// dotglob on): the paths judged after them are not the files used.
	for _, n := range []string{"HOME", "CDPATH", "GLOBIGNORE"} {
		e[n] = EnvRule{Level: review, Reason: "changes what later paths, cd or globs name (the classifier judges them as if it were unset)"}
	}
	for _, n := range []string{"HISTFILE", "HISTSIZE", "HISTFILESIZE", "HISTCONTROL"} {
		e[n] = EnvRule{Level: review, Reason: "changes or disables shell history (covering tracks)"}
	}
	for _, n := range []string{"PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH",
		"PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "GIT_DIR", "GIT_WORK_TREE", "GIT_EXEC_PATH", "GIT_CONFIG",
		"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_TEMPLATE_DIR",
		"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GCONV_PATH", "MALLOC_CHECK_", "HOSTALIASES", "npm_config_script_shell"} {
		e[n] = EnvRule{Level: review, Reason: "changes which code a program loads"}
	}
	return e
}

func defaultPaths() []PathRule {
	sec := func(pattern, id, reason string, except ...string) PathRule {
		return PathRule{Pattern: pattern, Read: high, Write: high, ID: id, Reason: reason, Except: except}
	}
	persist := func(pattern, id, reason string) PathRule {
		return PathRule{Pattern: pattern, Write: high, ID: id, Reason: reason}
	}
	return []PathRule{
		// Secrets: reading is high, and so is overwriting or deleting.
		sec("~/.ssh/id_*", "path.ssh-private-key", "SSH private key", "~/.ssh/id_*.pub"),
		// Keys under their own names (deploy_key, github): every file in
		// ~/.ssh but public keys, known hosts, the client configuration
		// and authorized_keys (a write target, below).
		sec("~/.ssh/*", "path.ssh-private-key", "SSH private key (a file in ~/.ssh)",
			"~/.ssh/*.pub", "~/.ssh/known_hosts*", "~/.ssh/config", "~/.ssh/authorized_keys*", "~/.ssh/environment"),
		sec("**/id_rsa", "path.private-key", "private key"),
		sec("**/id_dsa", "path.private-key", "private key"),
		sec("**/id_ecdsa", "path.private-key", "private key"),
		sec("**/id_ed25519", "path.private-key", "private key"),
		sec("**/*.pem", "path.private-key", "PEM key or certificate bundle"),
		sec("**/*.key", "path.private-key", "private key file"),
		sec("**/*.p12", "path.private-key", "PKCS#12 key store"),
		sec("**/*.pfx", "path.private-key", "PKCS#12 key store"),
		sec("**/*.keystore", "path.private-key", "Java key store"),
		sec("**/*.jks", "path.private-key", "Java key store"),
		sec("~/.aws/credentials", "path.cloud-credentials", "AWS credentials"),
		// toolgate's own approval inbox: an agent that writes it can approve
		// its own asks (approve/inbox). Reading it shows pending calls, not
		// secrets; tokens are stored hashed.
		persist("**/approvals.db", "path.approval-inbox", "toolgate approval inbox"),
		persist("**/toolgate/approvals.db*", "path.approval-inbox", "toolgate approval inbox"),
		{Pattern: "~/.ssh", Read: high, ID: "path.ssh-dir", Reason: "SSH directory (private keys)"},
		{Pattern: "~", Read: high, ID: "path.home-dir", Reason: "the whole home directory (keys, tokens)"},
		{Pattern: "~/.aws", Read: high, ID: "path.cloud-credentials", Reason: "AWS credentials directory"},
		{Pattern: "~/.gnupg", Read: high, ID: "path.credentials", Reason: "GPG keys directory"},
		{Pattern: "~/.kube", Read: high, ID: "path.cloud-credentials", Reason: "Kubernetes credentials directory"},
		{Pattern: "~/.docker", Read: high, ID: "path.credentials", Reason: "Docker credentials directory"},
		{Pattern: "~/.azure", Read: high, ID: "path.cloud-credentials", Reason: "Azure credentials directory"},
		{Pattern: "~/.config/gcloud", Read: high, ID: "path.cloud-credentials", Reason: "Google Cloud credentials directory"},
		{Pattern: "~/.password-store", Read: high, ID: "path.credentials", Reason: "password store"},
		sec("/etc/ssl/private", "path.private-key", "TLS private keys directory"),
		sec("/etc/ssl/private/**", "path.private-key", "TLS private key"),
		sec("~/.aws/config", "path.cloud-credentials", "AWS configuration"),
		sec("~/.config/gcloud/**", "path.cloud-credentials", "Google Cloud credentials"),
		sec("~/.azure/**", "path.cloud-credentials", "Azure credentials"),
		sec("~/.kube/config", "path.cloud-credentials", "Kubernetes credentials"),
		sec("~/.docker/config.json", "path.credentials", "Docker registry credentials"),
		sec("~/.git-credentials", "path.credentials", "stored git tokens"),
		sec("~/.netrc", "path.credentials", "stored passwords"),
		sec("~/.npmrc", "path.credentials", "npm token"),
		sec("~/.pypirc", "path.credentials", "PyPI token"),
		sec("~/.config/gh/hosts.yml", "path.credentials", "GitHub CLI token"),
		sec("~/.gnupg/**", "path.credentials", "GPG keys"),
		sec("~/.password-store/**", "path.credentials", "password store"),
		sec("~/.vault-token", "path.credentials", "Vault token"),
		// Credential files real tools store (database clients, package
		// registries, cloud and cluster CLIs, password managers, keyrings).
		sec("**/.pgpass", "path.credentials", "PostgreSQL password file"),
		sec("~/.my.cnf", "path.credentials", "MySQL client password file"),
		sec("~/.mylogin.cnf", "path.credentials", "MySQL login path file"),
		sec("/etc/mysql/debian.cnf", "path.credentials", "MySQL maintenance password"),
		sec("**/.netrc", "path.credentials", "stored passwords"),
		sec("~/.config/containers/auth.json", "path.credentials", "container registry credentials"),
		sec("/run/containers/*/auth.json", "path.credentials", "container registry credentials"),
		sec("~/.terraform.d/credentials.tfrc.json", "path.credentials", "Terraform Cloud token"),
		sec("~/.cargo/credentials", "path.credentials", "crates.io token"),
		sec("~/.cargo/credentials.toml", "path.credentials", "crates.io token"),
		sec("~/.gem/credentials", "path.credentials", "RubyGems API key"),
		sec("~/.local/share/gem/credentials", "path.credentials", "RubyGems API key"),
		sec("~/.m2/settings-security.xml", "path.credentials", "Maven master password"),
		sec("~/.m2/settings.xml", "path.credentials", "Maven server credentials"),
		sec("~/.gradle/gradle.properties", "path.credentials", "Gradle publishing credentials"),
		sec("~/.composer/auth.json", "path.credentials", "Composer tokens"),
		sec("~/.config/composer/auth.json", "path.credentials", "Composer tokens"),
		sec("~/.nuget/NuGet/NuGet.Config", "path.credentials", "NuGet API keys"),
		sec("~/.yarnrc.yml", "path.credentials", "Yarn registry token"),
		sec("~/.boto", "path.cloud-credentials", "Google Cloud Storage / boto credentials"),
		sec("~/.s3cfg", "path.cloud-credentials", "S3 credentials"),
		sec("~/.config/rclone/rclone.conf", "path.cloud-credentials", "rclone remotes and their credentials"),
		sec("~/.oci/config", "path.cloud-credentials", "Oracle Cloud credentials"),
		sec("~/.oci/**", "path.cloud-credentials", "Oracle Cloud keys"),
		sec("~/.aliyun/config.json", "path.cloud-credentials", "Alibaba Cloud credentials"),
		sec("~/.config/doctl/config.yaml", "path.cloud-credentials", "DigitalOcean token"),
		sec("~/.databrickscfg", "path.cloud-credentials", "Databricks token"),
		sec("~/.config/hub", "path.credentials", "GitHub token (hub)"),
		sec("~/.config/glab-cli/config.yml", "path.credentials", "GitLab CLI token"),
		sec("~/.config/github-copilot/**", "path.credentials", "GitHub Copilot token"),
		sec("~/.config/op/**", "path.credentials", "1Password CLI session"),
		sec("~/.config/Bitwarden CLI/**", "path.credentials", "Bitwarden CLI vault"),
		sec("~/.config/sops/age/keys.txt", "path.private-key", "age private keys (SOPS)"),
		sec("~/.ngrok2/ngrok.yml", "path.credentials", "ngrok token"),
		sec("~/.config/ngrok/ngrok.yml", "path.credentials", "ngrok token"),
		sec("~/.kube/**", "path.cloud-credentials", "Kubernetes credentials"),
		sec("~/.minikube/**", "path.cloud-credentials", "cluster client keys"),
		sec("~/.local/share/keyrings/**", "path.credentials", "desktop keyring"),
		sec("~/.local/share/kwalletd/**", "path.credentials", "desktop keyring (KWallet)"),
		// More CLIs' stored logins: git's XDG credential store, age keys,
		// ML, hosting, payment, data-warehouse and cluster-access tools.
		sec("~/.config/git/credentials", "path.credentials", "stored git tokens (XDG credential store)"),
		sec("~/.config/age/keys.txt", "path.private-key", "age private keys"),
		sec("~/.age/*.txt", "path.private-key", "age private keys"),
		sec("~/Library/Application Support/sops/age/keys.txt", "path.private-key", "age private keys (SOPS)"),
		sec("~/.huggingface/token", "path.credentials", "Hugging Face token"),
		sec("~/.cache/huggingface/token", "path.credentials", "Hugging Face token"),
		sec("~/.cache/huggingface/stored_tokens", "path.credentials", "Hugging Face tokens"),
		sec("~/.kaggle/kaggle.json", "path.credentials", "Kaggle API key"),
		sec("~/.config/kaggle/kaggle.json", "path.credentials", "Kaggle API key"),
		sec("~/.vercel/auth.json", "path.credentials", "Vercel token"),
		sec("~/.local/share/com.vercel.cli/auth.json", "path.credentials", "Vercel token"),
		sec("~/Library/Application Support/com.vercel.cli/auth.json", "path.credentials", "Vercel token"),
		sec("~/.config/configstore/firebase-tools.json", "path.credentials", "Firebase CLI token"),
		sec("~/.config/netlify/config.json", "path.credentials", "Netlify token"),
		sec("~/.netlify/config.json", "path.credentials", "Netlify token"),
		sec("~/.fly/config.yml", "path.credentials", "Fly.io token"),
		sec("~/.config/stripe/config.toml", "path.credentials", "Stripe API keys"),
		sec("~/.config/heroku/credentials", "path.credentials", "Heroku credentials"),
		sec("~/.railway/config.json", "path.credentials", "Railway token"),
		sec("~/.supabase/access-token", "path.credentials", "Supabase token"),
		sec("~/.sentryclirc", "path.credentials", "Sentry token"),
		sec("~/.circleci/cli.yml", "path.credentials", "CircleCI token"),
		sec("~/.wrangler/config/default.toml", "path.cloud-credentials", "Cloudflare token (wrangler)"),
		sec("~/.config/.wrangler/config/default.toml", "path.cloud-credentials", "Cloudflare token (wrangler)"),
		sec("~/.dbt/profiles.yml", "path.credentials", "dbt warehouse credentials"),
		sec("~/.snowsql/config", "path.credentials", "Snowflake credentials"),
		sec("~/.snowflake/connections.toml", "path.credentials", "Snowflake credentials"),
		sec("~/.snowflake/config.toml", "path.credentials", "Snowflake credentials"),
		sec("~/.ivy2/.credentials", "path.credentials", "Ivy/sbt repository credentials"),
		sec("~/.sbt/.credentials", "path.credentials", "sbt repository credentials"),
		sec("~/.bundle/config", "path.credentials", "Bundler gem source credentials"),
		sec("~/.pip/pip.conf", "path.credentials", "pip index credentials"),
		sec("~/.config/pip/pip.conf", "path.credentials", "pip index credentials"),
		sec("~/.config/helm/registry/config.json", "path.credentials", "Helm registry credentials"),
		sec("~/.jfrog/jfrog-cli.conf*", "path.credentials", "JFrog CLI tokens"),
		sec("~/.mc/config.json", "path.cloud-credentials", "MinIO client keys"),
		sec("~/.config/atuin/key", "path.credentials", "Atuin history encryption key"),
		sec("~/.local/share/atuin/key", "path.credentials", "Atuin history encryption key"),
		sec("~/.local/share/atuin/session", "path.credentials", "Atuin sync session"),
		sec("~/.tsh/keys/**", "path.cloud-credentials", "Teleport keys and certificates"),
		sec("~/.aws/sso/cache/**", "path.cloud-credentials", "AWS SSO tokens"),
		sec("~/.aws/cli/cache/**", "path.cloud-credentials", "AWS temporary credentials"),
		sec("/run/user/*/containers/auth.json", "path.credentials", "container registry credentials"),
		sec("~/Library/Application Support/doctl/config.yaml", "path.cloud-credentials", "DigitalOcean token"),
		sec("~/.config/hcloud/cli.toml", "path.cloud-credentials", "Hetzner Cloud token"),
		sec("~/.config/linode-cli", "path.cloud-credentials", "Linode token"),
		sec("~/.config/scw/config.yaml", "path.cloud-credentials", "Scaleway keys"),
		sec("~/.bluemix/config.json", "path.cloud-credentials", "IBM Cloud token"),
		sec("~/.config/exoscale/exoscale.toml", "path.cloud-credentials", "Exoscale keys"),
		sec("~/.vultr-cli.yaml", "path.cloud-credentials", "Vultr API key"),
		// The coding agents' own login tokens.
		sec("~/.claude/.credentials.json", "path.agent-credentials", "Claude Code login token"),
		sec("~/.codex/auth.json", "path.agent-credentials", "Codex login token"),
		sec("~/.gemini/oauth_creds.json", "path.agent-credentials", "Gemini CLI OAuth token"),
		sec("~/.gemini/google_accounts.json", "path.agent-credentials", "Gemini CLI accounts"),
		sec("~/.config/anthropic/**", "path.agent-credentials", "Anthropic API credentials"),
		// Mounted secrets (Docker, Kubernetes service-account tokens).
		sec("/run/secrets/**", "path.credentials", "mounted secrets (Docker, Kubernetes service-account token)"),
		sec("/var/run/secrets/**", "path.credentials", "mounted secrets (Docker, Kubernetes service-account token)"),
		// Browser sessions and editor state.
		sec("~/.config/google-chrome/*/Cookies", "path.credentials", "browser session cookies"),
		sec("~/.config/chromium/*/Cookies", "path.credentials", "browser session cookies"),
		sec("~/.config/Code/User/globalStorage/state.vscdb", "path.credentials", "VS Code state (extension tokens)"),
		sec("~/.config/Cursor/User/globalStorage/state.vscdb", "path.credentials", "Cursor state (login and extension tokens)"),
		sec("~/.config/VSCodium/User/globalStorage/state.vscdb", "path.credentials", "VSCodium state (extension tokens)"),
		sec("/etc/security/opasswd", "path.shadow", "old password hashes"),
		// In-workspace secrets.
		sec("**/.envrc", "path.dotenv", "direnv environment file (secrets)"),
		sec("**/*.tfstate", "path.credentials", "Terraform state (resource secrets in clear)"),
		sec("**/*.tfstate.backup", "path.credentials", "Terraform state (resource secrets in clear)"),
		sec("**/.dev.vars", "path.dotenv", "Cloudflare Workers local secrets"),
		sec("~/Library/Keychains/**", "path.credentials", "macOS keychain"),
		sec("~/.mozilla/firefox/*/logins.json", "path.credentials", "browser saved passwords"),
		sec("~/.mozilla/firefox/*/key4.db", "path.credentials", "browser password key"),
		sec("~/.mozilla/firefox/*/cookies.sqlite", "path.credentials", "browser session cookies"),
		sec("~/.thunderbird/*/logins.json", "path.credentials", "mail client saved passwords"),
		sec("~/.thunderbird/*/key4.db", "path.credentials", "mail client password key"),
		sec("~/.config/BraveSoftware/Brave-Browser/*/Login Data", "path.credentials", "browser saved passwords"),
		sec("~/.config/BraveSoftware/Brave-Browser/*/Cookies", "path.credentials", "browser session cookies"),
		sec("~/.config/google-chrome/*/Login Data", "path.credentials", "browser saved passwords"),
		sec("~/.config/chromium/*/Login Data", "path.credentials", "browser saved passwords"),
		sec("**/*.kdbx", "path.credentials", "KeePass password database"),
		sec("**/.git-credentials", "path.credentials", "stored git tokens"),
		sec("~/.config/toolgate/otlp-token", "path.credentials", "toolgate's collector token (docs/hooks.md): lets its holder send decision spans"),
		sec("**/.env", "path.dotenv", "environment secrets file"),
		sec("**/credentials.json", "path.credentials", "service credentials"),
		sec("**/service-account*.json", "path.credentials", "cloud service-account key"),
		sec("**/.htpasswd", "path.credentials", "password hashes"),
		sec("**/secrets.yml", "path.credentials", "application secrets"),
		sec("**/secrets.yaml", "path.credentials", "application secrets"),
		sec("**/.env.*", "path.dotenv", "environment secrets file", "**/.env.example", "**/.env.sample", "**/.env.template", "**/.env.dist"),
		sec("/etc/shadow", "path.shadow", "password hashes"),
		sec("/etc/gshadow", "path.shadow", "group password hashes"),
		sec("/etc/master.passwd", "path.shadow", "password hashes (macOS, BSD)"),
		sec("/etc/sudoers", "path.sudoers", "sudo policy"),
		sec("/etc/ssh/ssh_host_*_key", "path.private-key", "SSH host key"),
		sec("/proc/*/environ", "path.environ", "another process's environment (tokens)"),
		sec("/proc/*/mem", "path.environ", "process memory"),
		sec("/proc/*/task/*/environ", "path.environ", "another process's environment (tokens)"),
		sec("/proc/*/task/*/mem", "path.environ", "process memory"),
		{Pattern: "~/.bash_history", Read: review, Write: high, ID: "path.shell-history", Reason: "shell history (often holds pasted secrets)"},
		{Pattern: "~/.zsh_history", Read: review, Write: high, ID: "path.shell-history", Reason: "shell history (often holds pasted secrets)"},
		{Pattern: "~/.*_history", Read: review, Write: high, ID: "path.shell-history", Reason: "history file"},
		// Histories under other names: fish, zsh's other defaults, vim's
		// and neovim's command/register history, R, Julia, IPython, less
		// and atuin's history database.
		{Pattern: "~/.local/share/fish/fish_history", Read: review, Write: high, ID: "path.shell-history", Reason: "shell history (often holds pasted secrets)"},
		{Pattern: "~/.config/fish/fish_history", Read: review, Write: high, ID: "path.shell-history", Reason: "shell history (often holds pasted secrets)"},
		{Pattern: "~/.histfile", Read: review, Write: high, ID: "path.shell-history", Reason: "shell history (often holds pasted secrets)"},
		{Pattern: "~/.zhistory", Read: review, Write: high, ID: "path.shell-history", Reason: "shell history (often holds pasted secrets)"},
		{Pattern: "~/.config/zsh/.zsh_history", Read: review, Write: high, ID: "path.shell-history", Reason: "shell history (often holds pasted secrets)"},
		{Pattern: "~/.local/share/atuin/history.db", Read: review, Write: high, ID: "path.shell-history", Reason: "shell history database (atuin)"},
		{Pattern: "~/.viminfo", Read: review, Write: high, ID: "path.shell-history", Reason: "vim command, search and register history"},
		{Pattern: "~/.local/state/nvim/shada/*", Read: review, Write: high, ID: "path.shell-history", Reason: "neovim command, search and register history"},
		{Pattern: "~/.local/share/nvim/shada/*", Read: review, Write: high, ID: "path.shell-history", Reason: "neovim command, search and register history"},
		{Pattern: "~/.lesshst", Read: review, Write: high, ID: "path.shell-history", Reason: "less search and command history"},
		{Pattern: "~/.Rhistory", Read: review, Write: high, ID: "path.shell-history", Reason: "R console history"},
		{Pattern: "~/.julia/logs/repl_history.jl", Read: review, Write: high, ID: "path.shell-history", Reason: "Julia REPL history"},
		{Pattern: "~/.ipython/profile_*/history.sqlite", Read: review, Write: high, ID: "path.shell-history", Reason: "IPython history"},
		// Persistence and tampering: writing is high.
		persist("~/.ssh/**", "path.ssh", "SSH configuration or authorized keys"),
		persist("~/.ssh", "path.ssh", "SSH configuration directory"),
		persist("~/.bashrc", "path.shell-rc", "shell startup file"),
		persist("~/.bash_profile", "path.shell-rc", "shell startup file"),
		persist("~/.bash_login", "path.shell-rc", "shell startup file"),
		persist("~/.bash_logout", "path.shell-rc", "shell startup file"),
		persist("~/.profile", "path.shell-rc", "shell startup file"),
		persist("~/.zshrc", "path.shell-rc", "shell startup file"),
		persist("~/.zshenv", "path.shell-rc", "shell startup file"),
		persist("~/.zprofile", "path.shell-rc", "shell startup file"),
		persist("~/.zlogin", "path.shell-rc", "shell startup file"),
		persist("~/.config/fish/**", "path.shell-rc", "shell startup file"),
		persist("~/.inputrc", "path.shell-rc", "shell startup file"),
		persist("~/.pam_environment", "path.shell-rc", "login environment (PAM)"),
		persist("~/.xprofile", "path.shell-rc", "X session startup file"),
		persist("~/.pythonrc", "path.shell-rc", "Python startup file"),
		persist("~/.local/share/applications/*.desktop", "path.autostart", "desktop entry (runs its Exec= when opened)"),
		persist("**/site-packages/*.pth", "path.autostart", "Python path file (its import lines run at every interpreter start)"),
		persist("~/.gitconfig", "path.gitconfig", "global git config (aliases, hooks, pagers run code)"),
		persist("~/.config/git/**", "path.gitconfig", "global git config"),
		persist("**/.git/hooks/**", "path.git-hooks", "git hook (runs on every commit or checkout)"),
		// The coding agents' own settings: their hooks (toolgate's among
		// them), permission rules and MCP servers. A model that writes one
		// removes its gate or starts a program at the next launch.
		persist("**/.claude/settings.json", "path.agent-config", "coding agent settings (hooks, permissions)"),
		persist("**/.claude/settings.local.json", "path.agent-config", "coding agent settings (hooks, permissions)"),
		persist("~/.claude/settings.json", "path.agent-config", "coding agent settings (hooks, permissions)"),
		persist("~/.claude.json", "path.agent-config", "coding agent state (MCP servers)"),
		persist("**/.mcp.json", "path.agent-config", "MCP servers the agent starts"),
		persist("**/.gemini/settings.json", "path.agent-config", "coding agent settings (hooks, MCP servers)"),
		persist("~/.gemini/settings.json", "path.agent-config", "coding agent settings (hooks, MCP servers)"),
		persist("**/.codex/config.toml", "path.agent-config", "coding agent settings (MCP servers, sandbox)"),
		persist("**/.codex/hooks.json", "path.agent-config", "coding agent hooks"),
		persist("~/.codex/config.toml", "path.agent-config", "coding agent settings (MCP servers, sandbox)"),
		persist("~/.codex/hooks.json", "path.agent-config", "coding agent hooks"),
		persist("**/.cursor/mcp.json", "path.agent-config", "MCP servers the agent starts"),
		persist("~/.cursor/mcp.json", "path.agent-config", "MCP servers the agent starts"),
		persist("~/.codeium/windsurf/mcp_config.json", "path.agent-config", "MCP servers the agent starts"),
		persist("~/.config/Claude/claude_desktop_config.json", "path.agent-config", "MCP servers the agent starts"),
		persist("~/Library/Application Support/Claude/claude_desktop_config.json", "path.agent-config", "MCP servers the agent starts"),
		persist("~/.config/toolgate/**", "path.agent-config", "toolgate's own policy"),
		persist("~/.local/state/toolgate/**", "path.agent-config", "toolgate's own state (spool of decisions, approval inbox)"),
		persist("~/.claude/hooks/**", "path.agent-config", "coding agent hook scripts"),
		persist("**/.claude/hooks/**", "path.agent-config", "coding agent hook scripts"),
		persist("**/.claude/agents/**", "path.agent-config", "coding agent subagent definitions (their tools and prompts)"),
		persist("**/.gemini/extensions/**", "path.agent-config", "coding agent extensions (MCP servers, hooks)"),
		persist("**/.git/config", "path.gitconfig", "repository git config (can run programs)"),
		persist("**/.git", "path.git-dir", "repository history"),
		persist("~/.config/autostart/**", "path.autostart", "login autostart"),
		persist("~/Library/LaunchAgents/**", "path.autostart", "launchd agent"),
		persist("~/.config/systemd/**", "path.autostart", "systemd user unit"),
		persist("/etc/**", "path.etc", "system configuration"),
		persist("/etc", "path.etc", "system configuration"),
		persist("/var/spool/cron/**", "path.cron", "cron table"),
		persist("/dev/**", "path.device", "device file"),
		persist("/boot/**", "path.system", "boot files"),
		persist("/usr/**", "path.system", "system files"),
		persist("/bin/**", "path.system", "system binaries"),
		persist("/sbin/**", "path.system", "system binaries"),
		persist("/lib/**", "path.system", "system libraries"),
		persist("/lib64/**", "path.system", "system libraries"),
		persist("/sys/**", "path.system", "kernel interface"),
		persist("/proc/**", "path.system", "kernel interface"),
		persist("/System/**", "path.system", "system files"),
		persist("/Library/**", "path.system", "system files"),
		persist("/var/lib/**", "path.system", "system state"),
		persist("/var/log/**", "path.logs", "system log (destroying or forging evidence)"),
		persist("/var/log", "path.logs", "system logs (destroying or forging evidence)"),
		persist("/var/run/utmp", "path.logs", "login records"),
		persist("/run/utmp", "path.logs", "login records"),
		persist("/root/**", "path.system", "root's home"),
	}
}
