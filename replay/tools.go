package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// Tool kinds found in recorded runs (testdata/real/trajectories.jsonl
// normalises every framework's tools to these).
const (
	ToolBash      = "bash"
	ToolReadFile  = "read_file"
	ToolWriteFile = "write_file"
	ToolEdit      = "edit"
	ToolIPython   = "ipython"
	ToolThink     = "think"
	ToolFinish    = "finish"
)

// dryRunPreview bounds how much of the input a dry-run result quotes (bytes).
const dryRunPreview = 200

func boolPtr(b bool) *bool { return &b }

// Tools returns the replayed tools, one per kind. Their input schemas accept
// every shape the recorded frameworks used (mini-swe-agent, SWE-agent,
// OpenHands, Aider), and they never run anything: Execute returns a dry-run
// result that says what would have run.
func Tools() []executor.Tool {
	return []executor.Tool{
		{
			Name:        ToolBash,
			Description: "Run a shell command (replayed: dry run).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"is_input":{"type":["boolean","string"]}},"required":["command"]}`),
			Annotations: gate.Annotations{OpenWorldHint: boolPtr(true)},
			Execute:     dryRun(ToolBash, "command"),
		},
		{
			Name:        ToolReadFile,
			Description: "Read a file or a range of its lines (replayed: dry run).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","minLength":1},"command":{"type":"string"},"view_range":{"type":"array","items":{"type":"integer"}}},"required":["path"]}`),
			Annotations: gate.Annotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
			Execute:     dryRun(ToolReadFile, "path"),
		},
		{
			Name:        ToolWriteFile,
			Description: "Create or overwrite a file (replayed: dry run).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","minLength":1},"file_text":{"type":"string"},"command":{"type":"string"}},"required":["path"]}`),
			Annotations: gate.Annotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(false)},
			Execute:     dryRun(ToolWriteFile, "path"),
		},
		{
			Name:        ToolEdit,
			Description: "Edit a file: replace, insert or search/replace (replayed: dry run).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","minLength":1},"command":{"type":"string"},"old_str":{"type":"string"},"new_str":{"type":"string"},"insert_line":{"type":"integer"},"search":{"type":"string"},"replace":{"type":"string"},"view_range":{"type":"array","items":{"type":"integer"}}},"required":["path"]}`),
			Annotations: gate.Annotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(false)},
			Execute:     dryRun(ToolEdit, "path"),
		},
		{
			Name:        ToolIPython,
			Description: "Run Python code in an IPython kernel (replayed: dry run).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}`),
			Annotations: gate.Annotations{OpenWorldHint: boolPtr(true)},
			Execute:     dryRun(ToolIPython, "code"),
		},
		{
			Name:        ToolThink,
			Description: "Record a thought; no side effects.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"thought":{"type":"string"}}}`),
			Annotations: gate.Annotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
			Execute:     dryRun(ToolThink, "thought"),
		},
		{
			Name:        ToolFinish,
			Description: "End the run with a message; no side effects.",
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: gate.Annotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
			Execute:     dryRun(ToolFinish, "message"),
		},
	}
}

// dryRun returns an Execute function that quotes the call's main field.
func dryRun(tool, field string) func(context.Context, json.RawMessage) (executor.Result, error) {
	return func(_ context.Context, in json.RawMessage) (executor.Result, error) {
		var m map[string]any
		if err := json.Unmarshal(in, &m); err != nil {
			return executor.Result{}, fmt.Errorf("replay: %s: %w", tool, err)
		}
		what, _ := m[field].(string)
		what = strings.TrimSpace(what)
		if len(what) > dryRunPreview {
			what = what[:dryRunPreview] + fmt.Sprintf("… (%d more bytes)", len(what)-dryRunPreview)
		}
		if what == "" {
			return executor.Text(fmt.Sprintf("dry run: %s would have run (nothing was executed)", tool)), nil
		}
		return executor.Text(fmt.Sprintf("dry run: %s would have run on %s: %s (nothing was executed)", tool, field, what)), nil
	}
}
