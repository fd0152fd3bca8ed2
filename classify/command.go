package classify

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolgate/toolgate/gate"
)

// actx is what an analyzer works on: one command line, its rule and the
// baseline finding it may adjust.
type actx struct {
	key string // command key (lower-case basename)
	// The parts of the command's rule (before subcommands) analyzers read.
	valueFlags  []string
	analyzer    string
	subcommands map[string]CommandRule
	args        []field        // argv, args[0] is the command
	rest        []field        // operands after the matched subcommands
	cx          *callCtx       // the statement
	level       gate.RiskLevel // baseline level
	id          string         // baseline rule ID
	reason      string         // baseline reason
	files       []field        // operands to check for ReadsFiles (nil: all operands)
	filesSet    bool
}

// frames are the analyzer and call contexts of the commands being
// classified, for commands that nest shallowly (analyzers are called
// through the registry, so a context cannot live on the stack). A
// pooled run keeps its frames: every context is overwritten whole when
// pushed, before it is read, and nothing keeps one once popped.
type frames struct {
	actxs [3]actx
	cxs   [4]callCtx
}

// pushActx returns an analyzer context for a command being classified:
// one of the run's frames while commands nest shallowly, a new one
// deeper down. popActx releases it (last in, first out).
func (r *run) pushActx() *actx {
	r.nActx++
	if r.frames == nil {
		r.frames = &frames{}
	}
	if r.nActx <= len(r.frames.actxs) {
		return &r.frames.actxs[r.nActx-1]
	}
	return &actx{}
}

func (r *run) popActx() { r.nActx-- }

// pushCallCtx returns a call context for a simple command, as pushActx
// does; popCallCtx releases it.
func (r *run) pushCallCtx() *callCtx {
	r.nCx++
	if r.frames == nil {
		r.frames = &frames{}
	}
	if r.nCx <= len(r.frames.cxs) {
		return &r.frames.cxs[r.nCx-1]
	}
	return &callCtx{}
}

func (r *run) popCallCtx() { r.nCx-- }

// flagMatches reports whether arg is the flag pattern (see FlagRule).
func flagMatches(pattern, arg string) bool {
	if strings.HasSuffix(pattern, "*") {
		return strings.HasPrefix(arg, strings.TrimSuffix(pattern, "*"))
	}
	if arg == pattern {
		return true
	}
	if strings.HasPrefix(pattern, "--") {
		return hasPrefixThen(arg, pattern, '=')
	}
	if len(pattern) == 2 && pattern[0] == '-' && len(arg) > 2 && arg[0] == '-' && arg[1] != '-' {
		return strings.IndexByte(arg[1:], pattern[1]) >= 0
	}
	return false
}

// hasFlag reports whether any of args (before "--") matches a pattern.
func hasFlag(args []field, patterns ...string) bool {
	for _, a := range args {
		if a.s == "--" && !a.dyn {
			return false
		}
		if !strings.HasPrefix(a.s, "-") {
			continue
		}
		for _, p := range patterns {
			if flagMatches(p, a.s) {
				return true
			}
		}
	}
	return false
}

// flagValue returns the value of the first occurrence of a flag: "-o F",
// "-oF", "--out F" or "--out=F".
func flagValue(args []field, names ...string) (field, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i].s
		if a == "--" {
			break
		}
		for _, n := range names {
			switch {
			case a == n:
				if i+1 < len(args) {
					return args[i+1], true
				}
				return field{}, false
			case strings.HasPrefix(n, "--") && hasPrefixThen(a, n, '='):
				f := args[i]
				f.s = a[len(n)+1:]
				return f, true
			case len(n) == 2 && !strings.HasPrefix(n, "--") && strings.HasPrefix(a, n) && len(a) > 2 && !strings.HasPrefix(a, "--"):
				f := args[i]
				f.s = a[2:]
				return f, true
			case len(n) == 2 && n[0] == '-' && n[1] != '-' && len(a) > 2 && a[0] == '-' && a[1] != '-' && isLetter(a[1]):
				// A bundle of short options: "-uo F", "-uoF" (sort -u -o F).
				if u, ok := matchOption(args, i, n, true); ok {
					if u.hasVal {
						return u.value, true
					}
					return field{}, false
				}
			}
		}
	}
	return field{}, false
}

// operands returns the non-flag arguments of args, skipping the values of
// valueFlags; everything after "--" is an operand. It is nil when there
// are none. When the operands are one run of args (flags first, then
// names: the common case) the result is that part of args, its capacity
// cut to its length so that appending to it copies; only operands with
// flags between them are copied into a list of their own.
func operands(args []field, valueFlags ...string) []field {
	var out []field // the operands once they are not one run of args
	lo, hi := 0, 0  // until then they are args[lo:hi]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.s == "--" && !a.dyn {
			switch {
			case out != nil:
				return append(out, args[i+1:]...)
			case i+1 == len(args):
				return runOf(args, lo, hi)
			case lo == hi:
				return runOf(args, i+1, len(args))
			}
			out = append(make([]field, 0, hi-lo+len(args)-i-1), args[lo:hi]...)
			return append(out, args[i+1:]...)
		}
		if len(a.s) > 1 && a.s[0] == '-' && !a.dyn {
			// A bundle of short options ("-xf F") ends with the one
			// whose value follows: v is "-" and that last letter.
			last := a.s[len(a.s)-1]
			bundle := len(a.s) > 2 && a.s[1] != '-'
			for _, v := range valueFlags {
				if a.s == v || bundle && len(v) == 2 && v[0] == '-' && v[1] == last {
					i++
					break
				}
			}
			continue
		}
		switch {
		case out != nil:
			out = append(out, a)
		case lo == hi:
			lo, hi = i, i+1
		case hi == i:
			hi++
		default:
			out = append(make([]field, 0, hi-lo+len(args)-i), args[lo:hi]...)
			out = append(out, a)
		}
	}
	if out != nil {
		return out
	}
	return runOf(args, lo, hi)
}

// runOf is args[lo:hi] with its capacity cut to its length, nil when
// empty.
func runOf(args []field, lo, hi int) []field {
	if lo == hi {
		return nil
	}
	return args[lo:hi:hi]
}

// firstOperand returns the index of the first operand in args.
func firstOperand(args []field, valueFlags []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i].s
		if a == "--" {
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		}
		if len(a) > 1 && a[0] == '-' {
			for _, v := range valueFlags {
				if a == v {
					i++
					break
				}
			}
			continue
		}
		return i
	}
	return -1
}

// command classifies a command with its rule.
func (r *run) command(key string, rule *CommandRule, args []field, cx *callCtx) traits {
	if len(args) == 2 && !args[1].dyn && (args[1].s == "--version" || args[1].s == "--help" || args[1].s == "-version") {
		return 0
	}
	if rule.Abbrev {
		args = r.cr.expandAbbrev(key, args)
	}
	if d, ok := chdirOf(key, args, rule.ValueFlags); ok {
		// make -C DIR, git -C DIR: the operands name files in DIR.
		defer r.leaveDir(r.enterDir(d))
	}
	a := r.pushActx()
	defer r.popActx()
	*a = actx{key: key, valueFlags: rule.ValueFlags, analyzer: rule.Analyzer, subcommands: rule.Subcommands, args: args, cx: cx}
	// cur is the rule of the deepest subcommand matched so far; a
	// subcommand's rule (with its parent's level and reason as
	// defaults) is copied into sub, one variable for the whole loop so
	// that it stays on the stack.
	cur, name := rule, key
	var sub CommandRule
	flags := rule.Flags
	runs := rule.Runs
	rest := args[1:]
	t := traitsOf(rule.Traits)
	for len(cur.Subcommands) > 0 {
		i := firstOperand(rest, cur.ValueFlags)
		if i < 0 {
			break
		}
		next, ok := cur.Subcommands[rest[i].s]
		if !ok || rest[i].dyn {
			break
		}
		name += " " + rest[i].s
		rest = rest[i+1:]
		if next.Reason == "" {
			next.Reason = cur.Reason
		}
		if next.Level == "" {
			next.Level = cur.Level
		}
		sub = next
		cur = &sub
		flags = append(flags[:len(flags):len(flags)], sub.Flags...)
		runs = append(runs[:len(runs):len(runs)], sub.Runs...)
		t |= traitsOf(sub.Traits)
	}
	a.rest = rest
	a.level, a.reason = cur.Level, cur.Reason
	if a.level == "" {
		a.level = review
	}
	a.id = strings.ReplaceAll(name, " ", ".")
	for _, fr := range flags {
		if hasFlag(args[1:], fr.Flags...) {
			r.add(cx, fr.Level, fr.ID, fr.Reason)
		}
	}
	r.runRules(name, runs, args[1:], cx)
	if rule.Analyzer != "" {
		t |= r.analyze(rule.Analyzer, a)
	}
	if cur.Wraps {
		i := 0
		for i < len(rest) && !rest[i].dyn && strings.HasPrefix(rest[i].s, "-") {
			if rest[i].s == "--" {
				i++
				break
			}
			i = skipFlag(rest, i, cur.ValueFlags)
		}
		if i < len(rest) {
			t |= r.argv(rest[i:], cx)
		}
	}
	if traitsOf(rule.Traits)&tNetwork != 0 {
		for _, f := range args[1:] {
			if f.sub&(tEnvDump|tSecret) != 0 {
				r.add(cx, high, "net.exfiltration", key+" sends the environment or a secret in its arguments (DNS or URL exfiltration)")
				break
			}
		}
	}
	for _, of := range rule.OutputFlags {
		if v, ok := flagValue(args[1:], of); ok {
			r.writePath(v, key+" "+of, cx)
		}
	}
	r.argOutputs(key, rule, true, args[1:], cx)
	var skipOps map[syntax.Pos]bool
	if rule.ReadsFiles && a.filesSet {
		// The analyzer chose which operands are files (grep's pattern
		// is not); those are checked below.
		skipOps = map[syntax.Pos]bool{}
		for _, o := range operands(args[1:], rule.ValueFlags...) {
			skipOps[o.pos] = true
		}
		for _, f := range a.files {
			delete(skipOps, f.pos)
		}
	}
	t |= r.argSecrets(key, args[1:], cx, skipOps)
	if traitsOf(rule.Traits)&(tNetwork|tFetch|tShell) != 0 {
		r.metadataEndpoint(key, args[1:], cx)
	}
	if rule.ReadsFiles {
		files := a.files
		if !a.filesSet {
			files = operands(args[1:], rule.ValueFlags...)
		}
		for _, f := range files {
			if r.readPath(f, cx) == high {
				t |= tSecret
			}
		}
	}
	if rule.WritesFiles {
		for _, f := range operands(args[1:], rule.ValueFlags...) {
			r.writePath(f, key, cx)
		}
		if cx.stdinArg {
			r.writePath(field{s: "$XARGS", dyn: true}, key, cx)
		}
	}
	if a.level.Rank() > safe.Rank() {
		reason := a.reason
		if reason == "" {
			reason = "runs " + name
		}
		r.add(cx, a.level, a.id, name+": "+reason)
	}
	return t
}

func traitsOf(names []string) traits {
	var t traits
	for _, n := range names {
		t |= traitBits[n]
	}
	return t
}

// readPath applies the path rules to a file the command reads and returns
// the level it found.
func (r *run) readPath(f field, cx *callCtx) gate.RiskLevel {
	if r.producedSecret(f, cx) {
		return high
	}
	if f.dyn && !f.proc {
		// A run-time part ("/proc/$PPID/environ") may be anything.
		if g := dynGlob(f.s); g != "" && r.cr.secrets.may(g) {
			fg := f
			fg.s = g
			if r.readSecret(fg, cx) {
				return high
			}
		}
		if r.dynSecret(f, true, cx) {
			return high
		}
		return safe
	}
	if f.proc || f.s == "" || f.s == "-" {
		return safe
	}
	rp := r.c.res.resolve(r.cwd, f.s)
	if strings.HasPrefix(rp, "/dev/tcp/") || strings.HasPrefix(rp, "/dev/udp/") {
		r.add(cx, high, "net.dev-tcp", "network connection through /dev/tcp (reverse shell or exfiltration)")
		return high
	}
	v := r.matchPath(rp, false)
	if v.level.Rank() > safe.Rank() {
		r.add(cx, v.level, v.id, "reads "+v.reason+" ("+clip(f.s, 60)+")")
	}
	if v.level == "" {
		return safe
	}
	return v.level
}

// dynSecret reports (and adds) a high read when what follows a field's
// last run-time part names a secret below some directory: the part
// before may be any directory (${PWD%/*}, $(dirname $PWD), ~-).
// A directory rule ("~/.ssh": reading it lists it) counts with listDir.
func (r *run) dynSecret(f field, listDir bool, cx *callCtx) bool {
	sfx := dynSuffix(f.s)
	if sfx == "" || !r.cr.secrets.may("/"+sfx) && !(listDir && r.cr.secrets.dirName(sfx)) {
		return false
	}
	if v := r.cr.matchAnyBase(sfx, false); v.level == high && (listDir || !v.dir) {
		r.add(cx, high, v.id, "reads "+v.reason+" ("+clip(f.s, 60)+")")
		return true
	}
	return false
}

// readTree applies the path rules to a directory the command reads
// recursively (see matchTree); a plain file or a glob is readPath's.
// With skipHidden the command skips hidden entries (rg, ag, ack).
func (r *run) readTree(f field, skipHidden bool, cx *callCtx) gate.RiskLevel {
	if f.dyn || f.proc || f.s == "" || f.s == "-" || hasGlob(f.s) {
		return safe
	}
	rp := r.c.res.resolve(r.cwd, f.s)
	v := r.cr.matchTree(rp, skipHidden)
	if v.level.Rank() > safe.Rank() {
		r.add(cx, v.level, v.id, "reads recursively "+v.reason+" ("+clip(f.s, 60)+")")
		return v.level
	}
	return safe
}

// writePath applies the path rules to a file the command writes, creates
// or deletes: harmless targets pass, sensitive ones are what the rule
// says, anything else is review.
func (r *run) writePath(f field, what string, cx *callCtx) gate.RiskLevel {
	if f.proc {
		return safe
	}
	if f.dyn {
		r.add(cx, review, "write.dynamic", what+" writes to a path computed at run time")
		return review
	}
	rp := r.c.res.resolve(r.cwd, f.s)
	if harmlessTarget(rp) {
		return safe
	}
	if strings.HasPrefix(rp, "/dev/tcp/") || strings.HasPrefix(rp, "/dev/udp/") {
		r.add(cx, high, "net.dev-tcp", "network connection through /dev/tcp (reverse shell or exfiltration)")
		return high
	}
	if v := r.matchPath(rp, true); v.level == high {
		r.add(cx, high, v.id, what+" writes "+v.reason+" ("+clip(f.s, 60)+")")
		return high
	}
	switch r.c.res.where(rp) {
	case locWorkspace, locWorkspaceRoot:
		r.add(cx, r.c.cfg.scopedWrites, "write.workspace", what+" writes a workspace file")
		return r.c.cfg.scopedWrites
	case locTemp, locTempRoot:
		r.add(cx, r.c.cfg.scopedWrites, "write.temp", what+" writes a temp file")
		return r.c.cfg.scopedWrites
	}
	r.add(cx, review, "write.outside", what+" writes outside the workspace")
	return review
}

// deleteTarget classifies deleting one path. severe: recursive or forced.
func (r *run) deleteTarget(f field, severe, recursive bool, what string, cx *callCtx) {
	for _, g := range f.globs() {
		// Names listed at run time: a whole-tree listing of / or a
		// home directory (find ~ | xargs rm -rf) deletes it all.
		dir, ok := strings.CutSuffix(g.glob, "/**")
		if !ok && !hasGlob(g.glob) {
			dir, ok = g.glob, true // a listed path itself (find ~ -maxdepth 0)
		}
		if ok && severe && !hasGlob(dir) {
			rp := r.c.res.resolve(r.cwd, dir)
			if w := r.c.res.where(rp); w == locRoot || w == locHome || otherHome(rp) {
				r.add(cx, high, "delete.root-home", what+" deletes everything below "+clip(dir, 40)+", listed at run time")
			}
		}
	}
	if f.dyn {
		switch {
		case f.lead && (strings.Contains(f.s, "/") || f.glob) && severe:
			r.add(cx, high, "delete.unset-prefix", what+": if the variable is empty this deletes from / ("+clip(f.s, 40)+")")
		case recursive && f.glob:
			r.add(cx, high, "delete.dynamic-glob", what+": recursive delete of a glob under a run-time path")
		case severe && strings.Contains(f.s[:max(0, strings.IndexByte(f.s, '$'))], "/"):
			pre := f.s[:strings.IndexByte(f.s, '$')]
			dir := r.c.res.resolve(r.cwd, path.Dir(pre+"x"))
			switch r.c.res.where(dir) {
			case locRoot, locHome, locHomeSub, locParent, locOutside, locTempRoot:
				r.add(cx, high, "delete.dynamic-outside", what+": deletes a run-time name below "+clip(path.Dir(pre+"x"), 40)+", outside the workspace")
				return
			}
			r.add(cx, review, "delete.dynamic", what+": deletes a path computed at run time")
		default:
			r.add(cx, review, "delete.dynamic", what+": deletes a path computed at run time")
		}
		return
	}
	target := f.s
	everything := false
	if f.glob {
		dir, base := path.Split(target)
		if base == "*" || base == ".*" || base == "*.*" || base == "{*,.*}" {
			everything = true
			target = dir
			if target == "" {
				target = "."
			}
		}
	}
	rp := r.c.res.resolve(r.cwd, target)
	if !everything {
		if v := r.matchPath(rp, true); v.level == high {
			r.add(cx, high, v.id, what+" deletes "+v.reason+" ("+clip(f.s, 60)+")")
			return
		}
	}
	w := r.c.res.where(rp)
	if !f.glob && (w == locWorkspace || w == locWorkspaceRoot) && path.Base(rp) == ".git" {
		r.add(cx, high, "delete.git-dir", what+" deletes repository history (.git)")
		return
	}
	if otherHome(rp) && (severe || everything) {
		r.add(cx, high, "delete.root-home", what+" deletes a home directory ("+clip(f.s, 40)+")")
		return
	}
	switch w {
	case locRoot, locHome, locParent:
		if severe || everything {
			r.add(cx, high, "delete.root-home", what+" deletes "+map[loc]string{locRoot: "the root filesystem", locHome: "the home directory", locParent: "the workspace's parent"}[w])
			return
		}
	case locWorkspaceRoot:
		if severe {
			r.add(cx, high, "delete.workspace-root", what+" deletes everything in the working directory")
			return
		}
	case locTempRoot:
		if severe {
			r.add(cx, high, "delete.temp-root", what+" deletes a whole temp directory")
			return
		}
	case locHomeSub, locOutside:
		if recursive || everything || f.glob && severe {
			r.add(cx, high, "delete.outside-recursive", what+" recursively deletes outside the workspace ("+clip(f.s, 60)+")")
			return
		}
	}
}

// script-ish helpers

// joinFields joins fields' text with spaces.
func joinFields(fs []field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.s
	}
	return strings.Join(parts, " ")
}

func anyDyn(fs []field) (dyn bool, sub traits) {
	for _, f := range fs {
		if f.dyn {
			dyn = true
		}
		sub |= f.sub
	}
	return dyn, sub
}

// metadataHosts are cloud instance-metadata endpoints (and spellings of
// them) that hand out the machine's cloud credentials: AWS, Azure, GCP,
// Oracle and OpenStack (169.254.169.254 and its decimal, hex and octal
// forms, AWS's IPv6 fd00:ec2::254, ECS task credentials at
// 169.254.170.2), GCP's
// metadata.google.internal, Alibaba's 100.100.100.200.
var metadataHosts = []string{"169.254.169.254", "169.254.170.2", "metadata.google.internal", "metadata.goog", "fd00:ec2::254", "100.100.100.200",
	"2852039166", "0xa9fea9fe", "0xa9.0xfe.0xa9.0xfe", "0251.0376.0251.0376", "a9fe:a9fe", "instance-data.ec2.internal"}

// mayNameMetadataHost is a cheap test before metadataEndpoint's search:
// every metadataHosts entry holds a digit or "data", and no character
// outside ASCII lowercases to either.
func mayNameMetadataHost(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' || c|0x20 == 'd' && i+4 <= len(s) && strings.EqualFold(s[i:i+4], "data") {
			return true
		}
	}
	return false
}

// metadataEndpoint flags a network tool or interpreter whose arguments
// name a cloud metadata endpoint: fetching it is credential theft.
func (r *run) metadataEndpoint(key string, args []field, cx *callCtx) {
	for _, f := range args {
		if !mayNameMetadataHost(f.s) {
			continue
		}
		l := strings.ToLower(f.s)
		for _, h := range metadataHosts {
			if strings.Contains(l, h) {
				r.add(cx, high, "net.cloud-metadata", key+" contacts a cloud metadata endpoint ("+h+"), which hands out the machine's cloud credentials")
				return
			}
		}
	}
}
