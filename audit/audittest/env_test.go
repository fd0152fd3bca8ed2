package audittest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// newExecutor returns an executor with one tool, bash, behind a gate that
// denies any command containing "rm", tracing through tp.
func newExecutor(t testing.TB, tp trace.TracerProvider) *executor.Agent {
	t.Helper()
	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
		Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
			return executor.Text("ran"), nil
		},
	})
	require.NoError(t, err)
	noRm := gate.Named("no-rm", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if strings.Contains(c.String("command"), "rm") {
			return gate.Deny("deletes files: " + c.String("command")), nil
		}
		return gate.Allow(), nil
	}))
	ex, err := executor.New(reg, executor.WithGates(noRm), executor.WithTracerProvider(tp))
	require.NoError(t, err)
	agent, err := ex.Agent("coder", executor.AgentAllow("bash"))
	require.NoError(t, err)
	return agent
}

// TestExporterRecordsExecutorDecisions: whatever calls a real executor
// makes, the decisions the audit store reads back through the Exporter
// are exactly the executor's: one per call, with its tool call ID, action,
// source and reason, and the run's agent and service.
func TestExporterRecordsExecutorDecisions(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	res := resource.NewSchemaless(semconv.ServiceName("audittest-prop"), attribute.String("deployment.environment.name", "test"))
	// Batched, flushed once per run: one INSERT per run, as a collector
	// batch would be.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(audittest.NewExporter(env.Writer, env.Database), sdktrace.WithBatchTimeout(time.Hour)),
		sdktrace.WithResource(res))
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })
	agent := newExecutor(t, tp)
	start := time.Now().Add(-time.Minute)

	runs := 0
	rapid.Check(t, func(rt *rapid.T) {
		runs++
		runID := fmt.Sprintf("run-%d", runs)
		cmds := rapid.SliceOfN(rapid.SampledFrom([]string{"ls", "rm -rf /", "git status", "echo 'rm' \"x\"", "cat a\tb", "ünïcode ✓"}), 1, 6).Draw(rt, "commands")
		run := agent.Run(runID)
		want := map[string]executor.ToolResult{}
		for i, c := range cmds {
			in, _ := json.Marshal(map[string]string{"command": c})
			id := fmt.Sprintf("call-%d", i)
			want[id] = run.Execute(ctx, executor.ToolCall{ID: id, Name: "bash", Input: in})
		}
		require.NoError(rt, tp.ForceFlush(ctx))
		page, err := env.Store.Decisions(ctx, audit.Filter{Since: start, RunID: runID}, audit.Page{})
		require.NoError(rt, err)
		require.Len(rt, page.Decisions, len(cmds))
		for _, d := range page.Decisions {
			r, ok := want[d.ToolCallID]
			require.True(rt, ok, "decision for unknown call %q", d.ToolCallID)
			assert.Equal(rt, string(r.Gate.Action), d.Action, d.ToolCallID)
			assert.Equal(rt, r.Gate.Reason, d.Reason, d.ToolCallID)
			assert.Equal(rt, "no-rm", d.Source)
			assert.Equal(rt, r.IsError, d.IsError, d.ToolCallID)
			assert.Equal(rt, "coder", d.Agent)
			assert.Equal(rt, "bash", d.ToolName)
			assert.Equal(rt, "audittest-prop", d.ServiceName)
			delete(want, d.ToolCallID)
		}
	})
}

// TestExporterRowShape: what the Exporter writes for an SDK span — IDs,
// parent, kind, status, resource, scope, events and links — as the
// collector's exporter would write it.
func TestExporterRowShape(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("shape"))))
	tr := tp.Tracer("shape-scope", trace.WithInstrumentationVersion("1.2.3"))
	pctx, parent := tr.Start(ctx, "invoke_agent coder")
	_, child := tr.Start(pctx, "execute_tool bash", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.Bool("b", true), attribute.Int64("n", 42), attribute.StringSlice("s", []string{"a<b", "c"})),
		trace.WithLinks(trace.Link{SpanContext: parent.SpanContext(), Attributes: []attribute.KeyValue{attribute.String("why", "x")}}))
	child.AddEvent("retry", trace.WithAttributes(attribute.Int("attempt", 2)))
	child.SetStatus(codes.Error, "boom")
	child.End()
	parent.End()
	spans := rec.Ended()
	require.Len(t, spans, 2)
	exp := audittest.NewExporter(env.Writer, env.Database)
	require.NoError(t, exp.ExportSpans(ctx, spans))

	var (
		traceID, parentID, kind, service, scope, scopeVer, status, msg string
		attrs, resAttrs                                                map[string]string
		evNames, linkSpans                                             []string
		evAttrs                                                        []map[string]string
		dur                                                            uint64
	)
	require.NoError(t, env.Writer.QueryRow(ctx, "SELECT TraceId, ParentSpanId, SpanKind, ServiceName, ScopeName, ScopeVersion, StatusCode, StatusMessage, "+
		"SpanAttributes, ResourceAttributes, `Events.Name`, `Events.Attributes`, `Links.SpanId`, Duration FROM otel.otel_traces WHERE SpanId = ?",
		child.SpanContext().SpanID().String()).Scan(&traceID, &parentID, &kind, &service, &scope, &scopeVer, &status, &msg,
		&attrs, &resAttrs, &evNames, &evAttrs, &linkSpans, &dur))
	assert.Equal(t, child.SpanContext().TraceID().String(), traceID)
	assert.Equal(t, parent.SpanContext().SpanID().String(), parentID)
	assert.Equal(t, "Client", kind)
	assert.Equal(t, "shape", service)
	assert.Equal(t, "shape", resAttrs["service.name"])
	assert.Equal(t, "shape-scope", scope)
	assert.Equal(t, "1.2.3", scopeVer)
	assert.Equal(t, "Error", status)
	assert.Equal(t, "boom", msg)
	assert.Equal(t, map[string]string{"b": "true", "n": "42", "s": `["a<b","c"]`}, attrs)
	assert.Equal(t, []string{"retry"}, evNames)
	assert.Equal(t, []map[string]string{{"attempt": "2"}}, evAttrs)
	assert.Equal(t, []string{parent.SpanContext().SpanID().String()}, linkSpans)
	assert.EqualValues(t, spans[0].EndTime().Sub(spans[0].StartTime()), dur)

	var rootParent, rootKind, rootStatus string
	require.NoError(t, env.Writer.QueryRow(ctx, "SELECT ParentSpanId, SpanKind, StatusCode FROM otel.otel_traces WHERE SpanId = ?",
		parent.SpanContext().SpanID().String()).Scan(&rootParent, &rootKind, &rootStatus))
	assert.Equal(t, "", rootParent, "a root span has no parent")
	assert.Equal(t, "Internal", rootKind)
	assert.Equal(t, "Unset", rootStatus)

	require.NoError(t, exp.Shutdown(ctx))
	assert.ErrorIs(t, exp.ExportSpans(ctx, spans), audittest.ErrExporterShutdown)
}

// TestEnvStopStart: a stopped Env refuses connections; started again it
// answers on the same address with the same data.
func TestEnvStopStart(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, audittest.Fixture()))
	ping := func() error {
		resp, err := http.Get(env.URL + "/ping")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	require.NoError(t, ping())
	require.NoError(t, env.Stop())
	require.NoError(t, env.Stop(), "stopping twice is a no-op")
	assert.Error(t, ping(), "a stopped server refuses connections")
	_, err := env.Store.Decisions(ctx, audit.Filter{}, audit.Page{})
	assert.Error(t, err)
	require.NoError(t, env.Start(ctx))
	require.NoError(t, env.Start(ctx), "starting twice is a no-op")
	require.NoError(t, ping())
	page, err := env.Store.Decisions(ctx, audit.Filter{}, audit.Page{})
	require.NoError(t, err)
	assert.Len(t, page.Decisions, audittest.FixtureDecisions, "the data survives")
}

// TestEnvsAreIsolated: each Env is a fresh server; rows written in one are
// not in the next, and each has its own address and accounts.
func TestEnvsAreIsolated(t *testing.T) {
	var first *audittest.Env
	t.Run("first", func(t *testing.T) {
		first = audittest.Start(t)
		require.NoError(t, audittest.InsertSpans(context.Background(), first.Writer, first.Database, audittest.Fixture()))
	})
	t.Run("second", func(t *testing.T) {
		env := audittest.Start(t)
		page, err := env.Store.Decisions(context.Background(), audit.Filter{}, audit.Page{})
		require.NoError(t, err)
		assert.Empty(t, page.Decisions)
		assert.NotEqual(t, first.ReaderDSN, env.ReaderDSN)
		assert.NotEqual(t, first.DataDir, env.DataDir)
	})
	// The reader account cannot write.
	t.Run("reader is read-only", func(t *testing.T) {
		env := audittest.Start(t)
		resp, err := http.Post(strings.Replace(env.ReaderDSN, "/default", "/", 1)+"?query=CREATE+TABLE+x+(a+UInt8)+ENGINE=Memory", "text/plain", nil)
		require.NoError(t, err)
		resp.Body.Close()
		assert.NotEqual(t, http.StatusOK, resp.StatusCode)
	})
}

// TestTypicalUse runs the example's test (example_test.go).
func TestTypicalUse(t *testing.T) { testDeniedCallIsAudited(t) }
