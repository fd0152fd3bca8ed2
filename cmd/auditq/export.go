package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/audit"
)

// exportProgress is how many decisions export writes between progress bar
// updates.
const exportProgress = 10000

func newExportCmd(io stdio) *cobra.Command {
	var (
		conn   connFlags
		out    outFlags
		filt   filterFlags
		output string
	)
	formats := []string{formatCSV, formatJSONL}
	cmd := &cobra.Command{
		Use:   "export --output FILE",
		Short: "Write decisions to a CSV or JSON Lines file",
		Long: `export writes every decision matching the filters, newest first, to a CSV
or JSON Lines file (the same fields as decisions --format csv|jsonl; see
docs/auditq.md). It reads the store in one streamed query, so any range fits
in bounded memory at the same rows/s from start to end; on a
terminal it shows a progress bar on stderr. The file is written under a
temporary name and renamed when complete, so a failed export leaves no
partial file. --output - writes to stdout.`,
		Example: `  auditq export --since 7d --format csv --output decisions-week.csv
  auditq export --since 2026-11-01T00:00:00Z --until 2026-12-01T00:00:00Z --action deny --format jsonl --output denials-nov.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(formats...); err != nil {
				return err
			}
			if output == "" {
				return usagef("export: --output FILE is required (- for stdout)")
			}
			f, err := filt.filter(time.Now())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			st, err := conn.open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			return explain(runExport(ctx, st, f, out, output, io), conn.database)
		},
	}
	conn.add(cmd)
	out.add(cmd, formats...)
	cmd.Flags().Lookup("format").DefValue = formatCSV
	out.format = formatCSV
	filt.add(cmd, true, "24h")
	cmd.Flags().StringVar(&output, "output", "", "file to write (- for stdout)")
	return cmd
}

func runExport(ctx context.Context, st *audit.Store, f audit.Filter, o outFlags, output string, sio stdio) (err error) {
	var w io.Writer = sio.out
	var tmp *os.File
	if output != "-" {
		tmp, err = os.CreateTemp(filepath.Dir(output), "."+filepath.Base(output)+".*.tmp")
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer func() {
			if err != nil {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}()
		w = tmp
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	progress := detectTerminal(sio.err, true)
	var total uint64
	if progress.tty {
		s, err := st.Stats(ctx, audit.StatsQuery{Filter: f})
		if err != nil {
			return err
		}
		total = s.Total
	}
	var written uint64
	header := true
	var cw *csv.Writer
	if o.format == formatCSV {
		cw = newCSV(bw)
	}
	ew := newExportWriter(reflect.TypeFor[audit.Decision](), o.location())
	err = st.Export(ctx, f, nil, func(d audit.Decision) error {
		if cw != nil {
			if header {
				header = false
				if err := cw.Write(ew.header()); err != nil {
					return err
				}
			}
			if err := ew.csvRow(cw, d); err != nil {
				return err
			}
		} else if err := ew.jsonl(bw, d); err != nil {
			return err
		}
		written++
		if progress.tty && written%exportProgress == 0 {
			fmt.Fprintf(sio.err, "\r%s", progressBar(written, total, 30))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	if progress.tty {
		fmt.Fprintf(sio.err, "\r%s", progressBar(written, total, 30))
	}
	if header && o.format == formatCSV {
		cw := newCSV(bw)
		if err := cw.Write(structRecord(audit.Decision{}, o.location()).keys); err != nil {
			return err
		}
		cw.Flush()
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if progress.tty {
		fmt.Fprintln(sio.err)
	}
	if tmp != nil {
		if err := tmp.Sync(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := tmp.Close(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := os.Rename(tmp.Name(), output); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		fmt.Fprintf(sio.err, "auditq: exported %d decisions to %s\n", written, output)
	}
	return nil
}

// progressBar renders "[#####     ] 1234/5000 (24%)".
func progressBar(done, total uint64, width int) string {
	if total == 0 {
		return fmt.Sprintf("%d decisions", done)
	}
	done = min(done, total)
	n := int(done * uint64(width) / total)
	return fmt.Sprintf("[%s%s] %d/%d (%d%%)", strings.Repeat("#", n), strings.Repeat(" ", width-n), done, total, done*100/total)
}
