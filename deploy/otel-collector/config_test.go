package otelcollector_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"gopkg.in/yaml.v3"

	otelcollector "github.com/toolgate/toolgate/deploy/otel-collector"
	"github.com/toolgate/toolgate/gate"
)

// gateKeys is every attribute key the gate package defines; configs may name
// no other gate.* / toolgate.* key.
func gateKeys() map[string]bool {
	keys := map[string]bool{}
	for _, k := range []string{
		string(gate.AttrGated), string(gate.AttrAction), string(gate.AttrReason), string(gate.AttrSource),
		string(gate.AttrApproval), string(gate.AttrApprover), string(gate.AttrError), string(gate.AttrRiskLevel),
		string(gate.AttrOptOut), string(gate.AttrDuration), string(gate.AttrRunID), string(gate.AttrTaskID),
		string(gate.AttrSamplingPriority),
	} {
		keys[k] = true
	}
	for _, f := range gate.Fields() { // every key of the decision record (gate.stage, …)
		keys[string(f.Key)] = true
	}
	return keys
}

// keyPattern finds attribute-key-like tokens in the gate's namespaces.
var keyPattern = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:toolgate|gate)\.[a-z_]+(?:\.[a-z_]+)*)`)

// configFiles is every YAML file that ships in deploy/otel-collector, embedded
// or not (compose and Grafana provisioning included).
func configFiles(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".json")) {
			return nil
		}
		b, err := os.ReadFile(path)
		out[path] = b
		return err
	})
	require.NoError(t, err)
	require.Contains(t, out, "config.yaml")
	return out
}

func TestConfigsNameOnlyGateConstants(t *testing.T) {
	known := gateKeys()
	seen := map[string]bool{}
	for path, b := range configFiles(t) {
		for _, m := range keyPattern.FindAllStringSubmatch(string(b), -1) {
			key := strings.TrimSuffix(m[1], ".yaml")
			if strings.HasSuffix(m[1], ".yaml") || strings.HasSuffix(m[1], ".json") {
				continue // a file name such as toolgate.yaml, not an attribute key
			}
			seen[key] = true
			assert.Truef(t, known[key], "%s names attribute %q, which gate/attributes.go does not define", path, key)
		}
	}
	// The check must have found the keys the pipelines depend on.
	assert.True(t, seen[string(gate.AttrAction)], "no config names %s", gate.AttrAction)
}

func TestKeyPatternFindsKeys(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`key: gate.action`, []string{"gate.action"}},
		{`span.attributes["gate.risk.level"] == "high"`, []string{"gate.risk.level"}},
		{`SpanAttributes['toolgate.run.id']`, []string{"toolgate.run.id"}},
		{`bin/otelcol-toolgate`, nil},
		{`gate/attributes.go`, nil},
		{`gate.actoin`, []string{"gate.actoin"}},
	}
	for _, tt := range tests {
		var got []string
		for _, m := range keyPattern.FindAllStringSubmatch(tt.in, -1) {
			got = append(got, m[1])
		}
		assert.Equal(t, tt.want, got, tt.in)
	}
}

// doc is a generic YAML document.
type doc = map[string]any

func parse(t *testing.T, b []byte) doc {
	t.Helper()
	var d doc
	require.NoError(t, yaml.Unmarshal(b, &d))
	return d
}

func dig(t *testing.T, d any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := d.(doc)
		require.Truef(t, ok, "at %q: not a mapping in %v", p, path)
		d, ok = m[p]
		require.Truef(t, ok, "missing %q in %v", p, path)
	}
	return d
}

func strs(t *testing.T, v any) []string {
	t.Helper()
	list, ok := v.([]any)
	require.True(t, ok, "not a list: %v", v)
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = fmt.Sprint(e)
	}
	return out
}

// The OTTL conditions and sampling policies are exactly the ones built from
// the gate and semconv constants.
func TestPipelinesUseGateConstants(t *testing.T) {
	invokeAgent := semconv.GenAIOperationNameInvokeAgent.Value.AsString()
	op := string(semconv.GenAIOperationNameKey)

	base := parse(t, otelcollector.Config())
	assert.Equal(t, []string{fmt.Sprintf(
		`span.attributes[%q] == nil and span.attributes[%q] != true and span.attributes[%q] != true and span.attributes[%q] != %q and span.attributes[%q] != %q`,
		string(gate.AttrAction), string(gate.AttrGated), string(gate.AttrOptOut), op, invokeAgent,
		op, semconv.GenAIOperationNameInvokeWorkflow.Value.AsString())},
		strs(t, dig(t, base, "processors", "filter/audit", "trace_conditions")))

	policies := dig(t, base, "processors", "tail_sampling", "policies").([]any)
	denied := policies[0].(doc)
	assert.Equal(t, "string_attribute", denied["type"])
	assert.Equal(t, string(gate.AttrAction), dig(t, denied, "string_attribute", "key"))
	assert.Equal(t, []string{string(gate.ActionDeny)}, strs(t, dig(t, denied, "string_attribute", "values")))

	deny, err := otelcollector.Overlay(otelcollector.ModeDenyOnly)
	require.NoError(t, err)
	d := parse(t, deny)
	assert.Equal(t, []string{fmt.Sprintf(`span.attributes[%q] != %q and span.attributes[%q] != %q`,
		string(gate.AttrAction), string(gate.ActionDeny), op, invokeAgent)},
		strs(t, dig(t, d, "processors", "filter/deny_only", "trace_conditions")))
	p := dig(t, d, "processors", "tail_sampling/deny_only", "policies").([]any)[0].(doc)
	assert.Equal(t, string(gate.AttrAction), dig(t, p, "string_attribute", "key"))
	assert.Equal(t, []string{string(gate.ActionDeny)}, strs(t, dig(t, p, "string_attribute", "values")))
}

// Every listener of the single-node configs defaults to loopback.
func TestLocalConfigsBindLoopback(t *testing.T) {
	endpoint := regexp.MustCompile(`endpoint: \$\{env:[A-Z_]+:-([^}]*)\}`)
	for name, b := range map[string][]byte{"config.yaml": otelcollector.Config(), "jaeger.yaml": otelcollector.JaegerConfig()} {
		found := 0
		for _, m := range endpoint.FindAllStringSubmatch(string(b), -1) {
			if strings.HasPrefix(m[1], "http") {
				continue // a client endpoint (ClickHouse), not a listener
			}
			found++
			assert.Truef(t, strings.HasPrefix(m[1], "127.0.0.1:"), "%s: %s listens on %q", name, m[0], m[1])
		}
		assert.NotZero(t, found, name)
	}
	assert.Contains(t, string(otelcollector.JaegerConfig()), "enable_tracing: false")
}

func TestOverlay(t *testing.T) {
	tests := []struct {
		mode    string
		wantNil bool
		wantErr bool
	}{
		{otelcollector.ModeDecisions, true, false},
		{"", true, false},
		{otelcollector.ModeDenyOnly, false, false},
		{otelcollector.ModeAll, false, false},
		{"deny_only", true, true},
	}
	for _, tt := range tests {
		b, err := otelcollector.Overlay(tt.mode)
		if tt.wantErr {
			assert.ErrorIs(t, err, otelcollector.ErrUnknownMode, tt.mode)
			continue
		}
		require.NoError(t, err, tt.mode)
		assert.Equal(t, tt.wantNil, b == nil, tt.mode)
	}
	paths, err := otelcollector.WriteConfigs(t.TempDir(), otelcollector.ModeDenyOnly)
	require.NoError(t, err)
	require.Len(t, paths, 2)
	b, err := os.ReadFile(paths[1])
	require.NoError(t, err)
	assert.Contains(t, string(b), "filter/deny_only")
}

// collectorBinary finds the built distribution (TOOLGATE_OTELCOL, default
// bin/otelcol-toolgate at the repository root).
func collectorBinary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("TOOLGATE_OTELCOL")
	if p == "" {
		_, file, _, _ := runtime.Caller(0)
		p = filepath.Join(filepath.Dir(file), "..", "..", "bin", "otelcol-toolgate")
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("TOOLGATE_INTEGRATION") == "1" {
			t.Fatalf("collector binary %s missing (run scripts/build-collector.sh): %v", p, err)
		}
		t.Skipf("collector binary %s missing (run scripts/build-collector.sh)", p)
	}
	return p
}

// The real collector accepts every shipped combination of configs, and rejects
// a broken one (so the check can fail).
func TestCollectorValidatesConfigs(t *testing.T) {
	bin := collectorBinary(t)
	tests := []struct {
		name    string
		files   []string
		wantErr bool
	}{
		{"decisions", []string{"config.yaml"}, false},
		{"deny-only", []string{"config.yaml", "modes/audit-deny-only.yaml"}, false},
		{"all", []string{"config.yaml", "modes/audit-all.yaml"}, false},
		{"cluster sampler", []string{"config.yaml", "cluster/sampler.yaml"}, false},
		{"broken", []string{"config.yaml", "testdata/broken-overlay.yaml"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"validate"}
			for _, f := range tt.files {
				args = append(args, "--config", f)
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "TOOLGATE_OTLP_TOKEN=validate-token")
			out, err := cmd.CombinedOutput()
			if tt.wantErr {
				require.Error(t, err, "validate accepted %v", tt.files)
				return
			}
			require.NoError(t, err, "%s", out)
		})
	}
}

// envRef matches a whole-value ${env:NAME} or ${env:NAME:-default}.
var envRef = regexp.MustCompile(`^\$\{env:([A-Z0-9_]+)(?::-(.*))?\}$`)

// envDefault splits a ${env:NAME:-default} value; hasDefault is false for
// ${env:NAME} (the collector warns, naming NAME, when it is unset).
func envDefault(t *testing.T, v any) (name, def string, hasDefault bool) {
	t.Helper()
	m := envRef.FindStringSubmatch(fmt.Sprint(v))
	require.NotNilf(t, m, "%v is not an ${env:…} reference", v)
	return m[1], m[2], strings.Contains(fmt.Sprint(v), ":-")
}

// The production rules of config.yaml: migrations own the schema, agents
// authenticate, the queue directory is absolute, secrets have no defaults.
func TestConfigIsProduction(t *testing.T) {
	base := parse(t, otelcollector.Config())
	ch := dig(t, base, "exporters", "clickhouse").(doc)
	assert.Equal(t, false, ch["create_schema"], "auditq migrate owns the schema")
	name, _, hasDefault := envDefault(t, ch["password"])
	assert.Equal(t, "TOOLGATE_CLICKHOUSE_PASSWORD", name)
	assert.False(t, hasDefault, "the ClickHouse password has no default")

	fs := dig(t, base, "extensions", "file_storage/queue").(doc)
	for _, v := range []any{fs["directory"], dig(t, fs, "compaction", "directory")} {
		name, def, hasDefault := envDefault(t, v)
		assert.Equal(t, "TOOLGATE_OTELCOL_QUEUE_DIR", name)
		require.True(t, hasDefault)
		assert.Truef(t, filepath.IsAbs(def), "queue directory default %q must be absolute", def)
	}

	auth := dig(t, base, "extensions", "bearertokenauth").(doc)
	name, _, hasDefault = envDefault(t, auth["token"])
	assert.Equal(t, "TOOLGATE_OTLP_TOKEN", name)
	assert.False(t, hasDefault, "the OTLP token has no default")
	assert.Contains(t, strs(t, dig(t, base, "service", "extensions")), "bearertokenauth")
	for _, proto := range []string{"grpc", "http"} {
		assert.Equal(t, "bearertokenauth", dig(t, base, "receivers", "otlp", "protocols", proto, "auth", "authenticator"), proto)
	}

	// The cluster tiers authenticate too, and the load balancer presents the
	// token to the samplers.
	lb := parse(t, otelcollector.LoadBalancerConfig())
	for _, proto := range []string{"grpc", "http"} {
		assert.Equal(t, "bearertokenauth", dig(t, lb, "receivers", "otlp", "protocols", proto, "auth", "authenticator"), proto)
	}
	assert.Equal(t, "Bearer ${env:TOOLGATE_OTLP_TOKEN}", dig(t, lb, "exporters", "loadbalancing", "protocol", "otlp", "headers", "authorization"))
	assert.Contains(t, strs(t, dig(t, lb, "service", "extensions")), "bearertokenauth")
	sampler := parse(t, otelcollector.SamplerOverlay())
	assert.NotContains(t, dig(t, sampler, "exporters", "clickhouse").(doc), "create_schema", "the sampler keeps create_schema: false")
}
