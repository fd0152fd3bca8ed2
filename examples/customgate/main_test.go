package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCustomGate runs the example without a collector and checks, for
// each of the gate's answers, what the model sees and what the span
// records (the export through a real collector is tested in otelbridge's
// TestShortLivedProgramDeliversAllSpans).
func TestCustomGate(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	s := out.String()
	for _, want := range []string{
		// allow, risk safe
		`/work/main.go  model sees (isError=false): would write {"path":"/work/main.go"}`,
		`span execute_tool write_file: gate.action="allow" gate.source="workspace" gate.risk.level="safe"`,
		// deny with a reason, a risk and a rule
		`/etc/passwd    model sees (isError=true): Tool "write_file" was denied by the tool gate (policy "workspace"): writes outside the workspace /work. Do not retry`,
		`gate.action="deny" gate.source="workspace" gate.reason="writes outside the workspace /work" gate.risk.level="high" gate.verdicts=["workspace|deny|high|ws.outside"]`,
		// ask, declined by the approver
		`/work/.env     model sees (isError=true): Tool "write_file" was denied by the tool gate (policy "workspace"): writes a secrets file; declined by reviewer: only by hand, in the editor (approval declined).`,
		`gate.approval="declined" gate.approver="reviewer" gate.risk.level="review"`,
		// rewrite: the tool runs the rewritten input
		`notes.txt      model sees (isError=false): would write {"path":"/work/notes.txt"}`,
		`gate.rewritten=true gate.rewritten_by="workspace" gate.verdicts=["workspace|rewrite|safe|","workspace|allow|safe|"]`,
		// an error fails closed
		`../outside     model sees (isError=true): Tool "write_file" was denied by the tool gate (policy "workspace"): gate failed closed (error): cannot judge path "../outside"`,
		`gate.error="error"`,
		"spans: 5 exported, 0 lost",
	} {
		assert.Contains(t, s, want)
	}
	assert.Equal(t, 5, strings.Count(s, "span execute_tool write_file:"), "one span per call")
}
