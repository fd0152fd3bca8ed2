package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"
)

// TestJSONLFastPathEqualsEncoder: for random records (any strings: HTML
// characters, control bytes, invalid UTF-8, U+2028), writeJSONL's direct
// path writes exactly what json.Encoder without HTML escaping writes for
// the record, so export and decisions --format jsonl keep their bytes.
func TestJSONLFastPathEqualsEncoder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var r record
		for i := range rapid.IntRange(0, 8).Draw(rt, "fields") {
			k := string(rune('a' + i))
			switch rapid.IntRange(0, 4).Draw(rt, "kind") {
			case 0:
				r.set(k, rapid.String().Draw(rt, "s"))
			case 1:
				r.set(k, string(rapid.SliceOf(rapid.Byte()).Draw(rt, "bytes"))+"<&>\u2028")
			case 2:
				r.set(k, rapid.Bool().Draw(rt, "b"))
			case 3:
				r.set(k, rapid.Uint64().Draw(rt, "u"))
			case 4:
				r.set(k, rapid.SliceOf(rapid.String()).Draw(rt, "list"))
			}
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			rt.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeJSONL(&got, r); err != nil {
			rt.Fatal(err)
		}
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			rt.Fatalf("fast path %q, encoder %q", got.String(), want.String())
		}
	})
}
