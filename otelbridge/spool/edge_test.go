package spool_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// rejectingClient rejects, as the collector does an invalid request
// (InvalidArgument), every request that holds a span named "poison".
type rejectingClient struct{ memClient }

func (c *rejectingClient) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	for _, r := range rs {
		for _, ss := range r.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if s.GetName() == "poison" {
					return status.Error(codes.InvalidArgument, "invalid span")
				}
			}
		}
	}
	return c.memClient.UploadTraces(ctx, rs)
}

// TestRejectedRecordDoesNotBlock: a record the collector rejects as
// invalid is found by sending the batch's records singly, dropped and
// counted; the records around it are delivered.
func TestRejectedRecordDoesNotBlock(t *testing.T) {
	c := &rejectingClient{}
	c.down.Store(true)
	sp, err := spool.Open(context.Background(), spool.Config{Dir: t.TempDir()}, c)
	require.NoError(t, err)
	r := &rig{sp: sp}
	r.tp, r.tr = newTP(sp)
	for i := range 10 {
		r.end(fmt.Sprint("ok-", i))
		if i == 4 {
			r.end("poison")
		}
	}
	c.down.Store(false)
	require.NoError(t, r.tp.Shutdown(context.Background()))
	got := c.names()
	assert.Len(t, got, 10)
	assert.NotContains(t, got, "poison")
	st := sp.Stats()
	assert.Equal(t, int64(1), st.Dropped)
	assert.Equal(t, int64(10), st.Sent)
}

// TestLongRunningCallPinsNoDisk: a committed call that runs while many
// other spans are sent does not keep the log from being truncated (its
// pending record is moved to the end), and a crash still reports it as
// interrupted, once.
func TestLongRunningCallPinsNoDisk(t *testing.T) {
	dir := t.TempDir()
	c := &memClient{}
	cfg := spool.Config{Dir: dir, MaxBytes: 64 << 10} // 16 KiB segments
	r := open(t, cfg, c)
	_, long := r.tr.Start(context.Background(), "long")
	long.SetAttributes(attribute.String("gate.action", "allow"))
	require.NoError(t, r.sp.Commit(context.Background(), long))
	for i := range 2000 {
		r.end(fmt.Sprint("s", i))
		if i%100 == 99 {
			require.NoError(t, r.sp.ForceFlush(context.Background()))
		}
	}
	require.NoError(t, r.sp.ForceFlush(context.Background()))
	st := r.sp.Stats()
	assert.Equal(t, int64(1), st.Pending)
	assert.Less(t, st.BytesOnDisk, int64(64<<10), "the log was truncated past the running call")
	assert.Less(t, dirSize(t, dir), int64(64<<10))
	r.sp.Abandon()

	r2 := open(t, cfg, c)
	require.NoError(t, r2.tp.Shutdown(context.Background()))
	got := c.byName()
	require.Len(t, got["long"], 1)
	v, _ := attr(got["long"][0], spool.AttrInterrupted)
	assert.Equal(t, "true", v)
	assert.Len(t, got, 2001)
}

// recordOnly records every span without the sampled flag.
type recordOnly struct{}

func (recordOnly) ShouldSample(sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return sdktrace.SamplingResult{Decision: sdktrace.RecordOnly}
}
func (recordOnly) Description() string { return "RecordOnly" }

// TestCommittedUnsampledSpanIsFinal: a committed call's final record is
// spooled even when the head sampler left the span unsampled, so that its
// pending record is superseded (and never reported as interrupted).
func TestCommittedUnsampledSpanIsFinal(t *testing.T) {
	c := &memClient{}
	sp, err := spool.Open(context.Background(), spool.Config{Dir: t.TempDir()}, c)
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp), sdktrace.WithSampler(recordOnly{}))
	tr := tp.Tracer("t")
	_, committed := tr.Start(context.Background(), "committed")
	require.NoError(t, sp.Commit(context.Background(), committed))
	committed.SetAttributes(attribute.String("phase", "final"))
	committed.End()
	_, plain := tr.Start(context.Background(), "plain")
	plain.End()
	require.NoError(t, tp.Shutdown(context.Background()))
	assert.Equal(t, []string{"committed"}, c.names())
	assert.Zero(t, sp.Stats().Pending)
}
