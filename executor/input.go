package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolgate/toolgate/gate"
)

var emptyObject = json.RawMessage(`{}`)

// decodeInput decodes a JSON object (empty or null meaning {}) and
// validates it against s. Input that JSON parsers may read differently is
// rejected, so that the gate decides on exactly what the tool will parse:
//
//   - invalid UTF-8 and duplicate object keys (RFC 8259 §8.1 and §4;
//     I-JSON, RFC 7493 §2.1 and §2.3), the defaults of the JSON v2
//     tokenizer (github.com/go-json-experiment/json/jsontext, the package
//     behind Go's encoding/json/jsontext);
//   - two keys of one object equal under Unicode simple case folding
//     (strings.EqualFold: "command" and "Command", "kind" and "\u212aind"
//     with the Kelvin sign, "s" and "\u017f"), which Go's encoding/json
//     binds to the same struct field, the last one winning, while the gate
//     reads the map key — also once '-' and '_' are dropped ("com_mand",
//     "COMMAND"), as Go's encoding/json/v2 case:ignore matching does (see
//     distinctFold and sameName);
//   - numbers with more precision or magnitude than an IEEE 754 double
//     (I-JSON, RFC 7493 §2.2): a number is accepted only if its text
//     denotes exactly the value of the shortest decimal that round-trips
//     the float64 it parses to (see exactNumber), so that the float64 the
//     gate and the schema see determines the value any parser, exact or
//     not, reads.
//
// decodeObject reads the input with the tokenizer into the values
// encoding/json produces: objects as map[string]any, arrays as []any,
// numbers as float64.
func decodeInput(s *jsonschema.Schema, raw json.RawMessage) (map[string]any, json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		raw = emptyObject
	}
	m, err := decodeObject(raw)
	if err != nil {
		var se *jsontext.SyntacticError
		if errors.Is(err, jsontext.ErrDuplicateName) && errors.As(err, &se) {
			return nil, nil, fmt.Errorf("input has the key %q more than once (at %q)", se.JSONPointer.LastToken(), string(se.JSONPointer.Parent()))
		}
		return nil, nil, err
	}
	if err := s.Validate(m); err != nil {
		return nil, nil, err
	}
	return m, raw, nil
}

// objectDecoder reads one JSON value with a jsontext.Decoder in its
// default configuration (duplicate names and invalid UTF-8 are syntax
// errors) and builds the value encoding/json and json v2's Unmarshal into
// map[string]any build, without their reflection. Pooled: a call borrows
// one for the length of decodeObject.
type objectDecoder struct {
	dec jsontext.Decoder
	in  bytes.Buffer // reads the input in place (jsontext does not copy or modify a bytes.Buffer's bytes)
	buf []byte       // scratch for unescaping strings
	// names is a stack of the first maxPairwise names of the objects being
	// read, outermost first, for distinctFold.
	names []string
	// strs interns object names and short strings, as json v2's
	// Unmarshal does for strings: a tool's inputs repeat their keys.
	strs [256]string
}

var objectDecoders = sync.Pool{New: func() any { return new(objectDecoder) }}

// maxScratch bounds the unescaping buffer a pooled decoder keeps, and
// maxNames its stack of names.
const (
	maxScratch = 64 << 10
	maxNames   = 1 << 10
)

// decodeObject decodes raw, which must hold exactly one JSON object (and
// white space), accepting and rejecting exactly what
// jsonv2.Unmarshal(raw, &map[string]any{}) does (a differential fuzz test,
// FuzzDecodeObjectMatchesJSONv2, holds it to that).
func decodeObject(raw []byte) (map[string]any, error) {
	d := objectDecoders.Get().(*objectDecoder)
	d.in = *bytes.NewBuffer(raw)
	d.dec.Reset(&d.in)
	m, err := d.top()
	// Do not pin the input (or a huge scratch buffer) in the pool.
	d.in = bytes.Buffer{}
	d.dec.Reset(&d.in)
	if cap(d.buf) > maxScratch {
		d.buf = nil
	}
	clear(d.names) // an error leaves names on the stack
	d.names = d.names[:0]
	if cap(d.names) > maxNames {
		d.names = nil
	}
	objectDecoders.Put(d)
	return m, err
}

func (d *objectDecoder) top() (map[string]any, error) {
	switch k := d.dec.PeekKind(); k {
	case '{':
	default:
		if _, err := d.dec.ReadValue(); err != nil { // PeekKind returned 0 or the value is malformed
			return nil, notObject(err)
		}
		return nil, fmt.Errorf("input is not a JSON object: it is a JSON %s", kindName(k))
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return nil, notObject(err)
	}
	m, err := d.object()
	if err != nil {
		return nil, err
	}
	// Only white space may follow (a decoder reads a stream of values).
	switch _, err := d.dec.ReadToken(); {
	case err == io.EOF:
		return m, nil
	case err != nil:
		return nil, notObject(err)
	default:
		return nil, errors.New("input is not a JSON object: more JSON follows the object")
	}
}

func notObject(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("input is not a JSON object: %w", err)
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "value"
}

// object reads an object's members after its '{' up to and including its
// '}'.
func (d *objectDecoder) object() (map[string]any, error) {
	m := make(map[string]any)
	base := len(d.names)
	var folded map[string]string // for objects of more than maxPairwise names
	for d.dec.PeekKind() != '}' {
		name, err := d.dec.ReadValue() // checks the name is not a duplicate
		if err != nil {
			return nil, notObject(err)
		}
		key, err := d.str(name)
		if err != nil {
			return nil, err
		}
		if err := d.distinctFold(key, base, &folded); err != nil {
			return nil, err
		}
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
	clear(d.names[base:])
	d.names = d.names[:base]
	if _, err := d.dec.ReadToken(); err != nil {
		return nil, notObject(err)
	}
	return m, nil
}

// maxPairwise is the number of names up to which distinctFold compares an
// object's names pairwise; beyond it, it keeps a set of folded names.
const maxPairwise = 8

// distinctFold checks that key, the name just read, is not equal under
// Unicode simple case folding to an earlier name of its object (whose
// first names are d.names[base:]; *folded is the object's set of folded
// names once it has more than maxPairwise). Go's encoding/json matches
// object names to struct fields case-insensitively, with exactly
// strings.EqualFold's folding (encoding/json's foldName keeps the smallest
// rune of each unicode.SimpleFold orbit, so "k", "K" and the Kelvin sign U+212A
// are one name, as are "s", "S" and U+017F, ſ), and the last of two such
// names wins; a gate reads the map key. Exact duplicates are the
// tokenizer's to refuse, before this.
func (d *objectDecoder) distinctFold(key string, base int, folded *map[string]string) error {
	if *folded == nil {
		names := d.names[base:]
		if len(names) < maxPairwise {
			for _, k := range names {
				if sameName(k, key) {
					return d.foldError(k, key)
				}
			}
			d.names = append(d.names, key)
			return nil
		}
		*folded = make(map[string]string, 2*maxPairwise)
		for _, k := range names {
			addFolded(*folded, k)
		}
	}
	if k, ok := addFolded(*folded, key); !ok {
		return d.foldError(k, key)
	}
	return nil
}

// addFolded adds key to the set of folded names set (folded name → name)
// and returns true, or returns the name already there under key's folded
// name and false. Most names (lower-case ASCII) are their own folded
// name, which then costs no allocation.
func addFolded(set map[string]string, key string) (string, bool) {
	var arr [64]byte
	f := appendFold(arr[:0], key)
	if k, ok := set[string(f)]; ok {
		return k, false
	}
	if string(f) == key {
		set[key] = key
	} else {
		set[string(f)] = key
	}
	return "", true
}

func (d *objectDecoder) foldError(first, second string) error {
	// %+q: "\u212a", not a K that reads as the ASCII letter.
	return fmt.Errorf("input has the keys %+q and %+q, which are equal under case folding (at %q): parsers that match names case-insensitively, as Go's encoding/json does (and json/v2's case:ignore, which also ignores '-' and '_'), read them as one",
		clip(first, 64), clip(second, 64), string(d.dec.StackPointer().Parent()))
}

// appendFold appends to dst a folding of the valid UTF-8 s such that two
// strings fold alike if and only if sameName holds for them (dashes and
// underscores dropped, then strings.EqualFold):
// each rune becomes the smallest rune of its unicode.SimpleFold orbit (as
// encoding/json's foldName does), then an upper-case ASCII letter its
// lower case, so that lower-case ASCII names fold to themselves.
func appendFold(dst []byte, s string) []byte {
	for _, r := range s {
		if r == '-' || r == '_' {
			continue // json/v2's case:ignore matching ignores them too
		}
		if r >= utf8.RuneSelf {
			if r = foldRune(r); r >= utf8.RuneSelf {
				dst = utf8.AppendRune(dst, r)
				continue
			}
		}
		c := byte(r)
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// sameName is gate.SameFieldName: the rule the executor refuses input by
// and the classifier gates read fields by.
func sameName(a, b string) bool { return gate.SameFieldName(a, b) }

// foldRune returns the smallest rune of r's unicode.SimpleFold orbit.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// array reads an array's elements after its '[' up to and including its
// ']'.
func (d *objectDecoder) array() ([]any, error) {
	a := []any{}
	for d.dec.PeekKind() != ']' {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return nil, notObject(err)
	}
	return a, nil
}

func (d *objectDecoder) value() (any, error) {
	switch d.dec.PeekKind() {
	case '{':
		if _, err := d.dec.ReadToken(); err != nil {
			return nil, notObject(err)
		}
		return d.object()
	case '[':
		if _, err := d.dec.ReadToken(); err != nil {
			return nil, notObject(err)
		}
		return d.array()
	}
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, notObject(err)
	}
	switch v.Kind() {
	case 'n':
		return nil, nil
	case 'f':
		return false, nil
	case 't':
		return true, nil
	case '"':
		return d.str(v)
	case '0':
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			// Out of float64's range: encoding/json and json v2 refuse it.
			return nil, fmt.Errorf("input has a number out of range at %q: %s", string(d.dec.StackPointer()), clip(string(v), 64))
		}
		if !exactNumber(v, f) {
			as, _ := json.Marshal(f) // as encoding/json writes f back
			return nil, fmt.Errorf("input number %s at %q has more precision or magnitude than an IEEE 754 double (I-JSON, RFC 7493 §2.2): parsers may read it as %s",
				clip(string(v), 64), string(d.dec.StackPointer()), as)
		}
		return f, nil
	}
	return nil, fmt.Errorf("input is not a JSON object: unexpected %s", v.Kind())
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// str returns the string a JSON string (as the decoder returned it: quoted,
// checked for valid UTF-8 and escapes) denotes.
func (d *objectDecoder) str(q jsontext.Value) (string, error) {
	b := q[1 : len(q)-1]
	if bytes.IndexByte(b, '\\') >= 0 {
		var err error
		if d.buf, err = jsontext.AppendUnquote(d.buf[:0], q); err != nil {
			return "", notObject(err)
		}
		b = d.buf
	}
	return d.intern(b), nil
}

// intern returns string(b), from d.strs when it holds it (as json v2's
// string cache does, for the same sizes).
func (d *objectDecoder) intern(b []byte) string {
	const (
		minCached = 2 // single bytes are interned by the runtime
		maxCached = 256
	)
	if len(b) < minCached || len(b) > maxCached {
		return string(b)
	}
	i := maphash.Bytes(internSeed, b) % uint64(len(d.strs))
	if s := d.strs[i]; s == string(b) {
		return s
	}
	s := string(b)
	d.strs[i] = s
	return s
}

var internSeed = maphash.MakeSeed()

// exactNumber reports whether the JSON number v, which parses to f,
// denotes exactly the value of f's shortest round-trip decimal
// (strconv.FormatFloat(f, 'g', -1, 64): the fewest digits that parse back
// to f). So 0.1, 3.14, 1e-7, 9007199254740992, 1e300 and
// 1152921504606847000 pass, as do 1.0, 1e2 and -0 (the values of 1, 100
// and 0); 9007199254740993, 10000000000000001, 100.000000000000001,
// 1.0000000000000000001, 1e-400 and 1152921504606846976 (2^60 written out:
// its shortest decimal is 1.152921504606847e+18) do not.
//
// Why this rule (I-JSON, RFC 7493 §2.2: numbers should not have more
// precision or magnitude than a double): the gate and the schema judge f,
// the tool may parse the text exactly (json.Number, big decimals, Python
// ints, 64-bit integers). They disagree only when two texts of different
// values parse to one f. The rule accepts one value for each f, so an
// accepted f determines the exact value every parser reads; and that value
// is the one the schema validates (jsonschema compares fmt.Sprint(f), the
// shortest decimal, as a big.Rat) and the one Go's encoding/json,
// JavaScript and Python write back for f. Requiring the text to be f's
// binary value instead would refuse 0.1.
func exactNumber(v []byte, f float64) bool {
	// An integer of at most 15 digits is below 2^53: f is its value, and
	// the shortest decimal of an integral double below 2^53 is itself.
	if digits := len(v); digits <= 16 {
		if v[0] == '-' {
			digits--
		}
		if digits <= 15 && bytes.IndexAny(v, ".eE") < 0 {
			return true
		}
	}
	var in, out [maxShortestDigits]byte
	ni, ei, ok := sigDigits(&in, v)
	if !ok {
		return false // more significant digits than any shortest decimal
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	no, eo, _ := sigDigits(&out, s)
	if ni != no || in != out {
		return false
	}
	return ni == 0 || ei == eo // zero's exponent (and sign) does not matter
}

// maxShortestDigits is the most significant digits a shortest round-trip
// decimal of a float64 has.
const maxShortestDigits = 17

// sigDigits reads the JSON number b (RFC 8259's grammar, which the
// tokenizer checked; strconv's 'e' format is in it) as 0.D × 10^exp, D its
// n significant digits without leading or trailing zeros, into *dst; n is
// 0 for zero. ok is false when D does not fit.
func sigDigits(dst *[maxShortestDigits]byte, b []byte) (n int, exp int64, ok bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	point, zeros := false, 0 // zeros: zeros after the last significant digit, pending
	for ; i < len(b) && b[i] != 'e' && b[i] != 'E'; i++ {
		c := b[i]
		switch {
		case c == '.':
			point = true
			continue
		case c == '0' && n == 0: // a leading zero
			if point {
				exp--
			}
			continue
		}
		if !point {
			exp++
		}
		if c == '0' {
			zeros++
			continue
		}
		if n+zeros+1 > len(dst) {
			return 0, 0, false
		}
		for ; zeros > 0; zeros-- {
			dst[n] = '0'
			n++
		}
		dst[n] = c
		n++
	}
	if n == 0 {
		return 0, 0, true
	}
	if i < len(b) { // the exponent
		i++
		neg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			neg = b[i] == '-'
			i++
		}
		// Saturated far beyond any double's exponent (and the input's
		// length), so that it cannot overflow or match by accident.
		const limit = 1 << 40
		var e int64
		for ; i < len(b); i++ {
			if e < limit {
				e = e*10 + int64(b[i]-'0')
			}
		}
		if neg {
			e = -e
		}
		exp += e
	}
	return n, exp, true
}
