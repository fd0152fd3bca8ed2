package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// MCP semantic-convention attributes (OTel semantic-conventions-genai
// v0.1.0, model/mcp; Development stability).
const (
	AttrMCPMethod          attribute.Key = "mcp.method.name"
	AttrMCPProtocolVersion attribute.Key = "mcp.protocol.version"
	AttrMCPSessionID       attribute.Key = "mcp.session.id"
	AttrNetworkTransport   attribute.Key = "network.transport"
	AttrGenAIToolName      attribute.Key = "gen_ai.tool.name"
	AttrGenAIOperation     attribute.Key = "gen_ai.operation.name"
	AttrErrorType          attribute.Key = "error.type"
	// AttrUpstream names the upstream a call was forwarded to (ours).
	AttrUpstream attribute.Key = "toolgate.mcp.upstream"
	// AttrUpstreamTool is the upstream's own tool name (ours).
	AttrUpstreamTool attribute.Key = "toolgate.mcp.upstream.tool"
)

// approvalKey is the input request ID of the gateway's approval question.
const approvalKey = "toolgate_approval"

// callHolder carries the upstream's result out of Execute, so the client
// gets it whole (every content block, structured content, _meta).
type callHolder struct{ res *mcp.CallToolResult }

type holderKey struct{}

type elicitKey struct{}

// forward is the executor tool's Execute: it runs only for a call every
// gate allowed, and forwards the validated input to the upstream within
// the call timeout.
func (g *Gateway) forward(pt *presentedTool) func(context.Context, json.RawMessage) (executor.Result, error) {
	return func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
		s := pt.up.session
		if s == nil {
			return executor.Result{}, fmt.Errorf("upstream %s is not connected", pt.up.cfg.Name)
		}
		if creq, _ := ctx.Value(elicitKey{}).(*mcp.CallToolRequest); creq != nil {
			defer pt.up.inflight.add(creq)() // for the upstream's elicitations (passElicitation)
		}
		cctx, cancel := context.WithTimeout(ctx, g.cfg.callTimeout)
		defer cancel()
		res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: pt.name, Arguments: in, Meta: injectMeta(ctx)})
		if err != nil {
			if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
				return executor.Result{}, fmt.Errorf("upstream %s did not answer %s within %s", pt.up.cfg.Name, pt.name, g.cfg.callTimeout)
			}
			return executor.Result{}, fmt.Errorf("upstream %s: %s: %w", pt.up.cfg.Name, pt.name, err)
		}
		if h, ok := ctx.Value(holderKey{}).(*callHolder); ok {
			h.res = res
		}
		return executor.Result{Content: textOf(res), IsError: res.IsError}, nil
	}
}

// recordUnknown is receiving middleware: a tools/call naming a tool the
// gateway does not present (unknown, hidden, not connected) is still a
// decision — what the model tried: it is run through the executor, which
// refuses it at gate.stage registry and records it, and then answered by the
// SDK with its JSON-RPC error (-32602 unknown tool), as the spec says.
func (g *Gateway) recordUnknown(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if creq, ok := req.(*mcp.CallToolRequest); ok && creq.Params != nil {
				if _, known := g.tools[creq.Params.Name]; !known {
					args := json.RawMessage(creq.Params.Arguments)
					if len(args) == 0 {
						args = json.RawMessage(`{}`)
					}
					sctx, span := g.tracer.Start(extractMeta(ctx, creq.Params.Meta), "tools/call",
						trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(AttrMCPMethod.String("tools/call"),
							AttrErrorType.String("tool_not_found")))
					g.run.Execute(sctx, executor.ToolCall{ID: "mcp_" + randomHex(12), Name: creq.Params.Name, Input: args})
					span.End()
				}
			}
		}
		return next(ctx, method, req)
	}
}

// handle is the MCP tools/call handler of one presented tool.
func (g *Gateway) handle(pt *presentedTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = extractMeta(ctx, req.Params.Meta)
		attrs := []attribute.KeyValue{
			AttrMCPMethod.String("tools/call"),
			AttrGenAIToolName.String(pt.presented),
			AttrGenAIOperation.String("execute_tool"),
			AttrUpstream.String(pt.up.cfg.Name),
			AttrUpstreamTool.String(gate.Cut(pt.name, gate.MaxNameBytes)),
		}
		if v := req.ProtocolVersion(); v != "" {
			attrs = append(attrs, AttrMCPProtocolVersion.String(v))
			if v < "2026-07-28" && req.Session != nil && req.Session.ID() != "" {
				attrs = append(attrs, AttrMCPSessionID.String(req.Session.ID()))
			}
		}
		if req.Extra != nil && req.Extra.Header != nil {
			attrs = append(attrs, AttrNetworkTransport.String("tcp"))
		} else {
			attrs = append(attrs, AttrNetworkTransport.String("pipe"))
		}
		ctx, span := g.tracer.Start(ctx, "tools/call "+pt.presented, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		res, err := g.call(ctx, pt, req)
		switch {
		case err != nil:
			span.SetStatus(codes.Error, err.Error())
			span.SetAttributes(AttrErrorType.String("protocol_error"))
		case res.IsError:
			span.SetAttributes(AttrErrorType.String("tool_error"))
		}
		return res, err
	}
}

// call runs one tools/call through the executor.
func (g *Gateway) call(ctx context.Context, pt *presentedTool, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := json.RawMessage(req.Params.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	callID := "mcp_" + randomHex(12)
	if st := req.Params.RequestState; st != "" {
		// A retry with the client's answer (MRTR; or the SDK's legacy shim
		// after push elicitation): the same call, judged again, runs only
		// on the answer for exactly this call. A state that is unknown,
		// expired, spent or another call's answers nothing: the call is
		// still judged and recorded, and the approver declines it.
		if !strings.HasPrefix(st, askPrefix) {
			st = askPrefix + "not-issued"
		}
		if p, err := g.pending.resume(st, pt.presented, args, req.Params.InputResponses[approvalKey]); err == nil {
			callID = p.callID
		}
		ctx = gate.WithResume(ctx, st)
		defer g.pending.take(st) // a state answers one retry, whatever the gates decided
	} else if sp, ok := g.suspended.take(pt.presented, args); ok {
		// The same call again after the fallback approver (an inbox)
		// suspended it: resume exactly that call; it runs only on the
		// stored answer, once.
		callID = sp.callID
		ctx = gate.WithResume(ctx, sp.id)
	}
	// Whether the client can be asked is read only when a gate asks
	// (decoding the client's capabilities costs a remarshal).
	ctx = context.WithValue(ctx, elicitKey{}, req)
	h := &callHolder{}
	ctx = context.WithValue(ctx, holderKey{}, h)
	r := g.run.Execute(ctx, executor.ToolCall{ID: callID, Name: pt.presented, Input: args})
	switch {
	case errors.Is(r.Err, executor.ErrApprovalPending) && r.Gate.ApprovalID != "":
		p, ok := g.pending.get(r.Gate.ApprovalID)
		if !ok {
			// The fallback approver stored the request (an inbox): the
			// model is told to call again once a person approved it.
			g.suspended.add(pt.presented, args, callID, r.Gate.ApprovalID)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "toolgate: a person must approve this call; it waits as approval request " +
				r.Gate.ApprovalID + " (" + r.Gate.Reason + "). It did not run. Tell the user; once they approved it " +
				"(auditq approve " + r.Gate.ApprovalID + "), call the tool again with exactly the same arguments and it runs once."}}}, nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{approvalKey: &mcp.ElicitParams{
				Mode:    "form",
				Message: p.message,
				RequestedSchema: map[string]any{
					"type": "object",
					"properties": map[string]any{
						"approve": map[string]any{"type": "boolean", "title": "Run this tool call?", "default": false},
					},
					"required": []string{"approve"},
				},
			}},
			RequestState: r.Gate.ApprovalID,
		}, nil
	case h.res != nil && (r.ErrorType == "" || r.ErrorType == executor.ErrorTypeToolError):
		return h.res, nil
	case r.Gate.Action == gate.ActionDeny && r.Gate.Stage == gate.StageGate:
		return denial(r.Gate.Reason), nil
	case r.IsError:
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "toolgate: " + r.Content}}}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Content}}}, nil
}

// denial is the result of a call the gate denied: an isError result the
// model reads, telling it not to retry.
func denial(reason string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
		Text: "toolgate denied this tool call: " + reason + ". The call did not run. Do not retry it, in this or another form; " +
			"if it is needed, ask the user to approve it or to change the policy.",
	}}}
}

// canElicit reports whether the client declared form elicitation.
func canElicit(req *mcp.CallToolRequest) bool {
	c := req.ClientCapabilities()
	return c != nil && c.Elicitation != nil
}

// textOf is the text of res's text blocks (what the audit's span may
// record as the result).
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// injectMeta is the W3C trace context of ctx's span (the call's
// execute_tool span) as params._meta for the upstream (traceparent,
// tracestate, baggage: the MCP semantic conventions' propagation), so that
// a traced upstream continues the call's trace; nil without a span.
func injectMeta(ctx context.Context) mcp.Meta {
	carrier := propagation.MapCarrier{}
	propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}).Inject(ctx, carrier)
	if len(carrier) == 0 {
		return nil
	}
	m := mcp.Meta{}
	for k, v := range carrier {
		m[k] = v
	}
	return m
}

// extractMeta makes the W3C trace context in params._meta (traceparent,
// tracestate, baggage) the parent of the call's span, when the client
// sends one.
func extractMeta(ctx context.Context, meta mcp.Meta) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	carrier := propagation.MapCarrier{}
	for _, k := range []string{"traceparent", "tracestate", "baggage"} {
		if v, ok := meta[k].(string); ok && len(v) <= 4096 {
			carrier[k] = v
		}
	}
	if len(carrier) == 0 {
		return ctx
	}
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}).Extract(ctx, carrier)
}
