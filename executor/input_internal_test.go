package executor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func anyInputTool(t testing.TB) *entry {
	t.Helper()
	e, err := compileTool(Tool{Name: "t", Execute: func(_ context.Context, _ json.RawMessage) (Result, error) { return Result{}, nil }})
	require.NoError(t, err)
	return e
}

// TestDecodeInputRejectsAmbiguousJSON: duplicate keys (after unescaping, at
// any depth) and invalid UTF-8 are refused; the same key in sibling
// objects is not a duplicate.
func TestDecodeInputRejectsAmbiguousJSON(t *testing.T) {
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
	e := anyInputTool(t)
	tests := []struct {
		in      string
		wantErr string
	}{
		{`{}`, ""},
		{``, ""},
		{`null`, ""},
		{`{"a":1,"b":2}`, ""},
		{`{"a":1,"a":2}`, `key "a" more than once`},
		{`{"command":"ls","command":"rm -rf /"}`, `key "command" more than once`},
		{`{"comm\u0061nd":"ls","command":"rm"}`, `key "command" more than once`},
		{`{"a":{"b":1},"b":2}`, ""},
		{`{"a":{"b":1,"b":2}}`, `key "b" more than once`},
		{`{"a":[{"x":1},{"x":2}]}`, ""},
		{`{"a":[{"x":1,"x":2}]}`, `key "x" more than once`},
		{`{"a":"\"a\":","b":"a"}`, ""},
		{`{"s":"{\"a\":1,\"a\":2}"}`, ""},
		{many(false), ""},
		{many(true), `key "k7" more than once`},
		{"{\"a\":\"\xff\"}", "UTF-8"},
		{`[{"a":1}]`, "not a JSON object"},
		{`"x"`, "not a JSON object"},
		{`{"a":1`, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.in[:min(len(tc.in), 40)], func(t *testing.T) {
			m, _, err := decodeInput(e.input, json.RawMessage(tc.in))
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.NotNil(t, m)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

// TestDecodeInputRejectsCaseFoldedKeys: two keys of one object equal under
// Unicode simple case folding (strings.EqualFold, which is how Go's
// encoding/json matches names to struct fields) are refused, at any depth
// and in objects of any size; keys that differ otherwise, the same key in
// sibling objects and case variants inside string values are not.
func TestDecodeInputRejectsCaseFoldedKeys(t *testing.T) {
	wide := func(n int, extra ...string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		for _, k := range extra {
			fmt.Fprintf(&b, `%q:0,`, k)
		}
		b.WriteString(`"last":0}`)
		return b.String()
	}
	e := anyInputTool(t)
	tests := []struct {
		in      string
		wantErr string // "" when accepted
	}{
		{`{"command":"ls","Command":"rm -rf ~"}`, `keys "command" and "Command", which are equal under case folding (at "")`},
		{`{"Command":"rm -rf ~","command":"ls"}`, `keys "Command" and "command"`},
		{`{"COMMAND":"x","cOmMaNd":"y"}`, `keys "COMMAND" and "cOmMaNd"`},
		{`{"comm\u0041nd":"x","command":"y"}`, `keys "commAnd" and "command"`},
		// Kelvin sign U+212A folds with k and K; long s U+017F with s and S.
		{`{"kind":"dev","\u212aind":"prod"}`, `keys "kind" and "\u212aind"`},
		{"{\"Kind\":1,\"\u212aind\":2}", `keys "Kind" and "\u212aind"`},
		{`{"stack":1,"\u017ftack":2}`, `keys "stack" and "\u017ftack"`},
		{`{"S":1,"\u017f":2}`, `keys "S" and "\u017f"`},
		// Other Unicode case pairs: Greek, Cyrillic, the ohm and angstrom
		// signs, Turkish İ/ı are not in i's orbit (no simple folding).
		{`{"σ":1,"Σ":2}`, `keys "\u03c3" and "\u03a3"`},
		{`{"ς":1,"σ":2}`, `keys "\u03c2" and "\u03c3"`},
		{`{"путь":1,"ПУТЬ":2}`, `equal under case folding`},
		{`{"ω":1,"\u2126":2}`, `keys "\u03c9" and "\u2126"`},
		{`{"å":1,"\u212b":2}`, `keys "\u00e5" and "\u212b"`},
		{`{"ß":1,"ẞ":2}`, `keys "\u00df" and "\u1e9e"`},
		{`{"i":1,"İ":2,"ı":3}`, ""},
		{`{"ß":1,"ss":2,"SS":3}`, `keys "ss" and "SS"`},
		{`{"ß":1,"ss":2}`, ""}, // full case folding is not simple folding
		// Nested objects and arrays: the pointer names the object.
		{`{"a":{"b":{"path":"/tmp","PATH":"/etc"}}}`, `keys "path" and "PATH", which are equal under case folding (at "/a/b")`},
		{`{"a":[{"x":1},{"x":2,"X":3}]}`, `(at "/a/1")`},
		{`{"a":[[{"\u212a":1,"k":2}]]}`, `keys "\u212a" and "k", which are equal under case folding (at "/a/0/0")`},
		{`{"a":{"x":1},"A":{"x":1}}`, `keys "a" and "A"`},
		// Accepted: siblings, values, distinct names.
		{`{"a":{"x":1},"b":{"X":1}}`, ""},
		{`{"a":[{"x":1},{"X":2}]}`, ""},
		{`{"command":"ls","cmd":"COMMAND","args":["Command","command"]}`, ""},
		{`{"k":1,"s":2,"K_":3,"S-":4}`, `keys "k" and "K_"`}, // json/v2 case:ignore drops '-' and '_'
		{`{"a":1,"b":2,"ab":3,"ba":4,"":5,"A_":6}`, `keys "a" and "A_"`},
		{`{"a":1,"b":2,"ab":3,"ba":4,"":5,"A_B":6}`, `keys "ab" and "A_B"`},
		// Wide objects (beyond the pairwise comparison): the folded set.
		{wide(7, "Command", "command"), `keys "Command" and "command"`},
		{wide(8, "Command", "command"), `keys "Command" and "command"`},
		{wide(200, "stack", "\u017ftack"), `keys "stack" and "\u017ftack"`},
		{wide(200, "k7x", "K7X"), `keys "k7x" and "K7X"`},
		{wide(200, "K7"), `keys "k7" and "K7"`},
		{wide(200, "\u212a150"), `keys "k150" and "\u212a150"`},
		{wide(200, "Last"), `keys "Last" and "last"`},
		{wide(200, "stack", "tacks"), ""},
		{`{"x":` + wide(20, "y") + `,"X":1}`, `keys "x" and "X", which are equal under case folding (at "")`},
		{`{"x":` + wide(20, "K19") + `,"y":1}`, `keys "k19" and "K19", which are equal under case folding (at "/x")`},
	}
	for _, tc := range tests {
		t.Run(tc.in[:min(len(tc.in), 40)], func(t *testing.T) {
			m, _, err := decodeInput(e.input, json.RawMessage(tc.in))
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.NotNil(t, m)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Contains(t, err.Error(), "Go's encoding/json")
		})
	}
}

// TestDecodeInputRejectsImpreciseNumbers: a number is accepted only if its
// text denotes exactly the value of the shortest decimal that round-trips
// the float64 it parses to (I-JSON, RFC 7493 §2.2), at any depth.
func TestDecodeInputRejectsImpreciseNumbers(t *testing.T) {
	e := anyInputTool(t)
	accepted := []string{
		"0", "-0", "0.0", "-0.0", "0e0", "0E+9", "0.000e-999", "1", "-1", "1.0", "1.000", "1e0", "10e-1", "0.1e1",
		"42", "100", "1e2", "1E+2", "100.0", "0.1", "-0.1", "3.14", "1e-7", "0.0000001", "2.5e-3", "123456789012345",
		"999999999999999", "9007199254740991", "9007199254740992", "-9007199254740992", "4503599627370497",
		"10000000000000000", "1e16", "1e300", "-1e300", "1.7976931348623157e308", "5e-324", "2.2250738585072014e-308",
		"1152921504606847000", "1.152921504606847e18", "0.30000000000000004", "0.3", "123.456", "1e21", "1e22",
		"1234567890123456800", "1e23", "0.1e-6",
	}
	rejected := []struct{ num, readAs string }{
		{"9007199254740993", "9007199254740992"},
		{"-9007199254740993", "-9007199254740992"},
		{"10000000000000001", "10000000000000000"},
		{"100.000000000000001", "100"},
		{"1.0000000000000000001", "1"},
		{"1.00000000000000001e2", "100"},
		{"0.1000000000000000055511151231257827", "0.1"},
		{"1152921504606846976", "1152921504606847000"}, // 2^60: exactly a double, but not its shortest decimal
		{"9223372036854775807", "9223372036854776000"},
		{"1234567890123456789", "1234567890123456800"},
		{"1e-400", "0"},
		{"-1e-400", "-0"},
		{"4.9e-324", "5e-324"},
		{"2.4703282292062328e-324", "5e-324"},
		{"0.30000000000000001", "0.3"},
		{"3.141592653589793238", "3.141592653589793"},
		{"1.7976931348623157e308000", ""}, // out of range, as before
		{"1e400", ""},
	}
	for _, n := range accepted {
		for _, in := range []string{`{"n":` + n + `}`, `{"a":[1,{"b":[` + n + `]}]}`} {
			m, _, err := decodeInput(e.input, json.RawMessage(in))
			require.NoError(t, err, in)
			require.NotNil(t, m)
		}
	}
	for _, tc := range rejected {
		for _, w := range []struct{ in, ptr string }{
			{`{"n":` + tc.num + `}`, `"/n"`},
			{`{"a":[1,{"b":[0,` + tc.num + `]}]}`, `"/a/1/b/1"`},
		} {
			_, _, err := decodeInput(e.input, json.RawMessage(w.in))
			require.Error(t, err, w.in)
			if tc.readAs == "" {
				assert.Contains(t, err.Error(), "out of range at "+w.ptr)
				continue
			}
			assert.Equal(t, "input number "+tc.num+" at "+w.ptr+
				" has more precision or magnitude than an IEEE 754 double (I-JSON, RFC 7493 §2.2): parsers may read it as "+tc.readAs, err.Error())
		}
	}
}

// exactNumberRef is exactNumber's rule with math/big: the text's value is
// the value of FormatFloat(f, 'g', -1, 64), f what it parses to.
func exactNumberRef(t testing.TB, num string) bool {
	t.Helper()
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		t.Fatalf("%q: %v", num, err)
	}
	mant := num
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		mant = num[:i]
	}
	if strings.Trim(mant, "-0.") == "" {
		return true // zero, whatever its sign and exponent
	}
	if f == 0 {
		return false // underflows (and big.Rat need not compute 10^-huge)
	}
	in, ok := new(big.Rat).SetString(num)
	if !ok {
		t.Fatalf("big.Rat cannot read %q", num)
	}
	out, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	require.True(t, ok)
	return in.Cmp(out) == 0
}

// numberSeeds are JSON numbers at the edges of exactNumber's rule.
var numberSeeds = []string{
	"0", "-0", "0.0", "1", "1.0", "1e2", "0.1", "3.14", "1e-7", "9007199254740992", "9007199254740993",
	"10000000000000001", "100.000000000000001", "1.0000000000000000001", "1152921504606846976", "1152921504606847000",
	"1e-400", "5e-324", "4.9e-324", "1.7976931348623157e308", "123456789012345", "1234567890123456", "0.30000000000000004",
	"0.300000000000000040", "12345678901234567890e-5", "0.00000000000000000000000000001", "1" + strings.Repeat("0", 30),
	"1" + strings.Repeat("0", 30) + "1", "1e0000000000000000000000000001", "0e-99999999999999999999999",
}

// TestExactNumberMatchesBigRat holds exactNumber to its math/big
// definition on the seeds and on shortest, longer and neighbouring
// decimals of many doubles.
func TestExactNumberMatchesBigRat(t *testing.T) {
	check := func(num string) {
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return
		}
		if got, want := exactNumber([]byte(num), f), exactNumberRef(t, num); got != want {
			t.Fatalf("exactNumber(%s) = %v, math/big says %v", num, got, want)
		}
	}
	for _, n := range numberSeeds {
		check(n)
	}
	r := uint64(0x9e3779b97f4a7c15)
	for range 20000 {
		r ^= r << 13
		r ^= r >> 7
		r ^= r << 17
		f := math.Float64frombits(r)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		for _, num := range []string{
			strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'e', 17, 64), strconv.FormatFloat(f, 'e', 25, 64),
			strconv.FormatFloat(f, 'f', -1, 64), strconv.FormatFloat(float64(int64(r>>11)), 'f', -1, 64),
			strconv.FormatUint(r>>(r%64), 10), strconv.FormatUint(r>>11, 10) + "e-" + strconv.Itoa(int(r%40)),
		} {
			check(num)
		}
	}
}

// FuzzExactNumber: exactNumber agrees with its math/big definition.
func FuzzExactNumber(f *testing.F) {
	for _, n := range numberSeeds {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, num string) {
		if !jsontextNumber(num) {
			return
		}
		fl, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return
		}
		if got, want := exactNumber([]byte(num), fl), exactNumberRef(t, num); got != want {
			t.Fatalf("exactNumber(%s) = %v, math/big says %v", num, got, want)
		}
	})
}

// jsontextNumber reports whether s is one JSON number.
func jsontextNumber(s string) bool {
	var v any
	return len(s) > 0 && len(s) < 400 && s[0] != ' ' && strings.TrimSpace(s) == s &&
		json.Unmarshal([]byte(s), &v) == nil && reflect.TypeOf(v) == reflect.TypeFor[float64]()
}

// TestFoldNameIsEqualFold: the folded-name set of wide objects equates
// exactly the names strings.EqualFold (the small objects' check) does, for
// every rune, and encoding/json binds a name to a struct field tagged with
// any rune of its fold orbit.
func TestFoldNameIsEqualFold(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		for r2 := unicode.SimpleFold(r); r2 != r; r2 = unicode.SimpleFold(r2) {
			s2 := string(r2)
			require.True(t, strings.EqualFold(s, s2))
			require.Equal(t, foldName(s), foldName(s2), "%U %U", r, r2)
		}
		if f := foldName(s); f != s {
			require.True(t, sameName(f, s), "%U", r)
		}
	}
	for _, p := range [][2]string{{"K", "\u212a"}, {"k", "\u212a"}, {"s", "\u017f"}, {"S", "\u017f"}, {"σ", "ς"}, {"Σ", "ς"}, {"ß", "ẞ"}, {"i", "İ"}, {"i", "ı"}, {"ss", "ß"}} {
		eq := sameName(p[0], p[1])
		assert.Equal(t, eq, foldName(p[0]) == foldName(p[1]), "%+q %+q", p[0], p[1])
		// encoding/json: a field tagged p[0] receives the member named p[1]
		// exactly when the names are equal under EqualFold.
		typ := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeFor[any](), Tag: reflect.StructTag(`json:"x` + p[0] + `"`)}})
		v := reflect.New(typ)
		require.NoError(t, json.Unmarshal([]byte(`{"x`+p[1]+`":1}`), v.Interface()))
		assert.Equal(t, eq, v.Elem().Field(0).Interface() != nil, "%+q %+q", p[0], p[1])
	}
}

// foldName is appendFold as a string.
func foldName(s string) string { return string(appendFold(nil, s)) }

// FuzzFoldName: foldName(a) == foldName(b) exactly when
// strings.EqualFold(a, b), for valid UTF-8.
func FuzzFoldName(f *testing.F) {
	for _, p := range [][2]string{{"command", "Command"}, {"kind", "\u212aind"}, {"ſ", "S"}, {"ß", "ss"}, {"σς", "ΣΣ"}, {"a", "b"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		if got, want := foldName(a) == foldName(b), sameName(a, b); got != want {
			t.Fatalf("%+q %+q: foldName equal %v, sameName %v", a, b, got, want)
		}
	})
}

// realInputs are the inputs of the 1,091 real tool calls in testdata/real.
func realInputs(tb testing.TB) []json.RawMessage {
	tb.Helper()
	f, err := os.Open("../testdata/real/trajectories.jsonl")
	require.NoError(tb, err)
	defer f.Close()
	var out []json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var rec struct {
			Input json.RawMessage `json:"input"`
		}
		require.NoError(tb, json.Unmarshal(sc.Bytes(), &rec))
		out = append(out, rec.Input)
	}
	require.NoError(tb, sc.Err())
	require.NotEmpty(tb, out)
	return out
}

// TestDecodeInputMatchesEncodingJSON: on every real tool input, the
// decoded value is the one encoding/json produces.
func TestDecodeInputMatchesEncodingJSON(t *testing.T) {
	e := anyInputTool(t)
	for i, in := range realInputs(t) {
		var want map[string]any
		require.NoError(t, json.Unmarshal(in, &want))
		if want == nil {
			want = map[string]any{}
		}
		got, _, err := decodeInput(e.input, in)
		require.NoError(t, err, "input %d", i)
		require.Equal(t, want, got, "input %d", i)
	}
}

// FuzzDecodeInput: whatever decodeInput accepts, encoding/json reads
// alike (see checkReadAlike), and it never accepts invalid UTF-8.
func FuzzDecodeInput(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":2,"c":3}]}}`, `{"\u0061":1,"a":2}`, `{"a":"\\\"","b":2}`, `[]`, `"x"`, `{"n":1e400}`, `{"s":"\ud800"}`,
		`{"command":"ls","Command":"rm"}`, `{"kind":1,"\u212aind":2}`, `{"n":9007199254740993}`, `{"n":[0.1,1e-7,100.000000000000001]}`} {
		f.Add(s)
	}
	e := anyInputTool(f)
	f.Fuzz(func(t *testing.T, s string) {
		got, raw, err := decodeInput(e.input, json.RawMessage(s))
		if err != nil {
			return
		}
		checkReadAlike(t, raw, got)
	})
}

// checkReadAlike: in, which decodeInput accepted as got, is read alike by
// encoding/json however a tool decodes it: into map[string]any, the same
// values; with UseNumber, every number exactly the value of the shortest
// decimal of got's float64 (the value the schema validated); and into a
// struct whose fields are tagged with case variants of the keys (encoding/
// json matches them case-insensitively, Kelvin sign and long s included),
// nested objects as nested structs, plain and with UseNumber, every field
// the value of its key in got.
func checkReadAlike(t *testing.T, in []byte, got map[string]any) {
	t.Helper()
	if !utf8.Valid(in) {
		t.Fatalf("%q: accepted invalid UTF-8", in)
	}
	var want map[string]any
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatalf("%q: accepted, but encoding/json says %v", in, err)
	}
	if want == nil {
		want = map[string]any{}
	}
	require.Equal(t, want, got, "%q", in)
	for _, useNumber := range []bool{false, true} {
		dec := func(v any) {
			d := json.NewDecoder(bytes.NewReader(in))
			if useNumber {
				d.UseNumber()
			}
			require.NoError(t, d.Decode(v), "%q", in)
		}
		var asMap map[string]any
		dec(&asMap)
		if asMap == nil {
			asMap = map[string]any{}
		}
		sameValue(t, in, "", got, asMap)
		sh := shapeOf(got)
		v := reflect.New(sh.typ)
		dec(v.Interface())
		sameStruct(t, in, "", got, sh, v.Elem())
	}
}

// shape is a struct type built for an object: a field for each of its keys
// that is a valid encoding/json tag name, tagged with a case variant of the
// key; a nested object's field is of its own shape's type.
type shape struct {
	typ  reflect.Type
	keys []string
	sub  []*shape // sub[i] is the shape of keys[i]'s object, or nil
}

func shapeOf(m map[string]any) *shape {
	sh := &shape{}
	var fields []reflect.StructField
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !isValidTag(k) || k == "-" { // a field tagged "-" is skipped
			continue
		}
		typ, sub := reflect.TypeFor[any](), (*shape)(nil)
		if o, ok := m[k].(map[string]any); ok {
			sub = shapeOf(o)
			typ = sub.typ
		}
		fields = append(fields, reflect.StructField{
			Name: "F" + strconv.Itoa(len(fields)), Type: typ, Tag: reflect.StructTag(`json:"` + caseVariant(k) + `"`),
		})
		sh.keys = append(sh.keys, k)
		sh.sub = append(sh.sub, sub)
	}
	sh.typ = reflect.StructOf(fields)
	return sh
}

// caseVariant replaces each rune of k with the next of its
// unicode.SimpleFold orbit ('k' with the Kelvin sign, 's' with ſ, 'a' with
// 'A'), a name equal to k under case folding.
func caseVariant(k string) string {
	var b strings.Builder
	for _, r := range k {
		b.WriteRune(unicode.SimpleFold(r))
	}
	return b.String()
}

// isValidTag is encoding/json's: the names a field tag may carry.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

func sameStruct(t *testing.T, in []byte, ptr string, got map[string]any, sh *shape, v reflect.Value) {
	t.Helper()
	for i, k := range sh.keys {
		p := ptr + "/" + k
		if sh.sub[i] != nil {
			sameStruct(t, in, p, got[k].(map[string]any), sh.sub[i], v.Field(i))
			continue
		}
		sameValue(t, in, p, got[k], v.Field(i).Interface())
	}
}

// sameValue: theirs, what encoding/json read at ptr, is ours; a
// json.Number has exactly the value of our float64's shortest decimal.
func sameValue(t *testing.T, in []byte, ptr string, ours, theirs any) {
	t.Helper()
	switch o := ours.(type) {
	case map[string]any:
		th, ok := theirs.(map[string]any)
		require.True(t, ok, "%q at %q: %#v", in, ptr, theirs)
		require.ElementsMatch(t, slices.Collect(maps.Keys(o)), slices.Collect(maps.Keys(th)), "%q at %q", in, ptr)
		for k, v := range o {
			sameValue(t, in, ptr+"/"+k, v, th[k])
		}
	case []any:
		th, ok := theirs.([]any)
		require.True(t, ok, "%q at %q: %#v", in, ptr, theirs)
		require.Len(t, th, len(o), "%q at %q", in, ptr)
		for i, v := range o {
			sameValue(t, in, ptr+"/"+strconv.Itoa(i), v, th[i])
		}
	case float64:
		n, ok := theirs.(json.Number)
		if !ok {
			require.Equal(t, ours, theirs, "%q at %q", in, ptr)
			return
		}
		exact, ok := new(big.Rat).SetString(string(n))
		require.True(t, ok, "%q at %q: %s", in, ptr, n)
		shortest, _ := new(big.Rat).SetString(strconv.FormatFloat(o, 'g', -1, 64))
		require.Zero(t, exact.Cmp(shortest), "%q at %q: a tool reads %s exactly, the gate and the schema %v", in, ptr, n, o)
		f, err := n.Float64()
		require.NoError(t, err)
		require.Equal(t, math.Float64bits(o), math.Float64bits(f), "%q at %q", in, ptr)
	default:
		require.Equal(t, ours, theirs, "%q at %q", in, ptr)
	}
}

// decodeJSONv2 is decodeInput's decoding as it was with json v2's
// Unmarshal (github.com/go-json-experiment/json): the reference the
// jsontext decoder of decodeObject is held to.
func decodeJSONv2(raw []byte) (map[string]any, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		raw = emptyObject
	}
	var m map[string]any
	if err := jsonv2.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// decodeSeeds are inputs at the edges of what decodeInput accepts.
var decodeSeeds = []string{
	`{}`, ``, `null`, ` null `, "\t{}\n", `{"a":1,"a":2}`, `{"a":{"b":[1,{"c":2,"c":3}]}}`, `{"\u0061":1,"a":2}`,
	`{"a":"\\\"","b":2}`, `[]`, `"x"`, `1`, `true`, `{"n":1e400}`, `{"n":-1e400}`, `{"n":1e-400}`, `{"s":"\ud800"}`,
	`{"s":"\ud83d\ude00"}`, `{"s":"\udc00\ud800"}`, "{\"a\":\"\xff\"}", "{\"\xc3\":1}", `{} {}`, `{}x`, `{} `, `{"a":1`,
	`{"a":1]`, `{"a":[1}`, `{1:2}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":[1,]}`, `{"a":01}`, `{"a":-0}`, `{"a":1.5e3}`,
	`{"a":null,"b":true,"c":false,"d":[],"e":{}}`, `{"k":"\u0000"}`, `{"":1}`, `{"a":[[[[[]]]]]}`, "\ufeff{}",
	`{"a":"x","b":"x","c":"ab","ab":"c"}`, `{"command":"ls -la /tmp"}`, `{"a":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`,
	// Keys equal under case folding, numbers beyond a double.
	`{"command":"ls","Command":"rm -rf ~"}`, `{"kind":1,"\u212aind":2}`, `{"s":1,"\u017f":2}`, `{"a":[{"x":1,"X":2}]}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"A":10}`, `{"k":1,"K_":2}`, `{"-":1,"_":2}`,
	`{"n":9007199254740993}`, `{"n":9007199254740992}`, `{"n":10000000000000001}`, `{"n":100.000000000000001}`,
	`{"n":1.0000000000000000001}`, `{"n":1152921504606846976}`, `{"n":1152921504606847000}`, `{"n":[0.1,3.14,1e-7,-0,1.0,1e2]}`,
	`{"n":4.9e-324}`, `{"n":0e-99999999999}`, `{"n":1e-99999999999}`,
}

// TestDecodeObjectMatchesJSONv2: on the seeds and every real tool input,
// decodeInput accepts exactly what json v2's Unmarshal accepts, with the
// same value, less the input with keys equal under case folding or
// numbers beyond a double (see checkDecodeMatchesJSONv2).
func TestDecodeObjectMatchesJSONv2(t *testing.T) {
	e := anyInputTool(t)
	ins := realInputs(t)
	for _, s := range decodeSeeds {
		ins = append(ins, json.RawMessage(s))
	}
	for _, in := range ins {
		checkDecodeMatchesJSONv2(t, e, in)
	}
}

// FuzzDecodeObjectMatchesJSONv2: decodeInput accepts exactly what json v2's
// Unmarshal accepts (duplicate names, invalid UTF-8, lone surrogates,
// numbers out of range, trailing data all refused alike), with the same
// value, less the input with keys equal under case folding or numbers
// beyond a double, which it refuses and which encoding/json reads alike
// when it accepts them (see checkDecodeMatchesJSONv2).
func FuzzDecodeObjectMatchesJSONv2(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	e := anyInputTool(f)
	f.Fuzz(func(t *testing.T, s string) {
		checkDecodeMatchesJSONv2(t, e, json.RawMessage(s))
	})
}

// checkDecodeMatchesJSONv2: decodeInput refuses what json v2 refuses; of
// what json v2 accepts, it refuses exactly the input that has two keys of
// one object equal under strings.EqualFold or a number that is not the
// shortest decimal of its double (as math/big finds: ambiguities), saying
// why, and accepts the rest with json v2's value, which encoding/json
// reads alike (checkReadAlike).
func checkDecodeMatchesJSONv2(t *testing.T, e *entry, in json.RawMessage) {
	t.Helper()
	want, werr := decodeJSONv2(in)
	got, raw, err := decodeInput(e.input, in)
	switch {
	case werr != nil:
		if err == nil {
			t.Fatalf("%q: decodeInput accepts it, json v2 says %v", in, werr)
		}
		return
	case err != nil:
		why := ambiguities(t, in)
		if len(why) == 0 {
			t.Fatalf("%q: json v2 accepts it and it is unambiguous, but decodeInput says %v", in, err)
		}
		if !slices.ContainsFunc(why, func(w string) bool { return strings.Contains(err.Error(), w) }) {
			t.Fatalf("%q: decodeInput says %v, not one of %q", in, err, why)
		}
		return
	}
	if why := ambiguities(t, in); len(why) != 0 {
		t.Fatalf("%q: accepted, but it has %q", in, why)
	}
	require.Equal(t, want, got, "%q", in)
	if len(bytes.TrimSpace(in)) != 0 && string(bytes.TrimSpace(in)) != "null" {
		require.Equal(t, string(in), string(raw), "the raw input is what runs")
	}
	checkReadAlike(t, raw, got)
}

// ambiguities returns what makes in, a JSON value json v2 accepts, read
// differently by different parsers, as the words decodeInput's error
// uses: two keys of one object equal under strings.EqualFold ("case
// folding"), a number whose value is not that of the shortest decimal of
// the double it parses to, by math/big ("IEEE 754 double").
func ambiguities(t *testing.T, in []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(in))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil // empty input
	}
	var why []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := slices.Sorted(maps.Keys(v))
			for i, k := range keys {
				for _, k2 := range keys[i+1:] {
					if sameName(k, k2) && !slices.Contains(why, "case folding") {
						why = append(why, "case folding")
					}
				}
				walk(v[k])
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case json.Number:
			if !exactNumberRef(t, string(v)) && !slices.Contains(why, "IEEE 754 double") {
				why = append(why, "IEEE 754 double")
			}
		}
	}
	walk(v)
	return why
}

func BenchmarkDecodeRealInputs(b *testing.B) {
	e := anyInputTool(b)
	ins := realInputs(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range ins {
			_, _, _ = decodeInput(e.input, in)
		}
	}
}

// Red team (second round): json/v2's case-insensitive matching also
// ignores '-' and '_'.
func TestDecodeInputRejectsDashUnderscoreFolding(t *testing.T) {
	e, err := compileTool(Tool{Name: "t", Execute: func(context.Context, json.RawMessage) (Result, error) { return Result{}, nil }})
	require.NoError(t, err)
	for _, tc := range []struct {
		in      string
		wantErr bool
	}{
		{`{"command":"ls","com_mand":"rm -rf ~"}`, true},
		{`{"cmd":"ls","COM-MAND":"x","command":"y"}`, true},
		{`{"dry_run":true,"dryRun":false}`, true},
		{`{"dry_run":true,"dry-run":false}`, true},
		{`{"a":{"x_y":1,"XY":2}}`, true},
		{`{"dry_run":true,"dry":false,"run":1}`, false},
		{`{"a_b":1,"a_c":2}`, false},
	} {
		_, _, err := decodeInput(e.input, json.RawMessage(tc.in))
		if tc.wantErr {
			assert.ErrorContains(t, err, "equal under case folding", tc.in)
		} else {
			assert.NoError(t, err, tc.in)
		}
	}
	// The wide path (a folded-name set) agrees with the pairwise one.
	wideIn := `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"com_mand":"a","Command":"b"}`
	_, _, err = decodeInput(e.input, json.RawMessage(wideIn))
	assert.ErrorContains(t, err, "equal under case folding")
}
