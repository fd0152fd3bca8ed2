package audit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// interruptedCase is a copy of a fixture call with another span status.
type interruptedCase struct {
	span, status, message string
	interrupted           bool
}

// interruptedCases: the spool's interrupted record (status Error, the
// message InterruptedStatus, toolgate.call.interrupted=true) and
// look-alikes that are not one: another error, the message with more
// text, the message without the Error status (a producer that set only a
// description), a denial whose reason is the message.
func interruptedCases() []interruptedCase {
	return []interruptedCase{
		{"e5e5e5e5e5e5e501", "Error", audit.InterruptedStatus, true},
		{"e5e5e5e5e5e5e502", "Error", "tool failed: exit status 1", false},
		{"e5e5e5e5e5e5e503", "Error", audit.InterruptedStatus + " (retried)", false},
		{"e5e5e5e5e5e5e504", "Unset", audit.InterruptedStatus, false},
		{"e5e5e5e5e5e5e505", "Error", "denied: " + audit.InterruptedStatus, false},
		{"e5e5e5e5e5e5e506", "Error", audit.InterruptedStatus, true},
	}
}

// interruptedSpans are the fixture's spans plus one copy of its first
// allowed call per case, each with the case's span ID and status.
func interruptedSpans(t *testing.T) []audittest.Span {
	t.Helper()
	spans := audittest.Fixture()
	var allowed audittest.Span
	for _, s := range spans {
		if s.SpanID == "a1a1a1a1a1a1a101" {
			allowed = s
		}
	}
	require.NotEmpty(t, allowed.SpanID)
	for _, c := range interruptedCases() {
		s := allowed
		s.Attrs = map[attribute.Key]string{}
		for k, v := range allowed.Attrs {
			s.Attrs[k] = v
		}
		if c.interrupted {
			s.Attrs["toolgate.call.interrupted"] = "true"
		}
		s.SpanID, s.Status, s.StatusMessage = c.span, c.status, c.message
		s.Attrs["gen_ai.tool.call.id"] = "call_" + c.span
		spans = append(spans, s)
	}
	return spans
}

// Filter.Interrupted selects exactly the spool's interrupted records, and
// every decision read says whether it is one (Decision.Interrupted), in
// Decisions and Stats.
func TestInterruptedCalls(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, interruptedSpans(t)))
	st := env.Store

	var want []string
	wantFlag := map[string]bool{}
	for _, c := range interruptedCases() {
		wantFlag[c.span] = c.interrupted
		if c.interrupted {
			want = append(want, c.span)
		}
	}

	page, err := st.Decisions(ctx, audit.Filter{Interrupted: true}, audit.Page{})
	require.NoError(t, err)
	assert.ElementsMatch(t, want, spanIDs(page.Decisions))
	for _, d := range page.Decisions {
		assert.True(t, d.Interrupted, d.SpanID)
		assert.Equal(t, "allow", d.Action, "an interrupted call was allowed: its tool ran")
	}

	all, err := st.Decisions(ctx, audit.Filter{}, audit.Page{Limit: audit.MaxLimit})
	require.NoError(t, err)
	require.Len(t, all.Decisions, audittest.FixtureDecisions+len(interruptedCases()))
	for _, d := range all.Decisions {
		assert.Equal(t, wantFlag[d.SpanID], d.Interrupted, d.SpanID)
	}

	// The filter combines with the others, and Stats counts by it.
	page, err = st.Decisions(ctx, audit.Filter{Interrupted: true, Agent: "reviewer"}, audit.Page{})
	require.NoError(t, err)
	assert.Empty(t, page.Decisions)
	s, err := st.Stats(ctx, audit.StatsQuery{Filter: audit.Filter{Interrupted: true}})
	require.NoError(t, err)
	require.Len(t, s.Rows, 1)
	assert.EqualValues(t, len(want), s.Rows[0].Count)
}
