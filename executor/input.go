package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var emptyObject = json.RawMessage(`{}`)

// decodeInput decodes a JSON object (empty or null meaning {}) and
// validates it against s. Input that JSON parsers may read differently is
// rejected, so that the gate decides on exactly what the tool will parse:
// invalid UTF-8 and duplicate object keys (RFC 8259 §8.1 and §4; I-JSON,
// RFC 7493 §2.1 and §2.3). Both checks are the defaults of the JSON v2
// decoder (github.com/go-json-experiment/json, the module behind Go's
// encoding/json/v2), which decodes into the same values encoding/json
// does: objects as map[string]any, arrays as []any, numbers as float64.
func decodeInput(s *jsonschema.Schema, raw json.RawMessage) (map[string]any, json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		raw = emptyObject
	}
	var m map[string]any
	if err := jsonv2.Unmarshal(raw, &m); err != nil {
		var se *jsontext.SyntacticError
		if errors.Is(err, jsontext.ErrDuplicateName) && errors.As(err, &se) {
			return nil, nil, fmt.Errorf("input has the key %q more than once (at %q)", se.JSONPointer.LastToken(), string(se.JSONPointer.Parent()))
		}
		return nil, nil, fmt.Errorf("input is not a JSON object: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	if err := s.Validate(m); err != nil {
		return nil, nil, err
	}
	return m, raw, nil
}
