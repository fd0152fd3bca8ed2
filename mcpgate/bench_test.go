package mcpgate_test

import (
	"context"
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
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ss.Close() })
	return connect(b, ct)
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

// BenchmarkGatewayOverhead: one tools/call to an in-process upstream,
// directly and through the gateway (an in-memory hop more, the executor
// with schema validation, the gate — a path classification for
// read_text_file, a fixed allow for echo — and two recorded spans).
// Added latency per call = gateway − direct; see docs/mcp-gateway.md.
func BenchmarkGatewayOverhead(b *testing.B) {
	up := newFakeUpstream(b, fileTools()...)
	path := filepath.Join(os.TempDir(), "notes.txt")
	b.Run("direct/echo", func(b *testing.B) {
		callLoop(b, connect(b, up.transport(b)()), "echo", map[string]any{"message": "hi"})
	})
	b.Run("gateway/echo", func(b *testing.B) {
		u := mcpgate.Upstream{Name: "fs", Tools: []mcpgate.Rule{{Match: "echo", Kind: mcpgate.KindAllow}}}
		callLoop(b, gatewayFor(b, u, mcpgate.WithTransport("fs", up.transport(b))), "fs_echo", map[string]any{"message": "hi"})
	})
	b.Run("direct/read_text_file", func(b *testing.B) {
		callLoop(b, connect(b, up.transport(b)()), "read_text_file", map[string]any{"path": path})
	})
	b.Run("gateway/read_text_file", func(b *testing.B) {
		u := mcpgate.Upstream{Name: "fs"}
		cs := gatewayFor(b, u, mcpgate.WithTransport("fs", up.transport(b)),
			mcpgate.WithClassifier(classify.WithWorkspace(os.TempDir())))
		callLoop(b, cs, "fs_read_text_file", map[string]any{"path": path})
	})
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
	b.Run("gateway", func(b *testing.B) {
		u := mcpgate.Upstream{Name: "ev", Command: []string{bin, "stdio"}, Tools: []mcpgate.Rule{{Match: "echo", Kind: mcpgate.KindAllow}}}
		callLoop(b, gatewayFor(b, u), "ev_echo", args)
	})
}
