package classify

import (
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"
)

// TestMayNameMetadataHostCoversEveryHost: the cheap filter before the
// metadata-host search passes every text the search would flag: each
// host of metadataHosts, in any case, inside arbitrary text.
func TestMayNameMetadataHostCoversEveryHost(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := rapid.SampledFrom(metadataHosts).Draw(t, "host")
		if rapid.Bool().Draw(t, "upper") {
			h = strings.ToUpper(h)
		}
		s := rapid.String().Draw(t, "pre") + h + rapid.String().Draw(t, "post")
		if !mayNameMetadataHost(s) {
			t.Fatalf("mayNameMetadataHost(%q) = false", s)
		}
	})
	for _, s := range []string{"--exclude=*.VOB", "-av", "--progress", "user@host:/path"} {
		if mayNameMetadataHost(s) {
			t.Errorf("mayNameMetadataHost(%q) = true, want the filter to drop it", s)
		}
	}
}

// TestByteSetMatchesContainsAny: the byte-table scans answer like
// strings.IndexAny / LastIndexAny for the sets they replace.
func TestByteSetMatchesContainsAny(t *testing.T) {
	sets := map[string]*byteSet{globMeta: globBytes, globMeta + "\\": globEscBytes, "*?]": globEndBytes, "\\{*?[~": plainWordSpecial}
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringMatching(`[a-z*?\[\]\\{~\n\r\t é]{0,12}`).Draw(t, "s")
		for chars, set := range sets {
			if got, want := set.index(s), strings.IndexAny(s, chars); got != want {
				t.Fatalf("index(%q) over %q = %d, want %d", s, chars, got, want)
			}
			if got, want := set.lastIndex(s), strings.LastIndexAny(s, chars); got != want {
				t.Fatalf("lastIndex(%q) over %q = %d, want %d", s, chars, got, want)
			}
		}
	})
}

// refSecretMay is secretFilter.may as it was before the directory names
// went into a map: every "/NAME/" searched for in turn.
func refSecretMay(paths []compiledPath, s string) bool {
	f := newSecretFilter(paths)
	if f.any || hasGlob(s) || strings.IndexByte(s, '(') >= 0 {
		return true
	}
	s = strings.TrimRight(foldCase(s), "/")
	base := s[strings.LastIndexByte(s, '/')+1:]
	if f.names[base] {
		return true
	}
	for _, p := range f.pres {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	for _, x := range f.sufs {
		if strings.HasSuffix(base, x) {
			return true
		}
	}
	for i := range paths {
		cp := &paths[i]
		n := len(cp.segs)
		if cp.rule.Read == high && !cp.dir && n >= 2 && cp.segs[n-1] == "**" && literalSeg(cp.segs[n-2]) != "" &&
			strings.Contains(s, "/"+cp.segs[n-2]+"/") {
			return true
		}
	}
	return false
}

// TestSecretFilterEqualsSearch: the secret filter's directory test (a
// map of segment names) answers like searching s for every "/NAME/",
// for the default and the workspace rules, on hostile paths and
// arbitrary text.
func TestSecretFilterEqualsSearch(t *testing.T) {
	def, err := defaultCompiled()
	if err != nil {
		t.Fatal(err)
	}
	ws, err := profileCompiled[ProfileWorkspace]()
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range []*compiled{def, ws} {
		if len(cr.secrets.dirs) == 0 {
			t.Fatal("no directory rules: the property below tests nothing")
		}
		rapid.Check(t, func(t *rapid.T) {
			s := hostilePath(t)
			switch rapid.IntRange(0, 3).Draw(t, "form") {
			case 0:
				s = rapid.String().Draw(t, "text")
			case 1:
				s += strings.Repeat("/", rapid.IntRange(1, 3).Draw(t, "slashes"))
			case 2:
				s = strings.ToUpper(s)
			}
			if got, want := cr.secrets.may(s), refSecretMay(cr.paths, s); got != want {
				t.Fatalf("may(%q) = %v, reference %v", s, got, want)
			}
		})
	}
	for _, s := range []string{"~/.config/gcloud/x", "/home/a/.kube/config", "~/.GNUPG/k"} {
		if !def.secrets.may(s) {
			t.Errorf("may(%q) = false", s)
		}
	}
	for _, s := range []string{"gcloud", "src/main.go", "~/.kube"} {
		if def.secrets.may(s) && !refSecretMay(def.paths, s) {
			t.Errorf("may(%q) = true, reference false", s)
		}
	}
}

// TestHasPrefixThen: hasPrefixThen(s, pre, c) is
// strings.HasPrefix(s, pre+string(c)).
func TestHasPrefixThen(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringMatching(`[-a-c=/]{0,6}`).Draw(t, "s")
		pre := rapid.StringMatching(`[-a-c=/]{0,4}`).Draw(t, "pre")
		c := rapid.SampledFrom([]byte("-a=/")).Draw(t, "c")
		if got, want := hasPrefixThen(s, pre, c), strings.HasPrefix(s, pre+string(c)); got != want {
			t.Fatalf("hasPrefixThen(%q, %q, %q) = %v, want %v", s, pre, c, got, want)
		}
	})
}

// TestReadOptionsAreLong: readOptionSecrets looks only options starting
// with "--" up in readOptions; every name there must be long.
func TestReadOptionsAreLong(t *testing.T) {
	for n := range readOptions {
		if !strings.HasPrefix(n, "--") {
			t.Errorf("readOptions has %q: readOptionSecrets would never look it up", n)
		}
	}
}

// refOperands is operands as it was when it always built a list.
func refOperands(args []field, valueFlags ...string) []field {
	var out []field
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.s == "--" && !a.dyn {
			return append(out, args[i+1:]...)
		}
		if len(a.s) > 1 && a.s[0] == '-' && !a.dyn {
			last := "-" + a.s[len(a.s)-1:]
			for _, v := range valueFlags {
				if a.s == v || len(a.s) > 2 && a.s[1] != '-' && v == last {
					i++
					break
				}
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// TestOperandsEqualsList: operands returns the operands the list-building
// version did (nil for none), for arbitrary flags, values, "--" and
// run-time words; a result that is part of args cannot be appended to
// in place (its capacity is its length).
func TestOperandsEqualsList(t *testing.T) {
	words := []string{"-", "--", "-f", "-o", "-xf", "-fo", "--file", "--file=x", "-v", "a", "b", "~", "x.txt", ""}
	flags := []string{"-f", "-o", "--file", "-x", "--out"}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 8).Draw(t, "n")
		args := make([]field, n)
		for i := range args {
			args[i] = field{s: rapid.SampledFrom(words).Draw(t, "w"), dyn: rapid.IntRange(0, 5).Draw(t, "dyn") == 0}
		}
		vf := rapid.SliceOfDistinct(rapid.SampledFrom(flags), rapid.ID[string]).Draw(t, "vf")
		got, want := operands(args, vf...), refOperands(args, vf...)
		if (got == nil) != (want == nil) || len(got) != len(want) {
			t.Fatalf("operands(%v, %v) = %v, want %v", args, vf, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("operands(%v, %v) = %v, want %v", args, vf, got, want)
			}
		}
		if len(got) > 0 {
			_ = append(got, field{s: "appended"})
			for i := range args {
				if args[i].s == "appended" {
					t.Fatalf("appending to operands' result wrote into args")
				}
			}
		}
	})
}

// TestHiddenCharsBytesCoverRunes: every character hiddenChars flags is
// a CR or encoded with a lead byte 0xE2 or 0xEF, the bytes its fast path
// looks for; and on text with and without them it flags what a run over
// every rune does.
func TestHiddenCharsBytesCoverRunes(t *testing.T) {
	hidden := []rune{'\r', 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF}
	for c := rune(0x202A); c <= 0x202E; c++ {
		hidden = append(hidden, c)
	}
	for c := rune(0x2066); c <= 0x2069; c++ {
		hidden = append(hidden, c)
	}
	for _, c := range hidden {
		if b := string(c)[0]; b != '\r' && b != 0xE2 && b != 0xEF {
			t.Errorf("U+%04X starts with byte %#x", c, b)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		var sb strings.Builder
		for i, n := 0, rapid.IntRange(0, 12).Draw(t, "n"); i < n; i++ {
			switch rapid.IntRange(0, 3).Draw(t, "kind") {
			case 0:
				sb.WriteRune(rapid.SampledFrom(hidden).Draw(t, "hidden"))
			case 1:
				sb.WriteRune(rapid.RuneFrom(nil, unicode.Latin, unicode.Zs, unicode.Cf).Draw(t, "rune"))
			default:
				sb.WriteString(rapid.StringMatching(`[a-z ~/\n]{0,4}`).Draw(t, "ascii"))
			}
		}
		s := sb.String()
		r := &run{}
		r.hiddenChars(s)
		want := false
		for i, c := range s {
			if c >= 0x202A && c <= 0x202E || c >= 0x2066 && c <= 0x2069 || c == 0x200B || c == 0x200C || c == 0x200D || c == 0x2060 || c == 0xFEFF ||
				c == '\r' && (i+1 >= len(s) || s[i+1] != '\n') {
				want = true
				break
			}
		}
		if got := len(r.findings) > 0; got != want {
			t.Fatalf("hiddenChars(%q) flagged %v, want %v", s, got, want)
		}
	})
}
