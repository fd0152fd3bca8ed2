package mcpgate_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/mcpgate"
)

// discard is a span exporter that drops everything (the cost measured is
// making and recording the spans, not shipping them).
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

func connect(b *testing.B, t mcp.Transport) *mcp.ClientSession {
	b.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

func gatewayFor(b *testing.B, u mcpgate.Upstream, opts ...mcpgate.Option) *mcp.ClientSession {
	b.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	gw, err := mcpgate.New(context.Background(), []mcpgate.Upstream{u},
		append([]mcpgate.Option{mcpgate.WithTracerProvider(tp), mcpgate.WithClassifier(classify.WithWorkspace(b.TempDir()))}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = gw.Close() })
	if len(gw.Tools()) == 0 {
		b.Fatalf("no tools: %+v", gw.Upstreams())
	}
	// The client speaks to the gateway over a pipe, as over stdio (the
	// gateway's side is FilteredStdio, as ServeStdio's).
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ss, err := gw.Server().Connect(context.Background(), mcpgate.FilteredStdio(sr, sw, nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ss.Close() })
	return connect(b, &mcp.IOTransport{Reader: cr, Writer: cw})
}

// pipeUpstream serves up over a pipe pair (newline-delimited JSON, as
// stdio) and returns the client side.
func pipeUpstream(b *testing.B, up *fakeUpstream) func() mcp.Transport {
	return func() mcp.Transport {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ss, err := up.server.Connect(context.Background(), &mcp.IOTransport{Reader: sr, Writer: sw}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = ss.Close() })
		return &mcp.IOTransport{Reader: cr, Writer: cw}
	}
}

func callLoop(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || r.IsError {
			b.Fatalf("%v %+v", err, r)
		}
	}
}

// BenchmarkGatewayOverhead: one tools/call to an in-process upstream over
// pipes (newline-delimited JSON, as stdio), directly and through the
// gateway (a pipe hop more, the stdio line filter, the executor with schema
// validation, the gate — a path classification for read_text_file, a
// fixed allow for echo — and two recorded spans).
// Added latency per call = gateway − direct; see docs/mcp-gateway.md.
func BenchmarkGatewayOverhead(b *testing.B) {
	up := newFakeUpstream(b, fileTools()...)
	path := filepath.Join(os.TempDir(), "notes.txt")
	b.Run("direct/echo", func(b *testing.B) {
		callLoop(b, connect(b, pipeUpstream(b, up)()), "echo", map[string]any{"message": "hi"})
	})
	b.Run("gateway/echo", func(b *testing.B) {
		u := mcpgate.Upstream{Name: "fs", Tools: []mcpgate.Rule{{Match: "echo", Kind: mcpgate.KindAllow}}}
		callLoop(b, gatewayFor(b, u, mcpgate.WithTransport("fs", pipeUpstream(b, up))), "fs_echo", map[string]any{"message": "hi"})
	})
	b.Run("relay/echo", func(b *testing.B) {
		callLoop(b, relayFor(b, pipeUpstream(b, up)(), "echo"), "echo", map[string]any{"message": "hi"})
	})
	b.Run("direct/read_text_file", func(b *testing.B) {
		callLoop(b, connect(b, pipeUpstream(b, up)()), "read_text_file", map[string]any{"path": path})
	})
	b.Run("gateway/read_text_file", func(b *testing.B) {
		u := mcpgate.Upstream{Name: "fs"}
		cs := gatewayFor(b, u, mcpgate.WithTransport("fs", pipeUpstream(b, up)),
			mcpgate.WithClassifier(classify.WithWorkspace(os.TempDir())))
		callLoop(b, cs, "fs_read_text_file", map[string]any{"path": path})
	})
}

// relayFor is a pass-through relay over the same pipes as the gateway: an
// SDK server whose one tool forwards each call to the upstream unchanged
// (no executor, no gate, no span) — the cost of the extra MCP hop alone.
func relayFor(b *testing.B, t mcp.Transport, tool string) *mcp.ClientSession {
	b.Helper()
	upc := connect(b, t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "relay", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: tool, InputSchema: schema("message")}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return upc.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: req.Params.Arguments})
	})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ss, err := srv.Connect(context.Background(), &mcp.IOTransport{Reader: sr, Writer: sw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ss.Close() })
	return connect(b, &mcp.IOTransport{Reader: cr, Writer: cw})
}

// BenchmarkGatewayEverything: server-everything's echo tool over stdio,
// directly and through the gateway (needs make mcpservers; skipped
// otherwise).
func BenchmarkGatewayEverything(b *testing.B) {
	dir := os.Getenv("TOOLGATE_MCP_NPM")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "toolgate", "npm", "mcp")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		b.Skip("server-everything not installed (make mcpservers)")
	}
	args := map[string]any{"message": "hi"}
	b.Run("direct", func(b *testing.B) {
		callLoop(b, connect(b, &mcp.CommandTransport{Command: exec.Command(bin, "stdio")}), "echo", args)
	})
	b.Run("relay", func(b *testing.B) {
		callLoop(b, relayFor(b, &mcp.CommandTransport{Command: exec.Command(bin, "stdio")}, "echo"), "echo", args)
	})
	b.Run("gateway", func(b *testing.B) {
		u := mcpgate.Upstream{Name: "ev", Command: []string{bin, "stdio"}, Tools: []mcpgate.Rule{{Match: "echo", Kind: mcpgate.KindAllow}}}
		callLoop(b, gatewayFor(b, u), "ev_echo", args)
	})
}
