// Package textsafe shows text written by a hostile model to a human on a
// terminal so that it hides nothing: invalid bytes, controls, format and
// other invisible characters, blank glyphs and stacked combining marks are
// written as ASCII escapes. The approver's prompt (package approve) and
// auditq's tables use it.
package textsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxCombining is how many combining marks in a row a Terminal prints as
// they are after a letter or digit; the next ones are escaped. Ordinary
// text needs few (Vietnamese two, Indic and Tibetan clusters up to about
// four); "Zalgo" text stacks dozens to smear over the lines around it.
const maxCombining = 4

// Escape returns s as one line of text safe to show a human on a terminal
// and that hides nothing (the rules are writeEscaped's). Backslashes already
// in s are kept as they are, so JSON reads as sent.
func Escape(s string) string {
	var b strings.Builder
	writeEscaped(&b, s, false)
	return b.String()
}

// Quote returns s as a double-quoted string escaped like escape, with " and
// \ written \" and \\.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	writeEscaped(&b, s, true)
	b.WriteByte('"')
	return b.String()
}

// writeEscaped writes s to b: invalid bytes as \xNN, each rune that is not
// shown raw as its ASCII Go escape (\n, \x1b, \u034f, \U000e0041). A
// combining mark is shown raw only right after a letter or digit shown raw,
// or after another such mark, and only maxCombining of them in a row; a
// mark with no base (at the start, after a space, a symbol, punctuation or
// an escape) is escaped, and so is every mark after an escaped one.
func writeEscaped(b *strings.Builder, s string, quoted bool) {
	b.Grow(len(s))
	// base: the text so far ends in a letter or digit shown raw and then
	// marks combining marks shown raw.
	base, marks := false, 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
			base = false
		case quoted && (r == '"' || r == '\\'):
			b.WriteByte('\\')
			b.WriteRune(r)
			base = false
		case unicode.IsMark(r):
			if base && marks < maxCombining && visible(r) {
				b.WriteString(s[i : i+n])
				marks++
			} else {
				writeRuneEscape(b, r)
				base = false
			}
		case visible(r):
			b.WriteString(s[i : i+n])
			base, marks = unicode.IsLetter(r) || unicode.IsNumber(r), 0
		default:
			writeRuneEscape(b, r)
			base = false
		}
		i += n
	}
}

// writeRuneEscape writes r as its Go escape in ASCII: \a \b \f \n \r \t \v,
// \xNN below U+0080, \uNNNN, \UNNNNNNNN.
func writeRuneEscape(b *strings.Builder, r rune) {
	q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u202e', '\n'
	b.WriteString(q[1 : len(q)-1])
}

// visible reports whether a Terminal may print r as it is (combining marks
// further depend on what precedes them, see writeEscaped): the ASCII space,
// or a printable rune (letter, mark, number, punctuation, symbol: an
// assigned, graphic code point that is not a space, control, format
// character, surrogate or private use) that is neither default-ignorable
// nor a blank glyph.
func visible(r rune) bool {
	if r == ' ' {
		return true
	}
	if r < utf8.RuneSelf {
		return 0x21 <= r && r < 0x7f
	}
	return unicode.IsPrint(r) && !unicode.Is(unicode.Zs, r) && !defaultIgnorable(r) && !blank(r)
}

// defaultIgnorable reports whether r is a Default_Ignorable_Code_Point or
// close to one: Unicode defines the property (DerivedCoreProperties.txt)
// as Other_Default_Ignorable_Code_Point + Cf + Variation_Selector minus
// White_Space, U+FFF9..FFFB, U+13430..1343F and
// Prepended_Concatenation_Mark. The subtractions are not taken: they are
// format characters that a terminal shows as nothing or as an unrelated
// glyph, so escaping them errs on the safe side. Join_Control (ZWJ, ZWNJ)
// is in Cf and listed for clarity.
func defaultIgnorable(r rune) bool {
	return unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector, unicode.Join_Control)
}

// blank reports whether r is an assigned, printable rune that terminals
// draw as empty space without it being a space: the braille pattern blank,
// the Hangul fillers (also default-ignorable), the Khitan filler and the
// musical null notehead.
func blank(r rune) bool {
	switch r {
	case 0x2800, // BRAILLE PATTERN BLANK
		0x115f, 0x1160, 0x3164, 0xffa0, // HANGUL CHOSEONG / JUNGSEONG FILLER, HANGUL FILLER, HALFWIDTH HANGUL FILLER
		0x16fe4, // KHITAN SMALL SCRIPT FILLER
		0x1d159: // MUSICAL SYMBOL NULL NOTEHEAD
		return true
	}
	return false
}
