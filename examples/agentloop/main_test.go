package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgentLoop(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "") // print only: export nothing to a collector the shell names
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	s := out.String()
	for _, want := range []string{
		`call_2 read_file -> error=false: v1.2: faster gate, new approver`,
		`call_3 read_file -> error=true: Tool "read_file" was denied by the tool gate (policy "no-secrets")`,
		`call_4 bash -> error=false: $ git status --porcelain`,
		`call_6 bash -> error=true: Tool "bash" was denied by the tool gate (policy "shell-policy"): recursive delete`,
		`call_7 bash -> error=false: $ git push origin main`,
		`call_8 publish -> error=true: Tool "publish" was denied by the tool gate (policy "consequential")`,
		`call_9 deploy -> error=true: Tool "deploy" is not registered`,
		`trace: tool=bash gated=true action=allow source=shell-policy risk=review approval=approved error=false stage=gate`,
		// An unknown tool never reaches the gate, but it is a decision.
		`trace: tool=deploy gated=false action=deny source=executor risk= approval= error=true stage=registry`,
		`model: Release notes written and pushed. (3 call(s) were denied; I did not retry them.)`,
	} {
		assert.Contains(t, s, want)
	}
	assert.NotContains(t, s, "sk-live", "the secret file was never read")
	assert.Equal(t, 9, strings.Count(s, "trace: "), "one trace event per call")
}
