package classify

import (
	"strings"
	"testing"

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
	sets := map[string]*byteSet{globMeta: globBytes, globMeta + "\\": globEscBytes, "*?]": globEndBytes, "\\{*?[~": plainWordSpecial, "\n\r\t": controlSpace}
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
