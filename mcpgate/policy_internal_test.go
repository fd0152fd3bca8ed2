package mcpgate

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/gate"
)

func ptr(b bool) *bool { return &b }

// Property: for a tool no rule covers, annotations never allow a call
// unless the upstream is trusted and says read-only and closed-world; an
// untrusted upstream's annotations change nothing (every such tool is
// asked about, or denied under read-only).
func TestAnnotationDefaultProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		optBool := func(label string) *bool {
			switch rapid.IntRange(0, 2).Draw(rt, label) {
			case 0:
				return nil
			case 1:
				return ptr(false)
			}
			return ptr(true)
		}
		trusted := rapid.Bool().Draw(rt, "trusted")
		readOnlyProfile := rapid.Bool().Draw(rt, "readOnlyProfile")
		ann := gate.Annotations{ReadOnlyHint: rapid.Bool().Draw(rt, "ro"), DestructiveHint: optBool("destructive"),
			IdempotentHint: rapid.Bool().Draw(rt, "idem"), OpenWorldHint: optBool("openWorld")}
		if !trusted {
			ann = untrustedAnnotations() // what New passes for an untrusted upstream
		}
		up := &Upstream{Name: "up", Trusted: trusted}
		pc := policyConfig{readOnly: readOnlyProfile}
		g, origin, err := pc.buildGate(toolPolicy{upstream: up, tool: "frobnicate", presented: "up_frobnicate", annotations: ann})
		if err != nil || origin != "annotations" {
			rt.Fatalf("%v %q", err, origin)
		}
		d, err := g.Decide(context.Background(), gate.ToolCallContext{ToolName: "up_frobnicate", Input: map[string]any{}})
		if err != nil {
			rt.Fatal(err)
		}
		safe := trusted && ann.ReadOnlyHint && ann.OpenWorldHint != nil && !*ann.OpenWorldHint
		switch {
		case safe && d.Action != gate.ActionAllow:
			rt.Fatalf("trusted read-only closed-world: %+v", d)
		case !safe && d.Action == gate.ActionAllow:
			rt.Fatalf("allowed without trust: trusted=%v %+v: %+v", trusted, ann, d)
		case !safe && readOnlyProfile && d.Action != gate.ActionDeny:
			rt.Fatalf("read-only profile must deny review: %+v", d)
		case !safe && !readOnlyProfile && d.Action != gate.ActionAsk:
			rt.Fatalf("review must ask: %+v", d)
		}
		if d.Source != SourceAnnotations {
			rt.Fatalf("source %q", d.Source)
		}
	})
}
