package chserve

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"
)

// The fast path of the Native revision conversion. chDB writes Native at
// protocol revision 0; a client that passed client_protocol_version=R reads
// it at revision R. The two differ only in bytes around the column data
// (clickhouse-go v2.51.0, lib/proto/block.go: Block.EncodeHeader,
// Block.EncodeColumn, encodeBlockInfo):
//
//	revision 0 (chDB):  cols rows { name type prefixes data }×cols
//	revision R:         [BlockInfo] cols rows { name type [flag] prefixes data }×cols
//
// where BlockInfo, present for R > 0, is the bytes 01 00 02 ff ff ff ff 00
// (uvarint 1, is_overflows false, uvarint 2, bucket_num int32 -1, uvarint 0
// end), and flag, present for R >= DBMS_MIN_REVISION_WITH_CUSTOM_SERIALIZATION,
// is one byte 0 (no custom serialization). cols, rows and the lengths of name
// and type are uvarints; the state prefixes and data of a column are the
// same bytes at both revisions. transcodeNative copies them as slices: it
// only needs each column's length, which its type and the block's row count
// give (nativeType.skip), without decoding a single value.

// errNotHandled marks a result transcodeNative leaves to reencodeNative: a
// type it does not know, a block without rows, or bytes that do not match
// the layouts below.
var errNotHandled = errors.New("not handled by the Native transcoder")

// blockInfo is what clickhouse-go's encodeBlockInfo writes before each
// block at a revision above 0: field 1 is_overflows = false, field 2
// bucket_num = -1, field 0 (end).
var blockInfo = []byte{1, 0, 2, 0xff, 0xff, 0xff, 0xff, 0}

// nativeForClient returns data, Native as chDB writes it (revision 0), at
// the client's revision: transcodeNative's copy when it handles every
// block, else reencodeNative's full decode and encode.
func nativeForClient(data []byte, revision uint64) ([]byte, error) {
	if out, err := transcodeNative(data, revision); err == nil {
		return out, nil
	}
	return reencodeNative(data, revision)
}

// transcodeNative converts data, Native as chDB writes it (revision 0), to
// revision, with the same bytes as reencodeNative: it inserts BlockInfo and
// the custom-serialization flags and copies the rest. Every error wraps
// errNotHandled and means the caller should use reencodeNative for the
// whole result: a column type nativeType does not know, or data that ends early,
// has bytes left over or is inconsistent. It never panics: every length
// read from data is checked against what is left of it.
func transcodeNative(data []byte, revision uint64) ([]byte, error) {
	if revision == 0 || len(data) == 0 {
		return data, nil
	}
	t := transcoder{src: data, types: map[string]*nativeType{}}
	// Each block grows by len(blockInfo) and a byte a column; chDB's blocks
	// are large (max_block_size rows), so 1/64 is ample but for tiny ones.
	out := make([]byte, 0, len(data)+len(data)/64+64)
	for n := 0; t.pos < len(data); n++ {
		start := t.pos
		var err error
		if out, err = t.block(out, revision); err != nil {
			return nil, fmt.Errorf("%w: block %d at byte %d: %w", errNotHandled, n, start, err)
		}
	}
	return out, nil
}

// transcoder walks revision-0 Native bytes; pos is the next byte to read.
type transcoder struct {
	src   []byte
	pos   int
	types map[string]*nativeType // parsed column types by type string
}

var (
	errShort        = errors.New("data ends early")
	errBadVarint    = errors.New("bad or non-minimal uvarint")
	errTooManyRows  = errors.New("more rows than bytes left")
	errStatePrefix  = errors.New("LowCardinality state prefix is not key version 1 (SharedDictionariesWithAdditionalKeys)")
	errOffsetsOrder = errors.New("offsets decrease")
)

// block appends to out the block at t.pos at revision (> 0) and moves past
// it.
//
// Revision 0, as chDB's NativeWriter writes it:
//
//	uvarint cols, uvarint rows, then per column:
//	  uvarint len, name; uvarint len, type; state prefixes; data (nativeType.skip)
func (t *transcoder) block(out []byte, revision uint64) ([]byte, error) {
	cols, err := t.uvarint()
	if err != nil {
		return out, fmt.Errorf("columns: %w", err)
	}
	rows, err := t.uvarint()
	if err != nil {
		return out, fmt.Errorf("rows: %w", err)
	}
	left := uint64(len(t.src) - t.pos)
	switch {
	case cols == 0 || cols > left:
		return out, fmt.Errorf("%d columns in %d bytes", cols, left)
	case rows > 0 && rows > left:
		// Every type nativeType knows takes at least a byte a row.
		return out, fmt.Errorf("%w: %d rows in %d bytes", errTooManyRows, rows, left)
	}
	if revision > 0 {
		out = append(out, blockInfo...)
	}
	out = binary.AppendUvarint(out, cols)
	out = binary.AppendUvarint(out, rows)
	for i := range cols {
		name, err := t.str()
		if err != nil {
			return out, fmt.Errorf("column %d name: %w", i, err)
		}
		typ, err := t.str()
		if err != nil {
			return out, fmt.Errorf("column %d (%q) type: %w", i, name, err)
		}
		nt, err := t.lookup(typ)
		if err != nil {
			return out, fmt.Errorf("column %q: %w", name, err)
		}
		start := t.pos
		if err := t.statePrefixes(nt.prefixes); err != nil {
			return out, fmt.Errorf("column %q %s: %w", name, typ, err)
		}
		if rows == 0 {
			// A block without rows has the prefixes and no data; clickhouse-go
			// reads one as names, types and flags only (reencodeEmptyBlock).
			start = t.pos
		} else if err := t.skip(nt, rows); err != nil {
			return out, fmt.Errorf("column %q %s: %w", name, typ, err)
		}
		out = binary.AppendUvarint(out, uint64(len(name)))
		out = append(out, name...)
		out = binary.AppendUvarint(out, uint64(len(typ)))
		out = append(out, typ...)
		if revision >= proto.DBMS_MIN_REVISION_WITH_CUSTOM_SERIALIZATION {
			out = append(out, 0)
		}
		out = append(out, t.src[start:t.pos]...)
	}
	return out, nil
}

// lookup returns the parsed form of the type string typ.
func (t *transcoder) lookup(typ []byte) (*nativeType, error) {
	if nt, ok := t.types[string(typ)]; ok {
		return nt, nil
	}
	nt, err := parseNativeType(string(typ), 0)
	if err != nil {
		return nil, err
	}
	t.types[string(typ)] = nt
	return nt, nil
}

// uvarint reads a minimally encoded uvarint (the only form ClickHouse and
// clickhouse-go write: re-encoding a longer one would change the bytes).
func (t *transcoder) uvarint() (uint64, error) {
	v, k := binary.Uvarint(t.src[t.pos:])
	if k <= 0 || (k > 1 && t.src[t.pos+k-1] == 0) {
		return 0, errBadVarint
	}
	t.pos += k
	return v, nil
}

// str reads a uvarint length and that many bytes.
func (t *transcoder) str() ([]byte, error) {
	n, err := t.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(t.src)-t.pos) {
		return nil, errShort
	}
	s := t.src[t.pos : t.pos+int(n)]
	t.pos += int(n)
	return s, nil
}

// readUInt64 reads a little-endian UInt64.
func (t *transcoder) readUInt64() (uint64, error) {
	if len(t.src)-t.pos < 8 {
		return 0, errShort
	}
	v := binary.LittleEndian.Uint64(t.src[t.pos:])
	t.pos += 8
	return v, nil
}

// advance moves past n values of width bytes each.
func (t *transcoder) advance(n, width uint64) error {
	if n > uint64(len(t.src)-t.pos)/width {
		return errShort
	}
	t.pos += int(n * width)
	return nil
}

// statePrefixes reads n LowCardinality state prefixes: each the UInt64 key
// version (SerializationLowCardinality::serializeBinaryBulkStatePrefix),
// which chDB and clickhouse-go only write as 1. A column's prefixes are
// those of its LowCardinality parts in element order (Array, Nullable: the
// element's; Map: the key's, then the value's; Tuple: each element's),
// all before its data.
func (t *transcoder) statePrefixes(n int) error {
	for range n {
		v, err := t.readUInt64()
		if err != nil {
			return err
		}
		if v != 1 {
			return errStatePrefix
		}
	}
	return nil
}

// skipStrings moves past n String values: each a uvarint length and that many
// bytes. It is the hot loop of a large export.
func (t *transcoder) skipStrings(n uint64) error {
	b, p := t.src, t.pos
	for range n {
		if p >= len(b) {
			return errShort
		}
		if c := b[p]; c < 0x80 {
			// A one-byte length; p may pass len(b), which the next round or
			// the check below reports.
			p += 1 + int(c)
			continue
		}
		l, k := binary.Uvarint(b[p:])
		if k <= 0 || b[p+k-1] == 0 {
			return errBadVarint
		}
		if l > uint64(len(b)-p-k) {
			return errShort
		}
		p += k + int(l)
	}
	if p > len(b) {
		return errShort
	}
	t.pos = p
	return nil
}

// offsets moves past n UInt64 offsets (Array, Map) and returns the last,
// the number of elements of the nested column. Offsets never decrease.
func (t *transcoder) offsets(n uint64) (uint64, error) {
	if n > uint64(len(t.src)-t.pos)/8 {
		return 0, errShort
	}
	var last uint64
	b := t.src[t.pos : t.pos+int(n)*8]
	for i := 0; i < len(b); i += 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		if v < last {
			return 0, errOffsetsOrder
		}
		last = v
	}
	t.pos += len(b)
	// Every nested type takes at least a byte an element.
	if last > uint64(len(t.src)-t.pos) {
		return 0, fmt.Errorf("%w: %d elements in %d bytes", errTooManyRows, last, len(t.src)-t.pos)
	}
	return last, nil
}

// LowCardinality's serialization type word (ClickHouse,
// src/DataTypes/Serializations/SerializationLowCardinality.cpp,
// IndexesSerializationType): the low 8 bits are the key width (0..3: UInt8,
// UInt16, UInt32, UInt64), flags above. chDB's Native data has exactly
// lcNativeFlags, which clickhouse-go's LowCardinality.Encode also writes;
// anything else (NeedGlobalDictionary, bit 8; no additional keys) is left
// to reencodeNative.
const (
	lcKeyWidthMask         = 0xff
	lcMaxKeyWidthIndex     = 3
	lcNeedGlobalDictionary = 1 << 8
	lcHasAdditionalKeys    = 1 << 9
	lcNeedUpdateDictionary = 1 << 10
	lcNativeFlags          = lcHasAdditionalKeys | lcNeedUpdateDictionary
)

var errLowCardinalityFormat = errors.New("LowCardinality serialization type is not HasAdditionalKeys|NeedUpdateDictionary with a key width 0..3")

// skip moves past the data of n rows of a column of type nt. Layouts, as
// ClickHouse's NativeWriter (src/Formats/NativeWriter.cpp, writeData) has
// each type's serialization write them with serializeBinaryBulkStatePrefix
// then serializeBinaryBulkWithMultipleStreams (src/DataTypes/Serializations:
// SerializationLowCardinality.cpp for LowCardinality, SerializationArray,
// SerializationMap, SerializationTuple, SerializationNullable,
// SerializationString, the number serializations), and as clickhouse-go's
// lib/column Decode methods read them; checked against chDB 26.5 by
// TestTranscodeMatchesReencode:
//
//	fixed width      n × width bytes, little-endian
//	String           n × (uvarint length, bytes)
//	Nullable(T)      n bytes null map, then T × n
//	Array(T)         n × UInt64 cumulative offsets, then T × last offset
//	Map(K, V)        n × UInt64 offsets, then K × last, then V × last
//	Tuple(T1, …)     T1 × n, T2 × n, …
//	LowCardinality(T), for n > 0 (nothing for n = 0, e.g. in empty arrays):
//	                 UInt64 serialization type (key width | flags; chDB
//	                 writes HasAdditionalKeys|NeedUpdateDictionary),
//	                 UInt64 k, dictionary: k values of T without Nullable
//	                 (index 0 stands for NULL in LowCardinality(Nullable(T))),
//	                 UInt64 n, n keys of the key width
//
// The state prefixes of a column's LowCardinality parts come before all of
// its data (statePrefixes), also in a block without rows (which has no
// data; block drops its prefixes, as clickhouse-go reads it).
func (t *transcoder) skip(nt *nativeType, n uint64) error {
	switch nt.kind {
	case kindFixed:
		return t.advance(n, nt.width)
	case kindString:
		return t.skipStrings(n)
	case kindNullable:
		if err := t.advance(n, 1); err != nil {
			return err
		}
		return t.skip(nt.elems[0], n)
	case kindArray:
		m, err := t.offsets(n)
		if err != nil {
			return err
		}
		return t.skip(nt.elems[0], m)
	case kindMap:
		m, err := t.offsets(n)
		if err != nil {
			return err
		}
		if err := t.skip(nt.elems[0], m); err != nil {
			return err
		}
		return t.skip(nt.elems[1], m)
	case kindTuple:
		for _, e := range nt.elems {
			if err := t.skip(e, n); err != nil {
				return err
			}
		}
		return nil
	case kindLowCardinality:
		return t.lowCardinality(nt, n)
	}
	return fmt.Errorf("type kind %d", nt.kind)
}

// lowCardinality moves past n rows of LowCardinality data (see skip).
func (t *transcoder) lowCardinality(nt *nativeType, n uint64) error {
	if n == 0 {
		return nil
	}
	st, err := t.readUInt64()
	if err != nil {
		return err
	}
	key := st & lcKeyWidthMask
	if st&^lcKeyWidthMask != lcNativeFlags || key > lcMaxKeyWidthIndex {
		return fmt.Errorf("%w: %#x", errLowCardinalityFormat, st)
	}
	keys, err := t.readUInt64()
	if err != nil {
		return err
	}
	if keys > uint64(len(t.src)-t.pos) {
		return fmt.Errorf("%w: %d dictionary values in %d bytes", errTooManyRows, keys, len(t.src)-t.pos)
	}
	if err := t.skip(nt.elems[0], keys); err != nil {
		return fmt.Errorf("dictionary: %w", err)
	}
	rows, err := t.readUInt64()
	if err != nil {
		return err
	}
	if rows != n {
		return fmt.Errorf("LowCardinality of %d rows has %d keys", n, rows)
	}
	return t.advance(n, 1<<key)
}

// nativeKind is the layout family of a column type.
type nativeKind uint8

const (
	kindFixed nativeKind = iota
	kindString
	kindNullable
	kindArray
	kindMap
	kindTuple
	kindLowCardinality
)

// nativeType is a column type as far as its Native layout goes (skip).
type nativeType struct {
	kind  nativeKind
	width uint64 // kindFixed: bytes a value
	// elems: Nullable, Array: the element type; Map: key, value; Tuple: the
	// elements; LowCardinality: the dictionary's type (T without Nullable).
	elems []*nativeType
	// prefixes is the number of LowCardinality state prefixes before the
	// data: one for LowCardinality, the sum of its elements' otherwise.
	prefixes int
}

// fixedWidths are the types without arguments of a fixed width in bytes.
var fixedWidths = map[string]uint64{
	"Int8": 1, "UInt8": 1, "Bool": 1,
	"Int16": 2, "UInt16": 2, "Date": 2, "BFloat16": 2,
	"Int32": 4, "UInt32": 4, "Float32": 4, "Date32": 4, "DateTime": 4, "IPv4": 4,
	"Int64": 8, "UInt64": 8, "Float64": 8,
	"Int128": 16, "UInt128": 16, "UUID": 16, "IPv6": 16,
	"Int256": 32, "UInt256": 32,
}

// maxTypeDepth bounds the nesting of a parsed type (and the recursion of
// parseNativeType and skip); the engine's types are far shallower.
const maxTypeDepth = 32

var errUnsupportedType = errors.New("unsupported column type")

// parseNativeType parses a column type as ClickHouse names it in Native
// data: a name, optionally followed by arguments in parentheses separated
// by ", " (splitTypeArgs). It accepts only the spellings ClickHouse writes
// and clickhouse-go echoes back unchanged (Bool, not Boolean; FixedString(16),
// not FixedString(016)), so that copying the type string gives the bytes
// reencodeNative writes. Types it does not know — Variant, Dynamic, JSON,
// Object, AggregateFunction, SimpleAggregateFunction, Nothing, Nested, Time,
// Interval, the geo types, … — are errUnsupportedType.
func parseNativeType(s string, depth int) (*nativeType, error) {
	if depth > maxTypeDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", errUnsupportedType, maxTypeDepth)
	}
	name, args, err := splitType(s)
	if err != nil {
		return nil, fmt.Errorf("type %q: %w", s, err)
	}
	fixed := func(width uint64, ok bool) (*nativeType, error) {
		if !ok {
			return nil, fmt.Errorf("%w: %q: bad arguments", errUnsupportedType, s)
		}
		return &nativeType{kind: kindFixed, width: width}, nil
	}
	if w, ok := fixedWidths[name]; ok {
		// DateTime('tz') is the one with an (optional) argument.
		return fixed(w, args == nil || (name == "DateTime" && len(args) == 1 && isQuoted(args[0])))
	}
	switch name {
	case "String":
		if args != nil {
			break
		}
		return &nativeType{kind: kindString}, nil
	case "FixedString":
		n, ok := canonicalUint(args, 0, 1<<30)
		return fixed(n, ok && n > 0 && len(args) == 1)
	case "DateTime64":
		_, ok := canonicalUint(args, 0, 9)
		return fixed(8, ok && (len(args) == 1 || len(args) == 2 && isQuoted(args[1])))
	case "Decimal":
		p, ok := canonicalUint(args, 0, 76)
		if !ok || p == 0 || len(args) != 2 {
			return fixed(0, false)
		}
		_, ok = canonicalUint(args, 1, p)
		return fixed(decimalWidth(p), ok)
	case "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		d := decimalN[name]
		_, ok := canonicalUint(args, 0, d.maxScale)
		return fixed(d.width, ok && len(args) == 1)
	case "Enum8":
		return fixed(1, enumArgs(args, 1<<7))
	case "Enum16":
		return fixed(2, enumArgs(args, 1<<15))
	case "Nullable", "Array", "LowCardinality":
		if len(args) != 1 {
			break
		}
		e, err := parseNativeType(args[0], depth+1)
		if err != nil {
			return nil, err
		}
		switch name {
		case "Nullable": // of a plain type only
			if e.kind != kindFixed && e.kind != kindString {
				break
			}
			return &nativeType{kind: kindNullable, elems: []*nativeType{e}}, nil
		case "Array":
			return &nativeType{kind: kindArray, elems: []*nativeType{e}, prefixes: e.prefixes}, nil
		case "LowCardinality": // of a plain type or a Nullable one
			if e.kind == kindNullable {
				e = e.elems[0]
			}
			if e.kind != kindFixed && e.kind != kindString {
				break
			}
			return &nativeType{kind: kindLowCardinality, elems: []*nativeType{e}, prefixes: 1}, nil
		}
	case "Map":
		if len(args) != 2 {
			break
		}
		nt := &nativeType{kind: kindMap}
		for _, a := range args {
			e, err := parseNativeType(a, depth+1)
			if err != nil {
				return nil, err
			}
			nt.elems = append(nt.elems, e)
			nt.prefixes += e.prefixes
		}
		return nt, nil
	case "Tuple":
		if len(args) == 0 {
			break
		}
		nt := &nativeType{kind: kindTuple}
		for _, a := range args {
			e, err := parseNativeType(tupleElementType(a), depth+1)
			if err != nil {
				return nil, err
			}
			nt.elems = append(nt.elems, e)
			nt.prefixes += e.prefixes
		}
		return nt, nil
	}
	return nil, fmt.Errorf("%w: %q", errUnsupportedType, s)
}

// decimalN are the widths and largest scales of DecimalN(S).
var decimalN = map[string]struct{ width, maxScale uint64 }{
	"Decimal32": {4, 9}, "Decimal64": {8, 18}, "Decimal128": {16, 38}, "Decimal256": {32, 76},
}

// decimalWidth is the width of Decimal(p, s): Decimal32 up to precision 9,
// Decimal64 to 18, Decimal128 to 38, Decimal256 to 76.
func decimalWidth(p uint64) uint64 {
	switch {
	case p <= 9:
		return 4
	case p <= 18:
		return 8
	case p <= 38:
		return 16
	}
	return 32
}

// splitType splits a type into its name and arguments: "Map(String, UInt64)"
// is "Map" and ["String", "UInt64"]; a type without parentheses has nil
// arguments.
func splitType(s string) (name string, args []string, err error) {
	i := strings.IndexByte(s, '(')
	if i < 0 {
		return s, nil, nil
	}
	if i == 0 || s[len(s)-1] != ')' {
		return "", nil, errors.New("unbalanced parentheses")
	}
	args, err = splitTypeArgs(s[i+1 : len(s)-1])
	return s[:i], args, err
}

// splitTypeArgs splits a type's argument list at the commas outside
// parentheses and quotes ('…', "…", `…`, with backslash escapes). The
// arguments must be separated by ", " and be otherwise unpadded and not
// empty, as ClickHouse writes them.
func splitTypeArgs(s string) ([]string, error) {
	var args []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'', '"', '`':
			end := quotedEnd(s, i)
			if end < 0 {
				return nil, errors.New("unterminated quote")
			}
			i = end
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return nil, errors.New("unbalanced parentheses")
			}
			depth--
		case ',':
			if depth == 0 {
				args = append(args, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, errors.New("unbalanced parentheses")
	}
	args = append(args, s[start:])
	for k, a := range args {
		if k > 0 {
			if !strings.HasPrefix(a, " ") {
				return nil, errors.New(`arguments not separated by ", "`)
			}
			a = a[1:]
			args[k] = a
		}
		if a == "" || a[0] == ' ' || a[len(a)-1] == ' ' {
			return nil, errors.New("empty or padded argument")
		}
	}
	return args, nil
}

// quotedEnd returns the index of the quote closing the one at s[i], or -1.
func quotedEnd(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j
		}
	}
	return -1
}

// isQuoted reports whether s is one single-quoted string literal.
func isQuoted(s string) bool {
	return len(s) >= 2 && s[0] == '\'' && quotedEnd(s, 0) == len(s)-1
}

// canonicalUint parses args[i] as a decimal integer written without sign,
// padding or leading zeros, at most max.
func canonicalUint(args []string, i int, max uint64) (uint64, bool) {
	if i >= len(args) {
		return 0, false
	}
	a := args[i]
	if a == "" || len(a) > 10 || (len(a) > 1 && a[0] == '0') {
		return 0, false
	}
	var v uint64
	for _, c := range []byte(a) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, v <= max
}

// enumArgs reports whether args are Enum elements as ClickHouse writes
// them, 'name' = value, with -limit <= value < limit.
func enumArgs(args []string, limit uint64) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		if a == "" || a[0] != '\'' {
			return false
		}
		end := quotedEnd(a, 0)
		if end < 0 || !strings.HasPrefix(a[end+1:], " = ") {
			return false
		}
		num := a[end+4:]
		neg := strings.HasPrefix(num, "-")
		num = strings.TrimPrefix(num, "-")
		v, ok := canonicalUint([]string{num}, 0, limit)
		if !ok || (!neg && v == limit) || (neg && v == 0) {
			return false
		}
	}
	return true
}

// tupleElementType strips the name of a named Tuple element ("a String",
// "`my col` String"): the part before the first space outside parentheses
// and quotes. An unnamed element is returned as it is.
func tupleElementType(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'', '"', '`':
			if end := quotedEnd(s, i); end >= 0 {
				i = end
			} else {
				return s
			}
		case '(':
			depth++
		case ')':
			depth--
		case ' ':
			if depth == 0 {
				return s[i+1:]
			}
		}
	}
	return s
}
