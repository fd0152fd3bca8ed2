package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"strconv"
)

// CallHash binds an approval to one exact call: the hex SHA-256 of the tool
// name, the canonical JSON of the validated input (encoding/json, object
// keys sorted) and the tool-call ID, each length-prefixed so that no two
// different calls share a preimage.
func CallHash(toolName string, input map[string]any, toolCallID string) string {
	h := sha256.New()
	writeField(h, toolName)
	writeInput(h, input)
	writeField(h, toolCallID)
	return hex.EncodeToString(h.Sum(nil))
}

// GrantKey identifies "this exact command" for remembered grants: the hex
// SHA-256 of the tool name and the canonical validated input, without the
// tool-call ID, so that it matches later calls of the same command.
func GrantKey(toolName string, input map[string]any) string {
	h := sha256.New()
	writeField(h, "grant")
	writeField(h, toolName)
	writeInput(h, input)
	return hex.EncodeToString(h.Sum(nil))
}

func writeField(h hash.Hash, s string) {
	h.Write([]byte(strconv.Itoa(len(s))))
	h.Write([]byte{':'})
	h.Write([]byte(s))
}

func writeInput(h hash.Hash, input map[string]any) {
	b, err := json.Marshal(input)
	if err != nil {
		// Inputs come from JSON, so this cannot happen for them; a value
		// that cannot be encoded gets a hash no JSON input can have.
		b = []byte("!" + err.Error())
	}
	writeField(h, string(b))
}
