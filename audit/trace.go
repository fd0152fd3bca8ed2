package audit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Span is one span of a trace, as the exporter stored it in otel_traces,
// with the gate decision attached when it is a gated tool call.
type Span struct {
	Timestamp     time.Time `json:"timestamp"`
	SpanID        string    `json:"span_id"`
	ParentSpanID  string    `json:"parent_span_id"`
	Name          string    `json:"name"` // e.g. "invoke_agent coder", "execute_tool bash"
	Kind          string    `json:"kind"` // Internal, Client, …
	ServiceName   string    `json:"service_name"`
	DurationNs    uint64    `json:"duration_ns"`
	StatusCode    string    `json:"status_code"` // Unset | Ok | Error
	StatusMessage string    `json:"status_message"`
	Operation     string    `json:"operation"` // gen_ai.operation.name
	Agent         string    `json:"agent"`     // gen_ai.agent.name
	ToolName      string    `json:"tool_name"` // gen_ai.tool.name
	Decision      *Decision `json:"decision,omitempty"`
	Children      []*Span   `json:"children,omitempty"`
}

// TraceTree is one trace's call tree: the invoke_agent span(s) at the
// roots, tool calls below, each with its decision.
type TraceTree struct {
	TraceID string  `json:"trace_id"`
	Roots   []*Span `json:"roots"`
	// Spans counts every span in the tree.
	Spans int `json:"spans"`
}

// ErrTraceNotFound is returned by Trace when no span has the trace ID.
var ErrTraceNotFound = errors.New("audit: trace not found")

// MaxTraceSpans bounds the spans Trace reads.
const MaxTraceSpans = 10000

// Trace reads every span of traceID (lowercase hex; upper case is
// accepted) from otel_traces, each once even if delivered twice, builds the
// parent/child tree ordered by start time, and attaches the decisions from
// gate_decisions to their tool spans. A span whose parent is not in the
// trace becomes a root.
func (s *Store) Trace(ctx context.Context, traceID string) (*TraceTree, error) {
	traceID = strings.ToLower(strings.TrimSpace(traceID))
	var p Params
	p.String("trace", traceID).Int64("max", MaxTraceSpans)
	sql := "SELECT Timestamp, SpanId, ParentSpanId, SpanName, SpanKind, ServiceName, Duration, StatusCode, StatusMessage, " +
		attr(semconv.GenAIOperationNameKey) + ", " + attr(semconv.GenAIAgentNameKey) + ", " + attr(semconv.GenAIToolNameKey) +
		"\nFROM " + s.cfg.read(s.cfg.tracesTable) + "\nWHERE TraceId = {trace:String}" +
		"\nORDER BY Timestamp, SpanId\nLIMIT 1 BY SpanId\nLIMIT {max:UInt32}"
	rows, err := s.query(ctx, "trace", sql, &p)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := map[string]*Span{}
	var order []*Span
	for rows.Next() {
		sp := &Span{}
		if err := rows.Scan(&sp.Timestamp, &sp.SpanID, &sp.ParentSpanID, &sp.Name, &sp.Kind, &sp.ServiceName,
			&sp.DurationNs, &sp.StatusCode, &sp.StatusMessage, &sp.Operation, &sp.Agent, &sp.ToolName); err != nil {
			return nil, s.wrap("trace", err)
		}
		byID[sp.SpanID] = sp
		order = append(order, sp)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("trace", err)
	}
	// The spans' time range lets the decisions query prune partitions and
	// hours instead of testing every granule's TraceId bloom filter.
	f := Filter{TraceID: traceID}
	for i, sp := range order {
		if i == 0 || sp.Timestamp.Before(f.Since) {
			f.Since = sp.Timestamp
		}
		if i == 0 || !sp.Timestamp.Before(f.Until) {
			f.Until = sp.Timestamp.Add(time.Nanosecond)
		}
	}
	page, _, err := s.decisionsPage(ctx, f, nil, MaxTraceSpans)
	if err != nil {
		return nil, err
	}
	for i := range page.Decisions {
		d := &page.Decisions[i]
		if sp, ok := byID[d.SpanID]; ok {
			sp.Decision = d
			continue
		}
		// The span is gone from otel_traces (shorter TTL) but the decision
		// remains: show it on its own.
		sp := &Span{Timestamp: d.Timestamp, SpanID: d.SpanID, ParentSpanID: d.ParentSpanID,
			Name: "execute_tool " + d.ToolName, ServiceName: d.ServiceName, DurationNs: d.DurationNs,
			Agent: d.Agent, ToolName: d.ToolName, Decision: d}
		byID[sp.SpanID] = sp
		order = append(order, sp)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrTraceNotFound, traceID)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if !order[i].Timestamp.Equal(order[j].Timestamp) {
			return order[i].Timestamp.Before(order[j].Timestamp)
		}
		return order[i].SpanID < order[j].SpanID
	})
	tree := &TraceTree{TraceID: traceID, Spans: len(order)}
	for _, sp := range order {
		if parent, ok := byID[sp.ParentSpanID]; ok && sp.ParentSpanID != sp.SpanID {
			parent.Children = append(parent.Children, sp)
		} else {
			tree.Roots = append(tree.Roots, sp)
		}
	}
	return tree, nil
}
