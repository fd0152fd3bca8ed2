package audit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
)

// sharedSpans are decisions in groups of one to four that share a span ID
// and a Timestamp (a producer that reuses span IDs: a bug, or a hostile
// exporter hiding a decision behind another) and differ in tool, agent or
// action: each is its own row of gate_decisions.
func sharedSpans(n int, base time.Time) ([]audittest.Span, map[string]bool) {
	return sharedSpansEvery(n, base, 37*time.Second, 0) // about 9 hours for 2,000 decisions
}

// sharedSpansEvery is sharedSpans with groups step apart, their span IDs
// numbered from first.
func sharedSpansEvery(n int, base time.Time, step time.Duration, first int) ([]audittest.Span, map[string]bool) {
	var spans []audittest.Span
	keys := map[string]bool{}
	for i, g := 0, 0; i < n; g++ {
		ts := base.Add(-time.Duration(g) * step)
		span := fmt.Sprintf("%016x", 0xf00d0000+first+g)
		for k := 0; k <= g%4 && i < n; k, i = k+1, i+1 {
			tool, agent, action := fmt.Sprintf("tool-%d", k), "agent-a", gate.ActionAllow
			if k == 2 {
				tool, agent = "tool-0", "agent-b"
			}
			if k == 3 {
				tool, action = "tool-0", gate.ActionDeny
			}
			rec := gate.Record{Stage: gate.StageGate, Gated: true, Action: action, Source: "policy", Reason: "shared span", Duration: time.Millisecond}
			kvs := rec.Attributes([]attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(tool),
				semconv.GenAIToolCallID(fmt.Sprintf("call-%d-%d", g, k)), semconv.GenAIAgentName(agent)}, 0)
			spans = append(spans, audittest.Span{Timestamp: ts, TraceID: fmt.Sprintf("%032x", 0xbeef0000+g/50), SpanID: span,
				Name: "execute_tool " + tool, Service: "shared", Attrs: audittest.SpanAttrs(kvs), Duration: time.Millisecond})
			keys[fmt.Sprint(span, "/", tool, "/", agent, "/", action)] = true
		}
	}
	return spans, keys
}

func decisionKey(d audit.Decision) string {
	return fmt.Sprint(d.SpanID, "/", d.ToolName, "/", d.Agent, "/", d.Action)
}

// TestSharedSpanIDs: decisions that share a span ID and a Timestamp are
// each paged by Decisions, exported (stopped and resumed at random, with
// windows of 100 and 400 decisions) and followed exactly once:
// a cursor carries the whole sorting key, so none is skipped behind
// another.
func TestSharedSpanIDs(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	const n = 2500 // more than a Follower's batch of 1,000
	spans, keys := sharedSpans(n, time.Now().Add(-time.Hour).Truncate(time.Second))
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, spans))
	require.Len(t, keys, n)

	all := func(rt require.TestingT, got []string) {
		seen := map[string]bool{}
		for _, k := range got {
			require.False(rt, seen[k], "%s twice", k)
			seen[k] = true
		}
		require.Equal(rt, keys, seen)
	}
	fl := env.Store.NewFollower(audit.Filter{}, audit.FollowFrom(time.Unix(0, 0)))
	ds, err := fl.Poll(ctx)
	require.NoError(t, err)
	var followed []string
	for _, d := range ds {
		followed = append(followed, decisionKey(d))
	}
	all(t, followed)

	var stores []*audit.Store
	for _, o := range [][]audit.Option{{audit.WithExportWindow(100)}, {audit.WithExportWindow(400)}} {
		st, err := audit.Open(ctx, env.ReaderDSN, o...)
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
	}
	// Bounded in time: after the budget the remaining draws return at once.
	start := time.Now()
	const budget = 15 * time.Second
	checked := 0
	rapid.Check(t, func(rt *rapid.T) {
		if time.Since(start) > budget {
			return
		}
		checked++
		var paged []string
		pg := audit.Page{Limit: rapid.IntRange(60, 700).Draw(rt, "page")}
		for {
			res, err := env.Store.Decisions(ctx, audit.Filter{}, pg)
			require.NoError(rt, err)
			for _, d := range res.Decisions {
				paged = append(paged, decisionKey(d))
			}
			if res.Next == nil {
				break
			}
			next, err := audit.ParseCursor(res.Next.String())
			require.NoError(rt, err)
			require.True(rt, res.Next.Timestamp.Equal(next.Timestamp), "a page token round-trips")
			next.Timestamp = res.Next.Timestamp
			require.Equal(rt, *res.Next, next, "a page token round-trips")
			pg.After = &next
		}
		all(rt, paged)

		st := rapid.SampledFrom(stores).Draw(rt, "store")
		got := resumedExport(rt, st, audit.Filter{}, 150, 1200, decisionKey)
		require.Equal(rt, paged, got, "export resumed = paging")
	})
	require.Greater(t, checked, 3, "too few checks in the budget")
	t.Logf("%d checks", checked)
}

// failingAhead is a connection whose second export window query fails
// (as one started ahead fails when it waits too long for a connection, or
// for the server, while the window before it is handed over).
type failingAhead struct {
	driver.Conn
	windows atomic.Int32
}

func (c *failingAhead) Query(ctx context.Context, query string, args ...any) (driver.Rows, error) {
	if strings.Contains(query, "ORDER BY Timestamp DESC") && strings.Contains(query, "max_bytes_before_external_sort") && c.windows.Add(1) == 2 {
		return nil, errors.New("clickhouse: acquire conn timeout")
	}
	return c.Conn.Query(ctx, query, args...)
}

// TestExportRetriesAWindowStartedAhead: a window's query, started while
// the one before it is handed over, fails; nothing of it was handed over,
// so it runs again in its turn, and the export is whole and in order.
func TestExportRetriesAWindowStartedAhead(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	const n = 600
	spans, _ := sharedSpans(n, time.Now().Add(-time.Hour).Truncate(time.Second))
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, spans))
	conn := &failingAhead{Conn: env.Store.Conn()}
	st, err := audit.NewStore(conn, audit.WithExportWindow(200))
	require.NoError(t, err)
	var want []string
	res, err := env.Store.Decisions(ctx, audit.Filter{}, audit.Page{Limit: n})
	require.NoError(t, err)
	for _, d := range res.Decisions {
		want = append(want, decisionKey(d))
	}
	var got []string
	require.NoError(t, st.Export(ctx, audit.Filter{}, nil, func(d audit.Decision) error {
		got = append(got, decisionKey(d))
		return nil
	}))
	require.Equal(t, want, got)
	require.Greater(t, conn.windows.Load(), int32(2), "the failed window ran again")
}

// TestExportOnOneConnection: with one connection (max_open_conns=1) and
// results of many blocks (20,000 decisions in one window, blocks of 10
// rows: a query holds its connection until it is read), each window
// started ahead of the one handed over waits for the only connection,
// times out, runs again in its turn, and the export, whole and resumed,
// still equals paging (it fails without that second try).
func TestExportOnOneConnection(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	until := time.Now().Truncate(time.Hour)
	recent, _ := sharedSpansEvery(20000, until.Add(-time.Second), 150*time.Millisecond, 0) // one window: the hour before until
	older, _ := sharedSpansEvery(3000, until.Add(-2*time.Hour), 4*time.Second, 10000)      // windows below it
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, append(recent, older...)))
	st, err := audit.Open(ctx, env.ReaderDSN+"?max_open_conns=1&dial_timeout=300ms&max_block_size=10&block_buffer_size=1", audit.WithExportWindow(1200))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	f := audit.Filter{Until: until}
	res, err := env.Store.Decisions(ctx, f, audit.Page{Limit: 23000})
	require.NoError(t, err)
	var want []string
	for _, d := range res.Decisions {
		want = append(want, decisionKey(d))
	}
	require.Len(t, want, 23000)
	export := func(after *audit.Cursor) []string {
		var got []string
		require.NoError(t, st.Export(ctx, f, after, func(d audit.Decision) error {
			got = append(got, decisionKey(d))
			return nil
		}))
		return got
	}
	require.Equal(t, want, export(nil), "whole export")
	after := res.Decisions[1000].Cursor()
	require.Equal(t, want[1001:], export(&after), "export resumed")
}
