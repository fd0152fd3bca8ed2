package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var emptyObject = json.RawMessage(`{}`)

// decodeInput decodes a JSON object (empty or null meaning {}) and
// validates it against s. Input that JSON parsers may read differently is
// rejected, so that the gate decides on exactly what the tool will parse:
// invalid UTF-8 and duplicate object keys (RFC 8259 §8.1 and §4; I-JSON,
// RFC 7493 §2.1 and §2.3). Well-formed input is decoded in one pass
// (decodeObjectFast); the rest goes through encoding/json.
func decodeInput(s *jsonschema.Schema, raw json.RawMessage) (map[string]any, json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		raw = emptyObject
	}
	if m, ok := decodeObjectFast(raw); ok {
		if err := s.Validate(m); err != nil {
			return nil, nil, err
		}
		return m, raw, nil
	}
	// The reference path: anything decodeObjectFast declines, decided and
	// worded by encoding/json and the checks below.
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("input is not a JSON object: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	if !utf8.Valid(raw) {
		return nil, nil, fmt.Errorf("input is not valid UTF-8")
	}
	if key, dup := duplicateKey(raw); dup {
		return nil, nil, fmt.Errorf("input has the key %q more than once", key)
	}
	if err := s.Validate(m); err != nil {
		return nil, nil, err
	}
	return m, raw, nil
}

// maxLinearKeys is the object size beyond which duplicateKey switches from
// comparing keys pairwise to duplicateKeyMap.
const maxLinearKeys = 64

// duplicateKey reports the first object key that occurs twice in the same
// object of data, which must be syntactically valid JSON. Keys are compared
// after unescaping. Small documents are checked without allocating.
func duplicateKey(data []byte) (string, bool) {
	type frame struct {
		obj       bool
		expectKey bool
		start     int // this object's first key in keys
	}
	var framesBuf [16]frame
	var keysBuf [32][]byte
	frames, keys := framesBuf[:0], keysBuf[:0]
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			frames = append(frames, frame{obj: true, expectKey: true, start: len(keys)})
		case '[':
			frames = append(frames, frame{start: len(keys)})
		case '}', ']':
			if n := len(frames); n > 0 {
				keys = keys[:frames[n-1].start]
				frames = frames[:n-1]
			}
		case ',':
			if n := len(frames); n > 0 && frames[n-1].obj {
				frames[n-1].expectKey = true
			}
		case '"':
			end, escaped := i+1, false
			for end < len(data) && data[end] != '"' {
				if data[end] == '\\' {
					escaped = true
					end++
				}
				end++
			}
			n := len(frames)
			if n > 0 && frames[n-1].obj && frames[n-1].expectKey {
				frames[n-1].expectKey = false
				key := data[i+1 : min(end, len(data))]
				if escaped {
					var s string
					if json.Unmarshal(data[i:min(end+1, len(data))], &s) == nil {
						key = []byte(s)
					}
				}
				if len(keys)-frames[n-1].start >= maxLinearKeys {
					return duplicateKeyMap(data)
				}
				for _, k := range keys[frames[n-1].start:] {
					if bytes.Equal(k, key) {
						return string(key), true
					}
				}
				keys = append(keys, key)
			}
			i = end
		}
	}
	return "", false
}

// duplicateKeyMap is duplicateKey with a set per object: linear in the
// size of data, for documents with large objects.
func duplicateKeyMap(data []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys      map[string]bool // nil for arrays
		expectKey bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		n := len(stack)
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				if n > 0 && stack[n-1].keys != nil {
					stack[n-1].expectKey = true
				}
				stack = append(stack, frame{keys: map[string]bool{}, expectKey: true})
			case '[':
				if n > 0 && stack[n-1].keys != nil {
					stack[n-1].expectKey = true
				}
				stack = append(stack, frame{})
			default:
				stack = stack[:n-1]
			}
		case string:
			if n > 0 && stack[n-1].keys != nil && stack[n-1].expectKey {
				if stack[n-1].keys[t] {
					return t, true
				}
				stack[n-1].keys[t] = true
				stack[n-1].expectKey = false
				continue
			}
			if n > 0 && stack[n-1].keys != nil {
				stack[n-1].expectKey = true
			}
		default:
			if n > 0 && stack[n-1].keys != nil {
				stack[n-1].expectKey = true
			}
		}
	}
}
