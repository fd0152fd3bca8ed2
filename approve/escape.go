package approve

import (
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/textsafe"
)

// escape returns s as one line of text safe to show a human on a terminal
// and that hides nothing (textsafe.Escape; see Terminal for the rules).
func escape(s string) string { return textsafe.Escape(s) }

// quote returns s double-quoted and escaped like escape (textsafe.Quote).
func quote(s string) string { return textsafe.Quote(s) }

// runeStart returns the start of the rune at byte i of s (len(s) past its
// end).
func runeStart(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
