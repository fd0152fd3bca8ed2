package replay

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestExamplePolicy replays the real transcript with the shipped example
// policy: it approves workspace edits and test runs, so fewer calls are
// denied than with the default policy, and no high-risk call is approved.
func TestExamplePolicy(t *testing.T) {
	runs, err := ReadTranscriptFile("../testdata/real/trajectories.jsonl")
	require.NoError(t, err)
	p, err := LoadPolicy("../examples/replay-policy.yaml")
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider()
	withPolicy, err := New(WithTracerProvider(tp), WithPolicy(p, "example"))
	require.NoError(t, err)
	a, err := withPolicy.Replay(context.Background(), runs)
	require.NoError(t, err)
	byDefault, err := New(WithTracerProvider(tp))
	require.NoError(t, err)
	b, err := byDefault.Replay(context.Background(), runs)
	require.NoError(t, err)

	assert.Positive(t, a.Approved)
	assert.Equal(t, b.Denied-a.Approved, a.Denied, "every approval turns one default denial into an allow")
	assert.Equal(t, 0, b.Approved)
	assert.Zero(t, a.ByTool[ToolEdit].Denied, "workspace edits are approved")
	t.Logf("example policy: %d approved, %d denied (default policy: %d denied)", a.Approved, a.Denied, b.Denied)
}
