package gate

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text limits, in bytes, for strings recorded on spans.
const (
	// MaxNameBytes bounds names and identifiers (tool, agent, gate, run,
	// task and tool-call IDs, approver).
	MaxNameBytes = 256
	// MaxTextBytes bounds free text (reasons, recorded input and output)
	// unless the caller sets another limit.
	MaxTextBytes = 4096
)

// SafeText returns s as valid UTF-8 of at most max bytes (max <= 0 means
// MaxTextBytes), so that every string toolgate puts into a span attribute
// survives OTLP's protobuf encoding (which rejects invalid UTF-8 in string
// fields, failing the whole export batch).
//
// Each byte that is not part of a valid UTF-8 sequence is written as the
// four characters \xNN (lowercase hex), so an auditor still sees what the
// model sent; a backslash already in s is left as it is. A result longer
// than max keeps its head and tail around a marker
// "…[N bytes cut]…", cut at rune boundaries. A valid, short s is returned
// unchanged without allocating.
func SafeText(s string, max int) string {
	if max <= 0 {
		max = MaxTextBytes
	}
	if len(s) <= max && utf8.ValidString(s) {
		return s
	}
	if !utf8.ValidString(s) {
		s = escapeInvalid(s)
	}
	if len(s) <= max {
		return s
	}
	return Cut(s, max)
}

// escapeInvalid writes invalid bytes as \xNN.
func escapeInvalid(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString(`\x`)
			const hex = "0123456789abcdef"
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
			i++
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// Cut returns s (valid UTF-8) within max bytes: unchanged when it fits,
// else its head and tail around a marker "…[N bytes cut]…" (N the bytes
// left out), cut at rune boundaries, with combining marks at the start of
// the tail cut too so that none sits on the marker; only the head when max
// is too small for the marker. SafeText uses it; so does the terminal
// approver for the text it shows.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	marker := func(n int) string { return "…[" + strconv.Itoa(n) + " bytes cut]…" }
	m := len(marker(len(s)))
	if max <= m+2 {
		// Too small for a marker: keep the head only.
		return s[:runeStart(s, max)]
	}
	keep := max - m
	head := runeStart(s, keep/2+keep%2)
	tail := runeEnd(s, len(s)-keep/2)
	for tail < len(s) {
		r, n := utf8.DecodeRuneInString(s[tail:])
		if !unicode.IsMark(r) {
			break
		}
		tail += n
	}
	return s[:head] + marker(tail-head) + s[tail:]
}

func runeStart(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

func runeEnd(s string, i int) int {
	if i < 0 {
		i = 0
	}
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}
