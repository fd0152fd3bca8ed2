package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// harness is an executor wired to an in-memory span exporter and a manual
// metric reader.
type harness struct {
	ex     *executor.Executor
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
	// calls counts executions per tool.
	calls map[string]*atomic.Int64
}

const bashSchema = `{"type":"object","properties":{"command":{"type":"string","minLength":1}},"required":["command"],"additionalProperties":false}`

// testTools: bash echoes its command; read is read-only; deploy is
// consequential; boom panics; fail returns an error; big returns 10,000
// bytes; typed has an output schema.
func testTools(calls map[string]*atomic.Int64) []executor.Tool {
	count := func(name string) *atomic.Int64 {
		c := &atomic.Int64{}
		calls[name] = c
		return c
	}
	bash := count("bash")
	read := count("read")
	deploy := count("deploy")
	boom := count("boom")
	fail := count("fail")
	big := count("big")
	typed := count("typed")
	soft := count("soft")
	no := false
	return []executor.Tool{
		{Name: "bash", Description: "run a shell command", InputSchema: json.RawMessage(bashSchema),
			Annotations: gate.Annotations{OpenWorldHint: &no},
			Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
				bash.Add(1)
				var v struct{ Command string }
				if err := json.Unmarshal(in, &v); err != nil {
					return executor.Result{}, err
				}
				return executor.Text("ran: " + v.Command), nil
			}},
		{Name: "read", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
			Annotations: gate.Annotations{ReadOnlyHint: true},
			Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
				read.Add(1)
				return executor.Text("contents"), nil
			}},
		{Name: "deploy", Consequential: true,
			Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
				deploy.Add(1)
				return executor.Text("deployed"), nil
			}},
		{Name: "boom", Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
			boom.Add(1)
			panic("kaboom")
		}},
		{Name: "fail", Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
			fail.Add(1)
			return executor.Result{}, errors.New("disk full")
		}},
		{Name: "big", MaxOutputBytes: 200, Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
			big.Add(1)
			return executor.Text("HEAD" + strings.Repeat("x", 9992) + "TAIL"), nil
		}},
		{Name: "soft", Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
			soft.Add(1)
			return executor.Result{Content: "quota exceeded", IsError: true}, nil
		}},
		{Name: "typed", OutputSchema: json.RawMessage(`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"out":{"type":"string"}}}`),
			Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
				typed.Add(1)
				var v struct{ Out string }
				_ = json.Unmarshal(in, &v)
				return executor.Result{Content: "typed", Structured: json.RawMessage(v.Out)}, nil
			}},
	}
}

func newHarness(t testing.TB, opts ...executor.Option) *harness {
	t.Helper()
	h := &harness{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader(), calls: map[string]*atomic.Int64{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(h.spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	reg, err := executor.NewRegistry(testTools(h.calls)...)
	require.NoError(t, err)
	all := append([]executor.Option{executor.WithTracerProvider(tp), executor.WithMeterProvider(mp)}, opts...)
	h.ex, err = executor.New(reg, all...)
	require.NoError(t, err)
	return h
}

func (h *harness) agent(t testing.TB, opts ...executor.AgentOption) *executor.Agent {
	t.Helper()
	if len(opts) == 0 {
		opts = []executor.AgentOption{executor.AgentPresets(executor.PresetAll)}
	}
	a, err := h.ex.Agent("tester", opts...)
	require.NoError(t, err)
	return a
}

// attrs returns the attributes of the only span, by key.
func (h *harness) lastSpan(t testing.TB) tracetest.SpanStub {
	t.Helper()
	ss := h.spans.GetSpans()
	require.NotEmpty(t, ss, "no span recorded")
	return ss[len(ss)-1]
}

func attrMap(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func call(id, name, input string) executor.ToolCall {
	return executor.ToolCall{ID: id, Name: name, Input: json.RawMessage(input)}
}

func gateFunc(f func(context.Context, gate.ToolCallContext) (gate.Decision, error)) gate.Gate {
	return gate.Func(f)
}

func fixed(name string, d gate.Decision) gate.Gate {
	return gate.Named(name, gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) { return d, nil }))
}

var _ = fmt.Sprint

func itoa(n int) string { return fmt.Sprint(n) }
