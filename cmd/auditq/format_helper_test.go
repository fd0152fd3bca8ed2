package main

import (
	"bufio"
	"reflect"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// writeExportRows formats ds as export does (the format benchmark's one
// way in); reflective selects the per-row record path export used
// before exportWriter, for the before/after ratio.
func writeExportRows(bw *bufio.Writer, format string, ds []audit.Decision, loc *time.Location, reflective bool) error {
	ew := newExportWriter(reflect.TypeFor[audit.Decision](), loc)
	if format == "csv" {
		cw := newCSV(bw)
		for _, d := range ds {
			var err error
			if reflective {
				err = cw.Write(structRecord(d, loc).csvRow())
			} else {
				err = ew.csvRow(cw, d)
			}
			if err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	for _, d := range ds {
		var err error
		if reflective {
			err = writeJSONL(bw, structRecord(d, loc))
		} else {
			err = ew.jsonl(bw, d)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
