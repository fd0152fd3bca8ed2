package audit

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// ProtocolError is returned by [Open] when the server at the DSN's address
// speaks another protocol than the DSN's scheme asks for (a clickhouse://
// DSN at ClickHouse's HTTP interface, http:// at an HTTPS server or at a
// server that is not ClickHouse, https:// at plain HTTP) or presents a
// certificate the client does not trust. It is found in seconds (one
// probe request, see Open), not after the driver's 30 s read timeout.
type ProtocolError struct {
	// Addr is the host:port tried.
	Addr string
	// Scheme is the DSN's scheme (clickhouse, tcp, http, https).
	Scheme string
	// Server says what answers at Addr, e.g. "ClickHouse's HTTP interface".
	Server string
	// Fix says what to change, e.g. "use http://reader:xxxxx@127.0.0.1:8123".
	Fix string
	// Err is the driver's error, when there was one.
	Err error
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("the DSN asks for %s, but %s answers at %s: %s", schemeName(e.Scheme), e.Server, e.Addr, e.Fix)
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// schemeName describes a DSN scheme for messages.
func schemeName(scheme string) string {
	switch scheme {
	case "http":
		return "ClickHouse's HTTP interface (http://)"
	case "https":
		return "ClickHouse's HTTP interface over TLS (https://)"
	}
	return "ClickHouse's native protocol (" + scheme + "://)"
}

// serverKind is what a probe found at an address.
type serverKind int

const (
	kindUnknown      serverKind = iota // no or no recognisable answer
	kindClickHouseHT                   // ClickHouse's HTTP interface: GET /ping answers "Ok."
	kindHTTPS                          // an HTTPS server (answers plain HTTP with its 400 message)
	kindNative                         // ClickHouse's native port (answers HTTP with its wrong-port message)
	kindOtherHTTP                      // an HTTP server that is not ClickHouse
	kindTLS                            // a TLS server that is not HTTP (answers with a TLS alert)
)

// probeTimeout bounds one probe: connect plus answer.
const probeTimeout = 5 * time.Second

// probe sends "GET /ping" over plain TCP to addr and classifies the answer.
// A dial failure is returned as the error; a silent or closed connection
// is kindUnknown. The request is harmless for every server: ClickHouse's
// native port answers it with an HTTP 400 naming its HTTP port.
func probe(ctx context.Context, addr string) (serverKind, string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return kindUnknown, "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := io.WriteString(c, "GET /ping HTTP/1.0\r\nHost: "+addr+"\r\nUser-Agent: toolgate-audit-probe\r\n\r\n"); err != nil {
		return kindUnknown, "", nil
	}
	buf, _ := io.ReadAll(io.LimitReader(c, 2048))
	kind, status := classify(buf)
	return kind, status, nil
}

// classify reads a probe's answer: the kind and the HTTP status line.
func classify(buf []byte) (serverKind, string) {
	if len(buf) == 0 {
		return kindUnknown, ""
	}
	if buf[0] == 0x15 || buf[0] == 0x16 { // TLS alert or handshake record
		return kindTLS, ""
	}
	if !bytes.HasPrefix(buf, []byte("HTTP/")) {
		return kindUnknown, ""
	}
	head, body, _ := bytes.Cut(buf, []byte("\r\n\r\n"))
	status, _, _ := bytes.Cut(head, []byte("\r\n"))
	switch {
	case bytes.Contains(body, []byte("HTTP request to an HTTPS server")):
		return kindHTTPS, string(status)
	case bytes.Contains(body, []byte("clickhouse-client")):
		return kindNative, string(status)
	case bytes.Contains(status, []byte(" 200")) && string(bytes.TrimSpace(body)) == "Ok.":
		return kindClickHouseHT, string(status)
	}
	return kindOtherHTTP, string(status)
}

// withScheme is dsn (redacted) with another scheme and, for https, the
// secure=true clickhouse-go needs; for http, without secure.
func withScheme(dsn, scheme string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return scheme + "://HOST:PORT"
	}
	u.Scheme = scheme
	q := u.Query()
	q.Del("secure")
	q.Del("skip_verify")
	if scheme == "https" {
		q.Set("secure", "true")
	}
	u.RawQuery = q.Encode()
	return RedactDSN(u.String())
}

// checkPorts refuses addresses without a port: clickhouse-go would fail
// later with "missing port in address" and no hint.
func checkPorts(dsn string, o *clickhouse.Options) error {
	for _, a := range o.Addr {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("%w %s: address %q has no port; ClickHouse's HTTP interface (and the embedded server `auditq serve`) is usually on 8123, e.g. %s, its native protocol on 9000 (clickhouse://HOST:9000)",
				ErrBadDSN, redact(dsn), a, withScheme(strings.Replace(dsn, a, a+":8123", 1), "http"))
		}
	}
	return nil
}

// explainDSNParse adds the fix to clickhouse-go's DSN parse errors.
func explainDSNParse(dsn string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "https without TLS"):
		return fmt.Errorf("%w %s: %v: a clickhouse-go https:// DSN needs secure=true, e.g. %s", ErrBadDSN, redact(dsn), err, withScheme(dsn, "https"))
	case strings.Contains(msg, "http with TLS"):
		return fmt.Errorf("%w %s: %v: secure=true needs https://, e.g. %s", ErrBadDSN, redact(dsn), err, withScheme(dsn, "https"))
	}
	return fmt.Errorf("%w %s: %s", ErrBadDSN, redact(dsn), ScrubDSN(err.Error(), dsn))
}

// probeNative runs before a native connection's ping: a native DSN at an
// HTTP server would otherwise wait for the driver's read timeout (30 s)
// and end with an i/o timeout or an unexpected packet. It returns an
// *UnreachableError when nothing listens (with a hint when ClickHouse's
// HTTP interface answers on the same host's port 8123), a *ProtocolError
// when another protocol answers, or nil to go on.
func probeNative(ctx context.Context, dsn, scheme, addr string, secure bool) error {
	kind, status, err := probe(ctx, addr)
	if err != nil {
		ue := &UnreachableError{Addr: addr, Err: err}
		if host, port, serr := net.SplitHostPort(addr); serr == nil && port != "8123" {
			alt := net.JoinHostPort(host, "8123")
			if k, _, perr := probe(ctx, alt); perr == nil && k == kindClickHouseHT {
				ue.Hint = fmt.Sprintf("ClickHouse's HTTP interface answers at %s (the embedded server `auditq serve` speaks HTTP only): use %s",
					alt, withScheme(strings.Replace(dsn, addr, alt, 1), "http"))
			}
		}
		return ue
	}
	pe := &ProtocolError{Addr: addr, Scheme: scheme}
	switch kind {
	case kindClickHouseHT:
		pe.Server, pe.Fix = "ClickHouse's HTTP interface", "use an http:// DSN, "+withScheme(dsn, "http")+" (the embedded server `auditq serve` speaks HTTP only)"
	case kindHTTPS:
		pe.Server, pe.Fix = "an HTTPS server", "use an https:// DSN, "+withScheme(dsn, "https")
	case kindOtherHTTP:
		pe.Server, pe.Fix = fmt.Sprintf("an HTTP server that is not ClickHouse (GET /ping: %s)", status),
			"check the port: ClickHouse's native protocol is usually on 9000, its HTTP interface on 8123 (http://)"
	case kindTLS:
		if secure {
			return nil
		}
		pe.Server, pe.Fix = "a TLS server", "add secure=true to the DSN (ClickHouse's native TLS port is usually 9440)"
	default:
		return nil
	}
	return pe
}

// explainHTTPPing turns an HTTP ping failure that is not a ClickHouse
// exception into a *ProtocolError when a probe (or the error itself) shows
// what answers instead; otherwise it returns nil.
func explainHTTPPing(ctx context.Context, dsn, scheme, addr string, err error) error {
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) || strings.Contains(err.Error(), "first record does not look like a TLS handshake") ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return &ProtocolError{Addr: addr, Scheme: scheme, Server: "a plain-HTTP server (no TLS)", Err: err,
			Fix: "use an http:// DSN without secure=true, " + withScheme(dsn, "http")}
	}
	var (
		ua  x509.UnknownAuthorityError
		he  x509.HostnameError
		ci  x509.CertificateInvalidError
		cve *tls.CertificateVerificationError
	)
	if errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci) || errors.As(err, &cve) {
		return &ProtocolError{Addr: addr, Scheme: scheme, Server: "an HTTPS server whose certificate this client does not trust (" + rootText(err) + ")", Err: err,
			Fix: "trust the CA that signed it (SSL_CERT_FILE=/path/ca.pem, or install it in the system's CA store); for a throwaway test server only, add skip_verify=true to the DSN"}
	}
	if isNetError(err) {
		return nil
	}
	kind, status, perr := probe(ctx, addr)
	if perr != nil {
		return nil
	}
	pe := &ProtocolError{Addr: addr, Scheme: scheme, Err: err}
	switch kind {
	case kindHTTPS:
		if scheme == "https" {
			return nil
		}
		pe.Server, pe.Fix = "an HTTPS server", "use an https:// DSN, "+withScheme(dsn, "https")+" (and trust its CA, e.g. SSL_CERT_FILE=/path/ca.pem)"
	case kindNative:
		pe.Server, pe.Fix = "ClickHouse's native protocol", "use a clickhouse:// DSN, "+withScheme(dsn, "clickhouse")+", or the server's HTTP port (usually 8123)"
	case kindOtherHTTP:
		pe.Server, pe.Fix = fmt.Sprintf("an HTTP server that is not ClickHouse (GET /ping: %s)", status),
			"check the host and port: ClickHouse's HTTP interface (and `auditq serve`) is usually on 8123"
	case kindTLS:
		if scheme == "https" {
			return nil
		}
		pe.Server, pe.Fix = "a TLS server", "use an https:// DSN, "+withScheme(dsn, "https")
	case kindUnknown:
		pe.Server, pe.Fix = "a server that does not answer HTTP", "check the host and port: ClickHouse's HTTP interface (and `auditq serve`) is usually on 8123"
	default:
		return nil
	}
	return pe
}

// rootText is the innermost error's text.
func rootText(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
