package bridge

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// DefaultMaxRuns is how many runs a [Bridge] keeps parentage state for
// when [Config].MaxRuns is zero.
const DefaultMaxRuns = 1024

// ScopeName is the instrumentation scope of the spans a [Bridge] makes.
// Its value predates this package (the bridge was part of package
// otelbridge) and is kept, so that stored and queried spans keep their
// scope across versions.
const ScopeName = "github.com/toolgate/toolgate/otelbridge"

// closedPerScope is how many ended agent (or task) spans per agent and task
// a run remembers, to parent events that arrive after their parent.
const closedPerScope = 8

// Bridge turns after-the-fact trace events ([Event]) into OTel spans with
// the events' own start and end times and this parentage:
//
//	task {title}                    (when the event has a taskId)
//	└── invoke_agent {agent}
//	    ├── chat {model}            (llm_call)
//	    └── execute_tool {tool}     (tool_call, with the gate.* attributes)
//
// All spans of one run share a trace: the trace of the span in the context
// given with the run's first event (that span becomes the parent of the
// run's top spans), else a new trace.
//
// Events may arrive in any order. A child (llm_call, tool_call) usually
// arrives before its agent event, because an agent run ends after its
// calls: the bridge then chooses the agent span's ID in advance, emits the
// child under it at once, and gives the agent span that ID when its event
// arrives (with [IDGenerator], which otelbridge.Setup installs). A child arriving after
// its agent event is matched to the ended agent span whose time range
// contains it. Nothing is buffered, so a lost parent event leaves its
// children pointing at a span that never comes, and the children of two
// runs of the same agent on the same task (a retry) that all arrive before
// either agent event cannot be told apart: they point at a span that never
// comes. Events reported in completion order, as open-multi-agent does,
// never hit either case.
//
// No duplicates: a tool_call event whose call already has a span — one
// with SpanID set (the executor's own ToolCallTrace), or one whose
// agent, run, tool, toolCallId and decision (a [ToolCallKey]: the ID is
// the model's, reused across runs and within one) the [ToolCallIndex] saw
// on an execute_tool span (the executor's, or one bridged before: a
// repeated delivery) — is counted in Stats.Duplicates and not
// emitted. A report with another decision under a reused ID is another
// call and is emitted; one that carries no decision at all matches any
// report of its call (it drops no decision). A tool_call event without a
// toolCallId cannot be matched: the framework's events carry one only when
// it runs its calls through toolgate's executor, which sets SpanID anyway.
//
// A Bridge is safe for concurrent use. State is bounded by the number of
// runs (Config.MaxRuns; least recently used runs are forgotten first) and,
// per run, by the agents and tasks in it; [Bridge.EndRun] frees a run.
type Bridge struct {
	tracer   trace.Tracer
	index    *ToolCallIndex
	provider string
	maxRuns  int

	mu   sync.Mutex
	runs map[string]*runState
	lru  *list.List // of *runState, most recent first

	events, spans, dups, invalid, evicted, misparented atomic.Int64
}

// Config configures a [Bridge]; every zero field means its default.
// There are no environment variables for the bridge.
type Config struct {
	// ProviderName is gen_ai.provider.name (e.g. "anthropic", "openai") on
	// chat spans; events do not carry it. Zero: not recorded.
	ProviderName string
	// MaxRuns bounds the runs whose parentage state is kept; the least
	// recently used are forgotten first (counted in Stats.RunsEvicted).
	// Zero or negative: [DefaultMaxRuns] (1,024).
	MaxRuns int
	// ToolCalls is the index of tool calls checked against duplicates.
	// Zero: the tracer provider's own when it has one (a method
	// ToolCalls() *ToolCallIndex, as *otelbridge.Provider has), else a new
	// index with [DefaultToolCallCapacity]. An index of your own must be
	// registered on the provider (sdktrace.WithSpanProcessor(index)) to
	// see the executor's spans.
	ToolCalls *ToolCallIndex
}

// toolCallIndexer is a tracer provider that carries a tool-call index
// (*otelbridge.Provider).
type toolCallIndexer interface{ ToolCalls() *ToolCallIndex }

// New returns a bridge emitting spans through tp under the
// instrumentation scope [ScopeName], configured by cfg. tp must use
// [IDGenerator] for out-of-order parentage (a *otelbridge.Provider does);
// spans whose preset ID was not honoured are counted in
// Stats.Misparented.
func New(tp trace.TracerProvider, cfg Config) *Bridge {
	b := &Bridge{
		tracer:   tp.Tracer(ScopeName),
		index:    cfg.ToolCalls,
		provider: cfg.ProviderName,
		maxRuns:  cfg.MaxRuns,
		runs:     make(map[string]*runState),
		lru:      list.New(),
	}
	if p, ok := tp.(toolCallIndexer); ok && b.index == nil {
		b.index = p.ToolCalls()
	}
	if b.index == nil {
		b.index = NewToolCallIndex(0)
	}
	if b.maxRuns < 1 {
		b.maxRuns = DefaultMaxRuns
	}
	return b
}

// Stats counts a Bridge's work since it was made.
type Stats struct {
	Events      int64 // events handled (valid or not)
	Spans       int64 // spans emitted
	Duplicates  int64 // tool_call events not emitted: the call already has a span
	Invalid     int64 // events rejected by Validate
	RunsEvicted int64 // runs forgotten at capacity (later events of such a run start a new trace)
	Misparented int64 // spans whose preset ID the provider did not honour
}

// Stats returns the counters.
func (b *Bridge) Stats() Stats {
	return Stats{
		Events: b.events.Load(), Spans: b.spans.Load(), Duplicates: b.dups.Load(),
		Invalid: b.invalid.Load(), RunsEvicted: b.evicted.Load(), Misparented: b.misparented.Load(),
	}
}

// HandleJSON parses one JSON event ([ParseEvent]) and handles it.
func (b *Bridge) HandleJSON(ctx context.Context, data []byte) error {
	ev, err := ParseEvent(data)
	if err != nil {
		b.events.Add(1)
		b.invalid.Add(1)
		return err
	}
	return b.Handle(ctx, ev)
}

// Handle emits the span for one event. It returns an error wrapping
// [ErrInvalidEvent] (and emits nothing) when the event is invalid; a
// duplicate is not an error. ctx supplies the run's parent span, on the
// run's first event only.
func (b *Bridge) Handle(ctx context.Context, ev Event) error {
	b.events.Add(1)
	if err := ev.Validate(); err != nil {
		b.invalid.Add(1)
		return err
	}
	if ev.Type == EventToolCall && (ev.SpanID != "" || b.index.Has(ev.callKey())) {
		b.dups.Add(1)
		return nil
	}
	start, end := ev.Start(), ev.End()

	b.mu.Lock()
	run := b.run(ctx, ev.RunID)
	agentScope := scope{kind: scopeAgent, agent: ev.Agent, task: ev.TaskID}
	var parent trace.SpanID // zero: the run's root parent
	var self trace.SpanID   // preset ID (agent, task)
	switch ev.Type {
	case EventLLMCall, EventToolCall:
		parent = run.parentFor(agentScope, start, end)
	case EventAgent:
		self = run.claim(agentScope, start, end)
		if ev.TaskID != "" {
			parent = run.parentFor(scope{kind: scopeTask, task: ev.TaskID}, start, end)
		}
	case EventTask:
		self = run.claim(scope{kind: scopeTask, task: ev.TaskID}, start, end)
	}
	traceID, root := run.traceID, run.root
	b.mu.Unlock()

	// The parent context: our chosen parent, else the run's root parent,
	// else none (a root span).
	pctx := trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	switch {
	case parent.IsValid():
		pctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: traceID, SpanID: parent, TraceFlags: trace.FlagsSampled,
		}))
	case root.IsValid():
		pctx = trace.ContextWithSpanContext(ctx, root)
	}
	if self.IsValid() {
		pctx = withPresetIDs(pctx, traceID, self)
	}

	name, kind, attrs, status, desc := b.shape(ev)
	_, span := b.tracer.Start(pctx, name,
		trace.WithTimestamp(start), trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	if self.IsValid() && span.SpanContext().SpanID() != self {
		b.misparented.Add(1)
	}
	if status != codes.Unset {
		span.SetStatus(status, desc)
	}
	span.End(trace.WithTimestamp(end))
	if ev.Type == EventToolCall {
		b.index.Add(ev.callKey()) // a repeated delivery of this event is a duplicate
	}
	b.spans.Add(1)
	return nil
}

// AgentContext returns ctx carrying the span context of the invoke_agent
// span that the agent's (runID, agent, taskID) run will get when its event
// arrives. Spans started live under it — the executor's execute_tool spans
// — become children of that bridged agent span, so live and bridged spans
// form one tree, and deny-only sampling keeps the agent span of a live
// denial. Call it while the agent runs; ctx's own span, if any, becomes the
// run's parent when the run is new. The bridged span is the run's agent
// span: start the executor's run with executor.WithRunSpan(false), so that
// it does not open a second invoke_agent span under it.
func (b *Bridge) AgentContext(ctx context.Context, runID, agent, taskID string) context.Context {
	now := time.Now()
	b.mu.Lock()
	run := b.run(ctx, runID)
	id := run.parentFor(scope{kind: scopeAgent, agent: agent, task: taskID}, now, now)
	traceID := run.traceID
	b.mu.Unlock()
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceID, SpanID: id, TraceFlags: trace.FlagsSampled,
	}))
}

// ToolCalls returns the index of tool calls the bridge checks against.
func (b *Bridge) ToolCalls() *ToolCallIndex { return b.index }

// EndRun forgets a run's parentage state (call it after the run's last
// event). Unknown runs are ignored.
func (b *Bridge) EndRun(runID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.runs[runID]; ok {
		b.lru.Remove(r.elem)
		delete(b.runs, runID)
	}
}

// run returns the run's state, making it (and evicting the least recently
// used run) when new. Called with b.mu held.
func (b *Bridge) run(ctx context.Context, id string) *runState {
	if r, ok := b.runs[id]; ok {
		b.lru.MoveToFront(r.elem)
		return r
	}
	r := &runState{id: id, open: map[scope]*openSlot{}, closed: map[scope][]closedSpan{}}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.traceID, r.root = sc.TraceID(), sc
	} else {
		r.traceID = randomTraceID()
	}
	r.elem = b.lru.PushFront(r)
	b.runs[id] = r
	for len(b.runs) > b.maxRuns {
		old := b.lru.Back().Value.(*runState)
		b.lru.Remove(old.elem)
		delete(b.runs, old.id)
		b.evicted.Add(1)
	}
	return r
}

// shape returns a span's name, kind, attributes and status for an event.
func (b *Bridge) shape(ev Event) (string, trace.SpanKind, []attribute.KeyValue, codes.Code, string) {
	ev = ev.safe()
	attrs := make([]attribute.KeyValue, 0, 20)
	attrs = append(attrs, AttrBridged.Bool(true), gate.AttrRunID.String(ev.RunID), semconv.GenAIConversationID(ev.RunID))
	if ev.TaskID != "" {
		attrs = append(attrs, gate.AttrTaskID.String(ev.TaskID))
	}
	tokens := func() {
		if ev.Tokens != nil {
			attrs = append(attrs,
				semconv.GenAIUsageInputTokens(int(ev.Tokens.InputTokens)),
				semconv.GenAIUsageOutputTokens(int(ev.Tokens.OutputTokens)))
		}
	}
	switch ev.Type {
	case EventAgent:
		attrs = append(attrs, semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(ev.Agent),
			AttrAgentTurns.Int(ev.Turns), AttrAgentToolCalls.Int(ev.ToolCalls))
		tokens()
		return "invoke_agent " + ev.Agent, trace.SpanKindInternal, attrs, codes.Unset, ""

	case EventLLMCall:
		attrs = append(attrs, semconv.GenAIOperationNameChat, semconv.GenAIRequestModel(ev.Model),
			semconv.GenAIAgentName(ev.Agent), AttrLLMTurn.Int(ev.Turn))
		if b.provider != "" {
			attrs = append(attrs, semconv.GenAIProviderNameKey.String(b.provider))
		}
		tokens()
		return "chat " + ev.Model, trace.SpanKindClient, attrs, codes.Unset, ""

	case EventTask:
		attrs = append(attrs, AttrTaskTitle.String(ev.TaskTitle), AttrTaskRetries.Int(ev.Retries))
		if ev.Agent != "" {
			attrs = append(attrs, semconv.GenAIAgentName(ev.Agent))
		}
		name := "task " + ev.TaskID
		if ev.TaskTitle != "" {
			name = "task " + ev.TaskTitle
		}
		if ev.Success != nil && !*ev.Success {
			return name, trace.SpanKindInternal, append(attrs, semconv.ErrorTypeOther), codes.Error, "task failed"
		}
		return name, trace.SpanKindInternal, attrs, codes.Unset, ""
	}

	// tool_call: the identity here, the decision by gate.Record's encoder
	// (the executor's own).
	attrs = append(attrs, semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(ev.Tool),
		semconv.GenAIAgentName(ev.Agent))
	if ev.ToolCallID != "" {
		attrs = append(attrs, semconv.GenAIToolCallID(ev.ToolCallID))
	}
	rec := ev.Record()
	attrs = rec.Attributes(attrs, 0)
	denied := rec.Action == gate.ActionDeny
	name := "execute_tool " + ev.Tool
	switch {
	case denied:
		attrs = append(attrs, semconv.ErrorTypeKey.String(gate.ErrorTypeGateDenied))
		return name, trace.SpanKindInternal, attrs, codes.Error, gate.ErrorTypeGateDenied
	case ev.IsError:
		et := ev.ErrorType
		if et == "" {
			et = semconv.ErrorTypeOther.Value.AsString()
		}
		attrs = append(attrs, semconv.ErrorTypeKey.String(et))
		return name, trace.SpanKindInternal, attrs, codes.Error, et
	}
	return name, trace.SpanKindInternal, attrs, codes.Unset, ""
}

// scope identifies an agent run (agent, task) or a task within a run.
type scope struct {
	kind  byte
	agent string
	task  string
}

const (
	scopeAgent byte = iota + 1
	scopeTask
)

// runState is one run's parentage state.
type runState struct {
	id      string
	traceID trace.TraceID
	root    trace.SpanContext // the parent of the run's top spans; may be invalid
	open    map[scope]*openSlot
	closed  map[scope][]closedSpan
	elem    *list.Element
}

// openSlot is a parent span ID chosen before its event arrived, with the
// time range its children cover so far.
type openSlot struct {
	id         trace.SpanID
	start, end time.Time
}

// closedSpan is an emitted agent or task span.
type closedSpan struct {
	id         trace.SpanID
	start, end time.Time
}

// parentFor returns the span ID of the scope's span that contains
// [start, end]: an emitted one whose range contains it, else the open slot
// (made when missing).
func (r *runState) parentFor(s scope, start, end time.Time) trace.SpanID {
	cs := r.closed[s]
	for i := len(cs) - 1; i >= 0; i-- {
		if !start.Before(cs[i].start) && !end.After(cs[i].end) {
			return cs[i].id
		}
	}
	o := r.open[s]
	if o == nil {
		o = &openSlot{id: randomSpanID(), start: start, end: end}
		r.open[s] = o
	}
	if start.Before(o.start) {
		o.start = start
	}
	if end.After(o.end) {
		o.end = end
	}
	return o.id
}

// claim returns the span ID for the scope's span covering [start, end]:
// the open slot when its children fit in the range, else a new ID.
func (r *runState) claim(s scope, start, end time.Time) trace.SpanID {
	var id trace.SpanID
	if o := r.open[s]; o != nil && !o.start.Before(start) && !o.end.After(end) {
		id = o.id
		delete(r.open, s)
	} else {
		id = randomSpanID()
	}
	cs := append(r.closed[s], closedSpan{id: id, start: start, end: end})
	if len(cs) > closedPerScope {
		cs = cs[len(cs)-closedPerScope:]
	}
	r.closed[s] = cs
	return id
}
