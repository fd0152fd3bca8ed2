package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// stack is one real pipeline: embedded ClickHouse with the audit schema,
// Jaeger and our collector, each its own process.
type stack struct {
	ch        *testenv.ClickHouse
	jaeger    *testenv.Jaeger
	collector *testenv.Collector
	store     *audit.Store // the reader's connection
}

type stackConfig struct {
	collectorOpts []testenv.CollectorOption
	noJaeger      bool
}

type stackOption func(*stackConfig)

func withCollector(opts ...testenv.CollectorOption) stackOption {
	return func(c *stackConfig) { c.collectorOpts = append(c.collectorOpts, opts...) }
}

func withoutJaeger() stackOption { return func(c *stackConfig) { c.noJaeger = true } }

func startStack(t testing.TB, opts ...stackOption) *stack {
	t.Helper()
	var cfg stackConfig
	for _, o := range opts {
		o(&cfg)
	}
	ctx := context.Background()
	s := &stack{ch: testenv.StartClickHouse(t)}
	w, err := audit.Open(ctx, s.ch.WriterDSN)
	require.NoError(t, err)
	_, err = w.Migrate(ctx)
	require.NoError(t, err, "auditq migrate")
	require.NoError(t, w.Close())
	s.store, err = audit.Open(ctx, s.ch.ReaderDSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.store.Close() })

	copts := []testenv.CollectorOption{
		testenv.WithClickHouse(s.ch.URL, s.ch.Writer.Name, s.ch.Writer.Password, ""),
		testenv.WithDecisionWait(time.Second),
	}
	if !cfg.noJaeger {
		s.jaeger = testenv.StartJaeger(t)
		copts = append(copts, testenv.WithJaegerOTLP(s.jaeger.OTLPGRPC))
	}
	s.collector = testenv.StartCollector(t, append(copts, cfg.collectorOpts...)...)
	return s
}

// provider sets up otelbridge exporting to the stack's collector.
func (s *stack) provider(t testing.TB, service string, mode string) *otelbridge.Provider {
	t.Helper()
	return s.providerCfg(t, otelbridge.Config{ServiceName: service, Sampling: sampling.Config{Setting: sampling.MustParse(mode)}})
}

// providerCfg sets up otelbridge with cfg, its endpoint (and headers, and
// a 100 ms batch timeout unless cfg has them) set to the stack's collector.
func (s *stack) providerCfg(t testing.TB, cfg otelbridge.Config) *otelbridge.Provider {
	t.Helper()
	cfg.Endpoint = s.collector.GRPCEndpoint
	cfg.Insecure = true
	if cfg.Headers == nil {
		cfg.Headers = s.collector.Headers() // the collector's bearer token
	}
	if cfg.Batch.BatchTimeout == 0 {
		cfg.Batch.BatchTimeout = 100 * time.Millisecond
	}
	p, err := otelbridge.Setup(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = p.Shutdown(ctx)
	})
	return p
}

// commands are real shell commands (testdata/real/commands.txt).
func commands(t testing.TB) []string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	f, err := os.Open(filepath.Join(filepath.Dir(file), "..", "testdata", "real", "commands.txt"))
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

// denyPolicy is the workload's gate: it denies commands that delete, fetch
// from the network or escalate, and allows the rest.
func denyPolicy() gate.Gate {
	return gate.Named("e2e.policy", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		cmd, _ := c.Input["command"].(string)
		for _, bad := range []string{"rm ", "curl ", "wget ", "sudo "} {
			if strings.Contains(cmd, bad) {
				return gate.Deny("command uses " + strings.TrimSpace(bad)), nil
			}
		}
		return gate.Allow(), nil
	}))
}

// auditGate is the workload's first gate: it allows every call at risk
// safe under rule e2e.seen, so that each decision has two verdicts and its
// span carries gate.verdicts (a string slice) through the pipeline.
func auditGate() gate.Gate {
	return gate.Named("e2e.audit", gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		return gate.Decision{Action: gate.ActionAllow, Risk: gate.RiskSafe, Rule: "e2e.seen"}, nil
	}))
}

// newExecutor builds the executor under test on tp: a bash tool (echo
// only, nothing runs) behind auditGate and denyPolicy.
func newExecutor(t testing.TB, tp trace.TracerProvider, concurrency int, extra ...executor.Option) *executor.Executor {
	t.Helper()
	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "bash",
		Description: "run a shell command (echoed, never run, in tests)",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","minLength":1}},"required":["command"]}`),
		Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
			return executor.Text(string(in)), nil
		},
	}, executor.Tool{
		Name: "web_fetch",
		Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
			return executor.Text("fetched"), nil
		},
	})
	require.NoError(t, err)
	opts := []executor.Option{executor.WithTracerProvider(tp), executor.WithGates(auditGate(), denyPolicy())}
	if concurrency > 0 {
		opts = append(opts, executor.WithConcurrency(concurrency))
	}
	opts = append(opts, extra...)
	ex, err := executor.New(reg, opts...)
	require.NoError(t, err)
	return ex
}

// outcome is what a workload did, from the executor's own results.
type outcome struct {
	mu sync.Mutex
	// calls by tool call ID → the decision's action: every gated call and
	// every call refused before the gate.
	calls map[string]gate.Action
	// traceOf maps each tool call ID to its trace ID.
	traceOf map[string]string
	// verdicts maps each gated tool call ID to its gate.verdicts entries
	// (gate.EncodeVerdicts of the result's record).
	verdicts map[string][]string
	// agentSpans are the invoke_agent spans made, by trace ID.
	agentSpans map[string]string
	// chatSpans are the ungated LLM spans made.
	chatSpans int
	// ungated counts calls refused before any gate (unreachable tool):
	// decisions too (deny, gate.stage reachability), in calls.
	ungated int
}

func newOutcome() *outcome {
	return &outcome{calls: map[string]gate.Action{}, traceOf: map[string]string{}, verdicts: map[string][]string{}, agentSpans: map[string]string{}}
}

func (o *outcome) count(action gate.Action) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, a := range o.calls {
		if a == action {
			n++
		}
	}
	return n
}

// size is the number of decisions so far.
func (o *outcome) size() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.calls)
}

// ids returns the tool call IDs with one of the actions.
func (o *outcome) ids(actions ...gate.Action) map[string]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]bool{}
	for id, a := range o.calls {
		for _, want := range actions {
			if a == want {
				out[id] = true
			}
		}
	}
	return out
}

// runAgent plays one agent run the way a framework would: the run's
// invoke_agent span (the executor's, opened by Agent.Run), an LLM call
// (chat span) in the run's context, then the calls, one after another, and
// one call of a tool the agent cannot reach (refused before any gate: a
// denied decision of stage reachability), and the run's end.
func runAgent(ctx context.Context, t testing.TB, tp trace.TracerProvider, ex *executor.Executor, o *outcome,
	agentName, runID string, cmds []string) {
	tr := tp.Tracer("github.com/toolgate/toolgate/e2e")
	a, err := ex.Agent(agentName, executor.AgentAllow("bash"))
	require.NoError(t, err)
	run := a.Run(runID)
	defer run.End()
	_, chat := tr.Start(run.Context(ctx), "chat model-e2e", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.GenAIOperationNameChat, attribute.String("gen_ai.request.model", "model-e2e")))
	chat.End()
	traceID := run.SpanContext().TraceID().String()
	results := make([]executor.ToolResult, 0, len(cmds)+1)
	for i, c := range cmds {
		in, _ := json.Marshal(map[string]string{"command": c})
		results = append(results, run.Execute(ctx, executor.ToolCall{ID: fmt.Sprintf("%s-c%d", runID, i), Name: "bash", Input: in}))
	}
	results = append(results, run.Execute(ctx, executor.ToolCall{ID: runID + "-unreachable", Name: "web_fetch", Input: json.RawMessage(`{}`)}))
	o.mu.Lock()
	defer o.mu.Unlock()
	o.agentSpans[traceID] = agentName
	o.chatSpans++
	for _, r := range results {
		if r.Gate.Action == "" {
			continue // not a decision
		}
		if !r.Gate.Gated {
			o.ungated++
		}
		o.calls[r.ToolCallID] = r.Gate.Action
		o.traceOf[r.ToolCallID] = traceID
		o.verdicts[r.ToolCallID] = gate.EncodeVerdicts(r.Gate.Verdicts)
	}
}

// decisionRow is one gate_decisions row.
type decisionRow struct {
	ToolCallID, Action, Agent, TraceID, Reason, Stage, ParentSpanID, ToolName string
	Verdicts                                                                  []string
}

// decisions reads gate_decisions (deduplicated with FINAL) for a service.
func (s *stack) decisions(ctx context.Context, t testing.TB, service string) []decisionRow {
	t.Helper()
	rows, err := s.store.Conn().Query(withParam(ctx, "s", service), "SELECT ToolCallId, Action, Agent, TraceId, Reason, Stage, ParentSpanId, ToolName, Verdicts FROM otel.gate_decisions FINAL WHERE ServiceName = {s:String}")
	require.NoError(t, err)
	defer rows.Close()
	var out []decisionRow
	for rows.Next() {
		var r decisionRow
		require.NoError(t, rows.Scan(&r.ToolCallID, &r.Action, &r.Agent, &r.TraceID, &r.Reason, &r.Stage, &r.ParentSpanID, &r.ToolName, &r.Verdicts))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// countRows runs a SELECT count() query with one String parameter s.
func (s *stack) countRows(ctx context.Context, t testing.TB, sql, service string) uint64 {
	t.Helper()
	var n uint64
	require.NoError(t, s.store.Conn().QueryRow(withParam(ctx, "s", service), sql).Scan(&n))
	return n
}

// spanNames lists otel_traces' span names for a service with their distinct span counts.
func (s *stack) spanNames(ctx context.Context, t testing.TB, service string) map[string]uint64 {
	t.Helper()
	rows, err := s.store.Conn().Query(withParam(ctx, "s", service), "SELECT SpanName, uniqExact(SpanId) FROM otel.otel_traces WHERE ServiceName = {s:String} GROUP BY SpanName")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var name string
		var n uint64
		require.NoError(t, rows.Scan(&name, &n))
		out[name] = n
	}
	require.NoError(t, rows.Err())
	return out
}

// waitDecisions polls until gate_decisions has want rows for service, or the
// timeout passes; it returns the last count.
func (s *stack) waitDecisions(ctx context.Context, t testing.TB, service string, want int, timeout time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n := int(s.countRows(ctx, t, "SELECT count() FROM otel.gate_decisions FINAL WHERE ServiceName = {s:String}", service))
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// dupExporter exports every batch twice, as an SDK does when it retries an
// export whose acknowledgement was lost: the collector receives each span
// twice and writes it to otel_traces twice.
type dupExporter struct{ sdktrace.SpanExporter }

func (d dupExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := d.SpanExporter.ExportSpans(ctx, spans); err != nil {
		return err
	}
	return d.SpanExporter.ExportSpans(ctx, spans)
}

// withParam binds the server-side query parameter {name:String}.
func withParam(ctx context.Context, name, value string) context.Context {
	return new(audit.Params).String(name, value).Context(ctx)
}

func short() bool { return os.Getenv("TOOLGATE_E2E_SHORT") == "1" }
