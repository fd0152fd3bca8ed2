package spool_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// sizeClient refuses, as grpc-go's server does a message over its limit,
// every request holding a span named "big" (ResourceExhausted, no
// RetryInfo); with retryInfo it refuses the first such request with
// RetryInfo (a collector asking to come back later) and then takes it.
type sizeClient struct {
	memClient
	retryInfo bool
	refused   atomic.Int64
}

func (c *sizeClient) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	for _, r := range rs {
		for _, ss := range r.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if s.GetName() != "big" {
					continue
				}
				if !c.retryInfo {
					return status.Error(codes.ResourceExhausted, "grpc: received message larger than max")
				}
				if c.refused.Add(1) == 1 {
					st, err := status.New(codes.ResourceExhausted, "memory limit").
						WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(10 * time.Millisecond)})
					if err != nil {
						return err
					}
					return st.Err()
				}
			}
		}
	}
	return c.memClient.UploadTraces(ctx, rs)
}

// TestRedTeamTooLargeForCollector (red team): a record the collector
// refuses as too large (ResourceExhausted without RetryInfo) must not
// stall the drainer forever: it is dropped and counted, the records
// behind it delivered. ResourceExhausted with RetryInfo is retried.
func TestRedTeamTooLargeForCollector(t *testing.T) {
	for _, retryInfo := range []bool{false, true} {
		t.Run(fmt.Sprint("retryInfo=", retryInfo), func(t *testing.T) {
			c := &sizeClient{retryInfo: retryInfo}
			c.down.Store(true)
			sp, err := spool.Open(context.Background(), spool.Config{Dir: t.TempDir()}, c)
			require.NoError(t, err)
			r := &rig{sp: sp}
			r.tp, r.tr = newTP(sp)
			for i := range 6 {
				r.end(fmt.Sprint("ok-", i))
				if i == 2 {
					r.end("big")
				}
			}
			c.down.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, r.tp.Shutdown(ctx))
			got := c.names()
			st := sp.Stats()
			if retryInfo {
				assert.Contains(t, got, "big")
				assert.Zero(t, st.Dropped)
				assert.Equal(t, int64(7), st.Sent)
			} else {
				assert.NotContains(t, got, "big")
				assert.Equal(t, int64(1), st.Dropped)
				assert.Equal(t, int64(6), st.Sent)
			}
			assert.Len(t, got, 6+map[bool]int{true: 1}[retryInfo])
		})
	}
}

// TestRedTeamHugeSpanIsCut (red team): a span whose attributes exceed the
// record bound is spooled with its large non-decision values cut and
// marked, its gate.* attributes whole, and delivered.
func TestRedTeamHugeSpanIsCut(t *testing.T) {
	c := &memClient{}
	r := open(t, spool.Config{Dir: t.TempDir()}, c)
	huge := strings.Repeat("é", 3<<20) // 6 MiB, two-byte runes
	reason := strings.Repeat("r", 3000)
	_, s := r.tr.Start(context.Background(), "huge")
	s.SetAttributes(attribute.String("gen_ai.tool.call.result", huge), attribute.String("gate.reason", reason),
		attribute.StringSlice("list", []string{huge, "short"}))
	s.AddEvent("ev", trace.WithAttributes(attribute.String("payload", huge)))
	s.End()
	require.NoError(t, r.tp.Shutdown(context.Background()))
	spans := c.byName()["huge"]
	require.Len(t, spans, 1)
	res, _ := attr(spans[0], "gen_ai.tool.call.result")
	assert.Less(t, len(res), 100<<10)
	assert.Contains(t, res, "bytes cut for export")
	assert.True(t, strings.HasPrefix(res, "éé") && strings.HasSuffix(res, "éé"))
	got, _ := attr(spans[0], "gate.reason")
	assert.Equal(t, reason, got)
	cut, ok := attr(spans[0], spool.AttrCutBytes)
	assert.True(t, ok, "the cut is marked: %s", cut)
	assert.Zero(t, r.sp.Stats().Lost())
}

// TestRedTeamDropOldestKeepsRunningCalls (red team): under the default
// budget policy (DropOldest) with the collector down, a flood of spans
// (a model making many quick calls) while one committed call's tool runs
// must not drop that call's write-ahead record: if the process then dies,
// the call — whose tool ran — would be missing from the audit. Pending
// records are pinned; the flood's oldest finished spans are dropped
// instead (counted).
func TestRedTeamDropOldestKeepsRunningCalls(t *testing.T) {
	dir := t.TempDir()
	c := &memClient{}
	c.down.Store(true)
	cfg := spool.Config{Dir: dir, MaxBytes: 64 << 10} // DropOldest
	r := open(t, cfg, c)
	_, long := r.tr.Start(context.Background(), "long")
	long.SetAttributes(attribute.String("gate.action", "allow"))
	require.NoError(t, r.sp.Commit(context.Background(), long))
	for i := range 3000 {
		r.end(fmt.Sprint("flood-", i))
	}
	st := r.sp.Stats()
	require.Positive(t, st.Dropped, "the budget was exhausted")
	assert.Equal(t, int64(1), st.Pending, "the running call's record is kept")
	r.sp.Abandon() // SIGKILL while the tool runs

	c.down.Store(false)
	r2 := open(t, cfg, c)
	require.NoError(t, r2.tp.Shutdown(context.Background()))
	got := c.byName()["long"]
	require.Len(t, got, 1, "the call whose tool ran is reported, interrupted")
	v, _ := attr(got[0], spool.AttrInterrupted)
	assert.Equal(t, "true", v)
}

// lateSpan is a span that ended while a Commit of it was under way: the
// Commit's checks passed (it was recording), its record is written after
// the span's final record.
type lateSpan struct{ sdktrace.ReadWriteSpan }

func (lateSpan) IsRecording() bool { return true }

// TestRedTeamCommitLandingAfterTheFinal (red team): strict mode runs
// Commit on its own goroutine and, when the call's context ends first,
// denies the call and ends its span — while the Commit may still write
// its pending record, after the span's final one. That stale pending
// record must not stay unresolved: it would pin the log for the life of
// the process and, after a restart, be uploaded as an "interrupted" call
// with the allow decision — a tool that never ran reported as running.
func TestRedTeamCommitLandingAfterTheFinal(t *testing.T) {
	dir := t.TempDir()
	c := &memClient{}
	cfg := spool.Config{Dir: dir}
	r := open(t, cfg, c)
	_, s := r.tr.Start(context.Background(), "denied-late")
	s.SetAttributes(attribute.String("gate.action", "allow"))
	rw := s.(sdktrace.ReadWriteSpan)
	s.SetAttributes(attribute.String("gate.action", "deny"))
	s.End() // the executor gave up: the denial is final
	_ = r.sp.Commit(context.Background(), lateSpan{rw})
	require.NoError(t, r.sp.ForceFlush(context.Background()))
	assert.Zero(t, r.sp.Stats().Pending, "no unresolved write-ahead record for an ended span")
	r.sp.Abandon()

	r2 := open(t, cfg, c)
	require.NoError(t, r2.tp.Shutdown(context.Background()))
	got := c.byName()["denied-late"]
	require.NotEmpty(t, got)
	for _, g := range got {
		_, interrupted := attr(g, spool.AttrInterrupted)
		assert.False(t, interrupted, "never reported as an interrupted call")
	}
}
