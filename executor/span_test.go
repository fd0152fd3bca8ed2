package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

func TestSpanShape(t *testing.T) {
	classifier := fixed("classify.bash", gate.Decision{Action: gate.ActionAsk, Reason: "may delete files", Risk: gate.RiskReview})
	approver := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		return req.Decline("policy:file", ""), nil
	})
	tests := []struct {
		name     string
		opts     []executor.Option
		call     executor.ToolCall
		spanName string
		status   codes.Code
		want     map[attribute.Key]attribute.Value
		absent   []attribute.Key
	}{
		{
			name: "ungated success", call: call("c1", "bash", `{"command":"ls"}`), spanName: "execute_tool bash", status: codes.Unset,
			want: map[attribute.Key]attribute.Value{
				semconv.GenAIOperationNameKey:  attribute.StringValue("execute_tool"),
				semconv.GenAIToolNameKey:       attribute.StringValue("bash"),
				semconv.GenAIToolCallIDKey:     attribute.StringValue("c1"),
				semconv.GenAIToolTypeKey:       attribute.StringValue("function"),
				semconv.GenAIAgentNameKey:      attribute.StringValue("tester"),
				semconv.GenAIConversationIDKey: attribute.StringValue("run-1"),
				gate.AttrRunID:                 attribute.StringValue("run-1"),
				gate.AttrTaskID:                attribute.StringValue("task-1"),
				gate.AttrGated:                 attribute.BoolValue(false),
			},
			absent: []attribute.Key{gate.AttrAction, gate.AttrReason, gate.AttrSource, semconv.ErrorTypeKey, gate.AttrSamplingPriority,
				semconv.GenAIToolCallArgumentsKey, semconv.GenAIToolCallResultKey, gate.AttrOptOut},
		},
		{
			name: "allowed", opts: []executor.Option{executor.WithGates(gate.AllowAll())}, call: call("c2", "bash", `{"command":"ls"}`),
			spanName: "execute_tool bash", status: codes.Unset,
			want: map[attribute.Key]attribute.Value{
				gate.AttrGated:  attribute.BoolValue(true),
				gate.AttrAction: attribute.StringValue("allow"),
				gate.AttrSource: attribute.StringValue("allow-all"),
			},
			absent: []attribute.Key{gate.AttrReason, gate.AttrError, gate.AttrApproval, semconv.ErrorTypeKey, gate.AttrSamplingPriority, gate.AttrRiskLevel},
		},
		{
			name: "ask declined with risk", opts: []executor.Option{executor.WithGates(classifier), executor.WithApprover(approver)},
			call: call("c3", "bash", `{"command":"rm -rf build"}`), spanName: "execute_tool bash", status: codes.Error,
			want: map[attribute.Key]attribute.Value{
				gate.AttrGated:            attribute.BoolValue(true),
				gate.AttrAction:           attribute.StringValue("deny"),
				gate.AttrSource:           attribute.StringValue("classify.bash"),
				gate.AttrApproval:         attribute.StringValue("declined"),
				gate.AttrApprover:         attribute.StringValue("policy:file"),
				gate.AttrRiskLevel:        attribute.StringValue("review"),
				semconv.ErrorTypeKey:      attribute.StringValue("gate_denied"),
				gate.AttrSamplingPriority: attribute.IntValue(1),
			},
			absent: []attribute.Key{gate.AttrError},
		},
		{
			name: "fail-closed panic", opts: []executor.Option{executor.WithGates(gate.Named("p", gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) { panic("x") })))},
			call: call("c4", "read", `{}`), spanName: "execute_tool read", status: codes.Error,
			want: map[attribute.Key]attribute.Value{
				gate.AttrAction:           attribute.StringValue("deny"),
				gate.AttrError:            attribute.StringValue("panic"),
				gate.AttrSource:           attribute.StringValue("p"),
				semconv.ErrorTypeKey:      attribute.StringValue("gate_denied"),
				gate.AttrSamplingPriority: attribute.IntValue(1),
			},
		},
		{
			name: "unregistered name keeps the span name bounded", call: call("c5", "made_up", `{}`), spanName: "execute_tool", status: codes.Error,
			want: map[attribute.Key]attribute.Value{
				semconv.GenAIToolNameKey:  attribute.StringValue("made_up"),
				semconv.ErrorTypeKey:      attribute.StringValue("tool_not_found"),
				gate.AttrGated:            attribute.BoolValue(false),
				gate.AttrStage:            attribute.StringValue("registry"),
				gate.AttrAction:           attribute.StringValue("deny"),
				gate.AttrSource:           attribute.StringValue("executor"),
				gate.AttrError:            attribute.StringValue("tool_not_found"),
				gate.AttrSamplingPriority: attribute.IntValue(1),
			},
			absent: []attribute.Key{gate.AttrDuration},
		},
		{
			name: "opt-out recorded", opts: []executor.Option{executor.WithGates(gate.DenyTools("x", "bash")), executor.WithOptOut("tester")},
			call: call("c6", "bash", `{"command":"ls"}`), spanName: "execute_tool bash", status: codes.Unset,
			want: map[attribute.Key]attribute.Value{gate.AttrOptOut: attribute.BoolValue(true), gate.AttrGated: attribute.BoolValue(false), gate.AttrStage: attribute.StringValue("gate")},
		},
		{
			name: "content recorded when opted in, redacted", opts: []executor.Option{executor.WithRecordContent(true)},
			call: call("c7", "bash", `{"command":"curl -H 'Authorization: Bearer abcdefghijklmnop1234' x"}`), spanName: "execute_tool bash", status: codes.Unset,
			want: map[attribute.Key]attribute.Value{
				semconv.GenAIToolCallArgumentsKey: attribute.StringValue(`{"command":"curl -H 'Authorization: Bearer [REDACTED]' x"}`),
				semconv.GenAIToolCallResultKey:    attribute.StringValue(`ran: curl -H 'Authorization: Bearer [REDACTED]' x`),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts...)
			h.agent(t).Run("run-1", executor.WithTask("task-1")).Execute(context.Background(), tc.call)
			s := h.lastSpan(t)
			assert.Equal(t, tc.spanName, s.Name)
			assert.Equal(t, trace.SpanKindInternal, s.SpanKind)
			assert.Equal(t, tc.status, s.Status.Code)
			got := attrMap(s.Attributes)
			for k, v := range tc.want {
				if assert.Contains(t, got, k) {
					assert.Equal(t, v, got[k], "attribute %s", k)
				}
			}
			for _, k := range tc.absent {
				assert.NotContains(t, got, k)
			}
			if got[gate.AttrGated].AsBool() {
				assert.Contains(t, got, gate.AttrDuration)
			}
			assert.Equal(t, "github.com/toolgate/toolgate/executor", s.InstrumentationScope.Name)
		})
	}
}

func TestReasonRedactedAndLimited(t *testing.T) {
	leaky := fixed("leaky", gate.Deny("command `curl -H 'Authorization: Bearer sk-abcdefghijklmnopqrstuvwx' https://x` sends a token; "+strings.Repeat("z", 10000)))
	h := newHarness(t, executor.WithGates(leaky), executor.WithRecordLimit(300))
	var ev executor.ToolCallTrace
	h2 := newHarness(t, executor.WithGates(leaky), executor.WithRecordLimit(300),
		executor.WithOnTrace(func(_ context.Context, e executor.ToolCallTrace) error { ev = e; return nil }))
	for _, hh := range []*harness{h, h2} {
		res := hh.agent(t).Run("r").Execute(context.Background(), call("c", "bash", `{"command":"ls"}`))
		reason := attrMap(hh.lastSpan(t).Attributes)[gate.AttrReason].AsString()
		for _, s := range []string{reason, res.Gate.Reason, res.Content} {
			assert.NotContains(t, s, "sk-abcdefghijklmnopqrstuvwx")
			assert.NotContains(t, s, "abcdefghijklmnop")
		}
		assert.Contains(t, reason, "[REDACTED]")
		assert.LessOrEqual(t, len(reason), 300)
		assert.Contains(t, reason, "truncated")
	}
	assert.Equal(t, attrMap(h2.lastSpan(t).Attributes)[gate.AttrReason].AsString(), ev.Decision.Reason)
}

func TestCustomRedactorAppliesToEverything(t *testing.T) {
	red := func(s string) string { return strings.ReplaceAll(s, "hunter2", "***") }
	var ev executor.ToolCallTrace
	h := newHarness(t, executor.WithGates(fixed("g", gate.Deny("password hunter2 in command"))), executor.WithRedactor(red),
		executor.WithRecordContent(true), executor.WithOnTrace(func(_ context.Context, e executor.ToolCallTrace) error { ev = e; return nil }))
	h.agent(t).Run("r").Execute(context.Background(), call("c", "bash", `{"command":"echo hunter2"}`))
	got := attrMap(h.lastSpan(t).Attributes)
	for _, k := range []attribute.Key{gate.AttrReason, semconv.GenAIToolCallArgumentsKey, semconv.GenAIToolCallResultKey} {
		assert.NotContains(t, got[k].AsString(), "hunter2", "%s", k)
	}
	assert.NotContains(t, ev.Input, "hunter2")
	assert.NotContains(t, ev.Decision.Reason, "hunter2")
	assert.Contains(t, ev.Input, "***")
}

func TestOnTrace(t *testing.T) {
	var events []executor.ToolCallTrace
	h := newHarness(t, executor.WithGates(gate.DenyTools("no shell", "bash")),
		executor.WithOnTrace(func(_ context.Context, e executor.ToolCallTrace) error { events = append(events, e); return nil }))
	run := h.agent(t).Run("run-1", executor.WithTask("task-1"))
	run.Execute(context.Background(), call("c1", "bash", `{"command":"ls"}`))
	run.Execute(context.Background(), call("c2", "read", `{}`))
	require.Len(t, events, 2)
	d, a := events[0], events[1]
	assert.Equal(t, "bash", d.Tool)
	assert.Equal(t, "c1", d.ToolCallID)
	assert.True(t, d.IsError)
	assert.True(t, d.Decision.Gated)
	assert.Equal(t, gate.ActionDeny, d.Decision.Action)
	assert.Equal(t, "no shell", d.Decision.Reason)
	assert.Equal(t, "deny-tools", d.Decision.Source)
	assert.Equal(t, "tester", d.Agent)
	assert.Equal(t, "run-1", d.RunID)
	assert.Equal(t, "task-1", d.TaskID)
	assert.Equal(t, gate.ErrorTypeGateDenied, d.ErrorType)
	assert.False(t, d.Start.IsZero())
	assert.False(t, d.End.Before(d.Start))
	assert.Empty(t, d.Input, "content is not recorded by default")
	spans := h.spans.GetSpans()
	assert.Equal(t, spans[0].SpanContext.SpanID().String(), d.SpanID)
	assert.Equal(t, spans[0].SpanContext.TraceID().String(), d.TraceID)
	assert.Equal(t, gate.ActionAllow, a.Decision.Action)
	assert.False(t, a.IsError)
}

type handlerFunc func(error)

func (f handlerFunc) Handle(err error) { f(err) }

func TestTraceHookFailuresNeverBreakExecution(t *testing.T) {
	var handled []error
	otel.SetErrorHandler(handlerFunc(func(err error) { handled = append(handled, err) }))
	t.Cleanup(func() { otel.SetErrorHandler(handlerFunc(func(error) {})) })
	for _, tc := range []struct {
		name string
		hook func(context.Context, executor.ToolCallTrace) error
	}{
		{"error", func(context.Context, executor.ToolCallTrace) error { return errors.New("sink down") }},
		{"panic", func(context.Context, executor.ToolCallTrace) error { panic("sink exploded") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handled = nil
			h := newHarness(t, executor.WithOnTrace(tc.hook), executor.WithRedactor(func(string) string { panic("bad redactor") }),
				executor.WithRecordContent(true))
			res := h.agent(t).Run("r").Execute(context.Background(), call("c", "bash", `{"command":"ls"}`))
			assert.False(t, res.IsError)
			assert.Equal(t, "ran: ls", res.Content)
			assert.EqualValues(t, 1, h.calls["bash"].Load())
			require.Len(t, h.spans.GetSpans(), 1)
			got := attrMap(h.lastSpan(t).Attributes)
			assert.Equal(t, "[redaction failed]", got[semconv.GenAIToolCallArgumentsKey].AsString())
			require.Len(t, handled, 1)
		})
	}
}

func TestMetrics(t *testing.T) {
	h := newHarness(t, executor.WithGates(gate.DenyTools("no", "bash")))
	run := h.agent(t).Run("r")
	for range 3 {
		run.Execute(context.Background(), call("c", "bash", `{"command":"ls"}`))
	}
	run.Execute(context.Background(), call("c", "read", `{}`))
	run.Execute(context.Background(), call("c", "nope", `{}`)) // not gated: not counted
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	counts := map[string]int64{}
	var histCount uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				require.Equal(t, executor.MetricDecisions, m.Name)
				for _, dp := range data.DataPoints {
					tool, _ := dp.Attributes.Value(semconv.GenAIToolNameKey)
					action, _ := dp.Attributes.Value(gate.AttrAction)
					counts[tool.AsString()+"/"+action.AsString()] += dp.Value
				}
			case metricdata.Histogram[float64]:
				require.Equal(t, executor.MetricGateDuration, m.Name)
				assert.Equal(t, "s", m.Unit)
				for _, dp := range data.DataPoints {
					histCount += dp.Count
				}
			}
		}
	}
	assert.Equal(t, map[string]int64{"bash/deny": 3, "read/allow": 1}, counts)
	assert.EqualValues(t, 4, histCount)
}

func TestUnregisteredNameIsBounded(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("x", 5000)
	res := h.agent(t).Run("r").Execute(context.Background(), call("c", long, `{}`))
	assert.ErrorIs(t, res.Err, executor.ErrUnknownTool)
	assert.Less(t, len(res.Content), 400)
	got := attrMap(h.lastSpan(t).Attributes)
	assert.Len(t, got[semconv.GenAIToolNameKey].AsString(), 256)
	assert.Equal(t, "execute_tool", h.lastSpan(t).Name)
}

func TestErrorHandlerPerExecutor(t *testing.T) {
	var global []error
	otel.SetErrorHandler(handlerFunc(func(err error) { global = append(global, err) }))
	t.Cleanup(func() { otel.SetErrorHandler(handlerFunc(func(error) {})) })
	var mine []error
	h := newHarness(t, executor.WithOnTrace(func(context.Context, executor.ToolCallTrace) error { return errors.New("sink down") }),
		executor.WithErrorHandler(func(err error) { mine = append(mine, err) }))
	run := h.agent(t).Run("r")
	for range 2 {
		res := run.Execute(context.Background(), call("c", "bash", `{"command":"ls"}`))
		assert.False(t, res.IsError)
	}
	require.Len(t, mine, 2)
	assert.ErrorContains(t, mine[0], "sink down")
	assert.Empty(t, global, "a per-executor handler replaces the global one")
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	var errs int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != executor.MetricErrors {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				kind, _ := dp.Attributes.Value(semconv.ErrorTypeKey)
				assert.Equal(t, "trace_hook", kind.AsString())
				errs += dp.Value
			}
		}
	}
	assert.EqualValues(t, 2, errs)
}

func TestToolResultCarriesSpanIDs(t *testing.T) {
	h := newHarness(t, executor.WithGates(gate.DenyTools("no", "bash")))
	for _, c := range []executor.ToolCall{call("c1", "bash", `{"command":"ls"}`), call("c2", "read", `{}`), call("c3", "nope", `{}`)} {
		res := h.agent(t).Run("r").Execute(context.Background(), c)
		s := h.lastSpan(t)
		assert.Equal(t, s.SpanContext.TraceID(), res.TraceID, c.ID)
		assert.Equal(t, s.SpanContext.SpanID(), res.SpanID, c.ID)
		assert.True(t, res.SpanID.IsValid())
	}
}

// TestRecordLimitIsBounded: a record limit above MaxRecordLimit records at
// most MaxRecordLimit bytes of a call's input, so the export path never
// cuts a chained value (the chain covers the recorded input).
func TestRecordLimitIsBounded(t *testing.T) {
	for _, limit := range []int{executor.MaxRecordLimit / 2, executor.MaxRecordLimit, 16 << 20} {
		h := newHarness(t, executor.WithGates(fixed("g", gate.Allow())), executor.WithRecordContent(true), executor.WithRecordLimit(limit))
		in := `{"command":"echo ` + strings.Repeat("A", 1<<20) + `"}`
		h.agent(t).Run("r").Execute(context.Background(), call("c", "bash", in))
		got := attrMap(h.lastSpan(t).Attributes)[semconv.GenAIToolCallArgumentsKey].AsString()
		assert.LessOrEqual(t, len(got), min(limit, executor.MaxRecordLimit), "limit %d", limit)
		assert.Greater(t, len(got), min(limit, executor.MaxRecordLimit)/2, "limit %d", limit)
	}
}
