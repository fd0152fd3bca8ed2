package mcpgate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/mcpgate"
	"github.com/toolgate/toolgate/replay"
)

// replayRules are the upstream rules that make the gateway's policy the
// replay's: bash is a shell, read_file reads, write_file and edit write
// (their path field), think and finish have no side effects.
func replayRules() []mcpgate.Rule {
	return []mcpgate.Rule{
		{Match: replay.ToolBash, Kind: mcpgate.KindShell},
		{Match: replay.ToolReadFile, Kind: mcpgate.KindRead},
		{Match: replay.ToolWriteFile, Kind: mcpgate.KindWrite},
		{Match: replay.ToolEdit, Kind: mcpgate.KindWrite},
		{Match: replay.ToolThink, Kind: mcpgate.KindAllow, Reason: "no side effects"},
		{Match: replay.ToolFinish, Kind: mcpgate.KindAllow, Reason: "no side effects"},
	}
}

// replayUpstream is an in-process MCP server exposing replay.Tools() with
// their schemas; its tools run nothing (the replay's dry run).
func replayUpstream(t testing.TB) *fakeUpstream {
	var tools []*mcp.Tool
	for _, rt := range replay.Tools() {
		tools = append(tools, &mcp.Tool{Name: rt.Name, Description: rt.Description, InputSchema: rt.InputSchema})
	}
	return newFakeUpstream(t, tools...)
}

// TestGatewayEqualsReplay: every recorded call of
// testdata/real/trajectories.jsonl sent through the gateway as an MCP
// tools/call gets the decision the embedded replay (make demo) gives it,
// call by call — action, risk, source, rule, stage, approval and reason —
// for every profile. ipython cells are the replay's own gate (not a tool
// an MCP server exposes here): excluded and counted.
func TestGatewayEqualsReplay(t *testing.T) {
	runs, err := replay.ReadTranscriptFile("../testdata/real/trajectories.jsonl")
	require.NoError(t, err)
	for _, profile := range []string{classify.ProfileStrict, classify.ProfileWorkspace, classify.ProfileReadOnly} {
		t.Run(profile, func(t *testing.T) {
			ctx := context.Background()
			want := map[string]gate.Record{}
			rp, err := replay.New(replay.WithProfile(profile), replay.OnCall(func(c replay.Call, r executor.ToolResult) {
				want[fmt.Sprintf("%s#%d", c.Run, c.Seq)] = r.Gate
			}))
			require.NoError(t, err)
			_, err = rp.Replay(ctx, runs)
			require.NoError(t, err)

			up := replayUpstream(t)
			compared, excluded := 0, 0
			for _, run := range runs {
				var mu sync.Mutex
				var last gate.Record
				gw, err := mcpgate.New(ctx, []mcpgate.Upstream{{Name: "rp", Tools: replayRules()}},
					mcpgate.WithTransport("rp", up.transport(t)),
					mcpgate.WithAgentName(replay.AgentName(run)),
					mcpgate.WithClassifier(classify.WithWorkspace(replay.InferWorkspace(run)), classify.WithProfile(profile)),
					mcpgate.WithGateOptions(profile == classify.ProfileReadOnly, classify.WithGateProfile(profile)),
					mcpgate.WithApprover(approve.DefaultPolicy().Approver("default")),
					mcpgate.WithExecutorOptions(executor.WithOnTrace(func(_ context.Context, ev executor.ToolCallTrace) error {
						mu.Lock()
						last = ev.Decision
						mu.Unlock()
						return nil
					})))
				require.NoError(t, err)
				cs := connectClient(t, gw)
				for _, c := range run.Calls {
					if c.Tool == replay.ToolIPython {
						excluded++
						continue
					}
					mu.Lock()
					last = gate.Record{}
					mu.Unlock()
					_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "rp_" + c.Tool, Arguments: json.RawMessage(c.Input)})
					require.NoError(t, err)
					key := fmt.Sprintf("%s#%d", c.Run, c.Seq)
					mu.Lock()
					got := last
					mu.Unlock()
					w, ok := want[key]
					require.True(t, ok, key)
					require.NotEmpty(t, got.Action, "the gateway recorded no decision for %s", key)
					where := fmt.Sprintf("%s %s %s", key, c.Tool, c.Input)
					require.Equal(t, w.Action, got.Action, where)
					require.Equal(t, w.Risk, got.Risk, where)
					require.Equal(t, w.Stage, got.Stage, where)
					require.Equal(t, w.Approval, got.Approval, where)
					require.Equal(t, w.Reason, got.Reason, where)
					require.Equal(t, w.Rule, got.Rule, where)
					if c.Tool != replay.ToolThink && c.Tool != replay.ToolFinish {
						require.Equal(t, w.Source, got.Source, where)
					}
					compared++
				}
				require.NoError(t, gw.Close())
			}
			t.Logf("profile %s: %d calls through the gateway equal to the replay, %d ipython calls excluded", profile, compared, excluded)
			require.Equal(t, 1091, compared+excluded, "every recorded call")
		})
	}
}

func connectClient(t testing.TB, gw *mcpgate.Gateway) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "replay-client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
