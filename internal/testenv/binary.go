package testenv

import "testing"

// collectorBinaries maps the environment variable naming each collector
// distribution to its default path under the repository root.
var collectorBinaries = map[string]string{
	"TOOLGATE_OTELCOL":         "bin/otelcol-toolgate",
	"TOOLGATE_OTELCOL_CLUSTER": "bin/otelcol-toolgate-cluster",
}

// CollectorBinary returns the path of the collector distribution that envVar
// (TOOLGATE_OTELCOL or TOOLGATE_OTELCOL_CLUSTER) names, or its default under
// bin/. A missing binary fails the test under TOOLGATE_INTEGRATION=1 and
// skips it otherwise; an unknown envVar fails the test.
func CollectorBinary(t testing.TB, envVar string) string {
	t.Helper()
	rel, ok := collectorBinaries[envVar]
	if !ok {
		t.Fatalf("testenv.CollectorBinary: unknown variable %q (want TOOLGATE_OTELCOL or TOOLGATE_OTELCOL_CLUSTER)", envVar)
	}
	return lookupComponent(t, envVar, rel, "scripts/build-collector.sh (--manifest deploy/otel-collector/builder-cluster.yaml for the cluster variant)")
}
