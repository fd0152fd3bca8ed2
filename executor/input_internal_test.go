package executor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func anyInputTool(t testing.TB) *entry {
	t.Helper()
	e, err := compileTool(Tool{Name: "t", Execute: func(_ context.Context, _ json.RawMessage) (Result, error) { return Result{}, nil }})
	require.NoError(t, err)
	return e
}

// TestDecodeInputRejectsAmbiguousJSON: duplicate keys (after unescaping, at
// any depth) and invalid UTF-8 are refused; the same key in sibling
// objects is not a duplicate.
func TestDecodeInputRejectsAmbiguousJSON(t *testing.T) {
	many := func(dup bool) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range 200 {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		if dup {
			b.WriteString(`"k7":0}`)
		} else {
			b.WriteString(`"last":0}`)
		}
		return b.String()
	}
	e := anyInputTool(t)
	tests := []struct {
		in      string
		wantErr string
	}{
		{`{}`, ""},
		{``, ""},
		{`null`, ""},
		{`{"a":1,"b":2}`, ""},
		{`{"a":1,"a":2}`, `key "a" more than once`},
		{`{"command":"ls","command":"rm -rf /"}`, `key "command" more than once`},
		{`{"comm\u0061nd":"ls","command":"rm"}`, `key "command" more than once`},
		{`{"a":{"b":1},"b":2}`, ""},
		{`{"a":{"b":1,"b":2}}`, `key "b" more than once`},
		{`{"a":[{"x":1},{"x":2}]}`, ""},
		{`{"a":[{"x":1,"x":2}]}`, `key "x" more than once`},
		{`{"a":"\"a\":","b":"a"}`, ""},
		{`{"s":"{\"a\":1,\"a\":2}"}`, ""},
		{many(false), ""},
		{many(true), `key "k7" more than once`},
		{"{\"a\":\"\xff\"}", "UTF-8"},
		{`[{"a":1}]`, "not a JSON object"},
		{`"x"`, "not a JSON object"},
		{`{"a":1`, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.in[:min(len(tc.in), 40)], func(t *testing.T) {
			m, _, err := decodeInput(e.input, json.RawMessage(tc.in))
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.NotNil(t, m)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

// realInputs are the inputs of the 1,091 real tool calls in testdata/real.
func realInputs(tb testing.TB) []json.RawMessage {
	tb.Helper()
	f, err := os.Open("../testdata/real/trajectories.jsonl")
	require.NoError(tb, err)
	defer f.Close()
	var out []json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var rec struct {
			Input json.RawMessage `json:"input"`
		}
		require.NoError(tb, json.Unmarshal(sc.Bytes(), &rec))
		out = append(out, rec.Input)
	}
	require.NoError(tb, sc.Err())
	require.NotEmpty(tb, out)
	return out
}

// TestDecodeInputMatchesEncodingJSON: on every real tool input, the
// decoded value is the one encoding/json produces.
func TestDecodeInputMatchesEncodingJSON(t *testing.T) {
	e := anyInputTool(t)
	for i, in := range realInputs(t) {
		var want map[string]any
		require.NoError(t, json.Unmarshal(in, &want))
		if want == nil {
			want = map[string]any{}
		}
		got, _, err := decodeInput(e.input, in)
		require.NoError(t, err, "input %d", i)
		require.Equal(t, want, got, "input %d", i)
	}
}

// FuzzDecodeInput: whatever decodeInput accepts, encoding/json decodes to
// the same value, and it never accepts invalid UTF-8.
func FuzzDecodeInput(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":2,"c":3}]}}`, `{"\u0061":1,"a":2}`, `{"a":"\\\"","b":2}`, `[]`, `"x"`, `{"n":1e400}`, `{"s":"\ud800"}`} {
		f.Add(s)
	}
	e := anyInputTool(f)
	f.Fuzz(func(t *testing.T, s string) {
		got, _, err := decodeInput(e.input, json.RawMessage(s))
		if err != nil {
			return
		}
		var want map[string]any
		if strings.TrimSpace(s) != "" {
			if err := json.Unmarshal([]byte(s), &want); err != nil {
				t.Fatalf("%q: accepted, but encoding/json says %v", s, err)
			}
		}
		if want == nil {
			want = map[string]any{}
		}
		assert.Equal(t, want, got, "%q", s)
	})
}

func BenchmarkDecodeRealInputs(b *testing.B) {
	e := anyInputTool(b)
	ins := realInputs(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range ins {
			_, _, _ = decodeInput(e.input, in)
		}
	}
}
