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
			dsn = scheme + "u:" + secret + "@" + host + "?" + param + "=" + secret + "&secure=true"
		}
		red := RedactDSN(dsn)
		if strings.Contains(red, secret) {
			t.Fatalf("RedactDSN(%q) = %q shows the secret", dsn, red)
		}
		_, perr := url.Parse(dsn)
		msg := fmt.Sprintf("open %s: %v; decoded %s", dsn, perr, pass)
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
