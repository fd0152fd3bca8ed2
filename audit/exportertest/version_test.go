package exportertest

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientVersions checks that this test links the exporter and the
// ClickHouse client at the versions the deploy/otel-collector build uses.
func TestClientVersions(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	require.True(t, ok)
	want := map[string]string{
		"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/clickhouseexporter": "v0.161.0",
		"github.com/ClickHouse/clickhouse-go/v2":                                              "v2.47.0",
	}
	for _, m := range bi.Deps {
		v := m.Version
		if m.Replace != nil {
			v = m.Replace.Version
		}
		if w, ok := want[m.Path]; ok {
			assert.Equal(t, w, v, m.Path)
			delete(want, m.Path)
		}
	}
	assert.Empty(t, want, "modules not linked")
}
