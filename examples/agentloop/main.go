// Command agentloop is a runnable agent loop: a scripted model asks for
// tool calls, the executor runs them through a chain of gates, and the
// model sees every result, denials included. Nothing touches the real file
// system or shell: the tools work on an in-memory workspace.
//
//	go run ./examples/agentloop
//	# and export its spans when OTEL_EXPORTER_OTLP_ENDPOINT is set (with the
//	# collector's token in OTEL_EXPORTER_OTLP_HEADERS); after make demo:
//	source .demo/env && go run ./examples/agentloop
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

	"github.com/toolgate/toolgate/examples/internal/tracing"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
}

// workspace is the in-memory file system the tools act on.
type workspace struct {
	mu    sync.Mutex
	files map[string]string
}

func (w *workspace) tools() []executor.Tool {
	no := false
	return []executor.Tool{
		{
			Name: "list_files", Description: "List the workspace's files.",
			Annotations: gate.Annotations{ReadOnlyHint: true, OpenWorldHint: &no},
			Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
				w.mu.Lock()
				defer w.mu.Unlock()
				var names []string
				for n := range w.files {
					names = append(names, n)
				}
				slices.Sort(names)
				return executor.Text(strings.Join(names, "\n")), nil
			},
		},
		{
			Name: "read_file", Description: "Read one file.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"],"additionalProperties":false}`),
			Annotations: gate.Annotations{ReadOnlyHint: true, OpenWorldHint: &no},
			Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
				var a struct{ Path string }
				if err := json.Unmarshal(in, &a); err != nil {
					return executor.Result{}, err
				}
				w.mu.Lock()
				defer w.mu.Unlock()
				s, ok := w.files[a.Path]
				if !ok {
					return executor.Result{Content: "no such file: " + a.Path, IsError: true}, nil
				}
				return executor.Text(s), nil
			},
		},
		{
			Name: "write_file", Description: "Write one file.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","minLength":1},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`),
			Annotations: gate.Annotations{OpenWorldHint: &no},
			Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
				var a struct{ Path, Content string }
				if err := json.Unmarshal(in, &a); err != nil {
					return executor.Result{}, err
				}
				w.mu.Lock()
				defer w.mu.Unlock()
				w.files[a.Path] = a.Content
				return executor.Text(fmt.Sprintf("wrote %d bytes to %s", len(a.Content), a.Path)), nil
			},
		},
		{
			Name: "bash", Description: "Run a shell command (simulated).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","minLength":1}},"required":["command"],"additionalProperties":false}`),
			Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
				var a struct{ Command string }
				if err := json.Unmarshal(in, &a); err != nil {
					return executor.Result{}, err
				}
				return executor.Text("$ " + a.Command + "\n(simulated) ok"), nil
			},
		},
		{
			Name: "publish", Description: "Publish the release notes to the company blog.",
			Consequential: true,
			Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
				return executor.Text("published"), nil
			},
		},
	}
}

// noSecrets denies reading or writing files that look like secrets.
func noSecrets() gate.Gate {
	return gate.Named("no-secrets", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		p := c.String("path")
		if p != "" && (strings.HasSuffix(p, ".env") || strings.Contains(p, "id_rsa")) {
			return gate.Deny("file " + p + " may hold credentials"), nil
		}
		return gate.Allow(), nil
	}))
}

// shellPolicy denies destructive commands, asks before pushing, and
// rewrites "git status" to its porcelain form.
func shellPolicy() gate.Gate {
	return gate.Named("shell-policy", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if c.ToolName != "bash" {
			return gate.Allow(), nil
		}
		cmd := c.String("command")
		switch {
		case strings.Contains(cmd, "rm -rf"):
			return gate.Deny("recursive delete is not allowed").WithRisk(gate.RiskHigh), nil
		case strings.HasPrefix(cmd, "git push"):
			return gate.Ask("pushing publishes commits").WithRisk(gate.RiskReview), nil
		case cmd == "git status":
			return gate.AllowRewritten(json.RawMessage(`{"command":"git status --porcelain"}`), "machine-readable status").WithRisk(gate.RiskSafe), nil
		}
		return gate.Allow().WithRisk(gate.RiskSafe), nil
	}))
}

// turn is one scripted model response: tool calls, or a final answer.
type turn struct {
	calls []executor.ToolCall
	final string
}

// scriptedModel replays turns; when a result says a call was denied it
// records that, as a real model would read the tool result.
type scriptedModel struct {
	turns  []turn
	next   int
	denied []string
}

func (m *scriptedModel) respond(results []executor.ToolResult) turn {
	for _, r := range results {
		if errors.Is(r.Err, executor.ErrDenied) { // a gate said no (not: an unknown tool)
			m.denied = append(m.denied, r.ToolName)
		}
	}
	t := m.turns[m.next]
	m.next++
	if t.final != "" && len(m.denied) > 0 {
		t.final += fmt.Sprintf(" (%d call(s) were denied; I did not retry them.)", len(m.denied))
	}
	return t
}

func tc(id, name, input string) executor.ToolCall {
	return executor.ToolCall{ID: id, Name: name, Input: json.RawMessage(input)}
}

// lockedWriter serialises writes: trace hooks and approvers of one batch
// run concurrently.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func run(ctx context.Context, w io.Writer) (err error) {
	out := &lockedWriter{w: w}
	// Spans: to the collector OTEL_EXPORTER_OTLP_ENDPOINT names (with the
	// token in OTEL_EXPORTER_OTLP_HEADERS), flushed before returning;
	// without the variable, nothing is exported.
	tp, shutdown, err := tracing.Setup(ctx, "agentloop", out)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, shutdown()) }()
	ws := &workspace{files: map[string]string{
		"NOTES.md": "v1.2: faster gate, new approver",
		"prod.env": "API_TOKEN=sk-live-abcdefghijklmnopqrstuvwxyz",
	}}
	reg, err := executor.NewRegistry(ws.tools()...)
	if err != nil {
		return err
	}
	// The approver stands in for a human: it approves pushes once and
	// declines publishing.
	approver := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		ok := req.Call.ToolName == "bash"
		fmt.Fprintf(out, "  ? approval asked: %s %s (%s) -> approved=%v\n", req.Call.ToolName, req.Call.RawInput, req.Decision.Reason, ok)
		if ok {
			return req.Approve("scripted-human", ""), nil
		}
		return req.Decline("scripted-human", ""), nil
	})
	ex, err := executor.New(reg,
		// Executor-level gates run for every agent.
		executor.WithGates(noSecrets(), gate.AskConsequential()),
		executor.WithApprover(approver),
		executor.WithMaxOutputBytes(2000),
		executor.WithTracerProvider(tp),
		executor.WithOnTrace(func(_ context.Context, ev executor.ToolCallTrace) error {
			fmt.Fprintf(out, "  trace: tool=%s gated=%v action=%s source=%s risk=%s approval=%s error=%v stage=%s\n",
				ev.Tool, ev.Decision.Gated, ev.Decision.Action, ev.Decision.Source, ev.Decision.Risk, ev.Decision.Approval, ev.IsError, ev.Decision.Stage)
			return nil
		}),
	)
	if err != nil {
		return err
	}
	// The agent reaches every registered tool and adds its own shell policy
	// to the executor's gates: the chain is no-secrets, consequential,
	// shell-policy; the first deny wins.
	agent, err := ex.Agent("release-bot",
		executor.AgentPresets(executor.PresetAll),
		executor.AgentGates(shellPolicy()))
	if err != nil {
		return err
	}
	model := &scriptedModel{turns: []turn{
		{calls: []executor.ToolCall{tc("call_1", "list_files", `{}`)}},
		{calls: []executor.ToolCall{ // parallel calls: one is denied, its siblings still run
			tc("call_2", "read_file", `{"path":"NOTES.md"}`),
			tc("call_3", "read_file", `{"path":"prod.env"}`),
			tc("call_4", "bash", `{"command":"git status"}`),
		}},
		{calls: []executor.ToolCall{
			tc("call_5", "write_file", `{"path":"RELEASE.md","content":"# v1.2\nfaster gate, new approver\n"}`),
			tc("call_6", "bash", `{"command":"rm -rf build/"}`),
		}},
		{calls: []executor.ToolCall{tc("call_7", "bash", `{"command":"git push origin main"}`)}},
		{calls: []executor.ToolCall{tc("call_8", "publish", `{}`), tc("call_9", "deploy", `{}`)}},
		{final: "Release notes written and pushed."},
	}}
	// The run opens its invoke_agent span at its first call: every call
	// below is in one trace. End closes it.
	runCtx := agent.Run("run-2026-11-29-1", executor.WithTask("release-notes"))
	defer runCtx.End()
	var results []executor.ToolResult
	for step := 1; ; step++ {
		t := model.respond(results)
		if t.final != "" {
			fmt.Fprintf(out, "model: %s\n", t.final)
			return nil
		}
		fmt.Fprintf(out, "step %d: model asks for %d tool call(s)\n", step, len(t.calls))
		results = runCtx.ExecuteBatch(ctx, t.calls)
		for _, r := range results {
			fmt.Fprintf(out, "  %s %s -> error=%v: %s\n", r.ToolCallID, r.ToolName, r.IsError, firstLine(r.Content))
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
