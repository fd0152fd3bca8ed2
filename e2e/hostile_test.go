package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge/bridge"
)

// TestHostileBytesReachTheAudit runs a short workload whose model is
// hostile — invalid UTF-8 in commands (bash $'\xNN' quoting that the
// classifier decodes into raw bytes in its reasons), in tool output, in
// the names of unknown tools and in tool-call IDs, plus bridged events
// with invalid UTF-8 in every decision field — through the real SDK
// pipeline, collector and ClickHouse. Before gate.SafeText one such string
// failed the OTLP export of its whole batch; now no decision is lost:
// gate_decisions has exactly one row per gated call, and the stored reason
// shows the raw byte as a visible \xNN escape.
func TestHostileBytesReachTheAudit(t *testing.T) {
	s := startStack(t, withoutJaeger())
	ctx := context.Background()
	const service = "e2e-hostile"
	p := s.provider(t, service, "all")

	bash, err := classify.BashGate()
	require.NoError(t, err)
	schema := json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","minLength":1}},"required":["command"]}`)
	reg, err := executor.NewRegistry(
		executor.Tool{Name: "bash", InputSchema: schema, Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
			return executor.Text("\xff\xfe" + string(in) + "\xc3"), nil // output with raw bytes around the input
		}},
		executor.Tool{Name: "read_blob", InputSchema: schema, Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
			return executor.Text("\x89PNG\r\n\x1a\n\x00\x00\xff\xd8\xff\xe0"), nil
		}},
	)
	require.NoError(t, err)
	ex, err := executor.New(reg, executor.WithTracerProvider(p), executor.WithGates(bash), executor.WithRecordContent(true))
	require.NoError(t, err)
	agent, err := ex.Agent("hostile-agent", executor.AgentPresets(executor.PresetAll))
	require.NoError(t, err)
	run := agent.Run("hostile-run")

	type call struct{ id, tool, command string }
	var calls []call
	for i, c := range commands(t)[:20] { // ordinary commands around the hostile ones
		calls = append(calls, call{fmt.Sprintf("ok-%d", i), "bash", c})
	}
	calls = append(calls,
		call{"h-rm", "bash", `rm -rf ~/$'\xc3'`},
		call{"h-rm2", "bash", `rm -rf /etc/$'\xff\xfe'/x`},
		call{"h-cat", "bash", `cat $'\xed\xa0\x80'`},
		call{"h-redirect", "bash", `echo hi > $'\xc3\x28'`},
		call{"h-mv", "bash", `mv notes ~/$'\xe2\x82'`},
		call{"h-id-\xff\xfe", "bash", "ls"},
		call{"h-id-\xc3" + strings.Repeat("\xc3(", 400), "bash", "pwd"},
		call{"h-blob", "read_blob", "cat image.png"},
		call{"h-unknown", "\xc3\x28evil", "ls"},
		call{"h-unknown-long", strings.Repeat("\xff", 5000), "ls"},
	)
	want := map[string]gate.Action{} // stored tool-call ID -> action
	for _, c := range calls {
		in, err := json.Marshal(map[string]string{"command": c.command})
		require.NoError(t, err)
		res := run.Execute(ctx, executor.ToolCall{ID: c.id, Name: c.tool, Input: in})
		if res.Gate.Action != "" { // gated, or refused before the gate (the unknown tools)
			want[gate.SafeText(c.id, gate.MaxNameBytes)] = res.Gate.Action
		}
	}

	// Bridged decisions (a framework's onToolCall events) with hostile
	// bytes in every field, in the same batches.
	b := bridge.New(p, bridge.Config{})
	now := float64(time.Now().UnixMicro()) / 1000
	for i, ev := range []bridge.Event{
		{Tool: "mcp\xc3", ToolCallID: "b-deny-\xfe", GateAction: "deny", GateReason: "denied \xc3 by policy", GateSource: "mcp\xff",
			Approval: "declined\xff", Approver: "bot\xc0\xaf", RiskLevel: "high"},
		{Tool: "mcp", ToolCallID: "b-allow", GateAction: "allow", GateReason: "ok \xed\xa0\x80", GateRule: "r|\xc3",
			Verdicts: []gate.Verdict{{Gate: "g\xff", Action: gate.ActionAllow, Rule: "x\xfe"}, {Gate: "h", Action: gate.ActionAllow}}},
	} {
		ev.Type, ev.RunID, ev.Agent, ev.Gated = bridge.EventToolCall, "hostile-run\xff", "framework\xc3", true
		ev.StartMs, ev.EndMs = now+float64(i), now+float64(i)+1
		require.NoError(t, b.Handle(ctx, ev))
		want[gate.SafeText(ev.ToolCallID, gate.MaxNameBytes)] = gate.Action(ev.GateAction)
	}

	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	assert.NoError(t, p.ForceFlush(fctx), "SDK export")
	st := p.Stats().Batch
	assert.Zero(t, p.Stats().Lost(), "SDK export: %+v", st)
	require.Positive(t, len(want))

	wait := 60 * time.Second
	if p.Stats().Lost() > 0 {
		wait = 5 * time.Second // what is lost never comes; count what came
	}
	got := s.waitDecisions(ctx, t, service, len(want), wait)
	t.Logf("decisions %d (of %d calls and events), gate_decisions rows %d; SDK exported %d spans, failed %d",
		len(want), len(calls)+2, got, st.Exported, st.ExportFailed)
	require.Equal(t, len(want), got, "one gate_decisions row per decision")
	rows := s.decisions(ctx, t, service)
	byID := map[string]decisionRow{}
	for _, r := range rows {
		_, dup := byID[r.ToolCallID]
		assert.Falsef(t, dup, "decision %q twice", r.ToolCallID)
		byID[r.ToolCallID] = r
	}
	for id, action := range want {
		r, ok := byID[id]
		if assert.Truef(t, ok, "decision %q missing", id) {
			assert.Equal(t, string(action), r.Action, id)
		}
	}
	require.Contains(t, byID, "h-rm")
	assert.Equal(t, string(gate.ActionDeny), byID["h-rm"].Action)
	assert.Contains(t, byID["h-rm"].Reason, `(~/\xc3)`, "the classifier's raw 0xC3, escaped")
	assert.Contains(t, byID, `h-id-\xff\xfe`)
	for _, id := range []string{"h-unknown", "h-unknown-long"} {
		require.Contains(t, byID, id)
		assert.Equal(t, "registry", byID[id].Stage, "an unknown tool is a decision of stage registry")
		assert.LessOrEqual(t, len(byID[id].ToolName), gate.MaxNameBytes)
	}
	assert.Equal(t, `\xc3(evil`, byID["h-unknown"].ToolName)
	assert.Contains(t, byID[`b-deny-\xfe`].Reason, `denied \xc3`)
}
