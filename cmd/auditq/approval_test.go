package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
)

// Who let what through: `auditq decisions --approval approved` (and
// pending, --approver, --approval-id) lists the asks, with approver, the
// request ID and the wait in every format; `auditq stats --by approver`
// counts them with how long the answers took. Hostile approver names and
// request IDs come out as recorded (json, csv) and on one line (table).
func TestApprovalsOnTheRecord(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, append(audittest.Fixture(), audittest.ApprovalFixture()...)))
	window := []string{"--dsn", env.ReaderDSN, "--since", "2026-11-28T00:00:00Z", "--until", "2026-11-29T00:00:00Z", "--utc", "--agent", "deployer"}
	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		code, stderr := execAuditq(t, ctx, &out, append(args, window...)...)
		require.Equal(t, 0, code, stderr)
		return out.String()
	}
	type row struct {
		SpanID         string `json:"span_id"`
		Approval       string `json:"approval"`
		Approver       string `json:"approver"`
		ApprovalID     string `json:"approval_id"`
		ApprovalWaitMs uint64 `json:"approval_wait_ms"`
	}
	rows := func(args ...string) []row {
		t.Helper()
		var out []row
		require.NoError(t, json.Unmarshal([]byte(run(append([]string{"decisions", "-o", "json"}, args...)...)), &out))
		sort.Slice(out, func(i, j int) bool { return out[i].SpanID < out[j].SpanID })
		return out
	}
	const apr = "a9a9a9a9a9a9a9"
	hostile := gate.SafeText(audittest.ApprovalHostileApprover, gate.MaxNameBytes)
	hostileID := gate.SafeText(audittest.ApprovalHostileID, gate.MaxNameBytes)

	assert.Equal(t, []row{
		{apr + "01", "approved", "alice@example.com", "apr-1", 123000},
		{apr + "03", "approved", "bob", "apr-2", 3900000},
		{apr + "05", "approved", "terminal", "", 850},
		{apr + "06", "approved", hostile, hostileID, 1},
	}, rows("--approval", "approved"))
	assert.Equal(t, []row{{apr + "02", "pending", "inbox", "apr-2", 0}}, rows("--approval", "pending"))
	assert.Equal(t, []row{{apr + "07", "", "", "", 0}}, rows("--approval", "none"))
	got := rows("--approval-id", "apr-2")
	require.Len(t, got, 2, "the pending ask and the resumed call")
	assert.Equal(t, []string{"pending", "approved"}, []string{got[0].Approval, got[1].Approval})
	assert.Equal(t, []row{{apr + "06", "approved", hostile, hostileID, 1}}, rows("--approver", hostile))

	// csv: the approval columns are the last two.
	recs, err := csv.NewReader(strings.NewReader(run("decisions", "-o", "csv", "--approver", "bob"))).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 3)
	n := len(recs[0])
	assert.Equal(t, []string{"approval_id", "approval_wait_ms"}, recs[0][n-2:])
	var tail []string
	for _, r := range recs[1:] {
		tail = append(tail, strings.Join(r[n-2:], "="))
	}
	sort.Strings(tail)
	assert.Equal(t, []string{"apr-2=3900000", "apr-3=45000"}, tail)

	// The table: who answered and how long it took.
	table := run("decisions", "--approval", "approved")
	assert.Contains(t, table, "APPROVAL")
	assert.Contains(t, table, "approved by alice@example.com after 2m03s")
	assert.Contains(t, table, "approved by bob after 1h05m")
	assert.Contains(t, table, "approved by terminal after 850ms")
	assert.Len(t, strings.Split(strings.TrimSpace(table), "\n"), 5, "the hostile approver stays on one line:\n%s", table)
	assert.Contains(t, run("decisions", "--approval", "pending"), "pending by inbox")
	assert.NotContains(t, run("decisions", "--approval", "none"), "APPROVAL", "no ask on the page, no column")

	// stats --by approver, with the waits.
	var stats []struct {
		Approver  string `json:"approver"`
		Count     uint64 `json:"count"`
		Denied    uint64 `json:"denied"`
		Waited    uint64 `json:"waited"`
		AvgWaitMs uint64 `json:"avg_wait_ms"`
		MaxWaitMs uint64 `json:"max_wait_ms"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("stats", "--by", "approver", "-o", "json")), &stats))
	by := map[string][5]uint64{}
	for _, s := range stats {
		by[s.Approver] = [5]uint64{s.Count, s.Denied, s.Waited, s.AvgWaitMs, s.MaxWaitMs}
	}
	assert.Equal(t, map[string][5]uint64{
		"bob":               {2, 1, 2, 1972500, 3900000},
		"alice@example.com": {1, 0, 1, 123000, 123000},
		"inbox":             {1, 1, 0, 0, 0},
		"terminal":          {1, 0, 1, 850, 850},
		hostile:             {1, 0, 1, 1, 1},
		"":                  {1, 0, 0, 0, 0},
	}, by)
	assert.Equal(t, "approver,approval,count,denied,waited,avg_wait_ms,max_wait_ms\nbob,approved,1,0,1,3900000,3900000\n",
		run("stats", "--by", "approver,approval", "--approver", "bob", "--approval", "approved", "-o", "csv"))
	st := run("stats", "--by", "approver")
	for _, want := range []string{"APPROVER", "WAITED", "AVG WAIT", "MAX WAIT", "32m52s", "1h05m", "TOTAL"} {
		assert.Contains(t, st, want)
	}
	// Without an approval dimension, stats are as they were.
	assert.Equal(t, "action,count,denied\nallow,5,0\ndeny,2,2\n", run("stats", "-o", "csv"))

	var out bytes.Buffer
	code, stderr := execAuditq(t, ctx, &out, append([]string{"decisions", "--approval", "maybe"}, window...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--approval "maybe": want approved, declined, timeout, invalid, pending, none`)
}

func TestFormatWait(t *testing.T) {
	for ms, want := range map[uint64]string{1: "1ms", 850: "850ms", 1000: "1.0s", 12345: "12.3s", 123000: "2m03s",
		3900000: "1h05m", 90000000: "1d01h"} {
		assert.Equal(t, want, formatWait(ms), ms)
	}
}
