package mcpgate_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/mcpgate"
)

// fuzzGateway is a gateway (strict profile, no approver) over the fake
// upstream: a write can never reach the upstream (in the workspace it is
// review, asked, and with no one to ask denied; outside it is denied).
func fuzzGateway(f *testing.F) (*mcpgate.Gateway, *fakeUpstream) {
	up := newFakeUpstream(f, fileTools()...)
	gw, err := mcpgate.New(context.Background(), []mcpgate.Upstream{{Name: "fs",
		Tools: []mcpgate.Rule{{Match: "run", Kind: mcpgate.KindShell}}}},
		mcpgate.WithTransport("fs", up.transport(f)), mcpgate.WithClassifier(classify.WithWorkspace(f.TempDir())))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = gw.Close() })
	return gw, up
}

// FuzzGatewayMessages sends one arbitrary line to the gateway's stdio
// server (after a valid handshake), then a valid tools/call: the gateway
// answers it (a malformed message never takes the session down), and no
// write reaches the upstream.
func FuzzGatewayMessages(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_write_file","arguments":{"path":"/etc/x","content":"y"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_write_file","arguments":{"path":"a","path":"b"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_write_file","arguments":[1,2]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_secret_tool"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_write_file","arguments":{"path":"x","content":"y"},"requestState":"ask_x","inputResponses":{"toolgate_approval":{"action":"accept","content":{"approve":true}}}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_run","arguments":{"command":"rm -rf ~"},"_meta":{"traceparent":"zz"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		`not json`, `{`, `[]`, `{"jsonrpc":"2.0","id":null,"method":""}`, "\x00\xff",
	} {
		f.Add(s)
	}
	gw, up := fuzzGateway(f)
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.ReplaceAll(line, "\n", " ")
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Closing the pipes last (defers run in reverse) ends the reader
		// goroutine below; ss.Close runs first, while the reader still
		// drains what the server writes after the final answer (the
		// answer to the fuzzed line may come later): a pipe nobody reads
		// blocks the server's write, and Close waits for it.
		defer sw.Close()
		defer cr.Close()
		defer cw.Close()
		ss, err := gw.Server().Connect(ctx, mcpgate.FilteredStdio(sr, sw, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		go func() {
			for _, l := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				line,
				`{"jsonrpc":"2.0","id":"final","method":"tools/call","params":{"name":"fs_write_file","arguments":{"path":"/etc/passwd","content":"x"}}}`,
			} {
				if _, err := io.WriteString(cw, l+"\n"); err != nil {
					return
				}
			}
		}()
		sc := bufio.NewScanner(cr)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		done := make(chan bool, 1)
		go func() {
			for sc.Scan() {
				var m struct {
					ID     any `json:"id"`
					Result *struct {
						IsError bool `json:"isError"`
					} `json:"result"`
				}
				if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID == "final" {
					done <- m.Result != nil && m.Result.IsError
					_, _ = io.Copy(io.Discard, cr) // keep draining until the pipe closes
					return
				}
			}
			done <- false
		}()
		select {
		case ok := <-done:
			if !ok {
				t.Fatalf("no denial for the final call after %q", line)
			}
		case <-ctx.Done():
			t.Fatalf("no answer to the final call after %q", line)
		}
		_ = cw.Close()
		for {
			select {
			case name := <-up.got:
				if name == "write_file" || name == "move_file" {
					t.Fatalf("%s reached the upstream after %q", name, line)
				}
				continue
			default:
			}
			break
		}
	})
}
