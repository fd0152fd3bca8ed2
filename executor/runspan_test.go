package executor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// spansByName splits the recorded spans into the run spans (invoke_agent)
// and the rest.
func spansByName(spans tracetest.SpanStubs) (runs, calls tracetest.SpanStubs) {
	for _, s := range spans {
		if s.Name == "invoke_agent tester" {
			runs = append(runs, s)
		} else {
			calls = append(calls, s)
		}
	}
	return runs, calls
}

// TestRunIsOneTrace: a run's first call starts its invoke_agent span
// (GenAI semantic conventions v1.41.0), every call of the run — gated,
// denied, refused before the gate, in a batch, of a Task view — is its
// child in one trace, and End ends it once.
func TestRunIsOneTrace(t *testing.T) {
	h := newHarness(t, executor.WithGates(gate.DenyTools("rm-policy", "deploy")))
	a := h.agent(t, executor.AgentAllow("bash", "deploy"))
	run := a.Run("run-7", executor.WithTask("task-1"))
	assert.False(t, run.SpanContext().IsValid(), "no span before the first call")
	ctx := context.Background()
	run.Execute(ctx, call("c1", "bash", `{"command":"ls"}`))
	run.Execute(ctx, call("c2", "deploy", `{}`))
	run.Execute(ctx, call("c3", "delete_everything", `{}`))
	run.Execute(ctx, call("c4", "read", `{}`))
	run.ExecuteBatch(ctx, []executor.ToolCall{call("c5", "bash", `{"command":"a"}`), call("c6", "bash", `{"command":""}`)})
	run.Task("task-2").Execute(ctx, call("c7", "bash", `{"command":"b"}`))
	sc := run.SpanContext()
	require.True(t, sc.IsValid())
	_, calls := spansByName(h.spans.GetSpans())
	require.Len(t, calls, 7, "the run span has not ended yet")
	run.End()
	run.End() // idempotent
	run.Task("task-2").End()
	runs, calls := spansByName(h.spans.GetSpans())
	require.Len(t, runs, 1)
	require.Len(t, calls, 7)
	r := runs[0]
	assert.Equal(t, sc, r.SpanContext)
	assert.False(t, r.Parent.IsValid(), "a root: ctx carried no span")
	assert.Equal(t, trace.SpanKindInternal, r.SpanKind)
	// The run's chain at End: every call is a position (the Task view's
	// too); the head is the hash of the last.
	var chainID, head string
	for _, c := range calls {
		m := attrMap(c.Attributes)
		chainID = m[gate.AttrChainID].AsString()
		if m[gate.AttrChainSeq].AsInt64() == 7 {
			head = m[gate.AttrChainHash].AsString()
		}
	}
	require.NotEmpty(t, head)
	assert.Equal(t, map[attribute.Key]attribute.Value{
		semconv.GenAIOperationNameKey:  attribute.StringValue("invoke_agent"),
		semconv.GenAIAgentNameKey:      attribute.StringValue("tester"),
		semconv.GenAIConversationIDKey: attribute.StringValue("run-7"),
		gate.AttrRunID:                 attribute.StringValue("run-7"),
		gate.AttrTaskID:                attribute.StringValue("task-1"),
		gate.AttrChainID:               attribute.StringValue(chainID),
		gate.AttrChainLength:           attribute.Int64Value(7),
		gate.AttrChainHead:             attribute.StringValue(head),
	}, attrMap(r.Attributes))
	assert.Equal(t, codes.Unset, r.Status.Code)
	for _, c := range calls {
		assert.Equal(t, sc.TraceID(), c.SpanContext.TraceID(), c.Name)
		assert.Equal(t, sc.SpanID(), c.Parent.SpanID(), c.Name)
		assert.True(t, c.EndTime.Before(r.EndTime) || c.EndTime.Equal(r.EndTime))
	}

	// Calls after End run, stay in the run's trace, under the ended span.
	res := run.Execute(ctx, call("c8", "bash", `{"command":"late"}`))
	assert.False(t, res.IsError)
	assert.Equal(t, sc.TraceID(), res.TraceID)
	late := h.lastSpan(t)
	assert.Equal(t, sc.SpanID(), late.Parent.SpanID())
	runs, _ = spansByName(h.spans.GetSpans())
	assert.Len(t, runs, 1, "End is not undone")
}

// TestRunSpanParent pins which span a call's span is the child of, by
// what the call's ctx carries.
func TestRunSpanParent(t *testing.T) {
	h := newHarness(t)
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSyncer(h.spans)).Tracer("app")
	a := h.agent(t)

	t.Run("the developer's span is the run span's parent", func(t *testing.T) {
		ctx, req := tracer.Start(context.Background(), "handle request")
		run := a.Run("r1")
		run.Execute(ctx, call("c1", "bash", `{"command":"ls"}`))
		res := run.Execute(context.Background(), call("c2", "bash", `{"command":"ls"}`))
		run.End()
		req.End()
		sc := run.SpanContext()
		assert.Equal(t, req.SpanContext().TraceID(), sc.TraceID(), "the run joins the developer's trace")
		assert.Equal(t, sc.TraceID(), res.TraceID)
		for _, s := range h.spans.GetSpans() {
			switch s.Name {
			case "invoke_agent tester":
				assert.Equal(t, req.SpanContext().SpanID(), s.Parent.SpanID())
			case "execute_tool bash":
				assert.Equal(t, sc.SpanID(), s.Parent.SpanID(), "same ctx or none: the run span")
			}
		}
		h.spans.Reset()
	})

	t.Run("a span of the run's trace is kept as the parent", func(t *testing.T) {
		run := a.Run("r2")
		rctx := run.Context(context.Background())
		assert.Equal(t, run.SpanContext(), trace.SpanContextFromContext(rctx))
		chatCtx, chat := tracer.Start(rctx, "chat model")
		res := run.Execute(chatCtx, call("c1", "bash", `{"command":"ls"}`))
		chat.End()
		run.End()
		assert.Equal(t, run.SpanContext().TraceID(), res.TraceID)
		s := h.spans.GetSpans()[0]
		assert.Equal(t, "execute_tool bash", s.Name)
		assert.Equal(t, chat.SpanContext().SpanID(), s.Parent.SpanID())
		h.spans.Reset()
	})

	t.Run("a span of another trace is the parent, linked to the run", func(t *testing.T) {
		run := a.Run("r3")
		run.Execute(context.Background(), call("c1", "bash", `{"command":"ls"}`))
		other, span := tracer.Start(context.Background(), "another request")
		res := run.Execute(other, call("c2", "bash", `{"command":"ls"}`))
		span.End()
		run.End()
		assert.Equal(t, span.SpanContext().TraceID(), res.TraceID)
		var found bool
		for _, s := range h.spans.GetSpans() {
			if s.SpanContext.SpanID() == res.SpanID {
				found = true
				assert.Equal(t, span.SpanContext().SpanID(), s.Parent.SpanID())
				require.Len(t, s.Links, 1)
				assert.Equal(t, run.SpanContext(), s.Links[0].SpanContext)
			}
		}
		assert.True(t, found)
		h.spans.Reset()
	})
}

// TestRunSpanOff: WithRunSpan(false) starts no span, and each call is a
// trace of its own (or a child of the ctx's span); a run ended before any
// call starts none either.
func TestRunSpanOff(t *testing.T) {
	h := newHarness(t)
	a := h.agent(t)
	off := a.Run("r", executor.WithRunSpan(false))
	r1 := off.Execute(context.Background(), call("c1", "bash", `{"command":"ls"}`))
	r2 := off.Execute(context.Background(), call("c2", "bash", `{"command":"ls"}`))
	off.End()
	assert.NotEqual(t, r1.TraceID, r2.TraceID)
	assert.False(t, off.SpanContext().IsValid())
	assert.Equal(t, context.Background(), off.Context(context.Background()))

	runs, calls := spansByName(h.spans.GetSpans())
	assert.Empty(t, runs)
	assert.Len(t, calls, 2)
}

// TestRunSpanEndBeforeFirstCall: End before any call does not leave the
// run's later calls as root traces of their own: the first of them starts
// the run span (ended at once), and every call is its child, one trace.
func TestRunSpanEndBeforeFirstCall(t *testing.T) {
	h := newHarness(t)
	early := h.agent(t).Run("r2")
	early.End()
	r3 := early.Execute(context.Background(), call("c3", "bash", `{"command":"ls"}`))
	r4 := early.Execute(context.Background(), call("c4", "bash", `{"command":"ls"}`))
	early.End()
	assert.Equal(t, r3.TraceID, r4.TraceID)
	runs, calls := spansByName(h.spans.GetSpans())
	require.Len(t, runs, 1)
	require.Len(t, calls, 2)
	for _, c := range calls {
		assert.Equal(t, runs[0].SpanContext.SpanID(), c.Parent.SpanID(), "call %s", c.Name)
	}
	assert.Equal(t, runs[0].SpanContext, early.SpanContext())
}

// TestRunSpanAborted: a run aborted by a denial ends with status Error.
func TestRunSpanAborted(t *testing.T) {
	h := newHarness(t, executor.WithGates(gate.DenyTools("no-deploy", "deploy")), executor.WithAbortOnDeny(true))
	run := h.agent(t).Run("r")
	run.Execute(context.Background(), call("c1", "deploy", `{}`))
	run.End()
	runs, _ := spansByName(h.spans.GetSpans())
	require.Len(t, runs, 1)
	assert.Equal(t, codes.Error, runs[0].Status.Code)
	assert.Equal(t, executor.ErrorTypeRunAborted, attrMap(runs[0].Attributes)[semconv.ErrorTypeKey].AsString())
}

// TestRunSpanConcurrentStart: calls racing to start the run span start
// exactly one (run with -race).
func TestRunSpanConcurrentStart(t *testing.T) {
	h := newHarness(t, executor.WithConcurrency(8))
	run := h.agent(t).Run("r")
	calls := make([]executor.ToolCall, 32)
	for i := range calls {
		calls[i] = call("c"+itoa(i), "bash", `{"command":"ls"}`)
	}
	done := make(chan struct{})
	go func() { run.End(); close(done) }()
	results := run.ExecuteBatch(context.Background(), calls)
	<-done
	run.End()
	runs, _ := spansByName(h.spans.GetSpans())
	assert.LessOrEqual(t, len(runs), 1)
	traces := map[trace.TraceID]bool{}
	for _, r := range results {
		traces[r.TraceID] = true
	}
	if len(runs) == 1 {
		assert.Len(t, traces, 1, "one run span: every call in its trace")
	}
}

// TestChainEndWithoutRunSpan: with WithRunSpan(false), Run.ChainEnd gives
// the attributes that close the run's chain on the caller's own span: the
// calls' chain id, the number of positions and the last one's hash.
func TestChainEndWithoutRunSpan(t *testing.T) {
	h := newHarness(t, executor.WithGates(gate.DenyTools("policy", "deploy")))
	off := h.agent(t, executor.AgentAllow("bash", "deploy")).Run("r", executor.WithRunSpan(false))
	assert.Nil(t, off.ChainEnd(), "no decision yet")
	off.Execute(context.Background(), call("c1", "bash", `{"command":"ls"}`))
	off.Execute(context.Background(), call("c2", "deploy", `{"command":"ls"}`))
	off.End()
	runs, calls := spansByName(h.spans.GetSpans())
	assert.Empty(t, runs)
	require.Len(t, calls, 2)
	end := attrMap(off.ChainEnd())
	require.Len(t, end, 3)
	assert.EqualValues(t, 2, end[gate.AttrChainLength].AsInt64())
	var last map[attribute.Key]attribute.Value
	for _, c := range calls {
		m := attrMap(c.Attributes)
		assert.Equal(t, end[gate.AttrChainID].AsString(), m[gate.AttrChainID].AsString())
		if m[gate.AttrChainSeq].AsInt64() == 2 {
			last = m
		}
	}
	require.NotNil(t, last)
	assert.Equal(t, last[gate.AttrChainHash].AsString(), end[gate.AttrChainHead].AsString())
}
