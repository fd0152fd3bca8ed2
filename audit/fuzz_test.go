package audit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// FuzzParseCursor: any token either fails with ErrBadCursor or decodes to a
// cursor that encodes back to an equivalent token.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"", "MTc5NTg2MzkwMTEwMDAwMDAwMDpiMmIyYjJiMmIyYjJiMjAz", "!!", "Og", "MDo",
		audit.Cursor{Timestamp: time.Unix(0, -1), SpanID: "ab"}.String(),
		audit.Cursor{Timestamp: time.Unix(0, 7), SpanID: "ab", Action: "deny", Agent: "a:b\x00", ToolName: "t\xff:"}.String()} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		c, err := audit.ParseCursor(token)
		if err != nil {
			if !errors.Is(err, audit.ErrBadCursor) {
				t.Fatalf("error %v does not wrap ErrBadCursor", err)
			}
			return
		}
		again, err := audit.ParseCursor(c.String())
		if err != nil || !again.Timestamp.Equal(c.Timestamp) || again.SpanID != c.SpanID ||
			again.Action != c.Action || again.Agent != c.Agent || again.ToolName != c.ToolName {
			t.Fatalf("round trip of %q: %v %v", token, again, err)
		}
	})
}

// FuzzParseDimensions: accepted lists contain only known, distinct
// dimensions.
func FuzzParseDimensions(f *testing.F) {
	for _, s := range []string{"tool,action", "TOOL, agent", "reason,,risk", "colour", "tool,tool", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ds, err := audit.ParseDimensions(s)
		if err != nil {
			return
		}
		seen := map[audit.Dimension]bool{}
		for _, d := range ds {
			known := false
			for _, k := range audit.Dimensions() {
				known = known || k == d
			}
			if !known || seen[d] {
				t.Fatalf("%q gave %v", s, ds)
			}
			seen[d] = true
		}
	})
}
