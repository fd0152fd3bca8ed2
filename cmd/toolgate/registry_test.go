package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRegistryForHoldsTheCalledToolOnly: the hook's registry is the one
// tool the event calls, with the agent's own input schema for it (the
// schema the executor validates against), else an open object schema;
// every agent's every tool, and a tool no agent knows.
func TestRegistryForHoldsTheCalledToolOnly(t *testing.T) {
	for _, name := range []string{"claude", "codex", "gemini"} {
		a := agentByName(name)
		tests := append([]string{"mcp__fs__write_file"}, func() (n []string) {
			for _, tool := range a.tools {
				n = append(n, tool.Name)
			}
			return n
		}()...)
		for _, tool := range tests {
			t.Run(name+"/"+tool, func(t *testing.T) {
				reg, err := registryFor(a, tool)
				require.NoError(t, err)
				require.Equal(t, []string{tool}, reg.Names())
				got, ok := reg.Lookup(tool)
				require.True(t, ok)
				want := string(openSchema)
				for _, k := range a.tools {
					if k.Name == tool {
						want = string(k.InputSchema)
					}
				}
				require.JSONEq(t, want, string(got.InputSchema))
			})
		}
	}
}
