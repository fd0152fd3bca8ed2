package classify

import (
	"maps"
	"slices"
)

// Clone returns a deep copy of r: changing the copy (or r) afterwards
// does not change the other. New classifies with a clone of the rules it
// is given, so a Classifier never shares the caller's *Rules.
func (r *Rules) Clone() *Rules {
	if r == nil {
		return nil
	}
	out := *r
	if r.Commands != nil {
		out.Commands = make(map[string]CommandRule, len(r.Commands))
		for k, c := range r.Commands {
			out.Commands[k] = c.clone()
		}
	}
	if r.Wrappers != nil {
		out.Wrappers = make(map[string]WrapperRule, len(r.Wrappers))
		for k, w := range r.Wrappers {
			w.ValueFlags = slices.Clone(w.ValueFlags)
			w.ScriptFlags = slices.Clone(w.ScriptFlags)
			w.OutputFlags = slices.Clone(w.OutputFlags)
			out.Wrappers[k] = w
		}
	}
	out.Env = maps.Clone(r.Env)
	if r.Paths != nil {
		out.Paths = make([]PathRule, len(r.Paths))
		for i, p := range r.Paths {
			p.Except = slices.Clone(p.Except)
			out.Paths[i] = p
		}
	}
	out.SystemDirs = slices.Clone(r.SystemDirs)
	out.TempDirs = slices.Clone(r.TempDirs)
	out.GitExecKeys = slices.Clone(r.GitExecKeys)
	return &out
}

func (c CommandRule) clone() CommandRule {
	c.Traits = slices.Clone(c.Traits)
	c.ValueFlags = slices.Clone(c.ValueFlags)
	c.OutputFlags = slices.Clone(c.OutputFlags)
	c.LongOptions = slices.Clone(c.LongOptions)
	if c.Flags != nil {
		fs := make([]FlagRule, len(c.Flags))
		for i, f := range c.Flags {
			f.Flags = slices.Clone(f.Flags)
			fs[i] = f
		}
		c.Flags = fs
	}
	if c.Runs != nil {
		rs := make([]RunRule, len(c.Runs))
		for i, rr := range c.Runs {
			rr.Options = slices.Clone(rr.Options)
			rs[i] = rr
		}
		c.Runs = rs
	}
	if c.Subcommands != nil {
		subs := make(map[string]CommandRule, len(c.Subcommands))
		for k, s := range c.Subcommands {
			subs[k] = s.clone()
		}
		c.Subcommands = subs
	}
	return c
}
