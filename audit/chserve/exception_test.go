package chserve_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ClickHouse/ch-go/compress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestExceptionCompressedAsAsked checks that an exception answers a request
// with compress=1 in ClickHouse compressed blocks, as every other answer
// does, and answers plain otherwise. clickhouse-go before v2.48 (the
// collector's clickhouse exporter v0.161.0 has v2.47) reads a non-200 body
// of a compressing connection only as compressed blocks: a plain exception
// surfaced as "data size should be 0 < N < …" instead of "Authentication
// failed".
func TestExceptionCompressedAsAsked(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	wrong := &testenv.ClickHouseUser{Name: ch.Writer.Name, Password: "not-" + ch.Writer.Password}
	tests := []struct {
		name       string
		call       httpCall
		wantStatus int
		wantCode   string
		wantText   string
		framed     bool
	}{
		{"wrong password, compress=1 (clickhouse-go lz4)", httpCall{user: wrong, query: q("compress", "1"), body: "SELECT 1"},
			403, "516", "writer: Authentication failed: password is incorrect", true},
		{"wrong password, compress=1, zstd", httpCall{user: wrong, query: q("compress", "1", "network_compression_method", "zstd"), body: "SELECT 1"},
			403, "516", "(AUTHENTICATION_FAILED)", true},
		{"no credentials, compress=1", httpCall{query: q("compress", "1"), body: "SELECT 1"},
			401, "194", "(REQUIRED_PASSWORD)", true},
		{"syntax error, compress=1", httpCall{user: &ch.Writer, query: q("compress", "1"), body: "SELECT 1 +"},
			400, "62", "(SYNTAX_ERROR)", true},
		{"wrong password, no compression", httpCall{user: wrong, body: "SELECT 1"},
			403, "516", "(AUTHENTICATION_FAILED)", false},
		{"wrong password, compress=0", httpCall{user: wrong, query: q("compress", "0"), body: "SELECT 1"},
			403, "516", "(AUTHENTICATION_FAILED)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := do(t, ch, tt.call)
			assert.Equal(t, tt.wantStatus, got.status)
			assert.Equal(t, tt.wantCode, got.code)
			assert.Equal(t, "text/plain; charset=UTF-8", got.header.Get("Content-Type"))
			assert.Empty(t, got.header.Get("Content-Encoding"))
			text := got.body
			if tt.framed {
				assert.False(t, strings.HasPrefix(got.body, "Code:"), "the exception must be inside compressed blocks")
				b, err := io.ReadAll(compress.NewReader(bytes.NewReader([]byte(got.body))))
				if err != nil && !errors.Is(err, io.EOF) {
					require.NoError(t, err, "the body is not ClickHouse compressed blocks")
				}
				text = string(b)
			}
			assert.Contains(t, text, "Code: "+tt.wantCode+". DB::Exception: ")
			assert.Contains(t, text, tt.wantText)
		})
	}
	// A bad HTTP method is an exception too.
	got := do(t, ch, httpCall{method: http.MethodPut, user: &ch.Writer, query: q("compress", "1")})
	assert.Equal(t, "36", got.code)
	b, err := io.ReadAll(compress.NewReader(bytes.NewReader([]byte(got.body))))
	if err != nil && !errors.Is(err, io.EOF) {
		require.NoError(t, err, "the body is not ClickHouse compressed blocks")
	}
	assert.Contains(t, string(b), "(BAD_ARGUMENTS)")
}
