package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/executor"
)

// verdict is what the hook tells the agent.
type verdict int

const (
	verdictAllow verdict = iota
	verdictDeny
	verdictAsk // the agent asks its user (Claude Code, Gemini CLI)
)

// agentSpec is one coding agent's hook protocol: its event names, its
// tools (with input schemas for the executor's validation) and how it
// reads a decision.
type agentSpec struct {
	// name is the CLI argument: claude, codex or gemini.
	name string
	// genAI is the default gen_ai.agent.name.
	genAI string
	// event is the hook_event_name the hook accepts (PreToolUse, BeforeTool).
	event string
	// canAsk: the agent can ask its user when the hook says ask.
	canAsk bool
	// askByDefault: a policy ask is handed to the agent's prompt unless
	// --ask deny (false for Gemini CLI: headless, it waits for a
	// confirmation nobody can give, forever — tested with 0.61.0 —, so an
	// ask is a deny there unless --ask native).
	askByDefault bool
	// typesInto: the agent can type into a command it started (Codex's
	// write_stdin, which fires no hook), so programs that read commands
	// from the terminal are review (policy.WithInteractiveInput).
	typesInto bool
	// projectEnv are the environment variables the agent sets for its
	// hooks naming the project directory (the workspace root).
	projectEnv []string
	// tools are the agent's known tools; any other tool name an event
	// carries (an MCP tool) is registered with an open object schema.
	tools []executor.Tool
	// answer is the agent's documented output for a decision: stdout
	// (nil = none) and the exit code.
	answer func(v verdict, reason string) ([]byte, int)
}

// schema builds an object schema whose properties are strings (name) or
// arrays of strings (name ending in "[]"), with required ones marked "!".
func schema(props ...string) json.RawMessage {
	p := map[string]any{}
	var req []string
	for _, s := range props {
		name, isReq := strings.CutSuffix(s, "!")
		if n, ok := strings.CutSuffix(name, "[]"); ok {
			p[n] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
			name = n
		} else {
			p[name] = map[string]any{"type": "string"}
		}
		if isReq {
			req = append(req, name)
		}
	}
	s := map[string]any{"type": "object", "properties": p}
	if len(req) > 0 {
		s["required"] = req
	}
	b, _ := json.Marshal(s)
	return b
}

// openSchema is the schema of a tool the hook does not know: any object.
var openSchema = json.RawMessage(`{"type":"object"}`)

// agentTool is a registry entry for a tool the agent runs itself: Execute
// never runs anything (the hook only decides).
func agentTool(name string, in json.RawMessage) executor.Tool {
	return executor.Tool{
		Name:        name,
		Description: "run by the coding agent after the hook's decision",
		InputSchema: in,
		Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
			return executor.Text("allowed: the agent runs the call"), nil
		},
	}
}

// blockJSON is the deny form all three agents honour (exit 0).
func blockJSON(reason string) []byte {
	b, _ := json.Marshal(map[string]any{
		"decision": "block",
		"reason":   reason,
		"hookSpecificOutput": map[string]any{
			"hookEventName":            "PreToolUse",
			"permissionDecision":       "deny",
			"permissionDecisionReason": reason,
		},
	})
	return b
}

func claudeDecision(decision, reason string) []byte {
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}})
	return b
}

var agents = map[string]*agentSpec{
	"claude": {
		name: "claude", genAI: "claude-code", event: "PreToolUse", canAsk: true, askByDefault: true,
		projectEnv: []string{"CLAUDE_PROJECT_DIR"},
		tools: []executor.Tool{
			agentTool("Bash", schema("command!", "description")),
			agentTool("Read", schema("file_path!")),
			agentTool("Write", schema("file_path!", "content")),
			agentTool("Edit", schema("file_path!", "old_string", "new_string")),
			agentTool("MultiEdit", schema("file_path!")),
			agentTool("NotebookEdit", schema("notebook_path!")),
			agentTool("Glob", schema("pattern!", "path")),
			agentTool("Grep", schema("pattern!", "path", "glob")),
			agentTool("LS", schema("path!")),
			agentTool("WebFetch", schema("url!", "prompt")),
			agentTool("WebSearch", schema("query!")),
			agentTool("TodoWrite", openSchema),
			agentTool("Task", openSchema),
		},
		answer: func(v verdict, reason string) ([]byte, int) {
			switch v {
			case verdictAllow:
				return claudeDecision("allow", reason), 0
			case verdictAsk:
				return claudeDecision("ask", reason), 0
			}
			return blockJSON(reason), 0
		},
	},
	"codex": {
		name: "codex", genAI: "codex", event: "PreToolUse", typesInto: true,
		tools: []executor.Tool{
			agentTool("Bash", schema("command!")),
			agentTool("exec_command", schema("cmd!")),
			agentTool("shell", schema("command!")),
			agentTool("apply_patch", schema("command!")),
		},
		answer: func(v verdict, reason string) ([]byte, int) {
			if v == verdictAllow {
				return nil, 0 // Codex treats a bare allow as a failure (and runs the call)
			}
			return blockJSON(reason), 0
		},
	},
	"gemini": {
		name: "gemini", genAI: "gemini-cli", event: "BeforeTool", canAsk: true,
		projectEnv: []string{"GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"},
		tools: []executor.Tool{
			agentTool("run_shell_command", schema("command!", "description", "dir_path")),
			agentTool("read_file", schema("file_path", "absolute_path")),
			agentTool("read_many_files", schema("paths[]", "include[]")),
			agentTool("list_directory", schema("path", "dir_path")),
			agentTool("glob", schema("pattern!", "path", "dir_path")),
			agentTool("search_file_content", schema("pattern!", "path", "dir_path", "include")),
			agentTool("write_file", schema("file_path!", "content")),
			agentTool("replace", schema("file_path!", "old_string", "new_string")),
			agentTool("web_fetch", schema("prompt!")),
			agentTool("google_web_search", schema("query!")),
		},
		answer: func(v verdict, reason string) ([]byte, int) {
			var m map[string]any
			switch v {
			case verdictAllow:
				m = map[string]any{"decision": "allow"}
			case verdictAsk:
				m = map[string]any{"decision": "ask", "reason": reason, "systemMessage": reason}
			default:
				m = map[string]any{"decision": "deny", "reason": reason}
			}
			b, _ := json.Marshal(m)
			return b, 0
		},
	},
}

// agentByName is the spec for a CLI argument, or nil.
func agentByName(name string) *agentSpec { return agents[name] }

// agentNames lists the accepted CLI arguments.
func agentNames() string { return "claude, codex or gemini" }

// registryFor is the registry of the one tool the event calls: the
// agent's entry for it (its input schema), else tool with an open schema.
// Only that tool is registered: the executor looks up the call's name and
// validates against its schema alone, and compiling every tool's schema
// of the agent cost more than the decision.
func registryFor(a *agentSpec, tool string) (*executor.Registry, error) {
	t := agentTool(tool, openSchema)
	for _, k := range a.tools {
		if k.Name == tool {
			t = k
			break
		}
	}
	reg, err := executor.NewRegistry(t)
	if err != nil {
		return nil, fmt.Errorf("registry for %s: %w", a.name, err)
	}
	return reg, nil
}
