package executor_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// FuzzExecuteInput: whatever the model sends, the executor returns exactly
// one result for the call, never panics, and runs the tool only on input
// that is a JSON object matching the schema.
func FuzzExecuteInput(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `{}`, ``, `null`, `[]`, `{"command":1}`, `{"command":"a","x":1}`, `{"command":"\u0000"}`, `{`, `"str"`} {
		f.Add("bash", s)
	}
	f.Add("nope", `{}`)
	h := newHarness(f, executor.WithGates(gate.AllowAll()), executor.WithMaxOutputBytes(64), executor.WithRecordContent(true))
	run := h.agent(f).Run("fuzz")
	f.Fuzz(func(t *testing.T, name, input string) {
		before := h.calls["bash"].Load()
		res := run.Execute(context.Background(), executor.ToolCall{ID: "c", Name: name, Input: json.RawMessage(input)})
		if res.ToolCallID != "c" || res.ToolName != name {
			t.Fatalf("result for another call: %+v", res)
		}
		ran := h.calls["bash"].Load() - before
		if name != "bash" {
			if ran != 0 || !res.IsError {
				t.Fatalf("unknown tool %q ran or succeeded", name)
			}
			return
		}
		var m map[string]any
		var cmd string
		valid := json.Unmarshal([]byte(input), &m) == nil
		if valid {
			cmd, valid = m["command"].(string)
		}
		valid = valid && len(m) == 1 && cmd != "" && topLevelKeys(input) == 1 && utf8.ValidString(input)
		if valid != (ran == 1) {
			t.Fatalf("input %q: valid=%v but ran=%d (%s)", input, valid, ran, res.Content)
		}
		if ran == 1 && len(res.Content) > 64 { // the cap applies to tool output
			t.Fatalf("content over the cap: %d", len(res.Content))
		}
	})
}

// topLevelKeys counts the keys of a JSON object's top level, duplicates
// included.
func topLevelKeys(s string) int {
	dec := json.NewDecoder(strings.NewReader(s))
	depth, n, key := 0, 0, false
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				if depth == 1 {
					key = true
				}
				depth++
				if depth == 1 {
					key = true
				}
			} else {
				depth--
			}
		default:
			if depth == 1 {
				if _, ok := t.(string); ok && key {
					n++
					key = false
					continue
				}
				key = true
			}
		}
	}
}
