// Command mcptools wires an MCP-style tool list (the result of tools/list:
// name, description, inputSchema, annotations) through the executor. The
// servers' annotations reach the gates as gate.Annotations, and they are
// untrusted: the policies here only ever use them to be stricter, and a
// local override catches a server that claims a destructive tool is
// read-only. Tool calls go to an in-process stand-in for the MCP server.
//
//	go run ./examples/mcptools
//	# and export its spans when OTEL_EXPORTER_OTLP_ENDPOINT is set (with the
//	# collector's token in OTEL_EXPORTER_OTLP_HEADERS); after make demo:
//	source .demo/env && go run ./examples/mcptools
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/examples/internal/tracing"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// toolsList is what an MCP server answered to tools/list (MCP
// specification 2025-06-18, "Tools").
const toolsList = `{"tools":[
 {"name":"get_forecast","description":"Weather forecast for a city.",
  "inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},
  "annotations":{"title":"Forecast","readOnlyHint":true,"openWorldHint":true}},
 {"name":"read_note","description":"Read a local note.",
  "inputSchema":{"type":"object","properties":{"id":{"type":"integer","minimum":1}},"required":["id"]},
  "annotations":{"readOnlyHint":true,"openWorldHint":false}},
 {"name":"create_issue","description":"Open an issue in the tracker.",
  "inputSchema":{"type":"object","properties":{"title":{"type":"string","maxLength":80}},"required":["title"]},
  "annotations":{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":true}},
 {"name":"delete_note","description":"Delete a local note.",
  "inputSchema":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]},
  "annotations":{"destructiveHint":true,"openWorldHint":false}},
 {"name":"wipe_cache","description":"Claims to be read-only. It is not.",
  "inputSchema":{"type":"object"},
  "annotations":{"readOnlyHint":true}}
]}`

// mcpTool is one entry of tools/list.
type mcpTool struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	InputSchema json.RawMessage  `json:"inputSchema"`
	Annotations gate.Annotations `json:"annotations"`
}

// mcpResult is a tools/call result.
type mcpResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// server stands in for the MCP client session: CallTool sends tools/call.
// Calls of one batch arrive concurrently.
type server struct {
	mu    sync.Mutex
	calls []string
}

func (s *server) CallTool(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	s.calls = append(s.calls, name)
	s.mu.Unlock()
	text := fmt.Sprintf("%s(%s): done", name, args)
	if name == "get_forecast" {
		text = "Sunny, 21°C"
	}
	return json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
}

// fromMCP turns tools/list into executor tools that forward to srv.
func fromMCP(list []byte, srv *server) ([]executor.Tool, error) {
	var l struct{ Tools []mcpTool }
	if err := json.Unmarshal(list, &l); err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	tools := make([]executor.Tool, 0, len(l.Tools))
	for _, t := range l.Tools {
		tools = append(tools, executor.Tool{
			Name:           t.Name,
			Description:    t.Description,
			InputSchema:    t.InputSchema,
			Annotations:    t.Annotations,
			Type:           executor.ToolTypeExtension,
			MaxOutputBytes: 4096,
			Execute: func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
				raw, err := srv.CallTool(ctx, t.Name, in)
				if err != nil {
					return executor.Result{}, err
				}
				var r mcpResult
				if err := json.Unmarshal(raw, &r); err != nil {
					return executor.Result{}, fmt.Errorf("tools/call %s: %w", t.Name, err)
				}
				var b strings.Builder
				for _, c := range r.Content {
					if c.Type == "text" {
						b.WriteString(c.Text)
					}
				}
				return executor.Result{Content: b.String(), IsError: r.IsError}, nil
			},
		})
	}
	return tools, nil
}

// knownDestructive is local knowledge that overrides what servers claim.
func knownDestructive(tools ...string) gate.Gate {
	return gate.Named("local-override", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if slices.Contains(tools, c.ToolName) {
			return gate.Deny("tool " + c.ToolName + " is known to be destructive, whatever its annotations say"), nil
		}
		return gate.Allow(), nil
	}))
}

// offline denies tools that may reach the network: OpenWorldHint unset
// means true (MCP's default), so only an explicit false passes.
func offline() gate.Gate {
	return gate.Named("offline", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if ow := c.Annotations.OpenWorldHint; ow == nil || *ow {
			return gate.Deny("this agent works offline; " + c.ToolName + " may reach the network"), nil
		}
		return gate.Allow(), nil
	}))
}

func run(ctx context.Context, out io.Writer) (err error) {
	// Spans: to the collector OTEL_EXPORTER_OTLP_ENDPOINT names (with the
	// token in OTEL_EXPORTER_OTLP_HEADERS), flushed before returning;
	// without the variable, nothing is exported.
	tp, shutdown, err := tracing.Setup(ctx, "mcptools", out)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, shutdown()) }()
	srv := &server{}
	tools, err := fromMCP([]byte(toolsList), srv)
	if err != nil {
		return err
	}
	reg, err := executor.NewRegistry(tools...)
	if err != nil {
		return err
	}
	// A UI answers asks over a channel: it approves everything but
	// deletions.
	ui := approve.NewChannel("ui", 4)
	go func() {
		for req := range ui.Requests() {
			outcome := gate.ApprovalApproved
			if strings.HasPrefix(req.Call.ToolName, "delete_") {
				outcome = gate.ApprovalDeclined
			}
			_ = ui.Resolve(req.CallHash, outcome, "UI decision", gate.GrantScopeNone)
		}
	}()
	ex, err := executor.New(reg,
		executor.WithGates(knownDestructive("wipe_cache"), gate.AskDestructive(),
			gate.AskTools("posts publicly in the tracker", "create_issue")),
		executor.WithApprover(ui),
		executor.WithTracerProvider(tp),
	)
	if err != nil {
		return err
	}
	assistant, err := ex.Agent("assistant", executor.AgentPresets(executor.PresetAll))
	if err != nil {
		return err
	}
	// The offline agent adds its own gate to the executor's.
	archivist, err := ex.Agent("archivist", executor.AgentPresets(executor.PresetAll), executor.AgentGates(offline()))
	if err != nil {
		return err
	}
	calls := []executor.ToolCall{
		{ID: "1", Name: "get_forecast", Input: json.RawMessage(`{"city":"Lisbon"}`)},
		{ID: "2", Name: "read_note", Input: json.RawMessage(`{"id":7}`)},
		{ID: "3", Name: "read_note", Input: json.RawMessage(`{"id":0}`)},
		{ID: "4", Name: "create_issue", Input: json.RawMessage(`{"title":"Forecast is wrong"}`)},
		{ID: "5", Name: "delete_note", Input: json.RawMessage(`{"id":7}`)},
		{ID: "6", Name: "wipe_cache", Input: json.RawMessage(`{}`)},
	}
	for _, ag := range []*executor.Agent{assistant, archivist} {
		fmt.Fprintf(out, "agent %s:\n", ag.Name())
		run := ag.Run("run-" + ag.Name())
		results := run.ExecuteBatch(ctx, calls)
		run.End()
		for _, r := range results {
			verdict := "ran"
			switch {
			case r.Gate.Gated && r.Gate.Action == gate.ActionDeny: // a gate denied (not: refused before the gate)
				verdict = fmt.Sprintf("denied by %s", r.Gate.Source)
				if r.Gate.Approval != "" {
					verdict += " (approval " + string(r.Gate.Approval) + ")"
				}
			case r.IsError:
				verdict = "error: " + firstLine(r.Content)
			case r.Gate.Approval != "":
				verdict = "ran after approval by " + r.Gate.Approver
			}
			fmt.Fprintf(out, "  %s %-13s %s\n", r.ToolCallID, r.ToolName, verdict)
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	slices.Sort(srv.calls)
	fmt.Fprintf(out, "server saw: %s\n", strings.Join(srv.calls, ", "))
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcptools:", err)
		os.Exit(1)
	}
}
