package chserve

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"
	"pgregory.net/rapid"
)

// propType is a drawn column type: name is what the query asks for, gen
// what generateRandom makes for it (the same, but for types it cannot
// generate: BFloat16 is made as Float32, Dynamic as Int64, … and CAST), and
// supported whether transcodeNative must handle it.
type propType struct {
	name, gen string
	supported bool
}

func same(name string) propType { return propType{name: name, gen: name, supported: true} }

// wrap applies a type constructor to the element types.
func wrap(ctor string, elems ...propType) propType {
	p := propType{supported: true}
	names, gens := make([]string, len(elems)), make([]string, len(elems))
	for i, e := range elems {
		names[i], gens[i] = e.name, e.gen
		p.supported = p.supported && e.supported
	}
	p.name = ctor + "(" + strings.Join(names, ", ") + ")"
	p.gen = ctor + "(" + strings.Join(gens, ", ") + ")"
	return p
}

var (
	// plainTypes are the fixed-width types without arguments.
	plainTypes = []string{"Int8", "Int16", "Int32", "Int64", "Int128", "Int256", "UInt8", "UInt16", "UInt32", "UInt64",
		"UInt128", "UInt256", "Float32", "Float64", "Bool", "Date", "Date32", "DateTime", "UUID", "IPv4", "IPv6"}
	timeZones = []string{"UTC", "Asia/Kolkata", "America/New_York"}
	// enumTypes have labels with the characters the type parser must
	// respect: commas, parentheses, escaped quotes, spaces.
	enumTypes = []string{
		`Enum8('a' = 1, 'b,c' = -2, 'it\'s (x)' = 127)`,
		`Enum8('only' = -128)`,
		`Enum16('x' = -32768, 'y = 1, z' = 1000, '\\' = 32767)`,
	}
	// lowCardinalityInner are the types LowCardinality accepts (numbers
	// with allow_suspicious_low_cardinality_types).
	lowCardinalityInner = []string{"String", "FixedString(3)", "UInt8", "UInt16", "Int32", "UInt64", "Int128", "Float64",
		"Date", "Date32", "DateTime", "UUID", "IPv6", "Bool"}
	// mapKeys are types a Map key may have, but for those clickhouse-go
	// (reencodeNative) refuses: IPv4, IPv6, Array, Tuple
	// (TestTranscodeBeyondReencode).
	mapKeys = []string{"String", "LowCardinality(String)", "FixedString(2)", "Int8", "UInt64", "Int256", "Date", "Date32", "DateTime",
		"DateTime64(3)", "UUID", "Bool", "Float64", "Decimal(9, 2)", `Enum8('a' = 1, 'b' = 2)`}
	// tupleNames are element names; clickhouse-go cannot read names with
	// spaces (TestTranscodeBeyondReencode).
	tupleNames = []string{"a", "b_1", "`values`", "`from`"}
	// unsupportedTypes are types transcodeNative leaves to reencodeNative,
	// with what generateRandom makes for them.
	unsupportedTypes = []propType{
		{name: "Variant(String, UInt64)", gen: "UInt64"},
		{name: "Dynamic", gen: "Int64"},
		{name: "Time", gen: "Int32"},
		{name: "IntervalDay", gen: "Int64"},
		{name: "Point", gen: "Point"},
		{name: "Ring", gen: "Ring"},
		{name: "SimpleAggregateFunction(sum, UInt64)", gen: "SimpleAggregateFunction(sum, UInt64)"},
		{name: "Tuple()", gen: "Tuple()"},
	}
)

// drawScalar draws a fixed-width type or String: what Nullable takes.
func drawScalar(t *rapid.T, label string) propType {
	switch rapid.IntRange(0, 9).Draw(t, label) {
	case 0:
		return same("String")
	case 1:
		return same(fmt.Sprintf("FixedString(%d)", rapid.IntRange(1, 40).Draw(t, label+"-n")))
	case 2:
		p := rapid.IntRange(1, 76).Draw(t, label+"-p")
		return same(fmt.Sprintf("Decimal(%d, %d)", p, rapid.IntRange(0, p).Draw(t, label+"-s")))
	case 3:
		n := rapid.SampledFrom([]int{32, 64, 128, 256}).Draw(t, label+"-bits")
		return same(fmt.Sprintf("Decimal%d(%d)", n, rapid.IntRange(0, map[int]int{32: 9, 64: 18, 128: 38, 256: 76}[n]).Draw(t, label+"-s")))
	case 4:
		p := rapid.IntRange(0, 9).Draw(t, label+"-p")
		if rapid.Bool().Draw(t, label+"-tz?") {
			return same(fmt.Sprintf("DateTime64(%d, '%s')", p, rapid.SampledFrom(timeZones).Draw(t, label+"-tz")))
		}
		return same(fmt.Sprintf("DateTime64(%d)", p))
	case 5:
		return same(fmt.Sprintf("DateTime('%s')", rapid.SampledFrom(timeZones).Draw(t, label+"-tz")))
	case 6:
		return same(rapid.SampledFrom(enumTypes).Draw(t, label+"-enum"))
	case 7:
		return propType{name: "BFloat16", gen: "Float32", supported: true}
	}
	return same(rapid.SampledFrom(plainTypes).Draw(t, label+"-plain"))
}

// drawType draws a column type nested at most depth levels deep.
func drawType(t *rapid.T, depth int, label string) propType {
	top := 3
	if depth > 0 {
		top = 7
	}
	switch rapid.IntRange(0, top).Draw(t, label) {
	case 0:
		return drawScalar(t, label+"-scalar")
	case 1:
		return wrap("Nullable", drawScalar(t, label+"-nullable"))
	case 2:
		inner := rapid.SampledFrom(lowCardinalityInner).Draw(t, label+"-lc")
		p := same(inner)
		if rapid.Bool().Draw(t, label+"-lc-null") {
			p = wrap("Nullable", p)
		}
		return wrap("LowCardinality", p)
	case 3:
		if rapid.IntRange(0, 9).Draw(t, label+"-unsupported?") == 0 {
			return rapid.SampledFrom(unsupportedTypes).Draw(t, label+"-unsupported")
		}
		return drawScalar(t, label+"-scalar")
	case 4, 5:
		return wrap("Array", drawType(t, depth-1, label+"-array"))
	case 6:
		return wrap("Map", same(rapid.SampledFrom(mapKeys).Draw(t, label+"-key")), drawType(t, depth-1, label+"-value"))
	}
	n := rapid.IntRange(1, 3).Draw(t, label+"-tuple")
	named := rapid.Bool().Draw(t, label+"-named")
	elems := make([]propType, n)
	for i := range elems {
		elems[i] = drawType(t, depth-1, fmt.Sprintf("%s-elem%d", label, i))
		if named {
			name := tupleNames[i]
			elems[i].name, elems[i].gen = name+" "+elems[i].name, name+" "+elems[i].gen
		}
	}
	return wrap("Tuple", elems...)
}

// sqlString quotes s as a ClickHouse string literal.
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// TestTranscodeMatchesReencode is the transcoder's contract as a property,
// on the real engine: for columns of random types (every supported kind,
// nested up to three levels, and some unsupported ones) filled by
// generateRandom, in one or several blocks (max_block_size), with short
// and long strings and empty or filled arrays, transcodeNative gives
// reencodeNative's bytes whenever it handles the result; it handles every
// result of supported types with rows; and it never handles one with an
// unsupported type.
func TestTranscodeMatchesReencode(t *testing.T) {
	conn := testEngine(t)
	handled, severalBlocks := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		cols := make([]propType, rapid.IntRange(1, 3).Draw(t, "columns"))
		supported := true
		var structure, selects []string
		for i := range cols {
			c := drawType(t, 3, fmt.Sprintf("c%d", i))
			cols[i] = c
			supported = supported && c.supported
			structure = append(structure, fmt.Sprintf("c%d %s", i, c.gen))
			if c.gen == c.name {
				selects = append(selects, fmt.Sprintf("c%d", i))
			} else {
				selects = append(selects, fmt.Sprintf("CAST(c%d AS %s) AS c%d", i, c.name, i))
			}
		}
		rows := rapid.IntRange(0, 400).Draw(t, "rows")
		sql := fmt.Sprintf("SELECT %s FROM generateRandom(%s, %d, %d, %d) LIMIT %d SETTINGS max_block_size = %d, allow_suspicious_low_cardinality_types = 1",
			strings.Join(selects, ", "), sqlString(strings.Join(structure, ", ")),
			rapid.Uint32().Draw(t, "seed"), rapid.SampledFrom([]int{0, 16, 300}).Draw(t, "max_string_length"),
			rapid.SampledFrom([]int{0, 1, 4}).Draw(t, "max_array_length"), rows,
			rapid.SampledFrom([]int{1, 3, 64, 65409}).Draw(t, "max_block_size"))
		res, err := conn.Query([]byte(sql), "Native")
		if err != nil {
			if supported {
				t.Fatalf("the engine refuses supported types: %v\n%s", err, sql)
			}
			t.Skipf("the engine refuses: %v", err)
		}
		data := res.Data
		if supported && rapid.Bool().Draw(t, "a block without rows") {
			// As the engine writes one (a FINAL read over several parts, an
			// empty result's header): names, types, state prefixes.
			var names, types []string
			for i, c := range cols {
				names, types = append(names, fmt.Sprintf("c%d", i)), append(types, c.name)
			}
			empty := emptyBlockAtZero(t, names, types)
			if rapid.Bool().Draw(t, "before the rows") {
				data = append(empty, data...)
			} else {
				data = append(bytes.Clone(data), empty...)
			}
		}
		revision := rapid.SampledFrom(transcodeRevisions).Draw(t, "revision")
		want, werr := reencodeNative(data, revision)
		got, gerr := transcodeNative(data, revision)
		switch {
		case gerr != nil && !errors.Is(gerr, errNotHandled):
			t.Fatalf("error not wrapping errNotHandled: %v", gerr)
		case gerr == nil && werr != nil:
			t.Fatalf("transcodeNative handles what reencodeNative refuses (%v)\n%s", werr, sql)
		case gerr == nil:
			requireSameBytes(t, want, got, sql)
			handled++
			if bytes.Count(got, blockInfo) > 1 {
				severalBlocks++ // or BlockInfo's bytes in the data: a rough count
			}
		case supported && rows > 0:
			t.Fatalf("not handled: %v\n%s", gerr, sql)
		}
		if !supported && gerr == nil && len(data) > 0 {
			t.Fatalf("handled a result with an unsupported type\n%s", sql)
		}
	})
	t.Logf("%d results handled, %d of them of several blocks", handled, severalBlocks)
	if handled == 0 || severalBlocks == 0 {
		t.Error("the property did not reach handled results of one and of several blocks")
	}
}

// emptyBlockAtZero is a block without rows at revision 0, written as
// emptyNativeHeader writes one (clickhouse-go's columns' state prefixes).
func emptyBlockAtZero(t *rapid.T, names, types []string) []byte {
	sc := column.ServerContext{Timezone: time.UTC}
	block := proto.Block{ServerContext: &sc}
	for i := range names {
		if err := block.AddColumn(names[i], column.Type(types[i])); err != nil {
			t.Skipf("clickhouse-go does not know %s: %v", types[i], err)
		}
	}
	var buf chproto.Buffer
	if err := block.EncodeHeader(&buf, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range block.Columns {
		buf.PutString(c.Name())
		buf.PutString(string(c.Type()))
		if cs, ok := c.(column.CustomSerialization); ok {
			if err := cs.WriteStatePrefix(&buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	return buf.Buf
}
