package executor_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// noToolName is the toolSums key of the spans without gen_ai.tool.name
// (the aggregated refusals past 16 names).
const noToolName = "\x00no gen_ai.tool.name"

// toolSums is the calls the execute_tool spans record per gen_ai.tool.name
// (gate.calls, 1 when absent).
func toolSums(spans tracetest.SpanStubs) map[string]int64 {
	out := map[string]int64{}
	for _, s := range spans {
		if !strings.HasPrefix(s.Name, "execute_tool") {
			continue
		}
		a := attrMap(s.Attributes)
		tool := noToolName
		if v, ok := a[semconv.GenAIToolNameKey]; ok {
			tool = v.AsString()
		}
		calls := int64(1)
		if v, ok := a[gate.AttrCalls]; ok {
			calls = v.AsInt64()
		}
		out[tool] += calls
	}
	return out
}

// TestAggregatedRefusalsPerTool: the final red team's reproductions.
// F3: an aborted run's aggregated refusals were credited to the tool of
// whichever call's span carried the group (64 calls to exfiltrate_secrets
// then one read_file summed as read_file 64, exfiltrate_secrets 1); now
// each tool's refusals are their own group, so per-tool sums of gate.calls
// are the calls made to each tool. F4: calls after End on an aborted run
// waited to be grouped and nothing flushed them; now after End each call
// has its own span.
func TestAggregatedRefusalsPerTool(t *testing.T) {
	rm := call("d", "bash", `{"command":"rm -rf ~"}`)
	abort := repeatCalls(executor.DefaultRefusalBudget+1, rm)
	type phase struct {
		calls []executor.ToolCall
		end   bool // End after the calls
	}
	for _, tc := range []struct {
		name     string
		phases   []phase
		want     map[string]int64
		afterEnd int // spans exported after the first End: one per call
	}{
		{name: "F3 exfiltrate_secrets then read_file",
			phases: []phase{{calls: concat(abort, repeatCalls(64, call("x", "exfiltrate_secrets", `{}`)),
				[]executor.ToolCall{call("r", "read_file", `{"path":"README.md"}`)}), end: true}},
			want: map[string]int64{"bash": 65, "exfiltrate_secrets": 64, "read_file": 1}},
		{name: "F3 interleaved tools",
			phases: []phase{{calls: concat(abort, repeatCalls(100, call("x", "exfiltrate_secrets", `{}`), call("b", "bash", `{"command":"ls"}`),
				call("r", "read", `{"path":"x"}`))), end: true}},
			want: map[string]int64{"bash": 165, "exfiltrate_secrets": 100, "read": 100}},
		{name: "F4 calls after End",
			phases: []phase{{calls: repeatCalls(66, rm), end: true}, {calls: repeatCalls(40, rm)}},
			want:   map[string]int64{"bash": 106}, afterEnd: 40},
		{name: "F4 End before any call",
			phases: []phase{{end: true}, {calls: concat(abort, repeatCalls(70, call("x", "nosuch", `{}`)))}},
			want:   map[string]int64{"bash": 65, "nosuch": 70}, afterEnd: 135},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, executor.WithGates(noRm))
			run := h.agent(t, executor.AgentAllow("bash", "read")).Run("r")
			before := -1
			for _, p := range tc.phases {
				for _, c := range p.calls {
					run.Execute(context.Background(), c)
				}
				if p.end {
					run.End()
					if before < 0 {
						before = len(decisionsOf(h.spans.GetSpans()))
					}
				}
			}
			run.End()
			require.ErrorIs(t, run.Err(), executor.ErrRefusalBudget)
			spans := h.spans.GetSpans()
			assert.Equal(t, tc.want, toolSums(spans), "per-tool sums of gate.calls")
			if tc.afterEnd > 0 {
				assert.Len(t, decisionsOf(spans)[before:], tc.afterEnd, "after End, one span per call")
			}
		})
	}
}

// TestAggregatedRefusalsHostileNames: the groups are bounded. Tool names
// of any length and bytes are grouped by their bounded span name (valid
// UTF-8, at most gate.MaxNameBytes); past AggregateToolNames names the
// rest share one group without gen_ai.tool.name; every call is counted.
func TestAggregatedRefusalsHostileNames(t *testing.T) {
	h := newHarness(t, executor.WithGates(noRm))
	run := h.agent(t).Run("r")
	ctx := context.Background()
	for range executor.DefaultRefusalBudget + 1 {
		run.Execute(ctx, call("d", "bash", `{"command":"rm -rf ~"}`))
	}
	const names, each = 16 + 5, 70
	total := int64(executor.DefaultRefusalBudget + 1)
	for range each {
		for i := range names {
			name := strings.Repeat(string(rune('a'+i)), 10*gate.MaxNameBytes) + "\xff\xfe"
			run.Execute(ctx, call("x", name, `{}`))
			total++
		}
	}
	run.End()
	sums := toolSums(h.spans.GetSpans())
	var sum int64
	named := 0
	for tool, n := range sums {
		sum += n
		if tool == noToolName || tool == "bash" {
			continue
		}
		named++
		assert.True(t, utf8.ValidString(tool))
		assert.LessOrEqual(t, len(tool), gate.MaxNameBytes)
		assert.Equal(t, int64(each), n, "a grouped tool's calls are all under its name")
	}
	assert.Equal(t, total, sum, "every call is counted")
	assert.Equal(t, 16, named, "at most AggregateToolNames named groups")
	assert.Equal(t, int64((names-16)*each), sums[noToolName], "the rest: one nameless group")
	assert.Less(t, len(decisionsOf(h.spans.GetSpans())), int(total)/8, "still aggregated")
}

func repeatCalls(n int, calls ...executor.ToolCall) []executor.ToolCall {
	out := make([]executor.ToolCall, 0, n*len(calls))
	for range n {
		out = append(out, calls...)
	}
	return out
}

func concat(parts ...[]executor.ToolCall) []executor.ToolCall {
	var out []executor.ToolCall
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
