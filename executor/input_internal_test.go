package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDuplicateKey(t *testing.T) {
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
	tests := []struct {
		in  string
		key string
		dup bool
	}{
		{`{}`, "", false},
		{`{"a":1,"b":2}`, "", false},
		{`{"a":1,"a":2}`, "a", true},
		{`{"command":"ls","command":"rm -rf /"}`, "command", true},
		{`{"comm\u0061nd":"ls","command":"rm"}`, "command", true},
		{`{"a":{"b":1},"b":2}`, "", false},
		{`{"a":{"b":1,"b":2}}`, "b", true},
		{`{"a":[{"x":1},{"x":2}]}`, "", false},
		{`{"a":[{"x":1,"x":2}]}`, "x", true},
		{`{"a":"\"a\":","b":"a"}`, "", false},
		{`{"a":"x\\","a":1}`, "a", true},
		{`{"s":"{\"a\":1,\"a\":2}"}`, "", false},
		{`[{"a":1},{"a":1}]`, "", false},
		{many(false), "", false},
		{many(true), "k7", true},
	}
	for _, tc := range tests {
		t.Run(tc.in[:min(len(tc.in), 40)], func(t *testing.T) {
			require := assert.New(t)
			require.True(json.Valid([]byte(tc.in)))
			key, dup := duplicateKey([]byte(tc.in))
			require.Equal(tc.dup, dup)
			require.Equal(tc.key, key)
			key, dup = duplicateKeyMap([]byte(tc.in))
			require.Equal(tc.dup, dup)
			require.Equal(tc.key, key)
		})
	}
}

func TestDecodeInputRejectsAmbiguousJSON(t *testing.T) {
	e, err := compileTool(Tool{Name: "t", Execute: func(_ context.Context, _ json.RawMessage) (Result, error) { return Result{}, nil }})
	assert.NoError(t, err)
	for _, in := range []string{`{"a":1,"a":2}`, "{\"a\":\"\xff\"}"} {
		_, _, err := decodeInput(e.input, json.RawMessage(in))
		assert.Error(t, err, in)
	}
	_, _, err = decodeInput(e.input, json.RawMessage(`{"a":1,"b":{"a":2}}`))
	assert.NoError(t, err)
}

func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":2,"c":3}]}}`, `{"\u0061":1,"a":2}`, `{"a":"\\\"","b":2}`, `[]`, `"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		k1, d1 := duplicateKey([]byte(s))
		k2, d2 := duplicateKeyMap([]byte(s))
		if d1 != d2 || (d1 && k1 != k2) {
			t.Fatalf("%q: scanner (%q,%v) != decoder (%q,%v)", s, k1, d1, k2, d2)
		}
	})
}
