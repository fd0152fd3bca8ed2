package replay

import "github.com/toolgate/toolgate/gate"

// RunGate returns the gate Replay judges one recorded run's calls with: its
// bash calls through classify.BashGate, its file tools through
// classify.PathGate, ipython cells through the replay's own gate, think and
// finish allowed; workspace is the run's working directory (InferWorkspace;
// "" when unknown) and profile a classify profile ("" = strict). Other
// ways in (the coding-agent hooks, the MCP gateway) are tested against it,
// call by call. It fails when the classifier refuses the profile.
func RunGate(workspace, profile string) (gate.Gate, error) {
	return runGates(workspace, nil, profile)
}
