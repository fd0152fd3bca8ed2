package executor

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceObject is what decodeInput accepted before decodeObjectFast:
// encoding/json into a map, valid UTF-8, no duplicate key.
func referenceObject(raw []byte) (map[string]any, bool) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil || !utf8.Valid(raw) {
		return nil, false
	}
	if _, dup := duplicateKey(raw); dup {
		return nil, false
	}
	return m, true
}

func TestDecodeObjectFast(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxFastDepth+2) + "1" + strings.Repeat("}", maxFastDepth+2)
	tests := []struct {
		name string
		in   string
		fast bool // decoded by the fast path (else declined)
	}{
		{"empty object", `{}`, true},
		{"spaces", " \t\r\n{ \"a\" : 1 , \"b\" : [ ] }\n", true},
		{"scalars", `{"s":"x","n":-1.5e3,"z":0,"t":true,"f":false,"u":null}`, true},
		{"nested", `{"a":{"b":[1,{"c":"d"},[],{}]},"e":[[["x"]]]}`, true},
		{"escapes", `{"s":"a\"b\\c\/d\be\ff\ng\rh\ti\u0041\u00e9\u20ac\ud83d\ude00\u0000"}`, true},
		{"escaped key", `{"k\u0065y":1}`, true},
		{"utf8", `{"ключ":"значение ✓ 😀"}`, true},
		{"big number", `{"n":1e308,"m":123456789012345678901234567890}`, true},
		{"duplicate", `{"a":1,"a":2}`, false},
		{"duplicate after unescape", `{"a":1,"\u0061":2}`, false},
		{"nested duplicate", `{"a":[{"x":1,"x":2}]}`, false},
		{"same key in siblings", `{"a":{"x":1},"b":{"x":2}}`, true},
		{"lone surrogate", `{"s":"\ud800"}`, false},
		{"reversed pair", `{"s":"\udc00\ud800"}`, false},
		{"number out of range", `{"n":1e400}`, false},
		{"invalid utf8", "{\"s\":\"\xff\"}", false},
		{"control char", "{\"s\":\"a\nb\"}", false},
		{"not an object", `[1]`, false},
		{"string", `"x"`, false},
		{"trailing", `{} {}`, false},
		{"trailing comma", `{"a":1,}`, false},
		{"leading zero", `{"a":01}`, false},
		{"bad exponent", `{"a":1e}`, false},
		{"bad fraction", `{"a":1.}`, false},
		{"bad literal", `{"a":tru}`, false},
		{"bad escape", `{"a":"\x"}`, false},
		{"short unicode", `{"a":"\u12"}`, false},
		{"unterminated", `{"a":"x`, false},
		{"missing colon", `{"a" 1}`, false},
		{"too deep", deep, false},
		{"bom", "\xef\xbb\xbf{}", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := decodeObjectFast([]byte(tc.in))
			require.Equal(t, tc.fast, ok)
			if ok {
				want, wok := referenceObject([]byte(tc.in))
				require.True(t, wok, "the reference rejects what the fast path accepted")
				assert.Equal(t, want, got)
			}
		})
	}
	t.Run("float64", func(t *testing.T) {
		got, ok := decodeObjectFast([]byte(`{"max":1.7976931348623157e308,"min":-5e-324}`))
		require.True(t, ok)
		assert.Equal(t, math.MaxFloat64, got["max"])
		assert.Equal(t, -5e-324, got["min"])
	})
}

// FuzzDecodeObjectFast: whenever the fast path decodes an input, the
// reference path accepts it and yields the same value; and every input the
// reference accepts with plain content is decoded by the fast path too
// (declining is only for the unusual cases its doc lists).
func FuzzDecodeObjectFast(f *testing.F) {
	for _, s := range []string{`{}`, `{"command":"ls -la"}`, `{"a":[1,2.5,-3e2,true,false,null,{"b":"\u00e9\n"}]}`,
		`{"a":1,"a":2}`, `{"a":"\ud83d\ude00"}`, `{"a":"\ud800"}`, `[]`, `{"n":1e999}`, "{\"a\":\"\xff\"}", ` { } `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := decodeObjectFast([]byte(s))
		want, wok := referenceObject([]byte(s))
		if ok {
			if !wok {
				t.Fatalf("%q: fast path accepted what the reference rejects", s)
			}
			assert.Equal(t, want, got, s)
			return
		}
		if wok && !strings.Contains(s, `\u`) && len(s) < 1000 { // lone surrogates, depth
			t.Fatalf("%q: the reference accepts plain input the fast path declined", s)
		}
	})
}

// TestDecodeObjectFastAllocations: a small object costs the input's copy,
// the map and one box per string value — fewer than half of what
// encoding/json allocates for it (relative, so a runtime's map layout does
// not break the test).
func TestDecodeObjectFastAllocations(t *testing.T) {
	in := []byte(`{"command":"ls -la /tmp"}`)
	fast := testing.AllocsPerRun(200, func() { _, _ = decodeObjectFast(in) })
	std := testing.AllocsPerRun(200, func() {
		var m map[string]any
		_ = json.Unmarshal(in, &m)
	})
	t.Logf("decodeObjectFast %v allocs, encoding/json %v", fast, std)
	assert.LessOrEqual(t, fast, std/2)
}

// BenchmarkDecodeObject compares the executor's one-pass decoder with what
// it replaces (encoding/json, then the UTF-8 and duplicate-key checks).
func BenchmarkDecodeObject(b *testing.B) {
	in := []byte(`{"command":"ls -la /tmp"}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeObjectFast(in); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := referenceObject(in); !ok {
				b.Fatal("declined")
			}
		}
	})
}

// realInputs returns the inputs of the 1,091 real tool calls in
// testdata/real/trajectories.jsonl, re-encoded as the model sent them.
func realInputs(tb testing.TB) [][]byte {
	tb.Helper()
	data, err := os.ReadFile("../testdata/real/trajectories.jsonl")
	require.NoError(tb, err)
	var out [][]byte
	for line := range bytes.Lines(data) {
		var rec struct {
			Input json.RawMessage `json:"input"`
		}
		require.NoError(tb, json.Unmarshal(line, &rec))
		if len(rec.Input) > 0 && rec.Input[0] == '{' {
			out = append(out, rec.Input)
		}
	}
	require.NotEmpty(tb, out)
	return out
}

// TestDecodeObjectFastRealInputs: on every real tool input the fast path
// decodes, and yields what encoding/json yields.
func TestDecodeObjectFastRealInputs(t *testing.T) {
	for i, in := range realInputs(t) {
		want, wok := referenceObject(in)
		got, ok := decodeObjectFast(in)
		require.Equal(t, wok, ok, "input %d: %s", i, in)
		require.Equal(t, want, got, "input %d", i)
	}
}

// BenchmarkDecodeRealInputs decodes all real tool inputs per iteration.
func BenchmarkDecodeRealInputs(b *testing.B) {
	ins := realInputs(b)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, in := range ins {
				decodeObjectFast(in)
			}
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, in := range ins {
				referenceObject(in)
			}
		}
	})
}
