package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/replay"
)

// noWAL commits nothing (the in-process tests record spans in memory).
type noWAL struct{}

func (noWAL) Commit(context.Context, trace.Span) error { return nil }

// agentPayload turns one recorded call (the replay's normalised tools)
// into the hook event the agent would send for the same action: its tool
// name and input shape. ok is false when the agent has no such tool
// (Codex reads files with its shell) or the call is not a file or shell
// call (ipython, think, finish).
func agentPayload(agent string, c replay.Call) (tool string, input map[string]any, ok bool) {
	var in map[string]any
	if json.Unmarshal(c.Input, &in) != nil {
		return "", nil, false
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	p := str("path")
	switch c.Tool {
	case replay.ToolBash:
		cmd := map[string]any{"command": str("command")}
		switch agent {
		case "gemini":
			return "run_shell_command", cmd, true
		default:
			return "Bash", cmd, true
		}
	case replay.ToolReadFile:
		switch agent {
		case "claude":
			return "Read", map[string]any{"file_path": p}, true
		case "gemini":
			return "read_file", map[string]any{"file_path": p}, true
		}
	case replay.ToolWriteFile:
		switch agent {
		case "claude":
			return "Write", map[string]any{"file_path": p, "content": str("file_text")}, true
		case "gemini":
			return "write_file", map[string]any{"file_path": p, "content": str("file_text")}, true
		case "codex":
			return "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: " + p + "\n+" + str("file_text") + "\n*** End Patch\n"}, true
		}
	case replay.ToolEdit:
		old, nw := str("old_str")+str("search"), str("new_str")+str("replace")
		switch agent {
		case "claude":
			return "Edit", map[string]any{"file_path": p, "old_string": old, "new_string": nw}, true
		case "gemini":
			return "replace", map[string]any{"file_path": p, "old_string": old, "new_string": nw}, true
		case "codex":
			return "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: " + p + "\n@@\n-" + old + "\n+" + nw + "\n*** End Patch\n"}, true
		}
	}
	return "", nil, false
}

// eventJSON is the agent's hook event for tool and input.
func eventJSON(agent, session, callID, cwd, tool string, input map[string]any) []byte {
	ev := map[string]any{"session_id": session, "cwd": cwd, "tool_name": tool, "tool_input": input,
		"hook_event_name": agents[agent].event, "transcript_path": "/tmp/transcript.jsonl"}
	switch agent {
	case "claude":
		ev["tool_use_id"], ev["permission_mode"] = callID, "default"
	case "codex":
		ev["tool_use_id"], ev["turn_id"], ev["model"] = callID, "turn-1", "gpt-test"
	case "gemini":
		ev["timestamp"] = "2026-12-01T00:00:00Z"
	}
	b, _ := json.Marshal(ev)
	return b
}

// recordedCall is one recorded call mapped onto an agent's hook.
type recordedCall struct {
	run      replay.Run
	call     replay.Call
	ws       string
	tool     string
	event    []byte
	want     gate.Decision // the replay's own decision
	callID   string
	session  string
	excluded bool
}

// recordedCalls maps every recorded call onto agent's hook format, with
// the replay's decision under profile.
func recordedCalls(t *testing.T, agent, profile string) ([]recordedCall, int) {
	t.Helper()
	runs, err := replay.ReadTranscriptFile(filepath.Join(moduleRoot(), "testdata", "real", "trajectories.jsonl"))
	require.NoError(t, err)
	var out []recordedCall
	excluded := 0
	for _, run := range runs {
		ws := replay.InferWorkspace(run)
		g, err := replay.RunGate(ws, profile)
		require.NoError(t, err)
		for _, c := range run.Calls {
			tool, in, ok := agentPayload(agent, c)
			if !ok {
				excluded++
				continue
			}
			var rin map[string]any
			require.NoError(t, json.Unmarshal(c.Input, &rin))
			want, err := g.Decide(context.Background(), gate.ToolCallContext{ToolName: c.Tool, Input: rin, RawInput: c.Input})
			require.NoError(t, err)
			session := "replay-" + strings.NewReplacer(":", "-", "/", "-").Replace(run.ID)
			callID := fmt.Sprintf("call-%d", c.Seq)
			out = append(out, recordedCall{run: run, call: c, ws: ws, tool: tool, want: want, callID: callID, session: session,
				event: eventJSON(agent, session, callID, ws, tool, in)})
		}
	}
	return out, excluded
}

// expectVerdict is what the agent must be told for the replay's decision:
// allow and deny as they are; an ask goes to Claude Code's own prompt, and
// is a deny naming the missing approval for Codex (which cannot ask) and
// Gemini CLI (by default: headless, it would wait forever).
func expectVerdict(agent string, d gate.Decision) verdict {
	switch d.Action {
	case gate.ActionAllow:
		return verdictAllow
	case gate.ActionAsk:
		if agents[agent].askByDefault {
			return verdictAsk
		}
	}
	return verdictDeny
}

// TestHookEqualsReplay sends every recorded bash, read, write and edit call
// of testdata/real/trajectories.jsonl through each agent's hook payload
// format (the event the agent would send, parsed as the hook parses it,
// judged by the executor with the policy's gate) and holds the decision
// equal, call by call, to the embedded replay's (replay.RunGate, the gate
// of `make demo`), under every profile: the verdict the agent is given,
// the risk, the deciding source and the reason. Calls an agent has no tool
// for (ipython, think, finish; Codex's file reads) are excluded and counted.
func TestHookEqualsReplay(t *testing.T) {
	for _, profile := range []string{classify.ProfileStrict, classify.ProfileWorkspace, classify.ProfileReadOnly} {
		pol, err := policy.Parse([]byte("version: 1\nprofile: "+profile+"\n"), "/")
		require.NoError(t, err)
		for _, agent := range []string{"claude", "codex", "gemini"} {
			t.Run(profile+"/"+agent, func(t *testing.T) {
				a := agents[agent]
				calls, excluded := recordedCalls(t, agent, profile)
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				counts := map[verdict]int{}
				for _, rc := range calls {
					ev, err := readEvent(context.Background(), bytes.NewReader(rc.event), a)
					require.NoError(t, err)
					g, err := pol.Gate(ev.Cwd)
					require.NoError(t, err)
					out, res, err := execute(context.Background(), pipeline{tp: tp, wal: noWAL{}}, a, pol, g, a.genAI, ev, a.askByDefault)
					require.NoError(t, err)
					where := fmt.Sprintf("%s#%d %s→%s %s", rc.run.ID, rc.call.Seq, rc.call.Tool, rc.tool, rc.call.Input)
					require.Equal(t, expectVerdict(agent, rc.want), out.verdict, "%s: %s", where, res.Gate.Reason)
					require.Equal(t, rc.want.Risk, res.Gate.Risk, where)
					require.Equal(t, rc.want.Source, res.Gate.Source, where)
					require.True(t, strings.HasPrefix(res.Gate.Reason, rc.want.Reason), "%s: reason %q, replay's %q", where, res.Gate.Reason, rc.want.Reason)
					counts[out.verdict]++
				}
				t.Logf("%s %s: %d calls equal (allow %d, ask %d, deny %d); %d excluded", profile, agent, len(calls),
					counts[verdictAllow], counts[verdictAsk], counts[verdictDeny], excluded)
				require.Equal(t, 1091, len(calls)+excluded)
				// Each call is one execute_tool span with the agent's IDs.
				spans := 0
				for _, s := range rec.Ended() {
					if !strings.HasPrefix(s.Name(), "execute_tool ") {
						continue
					}
					if spans == 0 {
						attrs := map[string]string{}
						for _, kv := range s.Attributes() {
							attrs[string(kv.Key)] = kv.Value.Emit()
						}
						require.Equal(t, calls[0].session, attrs["gen_ai.conversation.id"])
						require.Equal(t, calls[0].session, attrs["toolgate.run.id"])
						require.Equal(t, a.genAI, attrs["gen_ai.agent.name"])
						require.Equal(t, calls[0].tool, attrs["gen_ai.tool.name"])
						if agent != "gemini" {
							require.Equal(t, calls[0].callID, attrs["gen_ai.tool.call.id"])
						} else {
							require.True(t, strings.HasPrefix(attrs["gen_ai.tool.call.id"], "gemini-"), "Gemini sends no call ID: the hook makes one")
						}
						require.NotEmpty(t, attrs["gate.action"])
					}
					spans++
				}
				require.Equal(t, len(calls), spans)
			})
		}
	}
}
