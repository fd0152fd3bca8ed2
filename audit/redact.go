package audit

import (
	"net/url"
	"strings"
)

// redactedSecret replaces a secret in messages.
const redactedSecret = "xxxxx"

// secretParams are the DSN query parameters whose values are secrets
// (compared case-insensitively). clickhouse-go reads username/password
// from the query as well as from the user-info part.
var secretParams = []string{"password", "pass", "passwd", "pwd", "secret", "token", "access_token", "jwt"}

// RedactDSN returns dsn with its secrets replaced by "xxxxx": the password of
// the user-info part (http://user:PASS@host, also without a scheme:
// user:PASS@host:port) and the values of the query parameters password, pass,
// passwd, pwd, secret, token, access_token and jwt, in any letter case. The
// rest of the DSN is kept byte for byte, so the message still shows the
// scheme, host, port, database and options the user gave. It never fails:
// a DSN it cannot split is returned with everything before its last '@'
// replaced.
func RedactDSN(dsn string) string {
	rest, query, hasQuery := strings.Cut(dsn, "?")
	scheme, authority := "", rest
	if i := strings.Index(rest, "://"); i >= 0 {
		scheme, authority = rest[:i+3], rest[i+3:]
	}
	path := ""
	if i := strings.IndexByte(authority, '/'); i >= 0 {
		authority, path = authority[:i], authority[i:]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		user, _, hasPass := strings.Cut(authority[:at], ":")
		if hasPass {
			authority = user + ":" + redactedSecret + authority[at:]
		}
	}
	out := scheme + authority + path
	if hasQuery {
		parts := strings.Split(query, "&")
		for i, p := range parts {
			k, _, ok := strings.Cut(p, "=")
			if ok && isSecretParam(k) {
				parts[i] = k + "=" + redactedSecret
			}
		}
		out += "?" + strings.Join(parts, "&")
	}
	return out
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
	var raw []string
	rest, query, _ := strings.Cut(dsn, "?")
	authority := rest
	if i := strings.Index(rest, "://"); i >= 0 {
		authority = rest[i+3:]
	}
	if i := strings.IndexByte(authority, '/'); i >= 0 {
		authority = authority[:i]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		if _, pass, ok := strings.Cut(authority[:at], ":"); ok {
			raw = append(raw, pass)
		}
	}
	for _, p := range strings.Split(query, "&") {
		if k, v, ok := strings.Cut(p, "="); ok && isSecretParam(k) {
			raw = append(raw, v)
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

func isSecretParam(k string) bool {
	if d, err := url.QueryUnescape(k); err == nil {
		k = d
	}
	for _, s := range secretParams {
		if strings.EqualFold(k, s) {
			return true
		}
	}
	return false
}
