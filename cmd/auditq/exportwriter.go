package main

import (
	"bufio"
	"encoding/csv"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// exportWriter writes records of one struct type as JSON Lines or CSV
// rows, the way structRecord with record.MarshalJSON and csvRow render
// them, without building a record per row: the fields to write (json
// tags, declaration order, the kinds structRecord keeps) are found once,
// and every row is appended into one reused buffer. TestExportWriterEqualsRecords
// holds both ways equal, byte for byte, on hostile values.
type exportWriter struct {
	fields []exportField
	loc    *time.Location
	buf    []byte
	cells  []string
}

// exportField is one written field: its index in the struct, its name
// (quoted for JSON), and its kind.
type exportField struct {
	index  int
	name   string
	quoted string
	kind   reflect.Kind // String, Bool, Uint64, Int, Struct (time.Time), Slice ([]string)
}

// newExportWriter plans the fields of t (a struct type) as structRecord
// does.
func newExportWriter(t reflect.Type, loc *time.Location) *exportWriter {
	w := &exportWriter{loc: loc}
	timeType, stringsType := reflect.TypeFor[time.Time](), reflect.TypeFor[[]string]()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		var kind reflect.Kind
		switch {
		case f.Type == timeType:
			kind = reflect.Struct
		case f.Type == stringsType:
			kind = reflect.Slice
		case f.Type.Kind() == reflect.String && f.Type.Name() == "string",
			f.Type.Kind() == reflect.Bool && f.Type.Name() == "bool",
			f.Type.Kind() == reflect.Uint64 && f.Type.Name() == "uint64",
			f.Type.Kind() == reflect.Int && f.Type.Name() == "int":
			kind = f.Type.Kind()
		default:
			continue // structRecord skips the other types
		}
		w.fields = append(w.fields, exportField{index: i, name: name, quoted: string(appendJSONString(nil, name)), kind: kind})
	}
	w.cells = make([]string, len(w.fields))
	return w
}

// header is the CSV header: the field names.
func (w *exportWriter) header() []string {
	out := make([]string, len(w.fields))
	for i, f := range w.fields {
		out[i] = f.name
	}
	return out
}

// jsonl writes v (of the planned type) as one JSON object and a newline.
func (w *exportWriter) jsonl(bw *bufio.Writer, v any) error {
	rv := reflect.ValueOf(v)
	b := append(w.buf[:0], '{')
	for i, f := range w.fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, f.quoted...)
		b = append(b, ':')
		fv := rv.Field(f.index)
		switch f.kind {
		case reflect.String:
			b = appendJSONString(b, fv.String())
		case reflect.Bool:
			b = strconv.AppendBool(b, fv.Bool())
		case reflect.Uint64:
			b = strconv.AppendUint(b, fv.Uint(), 10)
		case reflect.Int:
			b = strconv.AppendInt(b, fv.Int(), 10)
		case reflect.Struct:
			b = appendJSONString(b, timeValue(fv.Interface().(time.Time), w.loc))
		case reflect.Slice:
			b = appendJSONStrings(b, fv.Interface().([]string))
		}
	}
	b = append(b, '}', '\n')
	w.buf = b
	_, err := bw.Write(b)
	return err
}

// csvRow writes v as one CSV row.
func (w *exportWriter) csvRow(cw *csv.Writer, v any) error {
	rv := reflect.ValueOf(v)
	for i, f := range w.fields {
		fv := rv.Field(f.index)
		switch f.kind {
		case reflect.String:
			w.cells[i] = fv.String()
		case reflect.Bool:
			w.cells[i] = strconv.FormatBool(fv.Bool())
		case reflect.Uint64:
			w.cells[i] = strconv.FormatUint(fv.Uint(), 10)
		case reflect.Int:
			w.cells[i] = strconv.FormatInt(fv.Int(), 10)
		case reflect.Struct:
			w.cells[i] = timeValue(fv.Interface().(time.Time), w.loc)
		case reflect.Slice:
			w.cells[i] = string(appendJSONStrings(nil, fv.Interface().([]string)))
		}
	}
	return cw.Write(w.cells)
}

// appendJSONStrings appends list as a JSON array of strings (nil as []).
func appendJSONStrings(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json
// encodes a string with SetEscapeHTML(false) (Go 1.26 encode.go
// appendString): `"` and `\` escaped, \b \f \n \r \t short, other
// control bytes \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped (JavaScript line terminators).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
