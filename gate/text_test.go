package gate_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/gate"
)

func TestSafeText(t *testing.T) {
	long := strings.Repeat("a", 100)
	tests := []struct {
		name string
		in   string
		max  int
		want string // exact result; "" with cut set means: check the cut below
		cut  bool   // the result was cut: bounded, marker, head and tail kept
	}{
		{name: "empty", in: "", max: 10, want: ""},
		{name: "ascii", in: "ls -la /tmp", max: 64, want: "ls -la /tmp"},
		{name: "multibyte", in: "héllo ✓ 日本 🙂", max: 64, want: "héllo ✓ 日本 🙂"},
		{name: "exactly max", in: "abcdef", max: 6, want: "abcdef"},
		{name: "replacement char is valid", in: "a\uFFFDb", max: 10, want: "a\uFFFDb"},
		{name: "literal backslash escape is left alone", in: `rm -rf ~/$'\xc3'`, max: 64, want: `rm -rf ~/$'\xc3'`},
		{name: "lone lead byte", in: "rm -rf ~/\xc3", max: 64, want: `rm -rf ~/\xc3`},
		{name: "bytes ff fe", in: "\xff\xfebinary", max: 64, want: `\xff\xfebinary`},
		{name: "bad continuation", in: "\xc3\x28", max: 64, want: `\xc3(`},
		{name: "truncated 3-byte sequence", in: "x\xe2\x82", max: 64, want: `x\xe2\x82`},
		{name: "surrogate half", in: "\xed\xa0\x80", max: 64, want: `\xed\xa0\x80`},
		{name: "overlong slash", in: "\xc0\xaf", max: 64, want: `\xc0\xaf`},
		{name: "beyond U+10FFFF", in: "\xf4\x90\x80\x80", max: 64, want: `\xf4\x90\x80\x80`},
		{name: "NUL and controls are valid UTF-8", in: "a\x00b\x1b[31m", max: 64, want: "a\x00b\x1b[31m"},
		{name: "valid runes around invalid", in: "é\xffé", max: 64, want: `é\xffé`},
		{name: "default limit keeps MaxTextBytes", in: strings.Repeat("a", gate.MaxTextBytes), max: 0, want: strings.Repeat("a", gate.MaxTextBytes)},
		{name: "negative max is the default", in: strings.Repeat("a", gate.MaxTextBytes), max: -5, want: strings.Repeat("a", gate.MaxTextBytes)},
		{name: "default limit cuts", in: strings.Repeat("a", gate.MaxTextBytes+1), max: 0, cut: true},
		{name: "ascii cut", in: long, max: 40, cut: true},
		{name: "multibyte cut at rune boundaries", in: strings.Repeat("é", 100), max: 41, cut: true},
		{name: "4-byte runes cut", in: strings.Repeat("🙂", 50), max: 45, cut: true},
		{name: "escapes then cut", in: strings.Repeat("\xff", 100), max: 50, cut: true},
		{name: "too small for a marker keeps the head", in: "abcdef", max: 3, want: "abc"},
		{name: "head cut at a rune boundary", in: "aé日", max: 4, want: "aé"},
		{name: "max 1 and a 2-byte rune", in: "éé", max: 1, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := gate.SafeText(tt.in, tt.max)
			limit := tt.max
			if limit <= 0 {
				limit = gate.MaxTextBytes
			}
			assert.True(t, utf8.ValidString(got), "valid UTF-8: %q", got)
			assert.LessOrEqual(t, len(got), limit)
			assert.Equal(t, got, gate.SafeText(got, tt.max), "idempotent")
			if !tt.cut {
				assert.Equal(t, tt.want, got)
				return
			}
			checkCut(t, gate.SafeText(tt.in, len(tt.in)*4+64), got)
		})
	}
}

// checkCut asserts that got is a head of full, the marker "…[N bytes
// cut]…" and a tail of full, with head + N + tail = len(full), both parts
// non-empty.
func checkCut(t *testing.T, full, got string) {
	t.Helper()
	head, tail, n, ok := splitCut(full, got)
	require.True(t, ok, "%q is head + marker + tail of %q", got, full)
	assert.NotEmpty(t, head)
	assert.NotEmpty(t, tail)
	assert.Equal(t, len(full), len(head)+n+len(tail))
}

// splitCut finds a split of got into a prefix of full, a marker and a
// suffix of full that account for every byte of full.
func splitCut(full, got string) (head, tail string, n int, ok bool) {
	const open, closing = "…[", " bytes cut]…"
	for i := 0; i < len(got); i++ {
		if !strings.HasPrefix(got[i:], open) || !strings.HasPrefix(full, got[:i]) {
			continue
		}
		rest := got[i+len(open):]
		j := strings.Index(rest, closing)
		if j <= 0 {
			continue
		}
		cut, err := strconv.Atoi(rest[:j])
		if err != nil {
			continue
		}
		tl := rest[j+len(closing):]
		if strings.HasSuffix(full, tl) && i+cut+len(tl) == len(full) {
			return got[:i], tl, cut, true
		}
	}
	return "", "", 0, false
}

// TestSafeTextDoesNotAllocate: the common case (every span attribute of
// an ordinary call) costs no allocation.
func TestSafeTextDoesNotAllocate(t *testing.T) {
	for _, tt := range []struct {
		in  string
		max int
	}{
		{"ls -la", gate.MaxNameBytes},
		{"héllo ✓ 日本", 64},
		{strings.Repeat("x", gate.MaxTextBytes), 0},
		{"", 0},
	} {
		var out string
		allocs := testing.AllocsPerRun(100, func() { out = gate.SafeText(tt.in, tt.max) })
		assert.Zero(t, allocs, "%.20q", tt.in)
		assert.Equal(t, tt.in, out)
	}
}

// unescape replaces each \xNN with the byte NN (for inputs without a
// backslash of their own, where every \x in the output is an escape).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) && s[i+1] == 'x' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FuzzSafeText: for any bytes and any limit, the result is valid UTF-8
// within the limit (MaxTextBytes when max <= 0), is the input itself when
// the input is valid and fits, is stable under a second pass, and loses
// nothing that fits: an uncut result of an input without backslashes
// unescapes to the input byte for byte; a cut result is a head and a tail of
// the escaped input around a marker counting exactly the bytes left out.
func FuzzSafeText(f *testing.F) {
	for _, s := range []string{"", "ls", "rm -rf ~/\xc3", "\xff\xfe", `\xc3`, "é\xffé", "\xed\xa0\x80", "\xc0\xaf",
		strings.Repeat("é", 40), strings.Repeat("\xff", 40), "…[3 bytes cut]…", "a…[9 bytes cut]…b\xc3"} {
		for _, max := range []int{-1, 0, 1, 3, 4, 21, 22, 40, 256} {
			f.Add([]byte(s), max)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		max %= 2 * gate.MaxTextBytes // negative stays negative: the default limit
		s := string(data)
		got := gate.SafeText(s, max)
		limit := max
		if limit <= 0 {
			limit = gate.MaxTextBytes
		}
		if !utf8.ValidString(got) {
			t.Fatalf("SafeText(%q, %d) = %q: invalid UTF-8", s, max, got)
		}
		if len(got) > limit {
			t.Fatalf("SafeText(%q, %d): %d bytes, over %d", s, max, len(got), limit)
		}
		if utf8.ValidString(s) && len(s) <= limit && got != s {
			t.Fatalf("SafeText(%q, %d) = %q: a valid input that fits must be unchanged", s, max, got)
		}
		if again := gate.SafeText(got, max); again != got {
			t.Fatalf("not idempotent: %q then %q", got, again)
		}
		full := gate.SafeText(s, 4*len(s)+64) // escaped, never cut
		if !strings.Contains(s, `\`) && unescape(full) != s {
			t.Fatalf("escaping lost bytes: %q escapes to %q", s, full)
		}
		if len(full) <= limit {
			if got != full {
				t.Fatalf("SafeText(%q, %d) = %q, want the whole escaped %q", s, max, got, full)
			}
			return
		}
		if _, _, _, ok := splitCut(full, got); ok {
			return
		}
		// A limit too small for the marker keeps a head only, cut at a rune
		// boundary.
		marker := len("…[" + strconv.Itoa(len(full)) + " bytes cut]…")
		if limit > marker+2 || !strings.HasPrefix(full, got) || len(got) < limit-utf8.UTFMax+1 {
			t.Fatalf("SafeText(%q, %d) = %q is neither head + marker + tail nor a head of %q", s, max, got, full)
		}
	})
}

// FuzzRecordAttributes: the one encoder of a decision emits only valid,
// bounded UTF-8, whatever strings the record holds: the executor's own
// (from gates and approvers) and otelbridge's (from after-the-fact events,
// where even the action, the approval outcome and verdict actions are
// whatever the event said).
func FuzzRecordAttributes(f *testing.F) {
	f.Add("deny", "rm -rf ~/\xc3", "classify.bash", "approved\xff", "bot\xc0", "high\xfe", "rw\xed\xa0\x80", "g|\xc3", "ask\xff")
	f.Add("allow", "ok", "s", "approved", "bot", "safe", "rw", "g", "allow")
	f.Add("\xc3", strings.Repeat("\xc3(", 5000), strings.Repeat("x", 5000), "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, action, reason, source, approval, approver, risk, rewrittenBy, gateName, verdictAction string) {
		r := gate.Record{
			Gated: true, Action: gate.Action(action), Reason: reason, Source: source, Rule: gateName, ErrorKind: risk,
			Risk: gate.RiskLevel(risk), Approval: gate.ApprovalOutcome(approval), Approver: approver,
			Rewritten: true, RewrittenBy: rewrittenBy, OriginalInputHash: reason, Rounds: 2,
			Verdicts: []gate.Verdict{
				{Gate: gateName, Action: gate.Action(verdictAction), Risk: gate.RiskLevel(risk), Rule: reason},
				{Gate: source, Action: gate.Action(action), Rewrote: true},
			},
		}
		for _, kv := range r.Attributes(nil, 0) {
			var vals []string
			switch kv.Value.Type() {
			case attribute.STRING:
				vals = []string{kv.Value.AsString()}
			case attribute.STRINGSLICE:
				vals = kv.Value.AsStringSlice()
			}
			limit := gate.MaxNameBytes
			switch kv.Key {
			case gate.AttrReason:
				limit = gate.MaxTextBytes
			case gate.AttrVerdicts:
				limit = 4*gate.MaxNameBytes + 3
			}
			for _, v := range vals {
				if !utf8.ValidString(v) || len(v) > limit {
					t.Fatalf("%s = %.80q (%d bytes): invalid UTF-8 or over %d", kv.Key, v, len(v), limit)
				}
			}
			if kv.Key == gate.AttrVerdicts {
				for _, v := range vals {
					if strings.Count(v, "|") != 3 {
						t.Fatalf("verdict %q does not have four fields", v)
					}
				}
			}
		}
	})
}
