package gate

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"strconv"
)

// CallHash is the identity of one exact call: the hex SHA-256 of the tool
// name, the input bytes that will run (RawInput with insignificant
// whitespace removed — the exact text, so numbers and key order are as the
// tool will read them; Input's canonical JSON only when RawInput is
// empty), the tool-call ID, the agent and the run, each length-prefixed so
// that no two different calls share a preimage.
func CallHash(c ToolCallContext) string {
	h := sha256.New()
	writeField(h, "call")
	writeCall(h, c)
	return hex.EncodeToString(h.Sum(nil))
}

// RequestHash binds an answer to one approval request: CallHash's fields
// plus the request's nonce, so that an answer to an expired or earlier
// request for the same call (same tool, input, call ID, agent and run) can
// never answer a new one.
func RequestHash(c ToolCallContext, nonce string) string {
	h := sha256.New()
	writeField(h, "request")
	writeCall(h, c)
	writeField(h, nonce)
	return hex.EncodeToString(h.Sum(nil))
}

// NewApprovalRequest returns the request for an ask about call (the call
// as it will run), with a fresh random nonce and its RequestHash as
// CallHash. original is the model's input when a gate rewrote it, else
// nil.
func NewApprovalRequest(call ToolCallContext, d Decision, original json.RawMessage) ApprovalRequest {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	nonce := hex.EncodeToString(b[:])
	return ApprovalRequest{Call: call, Decision: d, OriginalInput: original, Nonce: nonce, CallHash: RequestHash(call, nonce)}
}

// GrantKey identifies "this exact command of this agent" for remembered
// grants: the hex SHA-256 of the agent, the tool name and the exact input
// bytes (whitespace removed), without the tool-call ID, so that it matches
// later calls of the same command by the same agent — and no other input:
// 1 and 1.0, or two big integers that share a float64, are different
// commands.
func GrantKey(agent, toolName string, rawInput []byte) string {
	h := sha256.New()
	writeField(h, "grant")
	writeField(h, agent)
	writeField(h, toolName)
	writeField(h, string(compact(rawInput)))
	return hex.EncodeToString(h.Sum(nil))
}

// InputHash is the hex SHA-256 of raw input bytes exactly as given (the
// value of AttrOriginalInputHash).
func InputHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

func writeCall(h hash.Hash, c ToolCallContext) {
	writeField(h, c.ToolName)
	if len(c.RawInput) > 0 {
		writeField(h, "raw:"+string(compact(c.RawInput)))
	} else {
		b, err := json.Marshal(c.Input)
		if err != nil {
			// A value that cannot be encoded gets a hash no JSON input
			// can have.
			b = []byte("!" + err.Error())
		}
		writeField(h, "map:"+string(b))
	}
	writeField(h, c.ToolCallID)
	writeField(h, c.AgentName)
	writeField(h, c.RunID)
	if c.WorkingDir != "" {
		// Only when set, so that every hash of a call without one is
		// unchanged.
		writeField(h, "cwd:"+c.WorkingDir)
	}
}

// compact drops insignificant whitespace; input that is not JSON is kept
// as it is.
func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func writeField(h hash.Hash, s string) {
	h.Write([]byte(strconv.Itoa(len(s))))
	h.Write([]byte{':'})
	h.Write([]byte(s))
}
