package executor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// TestPreGateRefusalsAreDecisions: a call the executor refuses before any
// gate (unknown tool, unreachable tool, invalid input) is a decision of
// its own stage — deny by the executor, not gated, a bounded reason, the
// executor's error type as its error kind — on the span, in ToolResult.Gate
// and in the trace hook's event; the gate never runs. A call that passes
// the checks records stage gate.
func TestPreGateRefusalsAreDecisions(t *testing.T) {
	tests := []struct {
		name      string
		call      executor.ToolCall
		stage     gate.Stage
		errorType string
		spanName  string
		reason    string
	}{
		{"unknown tool", call("c1", "delete_everything", `{"path":"/"}`), gate.StageRegistry, executor.ErrorTypeToolNotFound,
			"execute_tool", "the tool is not registered"},
		{"unreachable tool", call("c2", "deploy", `{}`), gate.StageReachability, executor.ErrorTypeNotReachable,
			"execute_tool deploy", `not reachable for agent "tester"`},
		{"invalid input", call("c3", "bash", `{"command":""}`), gate.StageInput, executor.ErrorTypeInvalidInput,
			"execute_tool bash", "the input does not match the tool's schema"},
		{"not JSON", call("c4", "bash", "\xff{"), gate.StageInput, executor.ErrorTypeInvalidInput,
			"execute_tool bash", "the input does not match the tool's schema"},
		{"gated", call("c5", "bash", `{"command":"ls"}`), gate.StageGate, "", "execute_tool bash", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gateRan := 0
			counting := gate.Named("counting", gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
				gateRan++
				return gate.Allow(), nil
			}))
			var events []executor.ToolCallTrace
			h := newHarness(t, executor.WithGates(counting), executor.WithOnTrace(func(_ context.Context, ev executor.ToolCallTrace) error {
				events = append(events, ev)
				return nil
			}))
			a := h.agent(t, executor.AgentAllow("bash", "read"))
			run := a.Run("run-1", executor.WithTask("task-1"))
			res := run.Execute(context.Background(), tc.call)
			run.End()
			g := res.Gate
			assert.Equal(t, tc.stage, g.Stage)
			spans := h.spans.GetSpans()
			require.Len(t, spans, 2, "the call's span and the run's")
			s := spans[0]
			attrs := attrMap(s.Attributes)
			assert.Equal(t, tc.spanName, s.Name)
			assert.Equal(t, string(tc.stage), attrs[gate.AttrStage].AsString())
			require.Len(t, events, 1)
			assert.Equal(t, g, events[0].Decision, "the trace hook gets the same record")
			if !tc.stage.PreGate() {
				assert.Equal(t, 1, gateRan)
				assert.True(t, g.Gated)
				return
			}
			assert.Zero(t, gateRan, "a refused call never reaches the gate")
			assert.True(t, res.IsError)
			assert.Equal(t, tc.errorType, res.ErrorType)
			assert.False(t, g.Gated)
			assert.Equal(t, gate.ActionDeny, g.Action)
			assert.Equal(t, gate.SourceExecutor, g.Source)
			assert.Equal(t, tc.errorType, g.ErrorKind)
			assert.Contains(t, g.Reason, tc.reason)
			assert.Equal(t, codes.Error, s.Status.Code)
			for k, v := range map[attribute.Key]attribute.Value{
				gate.AttrGated:            attribute.BoolValue(false),
				gate.AttrAction:           attribute.StringValue("deny"),
				gate.AttrSource:           attribute.StringValue("executor"),
				gate.AttrError:            attribute.StringValue(tc.errorType),
				gate.AttrReason:           attribute.StringValue(g.Reason),
				gate.AttrSamplingPriority: attribute.IntValue(1),
				semconv.ErrorTypeKey:      attribute.StringValue(tc.errorType),
				gate.AttrRunID:            attribute.StringValue("run-1"),
				gate.AttrTaskID:           attribute.StringValue("task-1"),
				semconv.GenAIToolNameKey:  attribute.StringValue(tc.call.Name),
			} {
				assert.Equal(t, v, attrs[k], "attribute %s", k)
			}
			assert.NotContains(t, attrs, gate.AttrDuration, "no gate ran")
			assert.Equal(t, spans[1].SpanContext.SpanID(), s.Parent.SpanID(), "a child of the run span")
		})
	}
}

// TestPreGateRefusalWithoutGates: the executor records its own refusals
// even when no gate is configured; a call that passes the checks is then
// not a decision (stage gate, gated false, no action).
func TestPreGateRefusalWithoutGates(t *testing.T) {
	h := newHarness(t)
	run := h.agent(t).Run("r")
	res := run.Execute(context.Background(), call("c1", "delete_everything", `{}`))
	assert.Equal(t, gate.StageRegistry, res.Gate.Stage)
	assert.Equal(t, gate.ActionDeny, res.Gate.Action)
	ok := run.Execute(context.Background(), call("c2", "bash", `{"command":"ls"}`))
	assert.Equal(t, gate.Record{Stage: gate.StageGate}, ok.Gate)
	attrs := attrMap(h.lastSpan(t).Attributes)
	assert.NotContains(t, attrs, gate.AttrAction)
	assert.Equal(t, "gate", attrs[gate.AttrStage].AsString())
}

// TestPreGateReasonIsBounded: the schema message quotes the model's input;
// the recorded reason is redacted, cut to the record limit and valid UTF-8.
func TestPreGateReasonIsBounded(t *testing.T) {
	h := newHarness(t, executor.WithRecordLimit(200))
	run := h.agent(t).Run("r")
	huge := `{"command":"` + strings.Repeat("\\u0000x", 50000) + `","extra":"` + strings.Repeat("y", 1<<20) + `"}`
	res := run.Execute(context.Background(), call("c1", "bash", huge))
	require.Equal(t, gate.StageInput, res.Gate.Stage)
	assert.LessOrEqual(t, len(res.Gate.Reason), 300)
	assert.LessOrEqual(t, len(attrMap(h.lastSpan(t).Attributes)[gate.AttrReason].AsString()), 300)
}
