package audit

import (
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// redactedSecret replaces a secret in messages.
const redactedSecret = "xxxxx"

// secretParamWords mark a DSN query parameter as a secret when its name,
// percent-decoded and lower-cased, contains one of them (password, pwd,
// api_key, auth_token, access_token, jwt, …). It errs on the side of
// hiding: a masked harmless option costs a less precise message.
var secretParamWords = []string{"pass", "pwd", "secret", "token", "key", "auth", "cred", "jwt", "sig"}

// paramPattern finds name=value pairs wherever a query could start ('?' or
// '&'), also inside what splitDSN took for user-info when an '@' follows
// them: its value ends at '&' or '#'.
var paramPattern = regexp.MustCompile(`([?&])([^=&?#]*)=([^&#]*)`)

// maskParams replaces the values of secret parameters (isSecretParam)
// anywhere in s.
func maskParams(s string) string {
	return paramPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := paramPattern.FindStringSubmatch(m)
		if !isSecretParam(sub[2]) {
			return m
		}
		return sub[1] + sub[2] + "=" + redactedSecret
	})
}

// dsnParts is a DSN split for redaction: prefix is the scheme and "://"
// (or ""); user and pass the user-info (hasPass: a ':' was there); rest the
// host, port and path; query the raw query (hasQuery) and fragment the raw
// fragment (hasFragment).
type dsnParts struct {
	prefix, user, pass, rest, query, fragment string
	hasUser, hasPass, hasQuery, hasFragment   bool
}

// splitDSN splits dsn so that no secret can hide in a part it leaves in
// clear, whatever characters the password holds unencoded ('/', '?', '#',
// '@'): the user-info ends at the LAST '@' of the DSN (if the query holds
// an '@', the host and part of the query are masked with the password,
// which shows less but hides no secret); the query and the fragment are
// taken from what follows it.
func splitDSN(dsn string) dsnParts {
	var p dsnParts
	s := dsn
	if i := strings.Index(s, "://"); i >= 0 {
		p.prefix, s = s[:i+3], s[i+3:]
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		p.hasUser = true
		p.user, p.pass, p.hasPass = strings.Cut(s[:at], ":")
		s = s[at:] // keeps the '@'
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		p.fragment, p.hasFragment, s = s[i+1:], true, s[:i]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		p.query, p.hasQuery, s = s[i+1:], true, s[:i]
	}
	p.rest = s
	return p
}

// RedactDSN returns dsn with its secrets replaced by "xxxxx": the password of
// the user-info part (http://user:PASS@host, also without a scheme:
// user:PASS@host:port, and with '/', '?', '#' or '@' unencoded in PASS),
// the values of query parameters whose name suggests a secret (password,
// pwd, api_key, auth_token, access_token, jwt, … in any letter case and
// percent-encoding) and any #fragment. The rest is kept byte for byte, so
// the message still shows the scheme, host, port, database and options.
func RedactDSN(dsn string) string {
	p := splitDSN(dsn)
	var b strings.Builder
	b.WriteString(p.prefix)
	if p.hasUser {
		b.WriteString(p.user)
		if p.hasPass {
			b.WriteString(":" + redactedSecret)
		}
	}
	b.WriteString(p.rest)
	if p.hasQuery {
		parts := strings.Split(p.query, "&")
		for i, kv := range parts {
			if k, _, ok := strings.Cut(kv, "="); ok && isSecretParam(k) {
				parts[i] = k + "=" + redactedSecret
			}
		}
		b.WriteString("?" + strings.Join(parts, "&"))
	}
	if p.hasFragment {
		b.WriteString("#" + redactedSecret)
	}
	return maskParams(b.String())
}

// ScrubDSN returns text with the secrets of dsn (see RedactDSN) replaced by
// "xxxxx" where they appear as credentials: for error texts of libraries that
// quote the DSN they were given (net/url's parse errors do) or echo its parts.
// A secret counts as a credential, as written, percent-decoded, re-encoded or
// Go-quoted, where it is
//   - inside a copy of dsn itself (the copy is replaced by RedactDSN(dsn)),
//   - the password of a user-info (":SECRET@", with or without a scheme, or
//     ":SECRET" ending a word, as net/url quotes a DSN it cut short),
//   - the value of a secret-named parameter or field (password=SECRET,
//     Password:SECRET as in a %+v struct dump, "api_key":"SECRET"),
//   - dsn's #fragment echoed after a '#'.
//
// Anywhere else the text is kept byte for byte: with the password "w", the
// words "writer" and "with" of a message stay as they are.
func ScrubDSN(text, dsn string) string {
	if red := RedactDSN(dsn); red != dsn {
		text = strings.ReplaceAll(text, dsn, red)
		if q := strconv.Quote(dsn); q[1:len(q)-1] != dsn {
			rq := strconv.Quote(red)
			text = strings.ReplaceAll(text, q[1:len(q)-1], rq[1:len(rq)-1])
		}
	}
	for _, s := range dsnSecrets(dsn) {
		text = scrubSecret(text, s)
	}
	return text
}

// scrubSecret replaces the occurrences of s.value in text that stand where a
// credential does (see ScrubDSN).
func scrubSecret(text string, s dsnSecret) string {
	var b strings.Builder
	rest := text
	done := 0 // bytes of text already copied to b
	for {
		i := strings.Index(rest, s.value)
		if i < 0 {
			break
		}
		at := len(text) - len(rest) + i
		end := at + len(s.value)
		if isCredentialAt(text[:at], text[end:], s.fragment) {
			b.WriteString(text[done:at])
			b.WriteString(redactedSecret)
			done = end
			rest = text[end:]
			continue
		}
		rest = text[at+1:]
	}
	if done == 0 {
		return text
	}
	b.WriteString(text[done:])
	return b.String()
}

// isCredentialAt reports whether a secret between before and after stands
// where a credential does: a user-info password (":" before, "@" or the end
// of the word after), the
// value of a secret-named key (key=, key:, "key":", 'key'='), or, for a
// fragment, after a '#'.
func isCredentialAt(before, after string, fragment bool) bool {
	if strings.HasSuffix(before, ":") && (after == "" || after[0] == '@' || !isKeyByte(after[0])) {
		return true // user:SECRET@host, or net/url's echo of a DSN cut short (":SECRET" after a port)
	}
	if fragment && strings.HasSuffix(before, "#") {
		return true
	}
	return isSecretParam(keyBefore(before))
}

// keyBefore returns the key whose value starts right after before, or "":
// before must end with NAME, an optional quote, '=' or ':', and an optional
// quote (no space: prose such as "credentials: ok" is not a key).
func keyBefore(before string) string {
	s := strings.TrimRight(before, `"'`)
	if len(before)-len(s) > 1 {
		return ""
	}
	if !strings.HasSuffix(s, "=") && !strings.HasSuffix(s, ":") {
		return ""
	}
	s = s[:len(s)-1]
	if t := strings.TrimRight(s, `"'`); len(s)-len(t) <= 1 {
		s = t
	} else {
		return ""
	}
	i := len(s)
	for i > 0 && isKeyByte(s[i-1]) {
		i--
	}
	return s[i:]
}

// isKeyByte reports whether c may be part of a parameter or field name
// (percent-encoded names included).
func isKeyByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '%' ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// dsnSecret is one spelling of a secret of a DSN; fragment: it is (a
// spelling of) the DSN's #fragment.
type dsnSecret struct {
	value    string
	fragment bool
}

// dsnSecrets lists the secrets of dsn as written, percent-decoded,
// re-encoded and Go-quoted, longest first so a secret that contains another
// is replaced whole.
func dsnSecrets(dsn string) []dsnSecret {
	p := splitDSN(dsn)
	var raw []dsnSecret
	if p.hasPass {
		raw = append(raw, dsnSecret{value: p.pass})
	}
	if p.hasQuery {
		for _, kv := range strings.Split(p.query, "&") {
			if k, v, ok := strings.Cut(kv, "="); ok && isSecretParam(k) {
				raw = append(raw, dsnSecret{value: v})
			}
		}
	}
	if p.hasFragment {
		raw = append(raw, dsnSecret{value: p.fragment, fragment: true})
	}
	for _, m := range paramPattern.FindAllStringSubmatch(dsn, -1) {
		if isSecretParam(m[2]) {
			raw = append(raw, dsnSecret{value: m[3]})
		}
	}
	seen := map[dsnSecret]bool{}
	var out []dsnSecret
	add := func(s dsnSecret) {
		if s.value != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range raw {
		forms := []string{s.value}
		for _, unescape := range []func(string) (string, error){url.PathUnescape, url.QueryUnescape} {
			if d, err := unescape(s.value); err == nil {
				forms = append(forms, d, url.QueryEscape(d), url.PathEscape(d))
			}
		}
		for _, f := range forms {
			add(dsnSecret{value: f, fragment: s.fragment})
			q := strconv.Quote(f)
			add(dsnSecret{value: q[1 : len(q)-1], fragment: s.fragment})
		}
	}
	// Longest first: a secret that contains another is replaced whole.
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].value) > len(out[j].value) })
	return out
}

// isSecretParam reports whether the query parameter named k (raw) holds a
// secret (secretParamWords).
func isSecretParam(k string) bool {
	if d, err := url.QueryUnescape(k); err == nil {
		k = d
	}
	k = strings.ToLower(k)
	for _, w := range secretParamWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
