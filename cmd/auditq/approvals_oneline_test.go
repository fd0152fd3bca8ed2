package main

import (
	"strings"
	"testing"
)

// TestOneLineKeepsLookalikeSpacesEscaped: oneLine collapses only ASCII
// whitespace; U+00A0, U+3000, U+0085 are shown escaped, never as " ".
func TestOneLineKeepsLookalikeSpacesEscaped(t *testing.T) {
	got := oneLine("pip install requests\u3000evil\u00a0pkg\u0085x \t\n y")
	for _, want := range []string{`\u3000`, `\u00a0`, `\u0085`} {
		if !strings.Contains(got, want) {
			t.Errorf("oneLine = %q, want %s in it", got, want)
		}
	}
	if strings.Contains(got, "requests evil") || strings.Contains(got, "evil pkg") {
		t.Errorf("oneLine = %q: a look-alike space became an ASCII space", got)
	}
	if !strings.HasSuffix(got, "x y") {
		t.Errorf("oneLine = %q, want ASCII whitespace collapsed to one space", got)
	}
}
