// Package replay feeds recorded agent runs (transcripts of tool calls)
// through a gated executor, so that the gate's decisions on real agent work
// can be seen, counted and audited without running anything.
//
// A transcript is JSON Lines, one tool call per line, in the shape of
// testdata/real/trajectories.jsonl:
//
//	{"run": "...", "seq": 1, "tool": "bash", "input": {...}, "agent": "...", "source": "...", "meta": {...}}
//
// The replayed tools never execute: each allowed call returns a dry-run
// result that says what would have run. Review-level calls go to an
// approver that follows a policy file (approve.Policy, see WithPolicy), so
// a replay needs no keyboard.
//
// A replay records every recorded call: its executor runs with the
// refusal budget off (executor.WithRefusalBudget(-1), which
// WithExecutorOptions cannot override), so a run with many denied calls
// in a row is neither aborted nor aggregated — replayed decisions are the
// same whatever the budget of a live executor.
package replay
