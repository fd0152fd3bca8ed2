package otelbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge/sampling"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// hostileBytes draws strings a prompt-injected model may produce:
// invalid UTF-8, NUL, control bytes, long runs.
func hostileBytes(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.StringN(0, 40, -1), // arbitrary code points
		rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 60), func(b []byte) string { return string(b) }),
		rapid.SampledFrom([]string{"\xc3\x28", "\x00", "\xff\xfe", "a\x1b[2Jb", "\xed\xa0\x80", strings.Repeat("\xf0", 300)}),
	).Draw(t, label)
}

// TestRedTeamStrictHostileStrings (red team): strict mode over the real
// spool and the real OTLP gRPC path, with the model choosing tool names,
// call IDs, run IDs, agent names, arguments and the tool's result (any
// bytes, recorded with WithRecordContent): no commit is refused or fails
// (the spool's protobuf encoding takes every attribute), every call
// whose tool ran has its decision at the receiver, and nothing is lost.
func TestRedTeamStrictHostileStrings(t *testing.T) {
	r := startReceiver(t)
	p, err := Setup(context.Background(), Config{Endpoint: r.addr, Insecure: true, SkipCheck: true,
		Sampling: sampling.Config{Setting: sampling.MustParse("all")},
		Spool:    spool.Config{Dir: t.TempDir()}})
	require.NoError(t, err)
	defer func() { _ = p.Shutdown(context.Background()) }()
	var mu sync.Mutex
	ran := map[string]bool{} // call IDs whose tool ran
	var result string
	var toolRan bool
	reg, err := executor.NewRegistry(executor.Tool{Name: "echo",
		Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			toolRan = true
			return executor.Text(result), nil
		}})
	require.NoError(t, err)
	var errs []error
	ex, err := executor.New(reg, executor.WithTracerProvider(p), executor.WithWriteAhead(p), executor.WithRecordContent(true),
		executor.WithGates(gate.DenyTools("policy", "nosuch")), executor.WithErrorHandler(func(e error) { errs = append(errs, e) }))
	require.NoError(t, err)
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		a, err := ex.Agent(hostileBytes(rt, "agent"), executor.AgentPresets(executor.PresetAll))
		if err != nil {
			rt.Skip("agent name refused: ", err)
		}
		run := a.Run(hostileBytes(rt, "run"))
		for i := range rapid.IntRange(1, 4).Draw(rt, "calls") {
			tool := rapid.SampledFrom([]string{"echo", "nosuch", ""}).Draw(rt, "toolpick")
			if tool == "" {
				tool = hostileBytes(rt, "tool")
			}
			mu.Lock()
			result, toolRan = hostileBytes(rt, "result"), false
			mu.Unlock()
			args, _ := json.Marshal(map[string]string{"x": hostileBytes(rt, "arg")})
			if rapid.Bool().Draw(rt, "rawargs") {
				args = []byte(hostileBytes(rt, "raw"))
			}
			id := fmt.Sprint(n, "-", i, hostileBytes(rt, "id"))
			res := run.Execute(context.Background(), executor.ToolCall{ID: id, Name: tool, Input: args})
			mu.Lock()
			if toolRan {
				ran[id] = true
			}
			mu.Unlock()
			if res.ErrorType == executor.ErrorTypeAuditUnavailable {
				rt.Fatalf("call %q denied: audit unavailable: %v", id, res.Err)
			}
		}
		run.End()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, p.ForceFlush(ctx))
	got := map[string]bool{}
	for _, s := range r.spans() {
		got[kvMap(s.span.GetAttributes())[string(semconv.GenAIToolCallIDKey)]] = true
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d runs, %d calls ran, %d spans received", n, len(ran), len(got))
	require.NotEmpty(t, ran)
	for id := range ran {
		require.True(t, got[gate.SafeText(id, gate.MaxNameBytes)], "the decision of call %q, whose tool ran, reached the collector", id)
	}
	st := p.Stats()
	require.Zero(t, st.Lost(), "%+v", st)
	require.Zero(t, st.Spool.RefusedCommits)
}
