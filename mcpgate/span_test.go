package mcpgate_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/mcpgate"
)

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, a := range s.Attributes {
		m[a.Key] = a.Value
	}
	return m
}

// Every call is a server span "tools/call {tool}" with the MCP semantic
// conventions, parented from params._meta.traceparent, with the executor's
// execute_tool span (gate.*, gen_ai.*) as its child.
func TestGatewaySpans(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			e := newEnv(t, nil, &mcp.ClientSessionOptions{ProtocolVersion: version})
			const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
			_, err := e.client.CallTool(context.Background(), &mcp.CallToolParams{
				Meta:      mcp.Meta{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"},
				Name:      "fs_write_file",
				Arguments: map[string]any{"path": "/etc/passwd", "content": "x"},
			})
			require.NoError(t, err)
			var server, exec *tracetest.SpanStub
			spans := e.spans.GetSpans()
			for i := range spans {
				switch spans[i].Name {
				case "tools/call fs_write_file":
					server = &spans[i]
				case "execute_tool fs_write_file":
					exec = &spans[i]
				}
			}
			require.NotNil(t, server)
			require.NotNil(t, exec)
			require.Equal(t, trace.SpanKindServer, server.SpanKind)
			require.Equal(t, traceID, server.SpanContext.TraceID().String())
			require.Equal(t, "00f067aa0ba902b7", server.Parent.SpanID().String())
			require.Equal(t, server.SpanContext.SpanID(), exec.Parent.SpanID(), "execute_tool is the server span's child")
			sa := attrs(*server)
			require.Equal(t, "tools/call", sa["mcp.method.name"].AsString())
			require.Equal(t, version, sa["mcp.protocol.version"].AsString())
			require.Equal(t, "pipe", sa["network.transport"].AsString())
			require.Equal(t, "fs_write_file", sa["gen_ai.tool.name"].AsString())
			require.Equal(t, "execute_tool", sa["gen_ai.operation.name"].AsString())
			require.Equal(t, "tool_error", sa["error.type"].AsString())
			ea := attrs(*exec)
			require.Equal(t, "deny", ea[gate.AttrAction].AsString())
			require.Equal(t, "classify.path", ea[gate.AttrSource].AsString())
			require.Equal(t, "fs_write_file", ea["gen_ai.tool.name"].AsString())
			require.Equal(t, "mcp-gateway", ea["gen_ai.agent.name"].AsString())
			require.NotEmpty(t, ea[gate.AttrChainHash].AsString())
		})
	}
}

// Over streamable HTTP on loopback: network.transport is tcp.
func TestGatewayHTTP(t *testing.T) {
	e := newEnv(t, nil, nil)
	l, err := mcpgate.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.gw.ServeHTTP(ctx, l) }()
	defer func() { cancel(); <-done }()
	c := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + l.Addr().String() + "/mcp"}, nil)
	require.NoError(t, err)
	defer cs.Close()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs_run", Arguments: map[string]any{"command": "ls"}})
	require.NoError(t, err)
	require.False(t, r.IsError, text(r))
	var found bool
	for _, s := range e.spans.GetSpans() {
		if s.Name == "tools/call fs_run" {
			found = true
			require.Equal(t, "tcp", attrs(s)["network.transport"].AsString())
		}
	}
	require.True(t, found)

	for _, bad := range []string{"0.0.0.0:0", "8.8.8.8:0", ":0"} {
		_, err := mcpgate.Listen(bad)
		require.ErrorIs(t, err, mcpgate.ErrNotLoopback, bad)
	}
}

// Elicitation approvals over streamable HTTP, on both protocol eras.
func TestGatewayHTTPElicitation(t *testing.T) {
	e := newEnv(t, nil, nil)
	l, err := mcpgate.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.gw.ServeHTTP(ctx, l) }()
	defer func() { cancel(); <-done }()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			asked := 0
			c := mcp.NewClient(&mcp.Implementation{Name: "http-elicit", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked++
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
				}})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + l.Addr().String() + "/mcp"},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			defer cs.Close()
			require.Equal(t, version, cs.InitializeResult().ProtocolVersion)
			before := e.up.calls.Load()
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs_echo", Arguments: map[string]any{"message": "over http"}})
			require.NoError(t, err)
			require.False(t, r.IsError, text(r))
			require.Equal(t, 1, asked)
			require.Equal(t, before+1, e.up.calls.Load())
		})
	}
}

// The upstream receives the call's trace context in params._meta: its
// traceparent names the client's trace and the execute_tool span as the
// parent, so a traced upstream continues the trace.
func TestGatewayPassesTraceContextUpstream(t *testing.T) {
	e := newEnv(t, nil, nil)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	r, err := e.client.CallTool(context.Background(), &mcp.CallToolParams{
		Meta:      mcp.Meta{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"},
		Name:      "fs_run",
		Arguments: map[string]any{"command": "ls"},
	})
	require.NoError(t, err)
	require.False(t, r.IsError, text(r))
	var exec *tracetest.SpanStub
	spans := e.spans.GetSpans()
	for i := range spans {
		if spans[i].Name == "execute_tool fs_run" {
			exec = &spans[i]
		}
	}
	require.NotNil(t, exec)
	e.up.mu.Lock()
	metas := append([]mcp.Meta(nil), e.up.metas...)
	e.up.mu.Unlock()
	require.NotEmpty(t, metas, "the upstream ran the call")
	tp, _ := metas[len(metas)-1]["traceparent"].(string)
	require.Equal(t, "00-"+traceID+"-"+exec.SpanContext.SpanID().String()+"-01", tp)
}
