package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// record is one output object with its fields in a stable order; json,
// jsonl and csv all render records, so they share field names and order.
type record struct {
	keys   []string
	values []any
}

func (r *record) set(k string, v any) {
	r.keys = append(r.keys, k)
	r.values = append(r.values, v)
}

// MarshalJSON keeps the field order. One encoder writes every value into
// the output (its trailing newline cut), so a record costs no encoder or
// buffer per field.
func (r record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, k := range r.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if err := enc.Encode(r.values[i]); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// csvRow renders the values as CSV cells.
func (r record) csvRow() []string {
	out := make([]string, len(r.values))
	for i, v := range r.values {
		switch x := v.(type) {
		case string:
			out[i] = x
		case bool:
			out[i] = strconv.FormatBool(x)
		case uint64:
			out[i] = strconv.FormatUint(x, 10)
		case int:
			out[i] = strconv.Itoa(x)
		case nil:
			out[i] = ""
		case []string:
			out[i] = jsonNoHTMLEscape(x)
		default:
			b, _ := json.Marshal(x)
			out[i] = string(b)
		}
	}
	return out
}

// jsonNoHTMLEscape renders v as JSON without escaping <, > and & (the
// way the json output writes values).
func jsonNoHTMLEscape(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// structRecord turns a struct with json tags into a record: fields in
// declaration order, times as RFC 3339 (nanoseconds) in loc, string
// slices as arrays (a JSON array in a csv cell; nil as empty), nested
// pointers and other slices skipped.
func structRecord(v any, loc *time.Location) record {
	var r record
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		fv := rv.Field(i)
		switch x := fv.Interface().(type) {
		case time.Time:
			r.set(name, timeValue(x, loc))
		case string, bool, uint64, int:
			r.set(name, x)
		case []string:
			if x == nil {
				x = []string{}
			}
			r.set(name, x)
		}
	}
	return r
}

// timeLayout is RFC 3339 with all nine fractional digits, so values sort
// as text and line up.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// timeValue renders a time for json/csv: RFC 3339 with nanoseconds in loc,
// "" for the zero time.
func timeValue(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format(timeLayout)
}
