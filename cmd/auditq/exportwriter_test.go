package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
)

// TestExportWriterEqualsRecords: for decisions with hostile values in
// every field (arbitrary bytes, invalid UTF-8, control characters,
// U+2028, quotes, nil and empty verdicts, zero and far times, any zone),
// exportWriter writes exactly the bytes structRecord with writeJSONL and
// csvRow do — the field plan and the JSON string encoder (which follows
// encoding/json) are held to the reflective path.
func TestExportWriterEqualsRecords(t *testing.T) {
	hostile := rapid.OneOf(
		rapid.String(),
		rapid.StringMatching(`[\x00-\x1f"\\<>&\x{2028}\x{2029}a-z]{0,12}`),
		rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) }),
	)
	rapid.Check(t, func(t *rapid.T) {
		var d audit.Decision
		rv := reflect.ValueOf(&d).Elem()
		for i := 0; i < rv.NumField(); i++ {
			f := rv.Field(i)
			name := rv.Type().Field(i).Name
			switch f.Interface().(type) {
			case string:
				f.SetString(hostile.Draw(t, name))
			case bool:
				f.SetBool(rapid.Bool().Draw(t, name))
			case uint64:
				f.SetUint(rapid.Uint64().Draw(t, name))
			case int:
				f.SetInt(int64(rapid.Int().Draw(t, name)))
			case time.Time:
				if rapid.Bool().Draw(t, name+" zero") {
					break
				}
				f.Set(reflect.ValueOf(time.Unix(rapid.Int64Range(-1<<40, 1<<40).Draw(t, name), rapid.Int64Range(0, 999999999).Draw(t, name+" ns"))))
			case []string:
				if rapid.Bool().Draw(t, name+" nil") {
					break
				}
				f.Set(reflect.ValueOf(rapid.SliceOf(hostile).Draw(t, name)))
			}
		}
		loc := rapid.SampledFrom([]*time.Location{time.UTC, time.FixedZone("X", -(9*3600 + 30*60)), time.Local}).Draw(t, "zone")

		var want, got bytes.Buffer
		ww, gw := bufio.NewWriter(&want), bufio.NewWriter(&got)
		if err := writeJSONL(ww, structRecord(d, loc)); err != nil {
			t.Fatal(err)
		}
		ew := newExportWriter(reflect.TypeOf(d), loc)
		if err := ew.jsonl(gw, d); err != nil {
			t.Fatal(err)
		}
		ww.Flush()
		gw.Flush()
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Fatalf("jsonl differs:\nrecord %q\nwriter %q", want.String(), got.String())
		}
		if !json.Valid(bytes.TrimSpace(got.Bytes())) {
			t.Fatalf("not JSON: %q", got.String())
		}

		want.Reset()
		got.Reset()
		wc, gc := newCSV(&want), newCSV(&got)
		if err := wc.Write(structRecord(audit.Decision{}, loc).keys); err != nil {
			t.Fatal(err)
		}
		if err := wc.Write(structRecord(d, loc).csvRow()); err != nil {
			t.Fatal(err)
		}
		if err := gc.Write(ew.header()); err != nil {
			t.Fatal(err)
		}
		if err := ew.csvRow(gc, d); err != nil {
			t.Fatal(err)
		}
		wc.Flush()
		gc.Flush()
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Fatalf("csv differs:\nrecord %q\nwriter %q", want.String(), got.String())
		}
	})
}
