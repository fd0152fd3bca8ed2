package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	otelcollector "github.com/toolgate/toolgate/deploy/otel-collector"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestCollectorAuditModes runs the collector's audit-pipeline overlays with
// the SDK sending everything ("all"): deny-only stores only the denied calls
// and the agent spans of their traces; all stores every span, LLM calls and
// refused calls included. gate_decisions follows (denials only / every
// gated call).
func TestCollectorAuditModes(t *testing.T) {
	tests := []struct {
		mode string
		keep []gate.Action
	}{
		{otelcollector.ModeDenyOnly, []gate.Action{gate.ActionDeny}},
		{otelcollector.ModeAll, []gate.Action{gate.ActionAllow, gate.ActionDeny}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			s := startStack(t, withoutJaeger(), withCollector(testenv.WithAuditMode(tt.mode)))
			ctx := context.Background()
			service := "e2e-collector-" + tt.mode
			p := s.provider(t, service, "all")
			o := workload(t, p, service, 6, 20)
			want := o.ids(tt.keep...)
			// deny-only waits decision_wait (1 s here) for whole traces.
			require.Equal(t, len(want), s.waitDecisions(ctx, t, service, len(want), 60*time.Second))
			time.Sleep(2 * time.Second)
			rows := s.decisions(ctx, t, service)
			require.Len(t, rows, len(want))
			for _, r := range rows {
				assert.True(t, want[r.ToolCallID], "unexpected decision %s (%s)", r.ToolCallID, r.Action)
			}
			names := s.spanNames(ctx, t, service)
			denyTraces := map[string]bool{}
			for id := range o.ids(gate.ActionDeny) {
				denyTraces[o.traceOf[id]] = true
			}
			agents := names["invoke_agent agent-0"] + names["invoke_agent agent-1"]
			switch tt.mode {
			case otelcollector.ModeDenyOnly:
				assert.Equal(t, map[string]uint64{
					"execute_tool bash":      uint64(len(want) - o.ungated),
					"execute_tool web_fetch": uint64(o.ungated), // refused before the gate: denied
					"invoke_agent agent-0":   names["invoke_agent agent-0"],
					"invoke_agent agent-1":   names["invoke_agent agent-1"],
				}, names, "only denied calls and agent spans")
				assert.Equal(t, uint64(len(denyTraces)), agents, "agent spans of the traces with a denial")
			case otelcollector.ModeAll:
				assert.Equal(t, uint64(len(want)-o.ungated), names["execute_tool bash"])
				assert.Equal(t, uint64(len(o.agentSpans)), agents)
				assert.Equal(t, uint64(o.chatSpans), names["chat model-e2e"], "LLM spans stored")
				assert.Equal(t, uint64(o.ungated), names["execute_tool web_fetch"], "refused calls stored")
			}
		})
	}
}
