package mcpgate

import (
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

func TestPresentedNamesExamples(t *testing.T) {
	long := ""
	for range 70 {
		long += "x"
	}
	refs := []ToolRef{
		{"fs", "read_file"},
		{"fs", "read.file"}, // sanitizes to fs_read_file's twin
		{"fs", "read file"}, // and again
		{"ev", "echo"},
		{"ev", long},
		{"a_b", "c"}, {"a", "b_c"}, // both exact and equal: hashed
	}
	got := PresentedNames(refs)
	if got[ToolRef{"fs", "read_file"}] != "fs_read_file" || got[ToolRef{"ev", "echo"}] != "ev_echo" {
		t.Fatalf("exact names changed: %v", got)
	}
	for _, r := range []ToolRef{{"fs", "read.file"}, {"fs", "read file"}, {"ev", long}, {"a_b", "c"}, {"a", "b_c"}} {
		n := got[r]
		if !ToolNamePattern.MatchString(n) || n == r.Upstream+"_"+r.Tool {
			t.Errorf("%v -> %q: want a hashed name matching %s", r, n, ToolNamePattern)
		}
	}
}

// Property: every presented name matches ^[a-zA-Z0-9_-]{1,64}$, distinct
// refs get distinct names, every ref is named (no collisions at this size),
// and the result does not depend on the order of the refs.
func TestPresentedNamesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		up := rapid.SampledFrom([]string{"fs", "ev", "fs_x", "a-b", "up"})
		tool := rapid.OneOf(
			rapid.StringMatching(`[a-z_]{1,12}`),
			rapid.StringMatching(`[a-zA-Z0-9_.: /-]{1,80}`),
			rapid.String(),
		)
		n := rapid.IntRange(1, 30).Draw(t, "n")
		refs := make([]ToolRef, 0, n)
		for i := range n {
			refs = append(refs, ToolRef{Upstream: up.Draw(t, "up"), Tool: tool.Draw(t, "tool")})
			_ = i
		}
		got := PresentedNames(refs)
		seen := map[string]ToolRef{}
		for r, name := range got {
			if !ToolNamePattern.MatchString(name) {
				t.Fatalf("%v -> %q does not match %s", r, name, ToolNamePattern)
			}
			if o, dup := seen[name]; dup && o != r {
				t.Fatalf("%v and %v both -> %q", o, r, name)
			}
			seen[name] = r
		}
		for _, r := range refs {
			if _, ok := got[r]; !ok {
				t.Fatalf("%v not named (refs %v)", r, refs)
			}
		}
		shuffled := append([]ToolRef(nil), refs...)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again := PresentedNames(shuffled)
		for r, name := range got {
			if again[r] != name {
				t.Fatalf("order changed %v: %q vs %q", r, name, again[r])
			}
		}
	})
}
