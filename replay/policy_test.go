package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/policy"
)

// TestPolicyGateEqualsRunGates holds the policy gate (package policy, the
// one the coding-agent hooks and the MCP gateway use) equal to the replay's
// own per-run gate, call by call, over every recorded call of
// testdata/real/trajectories.jsonl, for every profile: same action, risk,
// reason and rule, and for the classified tools the same source. ipython
// stays the replay's own gate (its cells are not a tool of any hooked
// agent); its calls are excluded and counted.
func TestPolicyGateEqualsRunGates(t *testing.T) {
	runs, err := ReadTranscriptFile("../testdata/real/trajectories.jsonl")
	require.NoError(t, err)
	for _, profile := range []string{classify.ProfileStrict, classify.ProfileWorkspace, classify.ProfileReadOnly} {
		t.Run(profile, func(t *testing.T) {
			p, err := policy.Parse([]byte("version: 1\nprofile: "+profile+"\n"), "/")
			require.NoError(t, err)
			compared, excluded := 0, 0
			actions := map[gate.Action]int{}
			for _, run := range runs {
				ws := InferWorkspace(run)
				want, err := runGates(ws, nil, profile)
				require.NoError(t, err)
				got, err := p.Gate(ws)
				require.NoError(t, err)
				for _, c := range run.Calls {
					if c.Tool == ToolIPython {
						excluded++
						continue
					}
					var in map[string]any
					require.NoError(t, json.Unmarshal(c.Input, &in))
					call := gate.ToolCallContext{ToolName: c.Tool, Input: in, RawInput: c.Input, ToolCallID: fmt.Sprintf("%s#%d", run.ID, c.Seq)}
					wd, err := want.Decide(context.Background(), call)
					require.NoError(t, err)
					gd, err := got.Decide(context.Background(), call)
					require.NoError(t, err)
					where := fmt.Sprintf("%s#%d %s %s", run.ID, c.Seq, c.Tool, c.Input)
					require.Equal(t, wd.Action, gd.Action, where)
					require.Equal(t, wd.Risk, gd.Risk, where)
					require.Equal(t, wd.Reason, gd.Reason, where)
					if c.Tool != ToolThink && c.Tool != ToolFinish {
						require.Equal(t, wd.Source, gd.Source, where)
						require.Equal(t, wd.Rule, gd.Rule, where)
					}
					actions[gd.Action]++
					compared++
				}
			}
			t.Logf("profile %s: %d calls equal (allow %d, ask %d, deny %d), %d ipython calls excluded",
				profile, compared, actions[gate.ActionAllow], actions[gate.ActionAsk], actions[gate.ActionDeny], excluded)
			require.Equal(t, 1091, compared+excluded, "every recorded call")
			require.Equal(t, 21, excluded)
		})
	}
}
