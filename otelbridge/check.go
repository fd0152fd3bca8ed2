package otelbridge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/net/http2"
)

// DefaultCheckTimeout bounds [Check] when its context has no earlier
// deadline, and the check [Setup] runs.
const DefaultCheckTimeout = 2 * time.Second

// Kinds of [CheckError], for errors.Is.
var (
	// ErrTLSMismatch: the exporter and the collector disagree on TLS: the
	// exporter uses TLS and the collector answered plaintext, or the
	// reverse.
	ErrTLSMismatch = errors.New("TLS/plaintext mismatch")
	// ErrCertificate: the collector speaks TLS but its certificate is not
	// trusted by the exporter's TLS configuration.
	ErrCertificate = errors.New("collector certificate not trusted")
	// ErrNotGRPC: the collector answered, but not with HTTP/2 (gRPC): for
	// example an OTLP/HTTP port (4318) or another HTTP/1.x server.
	ErrNotGRPC = errors.New("not an OTLP/gRPC endpoint")
	// ErrUnreachable: no connection, or the peer closed it or stayed
	// silent without saying what it speaks. The collector may be down or
	// not started yet.
	ErrUnreachable = errors.New("collector unreachable")
	// ErrHandshake: the TLS handshake failed for another reason (for
	// example the collector requires a client certificate).
	ErrHandshake = errors.New("TLS handshake failed")
)

// CheckError is what [Check] returns: what was tried, what the collector
// answered, and what to do. It wraps its Kind (one of the Err* values of
// this file) and the network or TLS error, if any.
type CheckError struct {
	// Endpoint is the collector's host:port as the exporter dials it.
	Endpoint string
	// TLS is whether the exporter uses TLS (false: plaintext gRPC).
	TLS bool
	// Kind is ErrTLSMismatch, ErrCertificate, ErrNotGRPC, ErrUnreachable,
	// ErrHandshake or ErrUnauthenticated.
	Kind error
	// Answer describes what the collector did, e.g. "answered plaintext
	// HTTP/2 (gRPC without TLS)".
	Answer string
	// Fix says what to change.
	Fix string
	// Err is the underlying network or TLS error, or nil.
	Err error
}

func (e *CheckError) Error() string {
	mode := "plaintext gRPC (Insecure)"
	if e.TLS {
		mode = "TLS"
	}
	msg := fmt.Sprintf("otelbridge: %s: the exporter uses %s and the collector at %s %s", e.Kind, mode, e.Endpoint, e.Answer)
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	if e.Fix != "" {
		msg += ": " + e.Fix
	}
	return msg
}

// Unwrap returns the kind and the underlying error.
func (e *CheckError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// definite reports whether err is a configuration error that no retry can
// fix: Setup refuses to start on it.
func definite(err error) bool {
	return errors.Is(err, ErrTLSMismatch) || errors.Is(err, ErrCertificate) || errors.Is(err, ErrNotGRPC) ||
		errors.Is(err, ErrUnauthenticated)
}

// Fixes named by CheckError.
const (
	fixUsePlaintext = "set Config.Insecure = true, or OTEL_EXPORTER_OTLP_INSECURE=true, or an http:// endpoint " +
		"(OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:PORT); or give the collector's OTLP receiver a certificate (tls: cert_file, key_file)"
	fixUseTLS = "remove Config.Insecure and OTEL_EXPORTER_OTLP_INSECURE, use an https:// endpoint and trust the collector's " +
		"certificate (Config.TLS with RootCAs, or OTEL_EXPORTER_OTLP_CERTIFICATE=ca.pem)"
	fixTrust = "trust the collector's CA (Config.TLS with RootCAs, or OTEL_EXPORTER_OTLP_CERTIFICATE=ca.pem) " +
		"or give the collector a certificate for this host name"
	fixNotGRPC = "point the exporter at the collector's OTLP/gRPC receiver (port 4317 by default; 4318 is OTLP/HTTP)"
	fixStart   = "start the collector or set Config.Endpoint / OTEL_EXPORTER_OTLP_ENDPOINT; spans queue meanwhile " +
		"and are lost if it never answers"
	// fixStartSpool is fixStart with the spool on (Config.Spool.Dir).
	fixStartSpool = "start the collector or set Config.Endpoint / OTEL_EXPORTER_OTLP_ENDPOINT; spans wait in the spool " +
		"(Config.Spool.Dir) meanwhile and are sent when it answers"
)

// target is where and how the trace exporter connects.
type target struct {
	addr      string // host:port to dial; "" when not a TCP target
	tls       bool
	tlsConfig *tls.Config // nil: system roots
	err       error       // reading the environment failed
}

// resolveTarget mirrors how otlptracegrpc reads its endpoint and transport
// security: the OTEL_EXPORTER_OTLP_* variables first (ENDPOINT then
// TRACES_ENDPOINT, whose http:// or https:// scheme sets plaintext or TLS;
// CERTIFICATE and CLIENT_* files; INSECURE), then the Config fields
// (Endpoint, Insecure, TLS). A TLS configuration, from Config or the
// environment, wins over Insecure, as in the exporter.
func resolveTarget(cfg Config) target {
	endpoint := "localhost:4317"
	insecure := false
	var tlsConf *tls.Config
	var errs []error
	envURL := func(name string) {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			return
		}
		u, err := url.Parse(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, v, err))
			return
		}
		insecure = strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "unix")
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
			endpoint = u.Host
		case "":
			endpoint = v
		default:
			endpoint = v // unix:, dns:///: not checked
		}
	}
	envURL("OTEL_EXPORTER_OTLP_ENDPOINT")
	envURL("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	for _, prefix := range []string{"OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_TRACES_"} {
		if f := os.Getenv(prefix + "CERTIFICATE"); f != "" {
			pem, err := os.ReadFile(f)
			pool := x509.NewCertPool()
			if err == nil && !pool.AppendCertsFromPEM(pem) {
				err = errors.New("no PEM certificate in it")
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%sCERTIFICATE=%s: %w", prefix, f, err))
				continue
			}
			if tlsConf == nil {
				tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			tlsConf.RootCAs = pool
		}
		if c, k := os.Getenv(prefix+"CLIENT_CERTIFICATE"), os.Getenv(prefix+"CLIENT_KEY"); c != "" && k != "" {
			pair, err := tls.LoadX509KeyPair(c, k)
			if err != nil {
				errs = append(errs, fmt.Errorf("%sCLIENT_CERTIFICATE: %w", prefix, err))
				continue
			}
			if tlsConf == nil {
				tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			tlsConf.Certificates = []tls.Certificate{pair}
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE"} {
		if v := os.Getenv(name); v != "" {
			insecure = strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	if cfg.Endpoint != "" {
		if strings.Contains(cfg.Endpoint, "://") {
			u, err := url.Parse(cfg.Endpoint)
			if err != nil {
				return target{err: fmt.Errorf("Config.Endpoint %q: %w", cfg.Endpoint, err)}
			}
			endpoint, insecure = u.Host, !strings.EqualFold(u.Scheme, "https")
		} else {
			endpoint = cfg.Endpoint
		}
	}
	if cfg.Insecure {
		insecure = true
	}
	if cfg.TLS != nil {
		tlsConf = cfg.TLS
	}
	t := target{tls: tlsConf != nil || !insecure, tlsConfig: tlsConf, err: errors.Join(errs...)}
	if strings.Contains(endpoint, "://") || strings.HasPrefix(endpoint, "unix:") {
		return t // not a TCP address: the check does not apply
	}
	if _, _, err := net.SplitHostPort(endpoint); err != nil {
		endpoint = net.JoinHostPort(endpoint, "443") // gRPC's default port
	}
	t.addr = endpoint
	return t
}

// Check connects once to the OTLP/gRPC collector that [Setup] with cfg
// would export to (Config first, then the OTEL_EXPORTER_OTLP_* variables,
// as the exporter reads them) and finds out whether it speaks what the
// exporter will speak: TLS or plaintext HTTP/2. When it does, Check sends
// one empty OTLP ExportTraceServiceRequest (no spans: the collector stores
// nothing) with the exporter's gRPC settings and headers, to find out
// whether the collector accepts the exporter's credentials.
//
// It returns nil when the collector answered as expected (plaintext: an
// HTTP/2 SETTINGS frame; TLS: a completed handshake with a trusted
// certificate) and did not refuse the empty export as Unauthenticated or
// PermissionDenied, else a *[CheckError] wrapping ErrTLSMismatch,
// ErrCertificate, ErrNotGRPC, ErrUnreachable, ErrHandshake or
// ErrUnauthenticated (the fix: send the collector's token in
// OTEL_EXPORTER_OTLP_HEADERS or Config.Headers), whose message
// names the endpoint, what it answered and the fix. ctx bounds it, and
// [DefaultCheckTimeout] when ctx has no earlier deadline. An endpoint that
// is not a TCP address (unix:, a gRPC resolver URL) is not checked: nil.
func Check(ctx context.Context, cfg Config) error {
	t := resolveTarget(cfg)
	if t.err != nil {
		return fmt.Errorf("otelbridge: Check: %w", t.err)
	}
	if t.addr == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultCheckTimeout)
	defer cancel()
	var err error
	if t.tls {
		err = checkTLS(ctx, t)
	} else {
		err = checkPlaintext(ctx, t)
	}
	if ce, ok := errors.AsType[*CheckError](err); ok && ce.Fix == fixStart && cfg.Spool.Dir != "" {
		ce.Fix = fixStartSpool
	}
	if err != nil {
		return err
	}
	return checkAuth(ctx, cfg, t)
}

func dial(ctx context.Context, t target) (net.Conn, *CheckError) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, &CheckError{Endpoint: t.addr, TLS: t.tls, Kind: ErrUnreachable,
			Answer: "did not accept a connection", Fix: fixStart, Err: err}
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	return conn, nil
}

// checkPlaintext sends the HTTP/2 client preface and a SETTINGS frame and
// reads the first bytes of the answer: a gRPC server answers with its own
// SETTINGS frame; a TLS server closes the connection or sends an alert.
func checkPlaintext(ctx context.Context, t target) error {
	conn, cerr := dial(ctx, t)
	if cerr != nil {
		return cerr
	}
	defer conn.Close()
	// A write error (the peer closed at once) shows in the read below.
	if _, err := io.WriteString(conn, http2.ClientPreface); err == nil {
		_ = http2.NewFramer(conn, nil).WriteSettings()
	}
	br := bufio.NewReader(conn)
	head, err := br.Peek(9)
	switch {
	case len(head) >= 5 && bytes.HasPrefix(head, []byte("HTTP/")):
		return &CheckError{Endpoint: t.addr, Kind: ErrNotGRPC, Answer: "answered HTTP/1.x, not HTTP/2", Fix: fixNotGRPC}
	case len(head) > 0 && head[0] == 0x15: // a TLS alert record
		return &CheckError{Endpoint: t.addr, Kind: ErrTLSMismatch, Answer: "answered with a TLS alert", Fix: fixUseTLS}
	case err == nil:
		f, ferr := http2.NewFramer(nil, br).ReadFrame()
		if _, ok := f.(*http2.SettingsFrame); ferr == nil && ok {
			return nil
		}
		return &CheckError{Endpoint: t.addr, Kind: ErrNotGRPC,
			Answer: fmt.Sprintf("answered % x…, not an HTTP/2 SETTINGS frame", head), Fix: fixNotGRPC, Err: ferr}
	}
	// Closed or silent: does it speak TLS?
	if speaksTLS(ctx, t) {
		return &CheckError{Endpoint: t.addr, Kind: ErrTLSMismatch,
			Answer: "speaks TLS (it closed the plaintext connection and answered a TLS hello)", Fix: fixUseTLS}
	}
	return &CheckError{Endpoint: t.addr, Kind: ErrUnreachable,
		Answer: "closed the connection or stayed silent", Fix: fixStart, Err: err}
}

// speaksTLS opens a second connection and reports whether the peer
// answers a TLS ClientHello with a TLS record (handshake or alert).
func speaksTLS(ctx context.Context, t target) bool {
	conn, cerr := dial(ctx, t)
	if cerr != nil {
		return false
	}
	defer conn.Close()
	rc := &firstBytes{Conn: conn}
	host, _, _ := net.SplitHostPort(t.addr)
	_ = tls.Client(rc, &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}).HandshakeContext(ctx)
	return rc.isTLS()
}

// checkTLS performs the handshake the exporter will perform.
func checkTLS(ctx context.Context, t target) error {
	conn, cerr := dial(ctx, t)
	if cerr != nil {
		return cerr
	}
	defer conn.Close()
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.tlsConfig != nil {
		conf = t.tlsConfig.Clone()
	}
	if conf.ServerName == "" {
		conf.ServerName, _, _ = net.SplitHostPort(t.addr)
	}
	conf.NextProtos = []string{"h2"}
	rc := &firstBytes{Conn: conn}
	err := tls.Client(rc, conf).HandshakeContext(ctx)
	if err == nil {
		return nil
	}
	var verr *tls.CertificateVerificationError
	var rerr tls.RecordHeaderError
	switch {
	case errors.As(err, &verr):
		return &CheckError{Endpoint: t.addr, TLS: true, Kind: ErrCertificate,
			Answer: "presented a certificate the exporter does not trust", Fix: fixTrust, Err: err}
	case len(rc.head) > 0 && !rc.isTLS(), errors.As(err, &rerr):
		answer := "answered plaintext, not TLS"
		switch {
		case bytes.HasPrefix(rc.head, []byte("HTTP/")):
			answer = "answered plaintext HTTP/1.x, not TLS"
		case len(rc.head) >= 4 && rc.head[3] == byte(http2.FrameSettings):
			answer = "answered plaintext HTTP/2 (gRPC without TLS)"
		}
		return &CheckError{Endpoint: t.addr, TLS: true, Kind: ErrTLSMismatch, Answer: answer, Fix: fixUsePlaintext}
	case len(rc.head) == 0:
		return &CheckError{Endpoint: t.addr, TLS: true, Kind: ErrUnreachable,
			Answer: "closed the connection or stayed silent during the TLS handshake", Fix: fixStart, Err: err}
	}
	return &CheckError{Endpoint: t.addr, TLS: true, Kind: ErrHandshake, Answer: "refused the TLS handshake",
		Fix: "check the TLS settings on both sides (client certificate, TLS versions)", Err: err}
}

// firstBytes records the first bytes read from a connection.
type firstBytes struct {
	net.Conn
	head []byte
}

func (c *firstBytes) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if k := min(n, 16-len(c.head)); k > 0 {
		c.head = append(c.head, p[:k]...)
	}
	return n, err
}

// isTLS: the first byte is a TLS handshake (22) or alert (21) record.
func (c *firstBytes) isTLS() bool {
	return len(c.head) > 0 && (c.head[0] == 0x16 || c.head[0] == 0x15)
}
