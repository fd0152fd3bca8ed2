package audit

import (
	"net/url"
	"regexp"
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

// ScrubDSN returns text with every secret of dsn (see RedactDSN), as written
// and percent-decoded, replaced by "xxxxx": for error texts of libraries that
// quote the DSN they were given (net/url's parse errors do).
func ScrubDSN(text, dsn string) string {
	for _, s := range dsnSecrets(dsn) {
		text = strings.ReplaceAll(text, s, redactedSecret)
	}
	return text
}

// dsnSecrets lists the secrets of dsn, raw and decoded, longest first so a
// secret that contains another is replaced whole.
func dsnSecrets(dsn string) []string {
	p := splitDSN(dsn)
	var raw []string
	if p.hasPass {
		raw = append(raw, p.pass)
	}
	if p.hasQuery {
		for _, kv := range strings.Split(p.query, "&") {
			if k, v, ok := strings.Cut(kv, "="); ok && isSecretParam(k) {
				raw = append(raw, v)
			}
		}
	}
	if p.hasFragment {
		raw = append(raw, p.fragment)
	}
	for _, m := range paramPattern.FindAllStringSubmatch(dsn, -1) {
		if isSecretParam(m[2]) {
			raw = append(raw, m[3])
		}
	}
	var out []string
	for _, s := range raw {
		if s == "" {
			continue
		}
		out = append(out, s)
		for _, unescape := range []func(string) (string, error){url.PathUnescape, url.QueryUnescape} {
			if d, err := unescape(s); err == nil && d != s && d != "" {
				out = append(out, d)
			}
		}
	}
	// Longest first: a secret that contains another is replaced whole.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
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
