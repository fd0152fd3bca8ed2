package main

import (
	"bufio"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// formatDecisions are n decisions shaped like real ones (every string
// column set, a recorded input with quotes and newlines, verdicts).
func formatDecisions(n int) []audit.Decision {
	out := make([]audit.Decision, n)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range out {
		out[i] = audit.Decision{
			Timestamp: t0.Add(time.Duration(i) * time.Millisecond), InsertedAt: t0.Add(time.Duration(i)*time.Millisecond + time.Second),
			TraceID: fmt.Sprintf("%032x", i), SpanID: fmt.Sprintf("%016x", i), ServiceName: "agent-svc", Agent: fmt.Sprintf("agent-%02d", i%40),
			RunID: fmt.Sprintf("run-%d", i/50), ToolName: "bash", ToolCallID: fmt.Sprintf("call_%d", i), Gated: true, Action: "deny",
			Reason: "rm -rf ~: deletes the home directory [delete.root-home]", Source: "classify", RiskLevel: "high", Stage: "gate",
			Rule: "delete.root-home", Calls: 1, DurationNs: 123456, Input: `{"command":"rm -rf ~ && echo \"done\"\nexit"}`,
			Verdicts: []string{"bash:deny", "policy:allow"},
		}
	}
	return out
}

// BenchmarkExportFormat: auditq export's per-decision formatting alone
// (CSV and JSON Lines into a discarded buffer), rows/s, with exportWriter
// and with the per-row record it replaced.
func BenchmarkExportFormat(b *testing.B) {
	ds := formatDecisions(10000)
	for _, format := range []string{"csv", "jsonl"} {
		for _, way := range []string{"record", "writer"} {
			b.Run(format+"/"+way, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					bw := bufio.NewWriter(io.Discard)
					if err := writeExportRows(bw, format, ds, time.UTC, way == "record"); err != nil {
						b.Fatal(err)
					}
					bw.Flush()
				}
				b.ReportMetric(float64(b.N*len(ds))/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
