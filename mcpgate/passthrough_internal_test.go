package mcpgate

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"pgregory.net/rapid"
)

// Property: sole names a call exactly when one call is in flight, and
// then the one that is (an upstream's elicitation is never sent to the
// person behind another call).
func TestInflightSole(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var f inflight
		live := map[int]func(){}
		reqs := map[int]*mcp.CallToolRequest{}
		for i, op := range rapid.SliceOfN(rapid.IntRange(0, 5), 1, 40).Draw(t, "ops") {
			if op < 3 || len(live) == 0 {
				r := &mcp.CallToolRequest{}
				reqs[i], live[i] = r, f.add(r)
			} else {
				for k, done := range live {
					done()
					delete(live, k)
					break
				}
			}
			got := f.sole()
			if len(live) != 1 {
				if got != nil {
					t.Fatalf("%d calls in flight, sole gave one", len(live))
				}
				continue
			}
			for k := range live {
				if got != reqs[k] {
					t.Fatalf("sole is not the call in flight")
				}
			}
		}
	})
}
