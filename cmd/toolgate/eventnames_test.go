package main

import (
	"encoding/json"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"pgregory.net/rapid"
)

// Property: a hook event checkEventNames accepts is read by encoding/json
// (the hook) exactly as a parser that matches names exactly and keeps one
// of each (JSON v2; the agents' own JavaScript and Rust readers): the
// same tool, input, session and cwd. Names are drawn in hostile
// spellings: repeated, in other cases, with "-" for "_", with the Kelvin
// sign and the long s that fold to k and s.
func TestAcceptedEventsReadAsTheAgentWrote(t *testing.T) {
	spell := func(t *rapid.T, n string) string {
		switch rapid.IntRange(0, 5).Draw(t, "spelling") {
		case 1:
			return strings.ToUpper(n)
		case 2:
			return strings.ReplaceAll(n, "_", "-")
		case 3:
			return strings.Replace(n, "s", "\u017f", 1)
		case 4:
			return strings.ToUpper(n[:1]) + n[1:]
		}
		return n
	}
	rapid.Check(t, func(t *rapid.T) {
		var parts []string
		for range rapid.IntRange(1, 8).Draw(t, "members") {
			name := spell(t, rapid.SampledFrom(eventNames).Draw(t, "name"))
			var v string
			if strings.EqualFold(name, "tool_input") {
				v = rapid.SampledFrom([]string{`{"command":"ls"}`, `{"command":"rm -rf /"}`, `null`}).Draw(t, "input")
			} else {
				v = `"` + rapid.SampledFrom([]string{"Bash", "TodoWrite", "PreToolUse", "/tmp", "s1"}).Draw(t, "value") + `"`
			}
			b, _ := json.Marshal(name)
			parts = append(parts, string(b)+":"+v)
		}
		b := []byte("{" + strings.Join(parts, ",") + "}")
		if checkEventNames(b) != nil {
			return
		}
		var v1, v2 hookEvent
		if err := json.Unmarshal(b, &v1); err != nil {
			t.Fatalf("accepted %s, which encoding/json refuses: %v", b, err)
		}
		if err := jsonv2.Unmarshal(b, &v2); err != nil {
			t.Fatalf("accepted %s, which JSON v2 refuses: %v", b, err)
		}
		if v1.ToolName != v2.ToolName || string(v1.ToolInput) != string(v2.ToolInput) || v1.SessionID != v2.SessionID || v1.Cwd != v2.Cwd || v1.HookEventName != v2.HookEventName {
			t.Fatalf("accepted %s: the hook reads %+v, the agent %+v", b, v1, v2)
		}
	})
}
