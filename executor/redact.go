package executor

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Redaction patterns (compiled once, read-only). Each masks only the
// secret's own characters: an unquoted value stops at whitespace, quotes
// and shell punctuation (; & | < > ( ) `), and a PEM key at the first
// character that cannot be in one — the model's text around a secret is
// kept, whatever it contains.
var (
	reKeyValue = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:api[_-]?key|token|secret|passw(?:or)?d|pwd|credential|private[_-]?key|access[_-]?key|auth)[A-Za-z0-9_.-]*)("?\s*[:=]\s*"?)([^\s"'&,;|<>()` + "`" + `\[]+|\[REDACTED\])`)
	reFlag     = regexp.MustCompile(`(?i)(--?(?:password|passwd|token|api-key|apikey|secret|auth-token)[= ]+)("[^"]*"|'[^']*'|[^\s;&|<>()` + "`" + `]+)`)
	reBearer   = regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}`)
	reURLCred  = regexp.MustCompile(`(://[^/\s:@]+):[^@\s/]+@`)
	reShapes   = regexp.MustCompile(`\b(?:sk-[A-Za-z0-9_-]{16,}|sk_(?:live|test)_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`)
	// rePEM is a whole PEM private key: its BEGIN line, optional
	// RFC 1421 headers of encrypted keys, a body of base64 and whitespace
	// only, and its END line.
	rePEM = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----(?:\s*(?:Proc-Type|DEK-Info):[ \t]*[A-Za-z0-9,-]+)*[A-Za-z0-9+/=\s]*-----END [A-Z ]*PRIVATE KEY-----`)
	// rePEMHead is a PEM private key without its END line (cut, or a
	// bare header): its BEGIN line and the whole lines of base64 that
	// follow it (see pemBody); nothing else.
	rePEMHead = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)
)

const redacted = "[REDACTED]"

// Redact is the default redactor: it masks values of key=value and
// "key": "value" pairs whose key names a credential (token, secret,
// password, api key, auth…), --password/--token style flags, bearer and
// basic credentials, passwords in URLs, PEM private keys, and well-known
// token shapes (OpenAI/Stripe sk-, GitHub gh*_ and github_pat_, GitLab
// glpat-, Slack xox*-, AWS AKIA…, Google AIza…, JWTs). It masks only a
// secret's own characters, never the text after it (a PEM header without
// its END line masks that line and the whole base64 lines under it, not
// the rest of the string). A path's last segment followed by ": " and
// prose ("cat ../.aws/credentials: reads AWS credentials", a classifier's
// reason) is not a key-value pair (see pathMessage). It is a heuristic,
// not a guarantee: use
// WithRedactor for a stricter one.
func Redact(s string) string {
	if s == "" {
		return s
	}
	s = rePEM.ReplaceAllString(s, redacted)
	s = redactPEMHeads(s)
	s = reURLCred.ReplaceAllString(s, "$1:"+redacted+"@")
	s = reBearer.ReplaceAllString(s, "$1 "+redacted)
	s = reFlag.ReplaceAllString(s, "${1}"+redacted)
	s = redactKeyValues(s)
	s = reShapes.ReplaceAllString(s, redacted)
	return s
}

// redactPEMHeads masks each PEM private-key BEGIN line left without its
// END line, with the lines of its body that follow it (pemBody).
func redactPEMHeads(s string) string {
	idx := rePEMHead.FindAllStringIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		if m[0] < last {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(redacted)
		last = pemBody(s, m[1])
	}
	b.WriteString(s[last:])
	return b.String()
}

// pemBody returns the end of the key body that starts at i, right after a
// BEGIN line: the lines that follow it, each a newline and then only
// base64 characters up to the next newline or the end of s (a trailing
// \r allowed). It stops before the first line that holds anything else,
// so no text after a key is masked; the newline before that line is kept.
func pemBody(s string, i int) int {
	end := i
	for {
		j := end
		if j < len(s) && s[j] == '\r' {
			j++
		}
		if j >= len(s) || s[j] != '\n' {
			return end
		}
		j++
		k := j
		for k < len(s) && isBase64(s[k]) {
			k++
		}
		if k == j {
			return end
		}
		if k < len(s) && s[k] == '\r' {
			k++
		}
		if k < len(s) && s[k] != '\n' {
			return end
		}
		end = k
	}
}

// isBase64 reports whether c is a character of standard base64.
func isBase64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
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
		if pathMessage(s, m) {
			continue
		}
		b.WriteString(s[last:vs])
		b.WriteString(redacted)
		last = ve
	}
	b.WriteString(s[last:])
	return b.String()
}

// pathMessage reports whether a key-value match m in s is a file path
// followed by a message ("cat ../.aws/credentials: reads AWS
// credentials", a classifier's reason), not a credential: the key is a
// path's last segment (right after "/"), the separator is ":" and
// whitespace, and the value is a lower-case word that prose continues
// (a space and more text follow). A value with a digit, capital or
// punctuation, one that ends its line, and "=" pairs are still masked.
func pathMessage(s string, m []int) bool {
	ks, ss, se, vs, ve := m[2], m[4], m[5], m[6], m[7]
	if ks == 0 || s[ks-1] != '/' {
		return false
	}
	if sep := s[ss:se]; !strings.HasPrefix(sep, ":") || strings.TrimLeft(sep[1:], " \t") != "" || len(sep) < 2 {
		return false
	}
	for i := vs; i < ve; i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return ve+1 < len(s) && s[ve] == ' ' && s[ve+1] != ' ' && s[ve+1] != '\n'
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
