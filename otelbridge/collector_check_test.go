package otelbridge

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// tlsFiles writes a self-signed certificate for 127.0.0.1 and its key as
// PEM files; the certificate file doubles as the client's CA file.
func tlsFiles(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	cert, _ := selfSigned(t)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600))
	return certFile, keyFile
}

// TestRealCollectorTLSMismatch runs our collector twice, with a plaintext
// and with a TLS OTLP/gRPC receiver, and configures the exporter both ways
// (Config and OTEL_* variables): a mismatch makes Setup fail at once with
// an error that names it and the fix; the matching configuration delivers
// through the collector; and with SkipCheck, the export error the
// handler receives carries the same diagnosis.
func TestRealCollectorTLSMismatch(t *testing.T) {
	certFile, keyFile := tlsFiles(t)
	r := startReceiver(t)
	plain := startCollector(t, "", "batch", r.addr)
	secure := startCollectorGRPC(t, fmt.Sprintf("        tls:\n          cert_file: %s\n          key_file: %s", certFile, keyFile),
		"", "batch", r.addr)

	tests := []struct {
		name     string
		cfg      Config
		env      map[string]string
		wantKind error // nil: delivers
		wantMsg  string
	}{
		{"plaintext collector, Insecure", Config{Endpoint: plain, Insecure: true}, nil, nil, ""},
		{"plaintext collector, http:// variable", Config{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + plain}, nil, ""},
		{"plaintext collector, TLS client", Config{Endpoint: plain}, nil, ErrTLSMismatch, "set Config.Insecure = true, or OTEL_EXPORTER_OTLP_INSECURE=true"},
		{"plaintext collector, https:// variable", Config{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://" + plain},
			ErrTLSMismatch, "answered plaintext HTTP/2"},
		{"TLS collector, CA from OTEL_EXPORTER_OTLP_CERTIFICATE", Config{},
			map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://" + secure, "OTEL_EXPORTER_OTLP_CERTIFICATE": certFile}, nil, ""},
		{"TLS collector, Insecure client", Config{Endpoint: secure, Insecure: true}, nil, ErrTLSMismatch, "speaks TLS"},
		{"TLS collector, http:// variable", Config{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + secure},
			ErrTLSMismatch, "remove Config.Insecure and OTEL_EXPORTER_OTLP_INSECURE, use an https:// endpoint"},
		{"TLS collector, system roots", Config{Endpoint: secure}, nil, ErrCertificate, "OTEL_EXPORTER_OTLP_CERTIFICATE=ca.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearOTLPEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			ctx := context.Background()
			cfg := tt.cfg
			cfg.ServiceName, cfg.Sampling = tt.name, sampling.Config{Setting: sampling.MustParse("all")}
			start := time.Now()
			p, err := Setup(ctx, cfg)
			took := time.Since(start)
			if tt.wantKind != nil {
				t.Logf("Setup refused after %v: %v", took, err)
				require.ErrorIs(t, err, tt.wantKind)
				assert.Contains(t, err.Error(), tt.wantMsg)
				assert.Nil(t, p)

				// Without the check, the export fails and its error names
				// the same cause.
				var handled []error
				cfg.Timeout = time.Second
				cfg.SkipCheck, cfg.Batch.ErrorHandler = true, func(err error) { handled = append(handled, err) }
				p, err = Setup(ctx, cfg)
				require.NoError(t, err)
				leaf(ctx, p.Tracer("test"), "execute_tool x")
				err = p.Shutdown(ctx)
				require.ErrorIs(t, err, tt.wantKind)
				require.Len(t, handled, 1)
				assert.ErrorIs(t, handled[0], tt.wantKind)
				assert.Contains(t, handled[0].Error(), tt.wantMsg)
				return
			}
			require.NoError(t, err)
			leaf(ctx, p.Tracer("test"), "execute_tool x")
			require.NoError(t, p.Shutdown(ctx))
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) && countService(r, tt.name) == 0 {
				time.Sleep(50 * time.Millisecond)
			}
			assert.Equal(t, 1, countService(r, tt.name), "the span went through the collector")
		})
	}
}

func countService(r *receiver, service string) int {
	n := 0
	for _, s := range r.spans() {
		if s.resource["service.name"] == service {
			n++
		}
	}
	return n
}

// TestShortLivedProgramDeliversAllSpans builds examples/customgate (a
// program in the README's shape: otelbridge.Setup from the OTEL_*
// variables, a deferred Shutdown with a timeout) and runs it as a process
// that exits right after its last call: every span it reports exported
// arrives through the real collector. The control runs the same pipeline
// in a process that exits without Shutdown: its spans never arrive.
func TestShortLivedProgramDeliversAllSpans(t *testing.T) {
	r := startReceiver(t)
	in := startCollector(t, "", "batch", r.addr)
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..")
	bin := filepath.Join(t.TempDir(), "customgate")
	build := exec.Command("go", "build", "-o", bin, "./examples/customgate")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+in, "OTEL_EXPORTER_OTLP_INSECURE=", "TOOLGATE_SAMPLING=")
	start := time.Now()
	out, err = cmd.CombinedOutput()
	t.Logf("customgate ran %v", time.Since(start))
	require.NoError(t, err, "%s", out)
	m := regexp.MustCompile(`spans: (\d+) exported, 0 lost`).FindSubmatch(out)
	require.NotNil(t, m, "%s", out)
	exported, _ := strconv.Atoi(string(m[1]))
	require.GreaterOrEqual(t, exported, 5, "one span per call at least")
	got := waitSpans(t, r, exported)
	assert.Len(t, got, exported, "every span the program exported arrived")
	assert.Equal(t, exported, countService(r, "customgate"))
	calls := 0
	for _, name := range got {
		if name == "execute_tool write_file" {
			calls++
		}
	}
	assert.Equal(t, 5, calls)

	// The control: no Shutdown, and the process exits.
	ctl := exec.Command(os.Args[0], "-test.run=^TestHelperExitWithoutShutdown$", "-test.count=1")
	ctl.Env = append(os.Environ(), "TOOLGATE_HELPER_NO_SHUTDOWN=1", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+in,
		"OTEL_EXPORTER_OTLP_INSECURE=", "OTEL_SERVICE_NAME=no-shutdown")
	out, err = ctl.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "ended 5 spans")
	time.Sleep(time.Second) // the collector batches for 100 ms
	assert.Zero(t, countService(r, "no-shutdown"), "a process that exits without Shutdown loses its queued spans")
}

// TestHelperExitWithoutShutdown is the control process of
// TestShortLivedProgramDeliversAllSpans: it ends five spans and returns
// without Shutdown, and the test binary exits.
func TestHelperExitWithoutShutdown(t *testing.T) {
	if os.Getenv("TOOLGATE_HELPER_NO_SHUTDOWN") != "1" {
		t.Skip("helper process of TestShortLivedProgramDeliversAllSpans")
	}
	ctx := context.Background()
	p, err := Setup(ctx, Config{Sampling: sampling.Config{Setting: sampling.MustParse("all")}})
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		leaf(ctx, p.Tracer("test"), "execute_tool x")
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "ended %d spans\n", p.Stats().Sampling.Ended)
	_ = w.Flush()
}

// readmeEmbed builds the Go program of the README's "Embed it" section,
// with its collector address replaced by addr, and returns the binary.
// The program is placed in the module with a build overlay (no file is
// written into the repository).
func readmeEmbed(t *testing.T, addr string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a program")
	}
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), ".."))
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Embed it\n")
	require.True(t, ok, "README.md has an \"Embed it\" section")
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(section)
	require.NotNil(t, m, "the Embed it section has a Go program")
	src := m[1]
	require.Contains(t, src, `"127.0.0.1:4317"`)
	src = strings.ReplaceAll(src, `"127.0.0.1:4317"`, strconv.Quote(addr))

	dir := t.TempDir()
	mainGo := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(mainGo, []byte(src), 0o600))
	overlay, err := json.Marshal(map[string]map[string]string{
		"Replace": {filepath.Join(root, "examples", "readme-embed", "main.go"): mainGo}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o600))
	bin := filepath.Join(dir, "readme-embed")
	build := exec.Command("go", "build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", bin, "./examples/readme-embed")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "the README's program does not build:\n%s", out)
	return bin
}

// TestReadmeEmbedProgram builds the README's "Embed it" program and runs it
// against the real collector: the call is denied with a message for the
// model, the program exits at once, and its span arrives (the deferred
// Shutdown flushed it).
func TestReadmeEmbedProgram(t *testing.T) {
	r := startReceiver(t)
	in := startCollector(t, "", "batch", r.addr)
	bin := readmeEmbed(t, in)

	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "OTEL_SERVICE_NAME=readme-embed", "TOOLGATE_SAMPLING=")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("the README program ran %v:\n%s", time.Since(start), out)
	require.NoError(t, err)
	assert.Contains(t, string(out), `true Tool "bash" was denied by the tool gate`)
	assert.Contains(t, string(out), "Do not retry")
	assert.NotContains(t, string(out), "spans lost")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && countService(r, "readme-embed") == 0 {
		time.Sleep(50 * time.Millisecond)
	}
	var names []string
	for _, s := range r.spans() {
		if s.resource["service.name"] == "readme-embed" {
			names = append(names, s.span.GetName())
		}
	}
	assert.Contains(t, names, "execute_tool bash", "the denied call's span arrived")
	assert.Contains(t, names, "invoke_agent coder", "the run's span arrived: run.End() before Shutdown")
}

// TestReadmeEmbedProgramWithoutCollector: the README's program pointed at
// a port where nothing listens still runs the call and exits, and says
// that its span was lost and why, within its 5 s shutdown timeout.
func TestReadmeEmbedProgramWithoutCollector(t *testing.T) {
	addr := freeAddr(t)
	bin := readmeEmbed(t, addr)
	start := time.Now()
	out, err := exec.Command(bin).CombinedOutput()
	t.Logf("the README program ran %v:\n%s", time.Since(start), out)
	require.NoError(t, err)
	for _, want := range []string{`true Tool "bash" was denied`, "spans lost: ", "2 spans not exported before the shutdown deadline", // the call's and the run's
		"collector unreachable", addr, "start the collector"} {
		assert.Contains(t, string(out), want)
	}
}
