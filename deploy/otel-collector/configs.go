package otelcollector

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed config.yaml jaeger.yaml tls.yaml modes/*.yaml cluster/*.yaml
var files embed.FS // read-only: embed.FS cannot be modified

// Audit-pipeline modes of the collector. ModeDecisions is config.yaml alone;
// the others add the overlay modes/audit-<mode>.yaml.
const (
	// ModeDecisions stores every gate decision (allow and deny) and the
	// invoke_agent spans: the audit log. The default.
	ModeDecisions = "decisions"
	// ModeDenyOnly stores only denied calls and the invoke_agent spans of
	// the traces that contain a denial.
	ModeDenyOnly = "deny-only"
	// ModeAll stores every span the collector receives.
	ModeAll = "all"
)

// ErrUnknownMode is returned for an audit mode other than the Mode* constants.
var ErrUnknownMode = fmt.Errorf("otelcollector: unknown audit mode")

// Config returns config.yaml, the single-node collector configuration.
func Config() []byte { return mustRead("config.yaml") }

// JaegerConfig returns jaeger.yaml, the Jaeger v2 configuration used beside
// the collector (in-memory storage, loopback ports from TOOLGATE_JAEGER_*).
func JaegerConfig() []byte { return mustRead("jaeger.yaml") }

// TLSOverlay returns tls.yaml, the overlay that puts TLS on the OTLP
// receivers (TOOLGATE_OTELCOL_TLS_CERT, _KEY) and, with
// TOOLGATE_OTELCOL_TLS_CLIENT_CA set, requires client certificates (mTLS).
// Pass it as a further --config after Config.
func TLSOverlay() []byte { return mustRead("tls.yaml") }

// LoadBalancerConfig returns cluster/loadbalancer.yaml, the load-balancing
// tier of the cluster variant (needs the otelcol-toolgate-cluster build).
func LoadBalancerConfig() []byte { return mustRead("cluster/loadbalancer.yaml") }

// SamplerOverlay returns cluster/sampler.yaml, the overlay for config.yaml
// on the tail-sampling tier of the cluster variant.
func SamplerOverlay() []byte { return mustRead("cluster/sampler.yaml") }

// Overlay returns the configuration overlay for an audit mode, to be passed to
// the collector as a second --config after Config. It returns nil for
// ModeDecisions (no overlay) and an error wrapping ErrUnknownMode otherwise.
func Overlay(mode string) ([]byte, error) {
	switch mode {
	case ModeDecisions, "":
		return nil, nil
	case ModeDenyOnly, ModeAll:
		return mustRead("modes/audit-" + mode + ".yaml"), nil
	default:
		return nil, fmt.Errorf("%w %q (want %q, %q or %q)", ErrUnknownMode, mode, ModeDecisions, ModeDenyOnly, ModeAll)
	}
}

// Files returns every embedded configuration file (config.yaml, jaeger.yaml,
// tls.yaml, modes/*.yaml, cluster/*.yaml) as a read-only file system.
func Files() fs.FS { return files }

// WriteConfigs writes the collector configuration for mode into dir and
// returns the file paths in the order they must be given to --config.
func WriteConfigs(dir, mode string) ([]string, error) {
	overlay, err := Overlay(mode)
	if err != nil {
		return nil, err
	}
	paths := []string{filepath.Join(dir, "config.yaml")}
	if err := os.WriteFile(paths[0], Config(), 0o600); err != nil {
		return nil, fmt.Errorf("otelcollector: write config: %w", err)
	}
	if overlay != nil {
		p := filepath.Join(dir, "audit-"+mode+".yaml")
		if err := os.WriteFile(p, overlay, 0o600); err != nil {
			return nil, fmt.Errorf("otelcollector: write overlay: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("otelcollector: embedded file missing: " + name) // a build defect, caught by the tests
	}
	return b
}
