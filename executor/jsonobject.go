package executor

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxFastDepth is the nesting depth beyond which decodeObjectFast gives up
// (encoding/json, the reference, allows 10000; deeper documents are rare
// and take the slow path).
const maxFastDepth = 512

// decodeObjectFast decodes raw, a JSON object, in one pass into the value
// encoding/json.Unmarshal produces for a map[string]any (objects as
// map[string]any, arrays as []any, numbers as float64, strings, bools,
// nil), and checks what decodeInput requires besides: valid UTF-8 and no
// object key twice (compared after unescaping).
//
// It reports ok=false whenever the input is anything but a plain, valid,
// duplicate-free object: syntax errors, invalid UTF-8, duplicate keys,
// numbers out of float64 range, escaped lone surrogates (which
// encoding/json replaces with U+FFFD), nesting beyond maxFastDepth. The
// caller then takes the encoding/json path, which is the reference: it
// decides, and words the error, for every input this function declines.
// So the fast path only ever returns what the slow path would have
// returned (FuzzDecodeObjectFast checks this).
//
// raw is copied once into a string; strings without escapes are substrings
// of that copy, so they cost no allocation of their own.
func decodeObjectFast(raw []byte) (map[string]any, bool) {
	if !utf8.Valid(raw) {
		return nil, false
	}
	d := objectDecoder{s: string(raw)}
	d.space()
	if d.i >= len(d.s) || d.s[d.i] != '{' {
		return nil, false
	}
	m, ok := d.object(0)
	if !ok {
		return nil, false
	}
	d.space()
	if d.i != len(d.s) {
		return nil, false
	}
	return m, true
}

type objectDecoder struct {
	s string
	i int
}

// space skips JSON whitespace (RFC 8259 §2).
func (d *objectDecoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *objectDecoder) value(depth int) (any, bool) {
	if d.i >= len(d.s) {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '{':
		m, ok := d.object(depth + 1)
		if !ok {
			return nil, false
		}
		return m, true
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		s, ok := d.string()
		if !ok {
			return nil, false
		}
		return s, true
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, false
}

func (d *objectDecoder) literal(lit string) bool {
	if len(d.s)-d.i < len(lit) || d.s[d.i:d.i+len(lit)] != lit {
		return false
	}
	d.i += len(lit)
	return true
}

// object decodes an object; d.s[d.i] is '{'.
func (d *objectDecoder) object(depth int) (map[string]any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	d.i++
	m := map[string]any{}
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, false
		}
		k, ok := d.string()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.space()
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		n := len(m)
		if m[k] = v; len(m) == n {
			return nil, false // a duplicate key
		}
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			d.space()
		case '}':
			d.i++
			return m, true
		default:
			return nil, false
		}
	}
}

// array decodes an array; d.s[d.i] is '['. An empty array is a non-nil
// empty slice, as with encoding/json.
func (d *objectDecoder) array(depth int) (any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	d.i++
	a := []any{}
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			d.space()
		case ']':
			d.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// number decodes a number (RFC 8259 §6) as float64.
func (d *objectDecoder) number() (any, bool) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.s) && d.s[d.i] == '0':
		d.i++
	case d.i < len(d.s) && d.s[d.i] >= '1' && d.s[d.i] <= '9':
		d.digits()
	default:
		return nil, false
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if !d.digits() {
			return nil, false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if !d.digits() {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(d.s[start:d.i], 64)
	if err != nil {
		return nil, false // out of range: encoding/json reports it
	}
	return f, true
}

// digits skips one or more decimal digits; false if there are none.
func (d *objectDecoder) digits() bool {
	start := d.i
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// string decodes a string; d.s[d.i] is '"'. Without escapes the result is
// a substring of d.s.
func (d *objectDecoder) string() (string, bool) {
	d.i++
	start := d.i
	for d.i < len(d.s) {
		switch c := d.s[d.i]; {
		case c == '"':
			s := d.s[start:d.i]
			d.i++
			return s, true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		}
		d.i++
	}
	return "", false
}

// escaped finishes a string that has escapes; d.s[start:d.i] is its
// unescaped prefix and d.s[d.i] is a backslash.
func (d *objectDecoder) escaped(start int) (string, bool) {
	// Unescaping only shortens: the raw length up to the closing quote
	// bounds the result, so it is built in one allocation.
	end := d.i
	for end < len(d.s) && d.s[end] != '"' {
		if d.s[end] == '\\' {
			end++
		}
		end++
	}
	var b strings.Builder
	b.Grow(end - start)
	b.WriteString(d.s[start:d.i])
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return b.String(), true
		case c < 0x20:
			return "", false
		case c != '\\':
			run := d.i + 1 // copy the run up to the next special byte at once
			for run < len(d.s) && d.s[run] != '"' && d.s[run] != '\\' && d.s[run] >= 0x20 {
				run++
			}
			b.WriteString(d.s[d.i:run])
			d.i = run
			continue
		}
		d.i++
		if d.i >= len(d.s) {
			return "", false
		}
		e := d.s[d.i]
		d.i++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				// Only a valid pair is decoded here; encoding/json turns
				// anything else into U+FFFD, so leave that to it.
				if len(d.s)-d.i < 2 || d.s[d.i] != '\\' || d.s[d.i+1] != 'u' {
					return "", false
				}
				d.i += 2
				r2, ok := d.hex4()
				if !ok {
					return "", false
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", false
				}
			}
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape.
func (d *objectDecoder) hex4() (rune, bool) {
	if len(d.s)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(d.s[d.i : d.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}
