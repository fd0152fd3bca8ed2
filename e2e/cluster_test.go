package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	otelcollector "github.com/toolgate/toolgate/deploy/otel-collector"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// TestClusterLoadBalancing runs the cluster variant's load-balancing tier
// (cluster/loadbalancer.yaml on bin/otelcol-toolgate-cluster) in front of two
// tail-sampling collectors, each with its own Jaeger: every trace must end
// up whole in exactly one Jaeger, and both samplers must get traces.
//
// The cluster build is optional (scripts/build-collector.sh --manifest
// deploy/otel-collector/builder-cluster.yaml); without it the test is
// skipped, except under TOOLGATE_INTEGRATION=1 (make test builds it).
func TestClusterLoadBalancing(t *testing.T) {
	bin := os.Getenv("TOOLGATE_OTELCOL_CLUSTER")
	if bin == "" {
		_, file, _, _ := runtime.Caller(0)
		bin = filepath.Join(filepath.Dir(file), "..", "bin", "otelcol-toolgate-cluster")
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("TOOLGATE_INTEGRATION") == "1" {
			t.Fatalf("cluster collector %s not built (make cluster): %v", bin, err)
		}
		t.Skipf("optional cluster collector %s not built (make cluster, or scripts/build-collector.sh --manifest deploy/otel-collector/builder-cluster.yaml)", bin)
	}
	ctx := context.Background()
	j := []*testenv.Jaeger{testenv.StartJaeger(t), testenv.StartJaeger(t)}
	// One bearer token for the whole cluster: agents present it to the
	// load balancer, which presents it to the samplers.
	token := "cluster-" + t.Name()
	samplers := []*testenv.Collector{
		testenv.StartCollector(t, testenv.WithJaegerOTLP(j[0].OTLPGRPC), testenv.WithDecisionWait(time.Second), testenv.WithOTLPToken(token)),
		testenv.StartCollector(t, testenv.WithJaegerOTLP(j[1].OTLPGRPC), testenv.WithDecisionWait(time.Second), testenv.WithOTLPToken(token)),
	}
	lb := testenv.StartCollector(t, testenv.WithCollectorBinary(bin), testenv.WithOTLPToken(token),
		testenv.WithConfigs(otelcollector.LoadBalancerConfig()),
		testenv.WithCollectorEnv("TOOLGATE_SAMPLERS=["+samplers[0].GRPCEndpoint+", "+samplers[1].GRPCEndpoint+"]"),
		testenv.WithCollectorEnv("TOOLGATE_OTELCOL_METRICS_HOST=127.0.0.1"))

	service := "e2e-cluster"
	p, err := otelbridge.Setup(ctx, otelbridge.Config{Endpoint: lb.GRPCEndpoint, Insecure: true, Headers: lb.Headers(), ServiceName: service,
		Sampling: sampling.Config{Setting: sampling.MustParse("all")}, Batch: otelbridge.BatchConfig{BatchTimeout: 100 * time.Millisecond}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	const runs, per = 20, 5
	o := workload(t, p, service, runs, per)
	spansPerTrace := 1 + 1 + per + 1 // invoke_agent, chat, the calls, the refused call

	where := map[string]int{}
	require.Eventually(t, func() bool {
		where = map[string]int{}
		for i, jj := range j {
			trs, err := jj.Traces(ctx, service, nil, time.Hour, 100)
			if err != nil {
				return false
			}
			for _, tr := range trs {
				if len(tr.Spans) == spansPerTrace {
					where[tr.TraceID] |= 1 << i
				}
			}
		}
		return len(where) == len(o.agentSpans)
	}, 30*time.Second, 250*time.Millisecond, "every trace complete in a Jaeger")
	perSampler := [2]int{}
	for id, mask := range where {
		require.Containsf(t, []int{1, 2}, mask, "trace %s must be in exactly one Jaeger", id)
		perSampler[mask-1]++
	}
	t.Logf("traces per sampler: %v", perSampler)
	assert.Positive(t, perSampler[0], "sampler 1 got traces")
	assert.Positive(t, perSampler[1], "sampler 2 got traces")
	for id := range o.agentSpans {
		assert.Contains(t, where, id)
	}
}
