package classify

// Options that set the directory a command works in: relative operands
// after them (tar -C) or of the whole command (git -C, make -C, env -C)
// name files there.

import (
	"path"
	"slices"
	"strings"
)

// rebase is f as a path below dir (a field: it may be only known at run
// time); absolute and home paths stay as they are.
func rebase(dir, f field) field {
	if f.dyn && f.lead || f.s == "" || f.s == "-" || strings.HasPrefix(f.s, "/") || strings.HasPrefix(f.s, "~") {
		return f
	}
	if dir.dyn {
		f.s, f.dyn = strings.TrimSuffix(dir.s, "/")+"/"+f.s, true
		f.lead = f.lead || dir.lead
		return f
	}
	f.s = path.Join(dir.s, f.s)
	return f
}

// chdirTo is the directory after changing from dir (ok: one was set) to
// d, as cd would.
func chdirTo(dir field, ok bool, d field) field {
	if !ok {
		return d
	}
	return rebase(dir, d)
}

// tarShortValue are GNU tar's short options that take a value.
const tarShortValue = "fCTXbFgHIKLNV"

// tarLongValue reports a GNU tar long option that takes a value (the
// next argument when not written with "=").
func tarLongValue(o string) bool {
	switch o {
	case "--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--transform", "--xform", "--owner", "--group",
		"--mode", "--newer", "--after-date", "--newer-mtime", "--blocking-factor", "--format", "--use-compress-program", "--to-command",
		"--info-script", "--new-volume-script", "--rsh-command", "--listed-incremental", "--label", "--tape-length", "--starting-file",
		"--suffix", "--volno-file", "--record-size", "--index-file", "--rmt-command", "--exclude-tag", "--exclude-tag-all",
		"--exclude-tag-under", "--exclude-ignore", "--exclude-ignore-recursive", "--strip-components", "--occurrence", "--quoting-style",
		"--sparse-version", "--level", "--pax-option", "--hole-detection", "--mtime", "--owner-map", "--group-map", "--atime-preserve":
		return true
	}
	return false
}

// tarArgs is what tar's arguments name: the member operands, each
// re-based on the -C/--directory in effect before it (GNU tar changes
// directory in order: -C ~ .ssh archives ~/.ssh), the -T/--files-from
// lists with the directory their names are relative to, and the last
// directory set.
type tarArgs struct {
	members []field
	lists   []field
	listDir []field
	dir     field
	hasDir  bool
}

func parseTar(args []field) tarArgs {
	var ta tarArgs
	set := func(opt byte, v field) {
		switch opt {
		case 'C':
			ta.dir, ta.hasDir = chdirTo(ta.dir, ta.hasDir, v), true
		case 'T':
			ta.lists = append(ta.lists, v)
			ta.listDir = append(ta.listDir, ta.dir)
		}
	}
	member := func(f field) {
		if ta.hasDir {
			f = rebase(ta.dir, f)
		}
		ta.members = append(ta.members, f)
	}
	var pending []byte // an old-style bundle's options waiting for their values
	i := 0
	if len(args) > 0 && !args[0].dyn && !strings.HasPrefix(args[0].s, "-") {
		for k := 0; k < len(args[0].s); k++ {
			if strings.IndexByte(tarShortValue, args[0].s[k]) >= 0 {
				pending = append(pending, args[0].s[k])
			}
		}
		i = 1
	}
	for ; i < len(args); i++ {
		f := args[i]
		s := f.s
		switch {
		case len(pending) > 0:
			set(pending[0], f)
			pending = pending[1:]
		case f.dyn && !strings.HasPrefix(s, "-"):
			member(f)
		case s == "--":
			for _, m := range args[i+1:] {
				member(m)
			}
			i = len(args)
		case strings.HasPrefix(s, "--"):
			name, val, eq := strings.Cut(s, "=")
			var v field
			switch {
			case eq:
				v = f
				v.s = val
			case tarLongValue(name) && i+1 < len(args):
				i++
				v = args[i]
			default:
				continue
			}
			switch name {
			case "--directory":
				set('C', v)
			case "--files-from":
				set('T', v)
			}
		case len(s) > 1 && s[0] == '-':
			for k := 1; k < len(s); k++ {
				if strings.IndexByte(tarShortValue, s[k]) < 0 {
					continue
				}
				v := f
				if v.s = s[k+1:]; v.s == "" {
					if i+1 >= len(args) {
						break
					}
					i++
					v = args[i]
				}
				set(s[k], v)
				break
			}
		default:
			member(f)
		}
	}
	return ta
}

// tarListed reads the names tar -T takes: from stdin ("-", /dev/stdin)
// the names a listing stage prints (find ~ -name credentials | tar cf -
// -T -) or static piped text; otherwise the list file itself is read.
func (r *run) tarListed(ta tarArgs, recursive bool, cx *callCtx) {
	for k, l := range ta.lists {
		if l.dyn || l.s != "-" && l.s != "/dev/stdin" && l.s != "/dev/fd/0" {
			r.readPath(l, cx)
			continue
		}
		var names []field
		if len(r.pathsIn) > 0 {
			in := field{s: "$NAMES", dyn: true}
			in.addGlobs(r.pathsIn...)
			names = append(names, in)
		}
		if r.hasPipeIn {
			for _, w := range strings.Fields(r.pipeIn) {
				if len(names) >= 64 {
					break
				}
				names = append(names, rebase(ta.listDir[k], field{s: w}))
			}
		}
		for _, n := range names {
			r.readPath(n, cx)
			if recursive {
				r.readTree(n, false, cx)
			}
		}
	}
}

// chdirSpec is how a command spells an option that sets its working
// directory: short letters (-C DIR, -CDIR, in a bundle), long names
// (--directory=DIR, --directory DIR, getopt_long abbreviations of at
// least three letters), single-dash long names (terraform -chdir=DIR),
// and whether only the options before the first operand count (git -C,
// go -C, and the wrappers, whose operands are the command they run).
type chdirSpec struct {
	short   string
	values  string // other short options that take a value (the rest of a bundle)
	long    []string
	single  []string
	leading bool
}

// chdirOptions returns the working-directory options of a command or
// wrapper (ok false: it has none).
func chdirOptions(key string) (chdirSpec, bool) {
	switch key {
	case "git":
		return chdirSpec{short: "C", leading: true}, true
	case "make", "gmake", "remake":
		return chdirSpec{short: "C", values: "fIjloWE", long: []string{"--directory"}}, true
	case "ninja", "samu":
		return chdirSpec{short: "C"}, true
	case "go":
		return chdirSpec{short: "C", leading: true}, true
	case "terraform", "tofu":
		return chdirSpec{single: []string{"-chdir"}, leading: true}, true
	case "npm":
		return chdirSpec{long: []string{"--prefix"}}, true
	case "pnpm":
		return chdirSpec{short: "C", long: []string{"--dir"}}, true
	case "yarn":
		return chdirSpec{long: []string{"--cwd"}}, true
	case "uv":
		return chdirSpec{long: []string{"--directory"}}, true
	case "poetry":
		return chdirSpec{short: "C", long: []string{"--directory"}}, true
	case "just":
		return chdirSpec{short: "d", long: []string{"--working-directory"}}, true
	case "env":
		return chdirSpec{short: "C", values: "uSP", long: []string{"--chdir"}, leading: true}, true
	case "sudo":
		return chdirSpec{short: "D", long: []string{"--chdir"}, leading: true}, true
	case "systemd-run":
		return chdirSpec{long: []string{"--working-directory"}, leading: true}, true
	case "unshare", "nsenter":
		return chdirSpec{short: "w", long: []string{"--wd"}, leading: true}, true
	}
	return chdirSpec{}, false
}

// chdirOf returns the directory a command's working-directory options
// set (several: each relative to the one before), with the other options
// that take a value (valueFlags) skipped. An option with no directory
// (nsenter -w: the target's) gives a directory only known at run time.
func chdirOf(key string, args []field, valueFlags []string) (field, bool) {
	spec, ok := chdirOptions(key)
	if !ok {
		return field{}, false
	}
	var dir field
	has := false
	set := func(v field) { dir, has = chdirTo(dir, has, v), true }
	longName := func(name string) bool {
		for _, l := range spec.long {
			if name == l || len(name) >= 5 && strings.HasPrefix(l, name) {
				return true
			}
		}
		return false
	}
	for i := 1; i < len(args); i++ {
		f := args[i]
		s := f.s
		if s == "--" {
			break
		}
		if f.dyn || len(s) < 2 || s[0] != '-' {
			if spec.leading {
				break
			}
			continue
		}
		name, val, eq := strings.Cut(s, "=")
		switch {
		case slices.Contains(spec.single, name):
			if eq {
				v := f
				v.s = val
				set(v)
			} else if i+1 < len(args) {
				i++
				set(args[i])
			}
			continue
		case strings.HasPrefix(s, "--") && longName(name):
			switch {
			case eq:
				v := f
				v.s = val
				set(v)
			case key == "nsenter":
				set(field{s: "$WD", dyn: true})
			case i+1 < len(args):
				i++
				set(args[i])
			}
			continue
		case strings.HasPrefix(s, "--"):
			i = skipFlag(args, i, valueFlags) - 1
			continue
		}
		k := 1
		for k < len(s) && strings.IndexByte(spec.short, s[k]) < 0 && strings.IndexByte(spec.values, s[k]) < 0 && !slices.Contains(valueFlags, "-"+s[k:k+1]) {
			k++
		}
		if k < len(s) && strings.IndexByte(spec.values, s[k]) >= 0 {
			// Another option taking a value (env -u NAME): the rest of
			// the bundle, or the next word.
			if k+1 == len(s) {
				i++
			}
			continue
		}
		if k < len(s) && strings.IndexByte(spec.short, s[k]) >= 0 {
			v := f
			v.s = s[k+1:]
			switch {
			case v.s != "":
				set(v)
			case key == "nsenter":
				set(field{s: "$WD", dyn: true}) // -w alone: the target's directory
			case i+1 < len(args):
				i++
				set(args[i])
			}
			continue
		}
		i = skipFlag(args, i, valueFlags) - 1
	}
	return dir, has
}

// enterDir makes d the working directory (as cd does) and returns what
// leaveDir needs to restore the previous one.
func (r *run) enterDir(d field) (string, bool) {
	cwd, known := r.cwd, r.cwdKnown
	if d.dyn || d.s == "-" {
		r.cwd, r.cwdKnown = unknownMark, false
		return cwd, known
	}
	r.cwd = r.c.res.resolve(r.cwd, d.s)
	if r.cwd == "." {
		r.cwd = ""
	}
	r.cwdKnown = true
	return cwd, known
}

func (r *run) leaveDir(cwd string, known bool) { r.cwd, r.cwdKnown = cwd, known }
