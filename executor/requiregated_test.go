package executor_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// TestRequireGated: with WithRequireGated no call runs ungated. An agent
// that reaches a registered tool no gate applies to is a configuration
// error naming the tool; a tool registered later that no gate applies to
// is denied at the gate stage (fail closed), never run. Without the
// option such a call runs ungated.
func TestRequireGated(t *testing.T) {
	bash, err := classify.BashGate()
	require.NoError(t, err)
	allow := gate.Named("allow", gate.AllowAll())
	tests := []struct {
		name    string
		require bool
		opts    []executor.Option
		agent   []executor.AgentOption
		err     []string // Agent's error ("" none)
		late    bool     // whether a late tool "notes" is denied (else it runs ungated)
	}{
		{"a tool outside every scope", true, []executor.Option{executor.WithGates(bash)}, nil,
			[]string{`agent "coder" reaches tools no gate applies to`, `["read_file"]`, "WithRequireGated", "AgentDeny"}, true},
		{"the ungated tool unreachable", true, []executor.Option{executor.WithGates(bash)},
			[]executor.AgentOption{executor.AgentDeny("read_file")}, nil, true},
		{"denied for every agent", true, []executor.Option{executor.WithGates(bash), executor.WithDeniedTools("read_file")}, nil, nil, true},
		{"an unscoped gate covers all", true, []executor.Option{executor.WithGates(allow)}, nil, nil, false},
		{"an agent gate covers the rest", true, []executor.Option{executor.WithGates(bash)},
			[]executor.AgentOption{executor.AgentGates(gate.Scoped(allow, gate.Scope{Tools: []string{"read_file"}}))}, nil, true},
		{"no gates at all", true, nil, nil, []string{`["bash" "read_file"]`}, true},
		{"an opted-out agent needs its own", true, []executor.Option{executor.WithGates(allow), executor.WithOptOut("coder")}, nil,
			[]string{`["bash" "read_file"]`}, true},
		{"off by default", false, []executor.Option{executor.WithGates(bash)}, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := map[string]*atomic.Int64{}
			tools := scopeTools(runs, bashSchema)[:2] // bash, read_file
			reg, err := executor.NewRegistry(tools...)
			require.NoError(t, err)
			opts := tt.opts
			if tt.require {
				opts = append(opts, executor.WithRequireGated())
			}
			ex, err := executor.New(reg, opts...)
			require.NoError(t, err, "New cannot know the agents' gates")
			a, err := ex.Agent("coder", append([]executor.AgentOption{executor.AgentPresets(executor.PresetAll)}, tt.agent...)...)
			if tt.err != nil {
				require.ErrorIs(t, err, executor.ErrGateScope)
				for _, s := range tt.err {
					assert.Contains(t, err.Error(), s)
				}
				return
			}
			require.NoError(t, err)
			run := a.Run("r")
			res := run.Execute(context.Background(), call("c1", "bash", `{"command":"ls"}`))
			assert.True(t, res.Gate.Gated)
			var notes atomic.Int64
			require.NoError(t, reg.Register(executor.Tool{Name: "notes", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
				Execute: func(context.Context, json.RawMessage) (executor.Result, error) {
					notes.Add(1)
					return executor.Text("noted"), nil
				}}))
			res = run.Execute(context.Background(), call("c2", "notes", `{"text":"x"}`))
			if !tt.late {
				assert.Equal(t, tt.require, res.Gate.Gated, "an unscoped gate judges it; without the option it runs ungated")
				assert.EqualValues(t, 1, notes.Load())
				return
			}
			assert.True(t, res.IsError)
			assert.True(t, res.Gate.Gated)
			assert.Equal(t, gate.ActionDeny, res.Gate.Action)
			assert.Equal(t, executor.RequireGatedSource, res.Gate.Source)
			assert.Equal(t, gate.StageGate, res.Gate.Stage)
			assert.Contains(t, res.Content, `no gate applies to tool "notes"`)
			assert.Zero(t, notes.Load(), "a denied call never runs")
		})
	}
}
