package executor

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Redaction patterns (compiled once, read-only).
var (
	reKeyValue = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:api[_-]?key|token|secret|passw(?:or)?d|pwd|credential|private[_-]?key|access[_-]?key|auth)[A-Za-z0-9_.-]*)("?\s*[:=]\s*"?)([^\s"'&,;\[]+|\[REDACTED\])`)
	reFlag     = regexp.MustCompile(`(?i)(--?(?:password|passwd|token|api-key|apikey|secret|auth-token)[= ]+)("[^"]*"|'[^']*'|\S+)`)
	reBearer   = regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}`)
	reURLCred  = regexp.MustCompile(`(://[^/\s:@]+):[^@\s/]+@`)
	reShapes   = regexp.MustCompile(`\b(?:sk-[A-Za-z0-9_-]{16,}|sk_(?:live|test)_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`)
	rePEM      = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`)
)

const redacted = "[REDACTED]"

// Redact is the default redactor: it masks values of key=value and
// "key": "value" pairs whose key names a credential (token, secret,
// password, api key, auth…), --password/--token style flags, bearer and
// basic credentials, passwords in URLs, PEM private keys, and well-known
// token shapes (OpenAI/Stripe sk-, GitHub gh*_ and github_pat_, GitLab
// glpat-, Slack xox*-, AWS AKIA…, Google AIza…, JWTs). It is a heuristic,
// not a guarantee: use WithRedactor for a stricter one.
func Redact(s string) string {
	if s == "" {
		return s
	}
	s = rePEM.ReplaceAllString(s, redacted)
	s = reURLCred.ReplaceAllString(s, "$1:"+redacted+"@")
	s = reBearer.ReplaceAllString(s, "$1 "+redacted)
	s = reFlag.ReplaceAllString(s, "${1}"+redacted)
	s = redactKeyValues(s)
	s = reShapes.ReplaceAllString(s, redacted)
	return s
}

// redactKeyValues masks credential-named values, leaving a scheme word
// ("Authorization: Bearer [REDACTED]") and already masked values alone.
func redactKeyValues(s string) string {
	idx := reKeyValue.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		vs, ve := m[6], m[7]
		v := s[vs:ve]
		switch strings.ToLower(v) {
		case "bearer", "basic", "token", "[redacted]":
			continue
		}
		b.WriteString(s[last:vs])
		b.WriteString(redacted)
		last = ve
	}
	b.WriteString(s[last:])
	return b.String()
}

// truncate cuts s to at most max bytes, keeping about 70% head and 30% tail
// around a marker that says how many bytes were cut; cuts fall on UTF-8
// boundaries. It returns the result and the number of bytes cut: s and 0
// when s fits or max <= 0 (no cap).
func truncate(s string, max int) (string, int) {
	if max <= 0 || len(s) <= max {
		return s, 0
	}
	cut := len(s) - max
	var marker string
	for range 3 { // the marker's length depends on the digits of cut
		marker = "\n[... truncated " + strconv.Itoa(cut) + " bytes ...]\n"
		keep := max - len(marker)
		if keep < 0 {
			keep = 0
		}
		cut = len(s) - keep
	}
	keep := len(s) - cut
	if keep <= 0 {
		// No room for a marker: a bare head cut.
		h := runeStart(s, max)
		return s[:h], len(s) - h
	}
	head := runeStart(s, keep*7/10)
	tail := runeEnd(s, len(s)-(keep-head))
	out := s[:head] + marker + s[tail:]
	return out, len(s) - head - (len(s) - tail)
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// runeEnd moves i forward to the start of the next rune.
func runeEnd(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}
