package audittest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// ErrExporterShutdown is returned by [Exporter.ExportSpans] after
// [Exporter.Shutdown].
var ErrExporterShutdown = errors.New("audittest: exporter is shut down")

// Exporter is an OpenTelemetry SDK span exporter (sdktrace.SpanExporter)
// that writes finished spans into database.otel_traces the way the
// collector's clickhouse exporter (contrib v0.161.0) writes what it
// receives over OTLP: Timestamp the span's start, IDs as lowercase hex
// ("" for no parent), SpanKind and StatusCode as pdata names (Internal,
// Client, …; Unset, Ok, Error), ServiceName from the resource's
// service.name, every resource, span, event and link attribute as
// [AttrString], Duration in nanoseconds. The audit materialized view then
// derives the decisions, as in production, so a test can run a real
// executor (executor.WithTracerProvider) and read its decisions with
// [Env.Store]:
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(audittest.NewExporter(env.Writer, env.Database)))
//
// WithSyncer makes the rows visible when the span ends; with
// WithBatcher, call the provider's ForceFlush before querying. Safe for
// concurrent use. It is a test helper: there is no retry, queue or
// collector in between.
type Exporter struct {
	conn     driver.Conn
	database string

	mu      sync.Mutex
	stopped bool
}

// NewExporter returns an exporter writing into database.otel_traces over
// conn (a writer connection, e.g. [Env.Writer] and [Env.Database]).
func NewExporter(conn driver.Conn, database string) *Exporter {
	return &Exporter{conn: conn, database: database}
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)

// ExportSpans inserts spans in one batch. Errors: [ErrExporterShutdown];
// the server's error for the batch, wrapped (no row of it is written).
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		return ErrExporterShutdown
	}
	if len(spans) == 0 {
		return nil
	}
	batch, err := e.conn.PrepareBatch(ctx, fmt.Sprintf("INSERT INTO `%s`.`otel_traces` (Timestamp, TraceId, SpanId, ParentSpanId, TraceState, SpanName, SpanKind, ServiceName, ResourceAttributes, ScopeName, ScopeVersion, SpanAttributes, Duration, StatusCode, StatusMessage, `Events.Timestamp`, `Events.Name`, `Events.Attributes`, `Links.TraceId`, `Links.SpanId`, `Links.TraceState`, `Links.Attributes`)", e.database))
	if err != nil {
		return fmt.Errorf("audittest: export %d spans: %w", len(spans), err)
	}
	for _, s := range spans {
		sc := s.SpanContext()
		res := attrMap(s.Resource().Attributes())
		evTimes := make([]time.Time, 0, len(s.Events()))
		evNames := make([]string, 0, len(s.Events()))
		evAttrs := make([]map[string]string, 0, len(s.Events()))
		for _, ev := range s.Events() {
			evTimes = append(evTimes, ev.Time)
			evNames = append(evNames, ev.Name)
			evAttrs = append(evAttrs, attrMap(ev.Attributes))
		}
		lTraces := make([]string, 0, len(s.Links()))
		lSpans := make([]string, 0, len(s.Links()))
		lStates := make([]string, 0, len(s.Links()))
		lAttrs := make([]map[string]string, 0, len(s.Links()))
		for _, l := range s.Links() {
			lTraces = append(lTraces, traceIDHex(l.SpanContext.TraceID()))
			lSpans = append(lSpans, spanIDHex(l.SpanContext.SpanID()))
			lStates = append(lStates, l.SpanContext.TraceState().String())
			lAttrs = append(lAttrs, attrMap(l.Attributes))
		}
		dur := s.EndTime().Sub(s.StartTime())
		if dur < 0 {
			dur = 0
		}
		if err := batch.Append(s.StartTime(), traceIDHex(sc.TraceID()), spanIDHex(sc.SpanID()), spanIDHex(s.Parent().SpanID()),
			sc.TraceState().String(), s.Name(), spanKindName(s.SpanKind()), res[string(semconv.ServiceNameKey)], res,
			s.InstrumentationScope().Name, s.InstrumentationScope().Version, attrMap(s.Attributes()),
			uint64(dur), statusName(s.Status().Code), s.Status().Description,
			evTimes, evNames, evAttrs, lTraces, lSpans, lStates, lAttrs); err != nil {
			_ = batch.Abort()
			return fmt.Errorf("audittest: export span %s: %w", s.Name(), err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("audittest: export %d spans: %w", len(spans), err)
	}
	return nil
}

// Shutdown makes later exports fail with [ErrExporterShutdown]; it does
// not close the connection, which belongs to the caller.
func (e *Exporter) Shutdown(context.Context) error {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	return nil
}

func attrMap(kvs []attribute.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		out[string(kv.Key)] = AttrString(kv.Value)
	}
	return out
}

// traceIDHex and spanIDHex render an ID as the exporter does: lowercase
// hex, "" for the invalid (all-zero) ID.
func traceIDHex(id trace.TraceID) string {
	if !id.IsValid() {
		return ""
	}
	return id.String()
}

func spanIDHex(id trace.SpanID) string {
	if !id.IsValid() {
		return ""
	}
	return id.String()
}

// spanKindName is pdata's ptrace.SpanKind.String.
func spanKindName(k trace.SpanKind) string {
	switch k {
	case trace.SpanKindInternal:
		return "Internal"
	case trace.SpanKindServer:
		return "Server"
	case trace.SpanKindClient:
		return "Client"
	case trace.SpanKindProducer:
		return "Producer"
	case trace.SpanKindConsumer:
		return "Consumer"
	}
	return "Unspecified"
}

// statusName is pdata's ptrace.StatusCode.String.
func statusName(c codes.Code) string {
	switch c {
	case codes.Ok:
		return "Ok"
	case codes.Error:
		return "Error"
	}
	return "Unset"
}
