package gate_test

import (
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/gate"
)

// drawPattern draws a regexp over the letters, separators and classes
// that field-name spellings are made of, with alternation, repetition,
// anchors and case-insensitive groups.
func drawPattern(t *rapid.T, depth int) string {
	atoms := []string{"c", "m", "d", "a", "b", "C", "M", "D", "B", "x", "-", "_", ".", "[a-z]", "[A-Z]", `\w`, "[^_]", "[-_]", `\d`}
	if depth <= 0 {
		return rapid.SampledFrom(atoms).Draw(t, "atom")
	}
	switch rapid.IntRange(0, 7).Draw(t, "op") {
	case 0, 1:
		n := rapid.IntRange(1, 4).Draw(t, "n")
		var b strings.Builder
		for range n {
			b.WriteString(drawPattern(t, depth-1))
		}
		return b.String()
	case 2:
		return "(" + drawPattern(t, depth-1) + "|" + drawPattern(t, depth-1) + ")"
	case 3:
		return "(?:" + drawPattern(t, depth-1) + ")" + rapid.SampledFrom([]string{"?", "*", "+", "{2}", "{0,2}"}).Draw(t, "rep")
	case 4:
		return "^" + drawPattern(t, depth-1)
	case 5:
		return drawPattern(t, depth-1) + "$"
	case 6:
		return "(?i:" + drawPattern(t, depth-1) + ")"
	}
	return rapid.SampledFrom(atoms).Draw(t, "atom")
}

// spellings enumerates the spellings of name SameFieldName reads as it
// with every case of each letter and up to two separators ('-', '_') in
// each gap, before and after.
func spellings(name string) []string {
	letters := []rune(strings.NewReplacer("-", "", "_", "").Replace(name))
	seps := []string{"", "_", "-", "__", "-_"}
	out := []string{""}
	for i := 0; i <= len(letters); i++ {
		var next []string
		for _, s := range out {
			for _, sep := range seps {
				if i == len(letters) {
					next = append(next, s+sep)
					continue
				}
				lo, up := strings.ToLower(string(letters[i])), strings.ToUpper(string(letters[i]))
				next = append(next, s+sep+lo)
				if up != lo {
					next = append(next, s+sep+up)
				}
			}
		}
		out = next
	}
	return out
}

// TestPropertyPatternAdmits: whether a patternProperties regexp admits a
// field is decided exactly. When a witness is found it is a spelling of
// the field that the regexp (as the schema validator runs it) matches;
// when none is, no spelling of the field — every case, separators in
// every gap — matches.
func TestPropertyPatternAdmits(t *testing.T) {
	names := []string{"cmd", "ab", "a_b", "Md"}
	all := map[string][]string{}
	for _, n := range names {
		all[n] = spellings(n)
	}
	rapid.Check(t, func(t *rapid.T) {
		pattern := drawPattern(t, rapid.IntRange(0, 3).Draw(t, "depth"))
		name := rapid.SampledFrom(names).Draw(t, "name")
		re := regexp.MustCompile(pattern)
		w, ok, err := gate.PatternWitness(pattern, name)
		if err != nil {
			t.Fatalf("pattern %q: %v", pattern, err)
		}
		if ok {
			if !gate.SameFieldName(w, name) || !re.MatchString(w) {
				t.Fatalf("pattern %q, field %q: witness %q is not a matching spelling", pattern, name, w)
			}
			return
		}
		for _, s := range all[name] {
			if re.MatchString(s) {
				t.Fatalf("pattern %q matches the spelling %q of %q, but was found to admit none", pattern, s, name)
			}
		}
	})
}
