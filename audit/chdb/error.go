package chdb

import (
	"regexp"
	"strconv"
	"strings"
)

// Error is an exception raised by the engine, in ClickHouse's terms.
type Error struct {
	// Code is the ClickHouse error code (src/Common/ErrorCodes.cpp), e.g. 60
	// for UNKNOWN_TABLE; 0 when the message carried none.
	Code int
	// Name is the symbolic code name, e.g. "UNKNOWN_TABLE"; may be empty.
	Name string
	// Message is the engine's full message, as a ClickHouse server would
	// send it: "Code: 60. DB::Exception: … (UNKNOWN_TABLE)".
	Message string
}

func (e *Error) Error() string { return e.Message }

var (
	codeRe = regexp.MustCompile(`Code:\s*(\d+)\.`)
	nameRe = regexp.MustCompile(`\(([A-Z][A-Z0-9_]+)\)`)
)

// parseError builds an Error from an engine message.
func parseError(msg string) *Error {
	msg = strings.TrimRight(msg, "\n")
	e := &Error{Message: msg}
	if m := codeRe.FindStringSubmatchIndex(msg); m != nil && m[0] == 0 {
		e.Code, _ = strconv.Atoi(msg[m[2]:m[3]])
		// Errors rethrown by the engine repeat the prefix:
		// "Code: 26. DB::Exception: Code: 26. DB::Exception: …".
		prefix := msg[:m[1]] + " DB::Exception: "
		for strings.HasPrefix(e.Message, prefix+prefix) {
			e.Message = e.Message[len(prefix):]
		}
	} else if m != nil {
		e.Code, _ = strconv.Atoi(msg[m[2]:m[3]])
	}
	// The name is the last all-caps parenthesised word of the first line
	// of the message proper; "(version …)" never matches.
	if ms := nameRe.FindAllStringSubmatch(msg, -1); len(ms) > 0 {
		e.Name = ms[len(ms)-1][1]
	}
	return e
}
