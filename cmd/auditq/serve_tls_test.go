package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testenv"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// (PEM) into dir and returns their paths and a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	c := testenv.SelfSignedCert(t, "auditq serve test")
	certFile, keyFile = c.Files(t, dir)
	return certFile, keyFile, c.Pool
}

// integrationLibchdb is $TOOLGATE_LIBCHDB under TOOLGATE_INTEGRATION=1;
// the test is skipped otherwise.
func integrationLibchdb(t *testing.T) string {
	t.Helper()
	if os.Getenv("TOOLGATE_INTEGRATION") != "1" {
		t.Skip("integration test: set TOOLGATE_INTEGRATION=1 and TOOLGATE_LIBCHDB")
	}
	lib := resolveLibchdb("")
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("libchdb.so: %v (set TOOLGATE_LIBCHDB or run make deps)", err)
	}
	return lib
}

var listeningRE = regexp.MustCompile(`listening on (https?)://(\S+) \(([^;]*);`)

// TestServeTLS runs `auditq serve` with a self-signed certificate and
// queries the real engine over HTTPS: net/http and clickhouse-go trusting
// the certificate, then the errors a plain http:// DSN and an untrusted
// https:// DSN give.
func TestServeTLS(t *testing.T) {
	lib := integrationLibchdb(t)
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	t.Setenv(serveUsersEnv, "writer:wpass:rw,reader:rpass:ro")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb testenv.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--data-dir", filepath.Join(dir, "data"), "--libchdb", lib,
			"--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	}()
	var m []string
	require.Eventually(t, func() bool { m = listeningRE.FindStringSubmatch(out.String()); return m != nil },
		60*time.Second, 50*time.Millisecond, "serve did not start: %s %s", out.String(), errb.String())
	require.Equal(t, "https", m[1])
	require.Equal(t, "users (2), TLS, loopback", m[3], "the access mode is printed at start")
	addr := m[2]

	// net/http trusting the certificate: a query through the engine.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/?query="+url.QueryEscape("SELECT number * 7 FROM system.numbers LIMIT 3"), nil)
	require.NoError(t, err)
	req.SetBasicAuth("reader", "rpass")
	resp, err := client.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "0\n7\n14\n", string(body))

	// clickhouse-go over HTTPS: DDL, insert and read back as the writer.
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, Protocol: clickhouse.HTTP,
		Auth: clickhouse.Auth{Username: "writer", Password: "wpass"}, TLS: &tls.Config{RootCAs: pool}})
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.Exec(ctx, "CREATE TABLE tls_t (n UInt32) ENGINE = MergeTree ORDER BY n"))
	require.NoError(t, conn.Exec(ctx, "INSERT INTO tls_t SELECT number FROM system.numbers LIMIT 1000"))
	var sum uint64
	require.NoError(t, conn.QueryRow(ctx, "SELECT sum(n) FROM tls_t").Scan(&sum))
	assert.Equal(t, uint64(499500), sum)

	// Plain HTTP to the HTTPS server: named, with the https DSN to use.
	var qout strings.Builder
	code, stderr := execAuditqW(t, ctx, &qout, "decisions", "--dsn", "http://reader:rpass@"+addr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "an HTTPS server answers at "+addr)
	assert.Contains(t, stderr, "use an https:// DSN, https://reader:xxxxx@"+addr+"?secure=true")
	assert.NotContains(t, stderr, "rpass")

	// https:// without trusting the self-signed certificate.
	code, stderr = execAuditqW(t, ctx, &qout, "decisions", "--dsn", "https://reader:rpass@"+addr+"?secure=true")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "certificate this client does not trust")
	assert.Contains(t, stderr, "SSL_CERT_FILE")

	cancel()
	select {
	case c := <-done:
		assert.Equal(t, 0, c, errb.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func execAuditqW(t *testing.T, ctx context.Context, out io.Writer, args ...string) (int, string) {
	t.Helper()
	var errb strings.Builder
	code := run(ctx, args, stdio{in: strings.NewReader(""), out: out, err: &errb})
	return code, errb.String()
}
