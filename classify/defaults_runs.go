package classify

// The table of programs that run programs: options of common tools that
// execute commands, open pagers or editors that can run commands, load
// libraries or read their options or code from a file. Facts from the
// tools' manuals and from public catalogues of abusable Unix binaries;
// each entry has a case in TestRunsTable.

// runsTable maps a command to its option rules. addRuns merges it into
// the command rules (a command missing from them gets the rule "reader"
// level safe with its runs).
func runsTable() map[string][]RunRule {
	cmd := func(id, reason string, opts ...string) RunRule {
		return RunRule{Options: opts, Value: "command", Level: review, ID: id, Reason: reason}
	}
	flag := func(id, reason string, opts ...string) RunRule {
		return RunRule{Options: opts, Level: review, ID: id, Reason: reason}
	}
	file := func(id, reason string, opts ...string) RunRule {
		return RunRule{Options: opts, Value: "file", Level: review, ID: id, Reason: reason}
	}
	return map[string][]RunRule{
		"sort": {cmd("sort.compress-program", "runs a program to compress temporary files", "--compress-program")},
		"tar": {
			cmd("tar.exec", "runs a program as the (de)compressor", "-I", "--use-compress-program"),
			cmd("tar.exec", "pipes every extracted file into a command", "--to-command"),
			cmd("tar.exec", "runs a script at the end of each volume", "-F", "--info-script", "--new-volume-script"),
			cmd("tar.exec", "runs a remote shell program", "--rsh-command"),
			{Options: []string{"--checkpoint-action"}, Value: "command", Prefix: "exec=", Level: review, ID: "tar.checkpoint-exec", Reason: "runs a command at each checkpoint"},
		},
		"zip":        {cmd("zip.exec", "runs a command to test the archive", "-TT", "--unzip-command")},
		"rg":         {cmd("rg.pre", "runs a program on every file it searches", "--pre"), flag("rg.search-zip", "runs decompression programs on compressed files", "-z", "--search-zip")},
		"man":        {cmd("man.pager", "runs a chosen pager or browser", "-P", "--pager", "-H", "--html")},
		"bat":        {cmd("bat.pager", "runs a chosen pager", "--pager")},
		"rsync":      {cmd("rsync.rsh", "runs a remote shell program", "-e", "--rsh"), cmd("rsync.rsh", "runs a program as the remote rsync", "--rsync-path")},
		"scp":        {cmd("scp.program", "runs a program instead of ssh", "-S")},
		"sftp":       {cmd("scp.program", "runs a program instead of ssh", "-S"), cmd("scp.program", "runs a program as the sftp server", "-D")},
		"ssh-keygen": {file("ssh.pkcs11", "loads a PKCS#11 library (native code)", "-D")},
		"ssh":        {file("ssh.pkcs11", "loads a PKCS#11 library (native code)", "-I")},
		"mysql":      {cmd("sql.pager", "runs a chosen pager", "--pager")},
		"tcpdump":    {cmd("capture.postrotate", "runs a command on each saved capture file", "-z")},
		"split":      {cmd("split.filter", "pipes each part into a shell command", "--filter")},
		"fd": {
			cmd("fd.exec", "runs a command for every match", "-x", "--exec"),
			cmd("fd.exec", "runs a command with all matches", "-X", "--exec-batch"),
		},
		"fdfind": {
			cmd("fd.exec", "runs a command for every match", "-x", "--exec"),
			cmd("fd.exec", "runs a command with all matches", "-X", "--exec-batch"),
		},
		"diff":    {cmd("diff.program", "runs a program to compare files", "--diff-program")},
		"sdiff":   {cmd("diff.program", "runs a program to compare files", "--diff-program")},
		"less":    {file("pager.lesskey", "loads key bindings and environment settings (LESSOPEN runs a program)", "--lesskey-file", "--lesskey-src")},
		"pandoc":  {cmd("pandoc.filter", "runs a filter program", "-F", "--filter"), file("pandoc.filter", "runs a Lua filter", "-L", "--lua-filter")},
		"openssl": {file("openssl.engine", "loads an engine or provider library (native code)", "-engine", "-provider", "-provider-path")},
	}
}

// gnuAbbrev are commands that parse long options with getopt_long (or
// git's parse-options), which accept unambiguous prefixes, with the long
// options they also know (so that a prefix resolves as the tool does).
func gnuAbbrev() map[string][]string {
	return map[string][]string{
		"sort":  {"--batch-size", "--buffer-size", "--check", "--debug", "--dictionary-order", "--field-separator", "--files0-from", "--general-numeric-sort", "--human-numeric-sort", "--ignore-case", "--ignore-leading-blanks", "--ignore-nonprinting", "--key", "--merge", "--month-sort", "--numeric-sort", "--output", "--parallel", "--random-sort", "--random-source", "--reverse", "--sort", "--stable", "--temporary-directory", "--unique", "--version-sort", "--zero-terminated"},
		"tar":   {"--create", "--extract", "--list", "--file", "--directory", "--checkpoint", "--exclude", "--files-from", "--gzip", "--verbose", "--transform", "--to-stdout", "--totals", "--use-compress-program", "--to-command"},
		"rm":    {"--force", "--interactive", "--one-file-system", "--preserve-root", "--recursive", "--dir", "--verbose", "--no-preserve-root"},
		"cp":    {"--archive", "--backup", "--force", "--link", "--no-clobber", "--parents", "--recursive", "--symbolic-link", "--target-directory", "--update", "--verbose"},
		"mv":    {"--backup", "--force", "--no-clobber", "--target-directory", "--update", "--verbose"},
		"tee":   {"--append", "--ignore-interrupts", "--output-error"},
		"sed":   {"--expression", "--file", "--in-place", "--quiet", "--silent", "--regexp-extended", "--separate", "--null-data", "--debug", "--sandbox"},
		"date":  {"--date", "--file", "--iso-8601", "--reference", "--rfc-email", "--set", "--utc", "--universal"},
		"diff":  {"--brief", "--recursive", "--unified", "--context", "--new-file", "--text", "--ignore-case", "--line-format", "--to-file", "--from-file"},
		"split": {"--bytes", "--lines", "--line-bytes", "--number", "--suffix-length", "--additional-suffix", "--numeric-suffixes", "--elide-empty-files", "--verbose"},
		"wget":  {"--output-document", "--output-file", "--append-output", "--quiet", "--post-file", "--post-data", "--input-file", "--directory-prefix", "--user-agent", "--header"},
		"shuf":  {"--echo", "--input-range", "--head-count", "--random-source", "--repeat", "--zero-terminated"},
		"grep":  {"--count", "--file", "--files-with-matches", "--ignore-case", "--invert-match", "--line-number", "--recursive", "--regexp", "--word-regexp"},
		"man":   {"--all", "--apropos", "--config-file", "--local-file", "--manpath", "--where", "--whatis"},
		"rsync": {"--archive", "--compress", "--delete", "--dry-run", "--exclude", "--include", "--progress", "--recursive", "--verbose", "--remove-source-files"},
	}
}

// addRuns merges the runs table and the abbreviation table into c.
func addRuns(c map[string]CommandRule) {
	for name, rr := range runsTable() {
		cr, ok := c[name]
		if !ok {
			if len(rr) == 0 {
				continue
			}
			cr = cmdr(review, "runs "+name)
		}
		cr.Runs = append(cr.Runs, rr...)
		c[name] = cr
	}
	for name, long := range gnuAbbrev() {
		cr, ok := c[name]
		if !ok {
			continue
		}
		cr.Abbrev = true
		cr.LongOptions = append(cr.LongOptions, long...)
		c[name] = cr
	}
}
