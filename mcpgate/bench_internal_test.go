package mcpgate

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkGatewayOwnWork isolates what the gateway itself adds to a call,
// without the client's hop: each iteration makes one call straight to the
// upstream session and one through the gateway's handler path (routing,
// the executor with schema validation, the gate — a path classification —
// the two recorded spans, result mapping) to the same upstream, interleaved
// so that the machine's load affects both alike. Reported: direct-ns/op,
// gated-ns/op and own-ns/op (their difference).
func BenchmarkGatewayOwnWork(b *testing.B) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "read_text_file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}))
	defer tp.Shutdown(context.Background())
	gw, err := New(context.Background(), []Upstream{{Name: "fs"}}, WithTracerProvider(tp),
		WithTransport("fs", func() mcp.Transport {
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			if _, err := srv.Connect(context.Background(), &mcp.IOTransport{Reader: sr, Writer: sw}, nil); err != nil {
				b.Fatal(err)
			}
			return &mcp.IOTransport{Reader: cr, Writer: cw}
		}))
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	pt := gw.tools["fs_read_text_file"]
	if pt == nil {
		b.Fatal("no tool")
	}
	args := json.RawMessage(`{"path":"/tmp/notes.txt"}`)
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "fs_read_text_file", Arguments: args}}
	ctx := context.Background()
	var direct, gated time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := pt.up.session.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: args}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		r, err := gw.handle(pt)(ctx, req)
		t2 := time.Now()
		if err != nil || r.IsError {
			b.Fatalf("%v %+v", err, r)
		}
		direct += t1.Sub(t0)
		gated += t2.Sub(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(direct.Nanoseconds())/n, "direct-ns/op")
	b.ReportMetric(float64(gated.Nanoseconds())/n, "gated-ns/op")
	b.ReportMetric(float64((gated-direct).Nanoseconds())/n, "own-ns/op")
}
