package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// interruptedFixture is the fixture plus copies of its first allowed call
// (coder's bash at 10:00:00.1): two as the spool uploads an interrupted
// call (status Error, audit.InterruptedStatus,
// toolgate.call.interrupted=true) and look-alikes that are not one.
func interruptedFixture(t *testing.T) (spans []audittest.Span, interrupted []string) {
	t.Helper()
	spans = audittest.Fixture()
	var allowed audittest.Span
	for _, s := range spans {
		if s.SpanID == "a1a1a1a1a1a1a101" {
			allowed = s
		}
	}
	require.NotEmpty(t, allowed.SpanID)
	for _, c := range []struct {
		span, status, message string
		interrupted           bool
	}{
		{"e5e5e5e5e5e5e501", "Error", audit.InterruptedStatus, true},
		{"e5e5e5e5e5e5e502", "Error", "tool failed: exit status 1", false},
		{"e5e5e5e5e5e5e503", "Unset", audit.InterruptedStatus, false},
		{"e5e5e5e5e5e5e504", "Error", audit.InterruptedStatus + " (retried)", false},
		{"e5e5e5e5e5e5e505", "Error", audit.InterruptedStatus, true},
	} {
		s := allowed
		s.Attrs = map[attribute.Key]string{}
		for k, v := range allowed.Attrs {
			s.Attrs[k] = v
		}
		if c.interrupted {
			s.Attrs["toolgate.call.interrupted"] = "true"
			interrupted = append(interrupted, c.span)
		}
		s.SpanID, s.Status, s.StatusMessage = c.span, c.status, c.message
		spans = append(spans, s)
	}
	return spans, interrupted
}

// `auditq decisions --interrupted` lists exactly the interrupted calls;
// json, jsonl and csv say "interrupted" for every decision, and the table
// marks the ACTION of an interrupted call.
func TestInterruptedFlagAndField(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	spans, want := interruptedFixture(t)
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, spans))
	reader := []string{"--dsn", env.ReaderDSN, "--since", "2026-11-28T00:00:00Z", "--until", "2026-11-29T00:00:00Z", "--utc"}
	auditq := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		code, stderr := execAuditq(t, ctx, &out, append(args, reader...)...)
		require.Equal(t, 0, code, stderr)
		return out.String()
	}
	type row struct {
		SpanID      string `json:"span_id"`
		Interrupted *bool  `json:"interrupted"`
	}
	flags := func(rows []row) map[string]bool {
		out := map[string]bool{}
		for _, r := range rows {
			require.NotNil(t, r.Interrupted, "every decision has the field: %s", r.SpanID)
			out[r.SpanID] = *r.Interrupted
		}
		return out
	}
	isWanted := func(span string) bool { return strings.Contains(strings.Join(want, " "), span) }

	t.Run("json", func(t *testing.T) {
		var rows []row
		require.NoError(t, json.Unmarshal([]byte(auditq("decisions", "-o", "json", "--interrupted")), &rows))
		got := flags(rows)
		assert.Len(t, got, len(want))
		for _, s := range want {
			assert.True(t, got[s], s)
		}
		rows = nil
		require.NoError(t, json.Unmarshal([]byte(auditq("decisions", "-o", "json")), &rows))
		got = flags(rows)
		assert.Len(t, got, len(spans)-4, "every decision (the fixture has 3 invoke_agent spans and 1 chat span)")
		for span, v := range got {
			assert.Equal(t, isWanted(span), v, span)
		}
	})
	t.Run("jsonl", func(t *testing.T) {
		var rows []row
		for _, line := range strings.Split(strings.TrimSpace(auditq("decisions", "-o", "jsonl", "--interrupted")), "\n") {
			var r row
			require.NoError(t, json.Unmarshal([]byte(line), &r))
			rows = append(rows, r)
		}
		got := flags(rows)
		assert.Len(t, got, len(want))
		for _, s := range want {
			assert.True(t, got[s], s)
		}
	})
	t.Run("csv", func(t *testing.T) {
		recs, err := csv.NewReader(strings.NewReader(auditq("decisions", "-o", "csv"))).ReadAll()
		require.NoError(t, err)
		col := map[string]int{}
		for i, k := range recs[0] {
			col[k] = i
		}
		require.Contains(t, col, "interrupted")
		for _, r := range recs[1:] {
			span := r[col["span_id"]]
			assert.Equal(t, map[bool]string{true: "true", false: "false"}[isWanted(span)], r[col["interrupted"]], span)
		}
	})
	t.Run("table", func(t *testing.T) {
		table := auditq("decisions", "--interrupted")
		lines := strings.Split(strings.TrimSpace(table), "\n")
		require.Len(t, lines, 1+len(want), table)
		for _, l := range lines[1:] {
			assert.Contains(t, l, "allow (interrupted)", table)
		}
		all := auditq("decisions")
		assert.Equal(t, len(want), strings.Count(all, "(interrupted)"), all)
	})
	t.Run("stats and filters combine", func(t *testing.T) {
		assert.Equal(t, "agent,count,denied\ncoder,2,0\n", auditq("stats", "--by", "agent", "--interrupted", "-o", "csv"))
		assert.Equal(t, "[]\n", auditq("decisions", "--interrupted", "--agent", "ops", "-o", "json"))
	})
}
