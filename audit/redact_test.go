package audit

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

func TestRedactDSN(t *testing.T) {
	tests := []struct{ dsn, want string }{
		{"http://reader:s3cret@127.0.0.1:8123", "http://reader:xxxxx@127.0.0.1:8123"},
		{"http://127.0.0.1:8123/?username=writer&password=Pa55w0rdXYZ", "http://127.0.0.1:8123/?username=writer&password=xxxxx"},
		{"https://h:8443/otel?secure=true&PASSWORD=Pw&skip_verify=true", "https://h:8443/otel?secure=true&PASSWORD=xxxxx&skip_verify=true"},
		{"writer:PW@host:9000", "writer:xxxxx@host:9000"},
		{"clickhouse://u:p%40ss@h:9000/db?dial_timeout=1s", "clickhouse://u:xxxxx@h:9000/db?dial_timeout=1s"},
		{"clickhouse://u@h:9000", "clickhouse://u@h:9000"},
		{"http://h:8123?token=abc&x=1", "http://h:8123?token=xxxxx&x=1"},
		{"http://a:b:c@h:1", "http://a:xxxxx@h:1"},
		{"http://u:p@ss@h:1", "http://u:xxxxx@h:1"},
		// Unencoded '/', '?', '#' in the password (found by the red team:
		// the DSN does not parse, the message printed it).
		{"http://u:S3C/RET@127.0.0.1:1/db", "http://u:xxxxx@127.0.0.1:1/db"},
		{"clickhouse://u:a?b#c@h:9000/db?dial_timeout=1s", "clickhouse://u:xxxxx@h:9000/db?dial_timeout=1s"},
		{"http://h:1/?api_key=K&apikey=K2&auth_token=T&password%00=P&x=1", "http://h:1/?api_key=xxxxx&apikey=xxxxx&auth_token=xxxxx&password%00=xxxxx&x=1"},
		{"http://h:1/db#password=P", "http://h:1/db#xxxxx"},
		// An '@' in the query: the host is masked with the rest (less shown, nothing leaked).
		{"http://h:1/?user=a@b&password=P", "http://h:xxxxx@b&password=xxxxx"},
	}
	for _, tt := range tests {
		t.Run(tt.dsn, func(t *testing.T) {
			assert.Equal(t, tt.want, RedactDSN(tt.dsn))
		})
	}
}

// TestPropertyDSNSecretsNeverShow: whatever the DSN's shape (scheme or none,
// user-info or query parameters, any letter case, percent-encoding), neither
// RedactDSN nor ScrubDSN over the errors net/url and our own messages write
// lets the password through.
func TestPropertyDSNSecretsNeverShow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// A marker prefix keeps the password from matching the rest by chance.
		pass := "Pw" + rapid.StringMatching(`[A-Za-z0-9!$&'()*+,;=:@%._~/?#-]{1,24}`).Draw(t, "pass")
		param := rapid.SampledFrom([]string{"password", "pwd", "api_key", "auth_token", "access_token", "jwt", "secret"}).Draw(t, "param")
		if rapid.Bool().Draw(t, "upper") {
			param = strings.ToUpper(param)
		}
		scheme := rapid.SampledFrom([]string{"http://", "https://", "clickhouse://", "tcp://", ""}).Draw(t, "scheme")
		host := rapid.SampledFrom([]string{"127.0.0.1:8123", "h:9000", "[::1]:8123", "h"}).Draw(t, "host")
		encoded := rapid.Bool().Draw(t, "encoded")
		secret := pass
		if encoded {
			secret = url.QueryEscape(pass)
		}
		var dsn string
		switch rapid.IntRange(0, 2).Draw(t, "form") {
		case 0:
			dsn = scheme + "user:" + secret + "@" + host + "/otel?dial_timeout=1s"
		case 1:
			// A raw '&' or '#' cannot be part of a query value (they end it).
			if !encoded {
				secret = strings.NewReplacer("&", "", "#", "").Replace(secret)
			}
			dsn = scheme + host + "/?username=u&" + param + "=" + secret
		default:
			// The same secret in the user-info and the query: as in case 1,
			// and a raw '@' in the query would end the user-info there (the
			// DSN is then masked wider, see TestRedactDSN, and the test
			// could not tell which password an echo holds).
			if !encoded {
				secret = strings.NewReplacer("&", "", "#", "", "@", "").Replace(secret)
			}
			dsn = scheme + "u:" + secret + "@" + host + "?" + param + "=" + secret + "&secure=true"
		}
		red := RedactDSN(dsn)
		if strings.Contains(red, secret) {
			t.Fatalf("RedactDSN(%q) = %q shows the secret", dsn, red)
		}
		_, perr := url.Parse(dsn)
		// The decoded password as libraries echo credentials: a %+v dump of
		// an auth struct, a JSON field, a user-info rebuilt from parts. (A
		// password in the message's own prose is no credential: see
		// TestPropertyScrubKeepsTheMessagesWords.)
		dec := secret // as the DSN holds it, decoded
		if encoded {
			dec = pass
		}
		msg := fmt.Sprintf("open %s: %v; decoded {Username:u Password:%s} {\"password\":%q} u:%s@h", dsn, perr, dec, dec, dec)
		if s := ScrubDSN(msg, dsn); strings.Contains(s, secret) || (len(pass) > 0 && strings.Contains(s, pass) && decodes(secret, pass)) {
			t.Fatalf("ScrubDSN left the secret in %q", s)
		}
	})
}

func decodes(secret, pass string) bool {
	d1, e1 := url.QueryUnescape(secret)
	d2, e2 := url.PathUnescape(secret)
	return (e1 == nil && d1 == pass) || (e2 == nil && d2 == pass) || secret == pass
}

func TestScrubDSN(t *testing.T) {
	const prose = "no ClickHouse server at 127.0.0.1:1 (tried --dsn %s): connection refused; start the embedded one with `make demo` or `auditq serve --data-dir DIR`, or set --dsn / AUDITQ_DSN"
	tests := []struct{ name, dsn, text, want string }{
		{"prose around a redacted DSN keeps its words", "http://writer:w@127.0.0.1:1",
			fmt.Sprintf(prose, "http://writer:xxxxx@127.0.0.1:1"), fmt.Sprintf(prose, "http://writer:xxxxx@127.0.0.1:1")},
		{"the DSN echoed whole", "http://writer:w@127.0.0.1:1",
			fmt.Sprintf(prose, "http://writer:w@127.0.0.1:1"), fmt.Sprintf(prose, "http://writer:xxxxx@127.0.0.1:1")},
		{"net/url's quoted DSN", "http://u:a\"b@h:1",
			`parse "http://u:a\"b@h:1": bad`, `parse "http://u:xxxxx@h:1": bad`},
		{"user-info rebuilt", "clickhouse://writer:w@h:9000", "dial writer:w@h:9000 with writer", "dial writer:xxxxx@h:9000 with writer"},
		{"password parameter", "http://h:1/?username=writer&password=w", "query password=w&x=1 with w", "query password=xxxxx&x=1 with w"},
		{"struct dump and JSON", "http://u:Pw@h:1", `{Username:u Password:Pw} {"password":"Pw"} Pwned`, `{Username:u Password:xxxxx} {"password":"xxxxx"} Pwned`},
		{"percent-decoded", "http://u:p%40ss@h:1", "auth u:p@ss@h and p@ss", "auth u:xxxxx@h and p@ss"},
		{"fragment", "http://h:1/db#tok", "url http://h:1/db#tok: tok", "url http://h:1/db#xxxxx: tok"},
		{"prose key with a space is no credential", "http://u:ok@h:1", "credentials: ok", "credentials: ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ScrubDSN(tt.text, tt.dsn))
		})
	}
}

// TestPropertyScrubKeepsTheMessagesWords: with a short password of common
// letters (1–3), which occurs by chance inside the words of messages, the
// message's own words stay intact while every echo of the DSN (whole, its
// user-info, its password parameter) is still scrubbed.
func TestPropertyScrubKeepsTheMessagesWords(t *testing.T) {
	prose := []string{
		"no ClickHouse server at 127.0.0.1:1 (tried --dsn %s): dial tcp 127.0.0.1:1: connect: connection refused; start the embedded one with `make demo` or `auditq serve --data-dir DIR`, or set --dsn / AUDITQ_DSN",
		"ClickHouse at 127.0.0.1:8123 refused the credentials in AUDITQ_DSN %s (code 516: writer: Authentication failed: password is incorrect, or there is no user with such name); set the user and password in --dsn or AUDITQ_DSN, e.g. http://reader:PASS@127.0.0.1:8123",
		"audit: bad DSN %s: address \"h\" has no port; ClickHouse's HTTP interface (and the embedded server `auditq serve`) is usually on 8123",
		"credentials: the writer can insert; the reader can read (%s)",
	}
	rapid.Check(t, func(t *rapid.T) {
		pass := rapid.StringMatching(`[etaoinsrhldcuwmfgypbv]{1,3}`).Draw(t, "pass")
		user := rapid.SampledFrom([]string{"writer", "reader", "default"}).Draw(t, "user")
		var dsn, echo, scrubbed string
		switch rapid.IntRange(0, 3).Draw(t, "form") {
		case 0:
			dsn = "http://" + user + ":" + pass + "@127.0.0.1:8123"
			echo, scrubbed = dsn, "http://"+user+":xxxxx@127.0.0.1:8123"
		case 1:
			dsn = user + ":" + pass + "@127.0.0.1:9000"
			echo, scrubbed = "dial "+user+":"+pass+"@127.0.0.1:9000", "dial "+user+":xxxxx@127.0.0.1:9000"
		case 2:
			dsn = "http://127.0.0.1:8123/?username=" + user + "&password=" + pass
			echo, scrubbed = dsn, "http://127.0.0.1:8123/?username="+user+"&password=xxxxx"
		default:
			dsn = "clickhouse://" + user + ":" + pass + "@127.0.0.1:9000"
			echo, scrubbed = "{Username:"+user+" Password:"+pass+"}", "{Username:"+user+" Password:xxxxx}"
		}
		tmpl := rapid.SampledFrom(prose).Draw(t, "prose")
		got := ScrubDSN(fmt.Sprintf(tmpl, echo), dsn)
		if want := fmt.Sprintf(tmpl, scrubbed); got != want {
			t.Fatalf("ScrubDSN(_, %q)\n got %q\nwant %q", dsn, got, want)
		}
	})
}
