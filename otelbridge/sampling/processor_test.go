package sampling

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge/internal/spantest"
)

// sampled builds a provider whose spans pass the sampling processor into an
// in-memory exporter.
func sampled(t testing.TB, s Setting, capacity int) (trace.Tracer, *tracetest.InMemoryExporter, *Processor) {
	t.Helper()
	mem := tracetest.NewInMemoryExporter()
	sp, err := NewProcessor(sdktrace.NewSimpleSpanProcessor(mem), Config{Setting: s, AncestorCapacity: capacity})
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp.Tracer("test"), mem, sp
}

// Span fixtures shared with the other otelbridge parts' tests (internal/spantest).
var (
	agentAttrs = spantest.AgentAttrs
	toolAttrs  = spantest.ToolAttrs
	allowed    = spantest.Allowed
	denied     = spantest.Denied
	rejected   = spantest.Rejected
	optedOut   = spantest.OptedOut
	leaf       = spantest.Leaf
	emitRuns   = spantest.EmitRuns
)

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, 0, len(spans))
	for _, s := range spans {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

func TestSamplingModesKeepExactly(t *testing.T) {
	everything := []string{"GET /ask", "chat gpt", "chat gpt 2", "chat gpt 3", "execute_tool curl", "execute_tool lookup",
		"execute_tool ls", "execute_tool optout", "execute_tool read", "execute_tool rm", "invoke_agent coder",
		"invoke_agent helper", "invoke_agent planner", "invoke_agent x"}
	tests := []struct {
		sampling string
		want     []string
	}{
		{"all", everything},
		{"decisions", []string{"GET /ask", "execute_tool curl", "execute_tool ls", "execute_tool optout", "execute_tool read",
			"execute_tool rm", "invoke_agent coder", "invoke_agent helper", "invoke_agent planner", "invoke_agent x"}},
		{"deny-only", []string{"execute_tool curl", "execute_tool rm", "invoke_agent helper", "invoke_agent planner"}},
		{"ratio:0", []string{"execute_tool curl", "execute_tool rm", "invoke_agent helper", "invoke_agent planner"}},
		{"ratio:1", []string{"execute_tool curl", "execute_tool ls", "execute_tool optout", "execute_tool read",
			"execute_tool rm", "invoke_agent coder", "invoke_agent helper", "invoke_agent planner"}},
	}
	for _, tt := range tests {
		t.Run(tt.sampling, func(t *testing.T) {
			tr, mem, sp := sampled(t, MustParse(tt.sampling), 0)
			emitRuns(tr)
			assert.Equal(t, tt.want, names(mem.GetSpans()))
			st := sp.Stats()
			assert.Equal(t, int64(len(everything)), st.Ended)
			assert.Equal(t, int64(len(tt.want)), st.Kept)
			assert.Equal(t, st.Ended-st.Kept, st.Filtered)
			assert.Zero(t, st.AncestorsPending, "every mark was taken by its span")
		})
	}
}

func TestSamplingKeptSpansAreUnchanged(t *testing.T) {
	tr, mem, _ := sampled(t, MustParse("deny-only"), 0)
	emitRuns(tr)
	var rm, planner tracetest.SpanStub
	for _, s := range mem.GetSpans() {
		switch s.Name {
		case "execute_tool rm":
			rm = s
		case "invoke_agent planner":
			planner = s
		}
	}
	require.True(t, rm.SpanContext.IsValid())
	assert.Equal(t, planner.SpanContext.SpanID(), rm.Parent.SpanID(), "the kept denial still points to its kept agent span")
	assert.Contains(t, rm.Attributes, gate.AttrReason.String("rm -rf"))
}

func TestSamplingRatioKeepsWholeTraces(t *testing.T) {
	tr, mem, _ := sampled(t, MustParse("ratio:0.3"), 0)
	const runs = 2000
	for i := range runs {
		ctx, agent := tr.Start(context.Background(), "invoke_agent a", trace.WithAttributes(agentAttrs("a")...))
		leaf(ctx, tr, "execute_tool one", toolAttrs("one", allowed...)...)
		leaf(ctx, tr, "execute_tool two", toolAttrs("two", allowed...)...)
		if i%10 == 0 {
			leaf(ctx, tr, "execute_tool bad", toolAttrs("bad", denied...)...)
		}
		agent.End()
	}
	perTrace := map[trace.TraceID][]string{}
	for _, s := range mem.GetSpans() {
		perTrace[s.SpanContext.TraceID()] = append(perTrace[s.SpanContext.TraceID()], s.Name)
	}
	withAllowed, denials := 0, 0
	for id, ns := range perTrace {
		sort.Strings(ns)
		hasBad := ns[0] == "execute_tool bad"
		if hasBad {
			denials++
		}
		keep := keepsTrace(id, ratioBound(0.3))
		if keep {
			withAllowed++
			want := []string{"execute_tool one", "execute_tool two", "invoke_agent a"}
			if hasBad {
				want = append([]string{"execute_tool bad"}, want...)
			}
			assert.Equal(t, want, ns, "a sampled trace keeps all its allowed calls")
		} else {
			assert.Equal(t, []string{"execute_tool bad", "invoke_agent a"}, ns, "an unsampled trace keeps only its denial and agent")
		}
	}
	assert.Equal(t, runs/10, denials, "every denial is kept")
	assert.InDelta(t, 0.3, float64(withAllowed)/runs, 0.05)
}

func TestSamplingLateChildCannotResurrectParent(t *testing.T) {
	tr, mem, _ := sampled(t, MustParse("deny-only"), 0)
	ctx, agent := tr.Start(context.Background(), "invoke_agent a", trace.WithAttributes(agentAttrs("a")...))
	_, call := tr.Start(ctx, "execute_tool rm", trace.WithAttributes(toolAttrs("rm", denied...)...))
	agent.End() // the agent ends first: nothing under it was denied yet
	call.End()
	assert.Equal(t, []string{"execute_tool rm"}, names(mem.GetSpans()), "the denial itself is always kept")
}

func TestSamplingAncestorCapacity(t *testing.T) {
	tr, mem, sp := sampled(t, MustParse("deny-only"), 4)
	// Ten agents open at once, each with a denial: only the last four marks
	// survive until their agents end.
	type open struct {
		ctx  context.Context
		span trace.Span
	}
	var agents []open
	for i := range 10 {
		ctx, s := tr.Start(context.Background(), fmt.Sprintf("invoke_agent a%d", i), trace.WithAttributes(agentAttrs("a")...))
		agents = append(agents, open{ctx, s})
	}
	for _, a := range agents {
		leaf(a.ctx, tr, "execute_tool rm", toolAttrs("rm", denied...)...)
	}
	for _, a := range agents {
		a.span.End()
	}
	got := names(mem.GetSpans())
	assert.Len(t, got, 10+4)
	assert.Subset(t, got, []string{"invoke_agent a6", "invoke_agent a7", "invoke_agent a8", "invoke_agent a9"})
	st := sp.Stats()
	assert.Equal(t, int64(6), st.AncestorsEvicted)
	assert.Zero(t, st.AncestorsPending)
}

func TestSamplingUnsampledSpansPassThrough(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	sp, err := NewProcessor(sdktrace.NewSimpleSpanProcessor(mem), Config{Setting: MustParse("deny-only")})
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp), sdktrace.WithSampler(sdktrace.NeverSample()))
	_, s := tp.Tracer("t").Start(context.Background(), "x")
	s.End()
	assert.Zero(t, sp.Stats().Ended, "unsampled spans are not counted as decisions")
	assert.Empty(t, mem.GetSpans())
}

func TestNewProcessorErrors(t *testing.T) {
	_, err := NewProcessor(nil, Config{})
	require.Error(t, err)
	_, err = NewProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewInMemoryExporter()), Config{Setting: Setting{Mode: "x"}})
	require.ErrorIs(t, err, ErrInvalid)
}

// TestSamplingKeepForcesSpans: a span Config.Keep selects is kept in every
// mode, like a denial (its ancestors too), and Keep selects nothing else.
func TestSamplingKeepForcesSpans(t *testing.T) {
	for _, mode := range []string{"deny-only", "ratio:0", "decisions"} {
		t.Run(mode, func(t *testing.T) {
			var mu sync.Mutex
			forced := map[trace.SpanID]bool{}
			mem := tracetest.NewInMemoryExporter()
			sp, err := NewProcessor(sdktrace.NewSimpleSpanProcessor(mem), Config{Setting: MustParse(mode),
				Keep: func(sc trace.SpanContext) bool {
					mu.Lock()
					defer mu.Unlock()
					return forced[sc.SpanID()]
				}})
			require.NoError(t, err)
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp))
			tr := tp.Tracer("test")
			ctx, req := tr.Start(context.Background(), "POST /run")
			actx, agent := tr.Start(ctx, "invoke_agent a", trace.WithAttributes(agentAttrs("a")...))
			_, committed := tr.Start(actx, "execute_tool deploy", trace.WithAttributes(toolAttrs("deploy", allowed...)...))
			mu.Lock()
			forced[committed.SpanContext().SpanID()] = true
			mu.Unlock()
			committed.End()
			leaf(actx, tr, "execute_tool ls", toolAttrs("ls", allowed...)...)
			agent.End()
			req.End()
			got := names(mem.GetSpans())
			assert.Subset(t, got, []string{"POST /run", "execute_tool deploy", "invoke_agent a"}, "the forced call and its ancestors")
			if mode != "decisions" {
				assert.NotContains(t, got, "execute_tool ls", "Keep selects only its own spans")
			}
		})
	}
}
