package audit

import (
	"bytes"
	"testing"
)

// FuzzClassify: any answer is classified without panicking; only an
// answer that starts with a TLS record byte is TLS, only one that starts
// with "HTTP/" is an HTTP kind, and "Ok." from ClickHouse's /ping is
// recognised whatever the headers.
func FuzzClassify(f *testing.F) {
	f.Add([]byte("HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n\r\nOk.\n"))
	f.Add([]byte("HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"))
	f.Add([]byte("HTTP/1.0 400 Bad Request\r\n\r\nPort 9000 is for clickhouse-client program\nYou must use port 8123 for HTTP.\n"))
	f.Add([]byte{0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, _ := classify(b)
		isHTTP := bytes.HasPrefix(b, []byte("HTTP/"))
		switch kind {
		case kindTLS:
			if b[0] != 0x15 && b[0] != 0x16 {
				t.Fatalf("TLS from %q", b)
			}
		case kindClickHouseHT, kindHTTPS, kindNative, kindOtherHTTP:
			if !isHTTP {
				t.Fatalf("HTTP kind %d from %q", kind, b)
			}
		case kindUnknown:
			if isHTTP {
				t.Fatalf("unknown from an HTTP answer %q", b)
			}
		}
	})
}

func TestClassifyAnswers(t *testing.T) {
	tests := []struct {
		answer string
		want   serverKind
	}{
		{"HTTP/1.1 200 OK\r\nX-ClickHouse-Summary: {}\r\nContent-Length: 4\r\n\r\nOk.\n", kindClickHouseHT},
		{"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n", kindHTTPS},
		{"HTTP/1.0 400 Bad Request\r\n\r\nPort 9000 is for clickhouse-client program\nYou must use port 8123 for HTTP.\n", kindNative},
		{"HTTP/1.1 404 Not Found\r\n\r\n404 page not found\n", kindOtherHTTP},
		{"HTTP/1.1 200 OK\r\n\r\n{\"status\":\"Server available\"}", kindOtherHTTP},
		{"\x15\x03\x01\x00\x02\x02\x46", kindTLS},
		{"", kindUnknown},
		{"\x00\x01garbage", kindUnknown},
	}
	for _, tt := range tests {
		got, _ := classify([]byte(tt.answer))
		if got != tt.want {
			t.Errorf("classify(%q) = %d, want %d", tt.answer, got, tt.want)
		}
	}
}
