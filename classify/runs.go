package classify

import (
	"slices"
	"strings"
)

// longOptions are a command's known long options, for resolving GNU
// getopt_long abbreviations (CommandRule.Abbrev).
type longOptions struct {
	all    map[string]bool
	sorted []string
	risky  map[string]bool // options some rule acts on (flags, outputs, runs)
}

// collectLongOptions gathers every long option a command's rule tree
// names.
func collectLongOptions(c CommandRule) *longOptions {
	lo := &longOptions{all: map[string]bool{}, risky: map[string]bool{}}
	addOpt := func(o string, risky bool) {
		o = strings.TrimSuffix(o, "*")
		if n, _, ok := strings.Cut(o, "="); ok {
			o = n
		}
		if !strings.HasPrefix(o, "--") || len(o) < 4 {
			return
		}
		lo.all[o] = true
		if risky {
			lo.risky[o] = true
		}
	}
	var walk func(c CommandRule)
	walk = func(c CommandRule) {
		for _, f := range c.Flags {
			for _, o := range f.Flags {
				addOpt(o, true)
			}
		}
		for _, o := range c.OutputFlags {
			addOpt(o, true)
		}
		for _, rr := range c.Runs {
			for _, o := range rr.Options {
				addOpt(o, true)
			}
		}
		for _, o := range c.ValueFlags {
			addOpt(o, false)
		}
		for _, o := range c.LongOptions {
			addOpt(o, false)
		}
		for _, s := range c.Subcommands {
			walk(s)
		}
	}
	walk(c)
	for o := range lo.all {
		lo.sorted = append(lo.sorted, o)
	}
	slices.Sort(lo.sorted)
	return lo
}

// resolve returns the long option an abbreviation stands for: the one
// option it prefixes, or, when it prefixes several, the first one a rule
// acts on (the tool would refuse an ambiguous prefix only if it knows
// no more options than we do). "" when none.
func (lo *longOptions) resolve(name string) string {
	first, n := "", 0
	for _, o := range lo.sorted {
		if !strings.HasPrefix(o, name) {
			continue
		}
		if lo.risky[o] {
			return o
		}
		if n == 0 {
			first = o
		}
		n++
	}
	if n == 1 {
		return first
	}
	return ""
}

// expandAbbrev rewrites abbreviated long options ("--co=x") to their full
// spelling ("--compress-program=x") as getopt_long would read them.
func (cr *compiled) expandAbbrev(key string, args []field) []field {
	lo := cr.longOpts[key]
	if lo == nil {
		return args
	}
	var out []field
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn || !strings.HasPrefix(f.s, "--") {
			continue
		}
		if f.s == "--" {
			break
		}
		name, val, eq := strings.Cut(f.s, "=")
		if len(name) < 4 || lo.all[name] {
			continue
		}
		full := lo.resolve(name)
		if full == "" {
			continue
		}
		if out == nil {
			out = slices.Clone(args)
		}
		out[i].s = full
		if eq {
			out[i].s += "=" + val
		}
	}
	if out == nil {
		return args
	}
	return out
}

// isLetter reports an ASCII letter (a short option in a bundle).
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// optionUses finds every use of one of opts in args (before "--") and
// returns their values when the option takes one (takesValue): "-I V",
// "-IV", a bundle "-xI V" / "-xIV", "--opt V", "--opt=V". A present
// option without a value yields a field with ok == false.
func optionUses(args []field, opts []string, takesValue bool) (uses []optionUse) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dyn || len(a.s) < 2 || a.s[0] != '-' {
			continue
		}
		if a.s == "--" {
			break
		}
		for _, o := range opts {
			u, ok := matchOption(args, i, o, takesValue)
			if ok {
				uses = append(uses, u)
				break
			}
		}
	}
	return uses
}

// optionUse is one occurrence of an option.
type optionUse struct {
	opt    string
	value  field
	hasVal bool
}

func matchOption(args []field, i int, o string, takesValue bool) (optionUse, bool) {
	s := args[i].s
	next := func() (field, bool) {
		if i+1 < len(args) {
			return args[i+1], true
		}
		return field{}, false
	}
	u := optionUse{opt: o}
	if len(o) > 2 {
		// A long option ("--to-command") or a multi-letter one ("-TT").
		switch {
		case s == o:
			if takesValue {
				u.value, u.hasVal = next()
			}
			return u, true
		case hasPrefixThen(s, o, '='):
			u.value, u.hasVal = args[i], true
			u.value.s = s[len(o)+1:]
			return u, true
		}
		return u, false
	}
	if s[1] == '-' {
		return u, false
	}
	for k := 1; k < len(s); k++ {
		c := s[k]
		if c == o[1] {
			if takesValue {
				if k+1 < len(s) {
					u.value, u.hasVal = args[i], true
					u.value.s = s[k+1:]
				} else {
					u.value, u.hasVal = next()
				}
			}
			return u, true
		}
		if !isLetter(c) {
			break
		}
	}
	return u, false
}

// runRules applies a command's table of options that run programs.
func (r *run) runRules(key string, rules []RunRule, args []field, cx *callCtx) {
	for _, rr := range rules {
		for _, u := range optionUses(args, rr.Options, rr.Value != "") {
			v := u.value
			if rr.Prefix != "" {
				rest, ok := strings.CutPrefix(v.s, rr.Prefix)
				if !u.hasVal || !ok {
					continue
				}
				v.s = rest
			}
			r.add(cx, rr.Level, rr.ID, key+" "+u.opt+": "+rr.Reason)
			if !u.hasVal {
				continue
			}
			switch rr.Value {
			case "command":
				if v.dyn {
					r.dynamicScript(v, cx)
				} else {
					r.nested(cx, strings.ReplaceAll(v.s, "{}", "FILE"))
				}
			case "file":
				r.readPath(v, cx)
			}
		}
	}
}
