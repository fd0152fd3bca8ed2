package spool_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

func TestSendsEverySpan(t *testing.T) {
	for _, sync := range []spool.SyncPolicy{spool.SyncInterval, spool.SyncAlways} {
		t.Run(sync.String(), func(t *testing.T) {
			c := &memClient{}
			r := open(t, spool.Config{Dir: t.TempDir(), Sync: sync}, c, spool.WithBatchSpans(7))
			for i := range 50 {
				r.end("s" + string(rune('A'+i%26)) + string(rune('a'+i/26)))
			}
			require.NoError(t, r.tp.Shutdown(context.Background()))
			assert.Len(t, c.names(), 50)
			st := r.sp.Stats()
			assert.Equal(t, int64(50), st.Spooled)
			assert.Equal(t, int64(50), st.Sent)
			assert.Zero(t, st.Unsent)
			assert.Zero(t, st.Lost())
			c.mu.Lock()
			assert.GreaterOrEqual(t, c.reqs, 50/7)
			c.mu.Unlock()
		})
	}
}

func TestCollectorDownThenBack(t *testing.T) {
	c := &memClient{}
	c.down.Store(true)
	r := open(t, spool.Config{Dir: t.TempDir()}, c, spool.WithMaxBackoff(20*time.Millisecond))
	for i := range 20 {
		r.end(string(rune('a' + i)))
	}
	require.Eventually(t, func() bool { return r.sp.Stats().UploadFailed > 0 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, int64(20), r.sp.Stats().Unsent)
	assert.Greater(t, r.sp.Stats().OldestUnsent, time.Duration(0))
	c.down.Store(false)
	require.NoError(t, r.sp.ForceFlush(context.Background()))
	assert.Len(t, c.names(), 20)
	require.NoError(t, r.tp.Shutdown(context.Background()))
}

func TestShutdownLeavesUnsentForNextOpen(t *testing.T) {
	dir := t.TempDir()
	c := &memClient{}
	c.down.Store(true)
	r := open(t, spool.Config{Dir: dir}, c)
	r.end("a")
	r.end("b")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := r.tp.Shutdown(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 spans not sent at shutdown")
	assert.Contains(t, err.Error(), "collector down", "the cause")
	c.down.Store(false)
	r2 := open(t, spool.Config{Dir: dir}, c)
	require.NoError(t, r2.tp.Shutdown(context.Background()))
	assert.Equal(t, []string{"a", "b"}, c.names())
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	r := open(t, spool.Config{Dir: dir}, &memClient{})
	_, err := spool.Open(context.Background(), spool.Config{Dir: dir}, &memClient{})
	require.ErrorIs(t, err, spool.ErrLocked)
	assert.Contains(t, err.Error(), "own spool directory")
	require.NoError(t, r.tp.Shutdown(context.Background()))
	r2 := open(t, spool.Config{Dir: dir}, &memClient{}) // released
	require.NoError(t, r2.tp.Shutdown(context.Background()))
}

func TestOpenRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]spool.Config{
		"no dir":         {},
		"negative bytes": {Dir: t.TempDir(), MaxBytes: -1},
		"bad sync":       {Dir: t.TempDir(), Sync: 7},
		"bad full":       {Dir: t.TempDir(), Full: 7},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := spool.Open(context.Background(), cfg, &memClient{})
			require.Error(t, err)
		})
	}
}

// TestCommit: a committed call that ends sends only its final; one whose
// process dies is sent, by the next Open, marked interrupted.
func TestCommit(t *testing.T) {
	dir := t.TempDir()
	c := &memClient{}
	c.down.Store(true)
	r := open(t, spool.Config{Dir: dir}, c)
	_, done := r.tr.Start(context.Background(), "done")
	done.SetAttributes(attribute.String("gate.action", "allow"))
	require.NoError(t, r.sp.Commit(context.Background(), done))
	assert.True(t, r.sp.Committed(done.SpanContext()))
	done.SetAttributes(attribute.String("phase", "final"))
	done.End()
	assert.False(t, r.sp.Committed(done.SpanContext()))

	_, running := r.tr.Start(context.Background(), "running")
	running.SetAttributes(attribute.String("gate.action", "allow"))
	require.NoError(t, r.sp.Commit(context.Background(), running))
	st := r.sp.Stats()
	assert.Equal(t, int64(2), st.Committed)
	assert.Equal(t, int64(1), st.Pending)
	r.sp.Abandon() // the process dies while "running" runs

	c.down.Store(false)
	r2 := open(t, spool.Config{Dir: dir}, c)
	require.NoError(t, r2.sp.ForceFlush(context.Background()))
	got := c.byName()
	require.Len(t, got["done"], 1)
	v, _ := attr(got["done"][0], "phase")
	assert.Equal(t, "final", v, "the final record, never the pending one")
	_, interrupted := attr(got["done"][0], spool.AttrInterrupted)
	assert.False(t, interrupted)
	require.Len(t, got["running"], 1)
	v, _ = attr(got["running"][0], spool.AttrInterrupted)
	assert.Equal(t, "true", v)
	assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, got["running"][0].GetStatus().GetCode())
	assert.Equal(t, spool.InterruptedMessage, got["running"][0].GetStatus().GetMessage())
	a, _ := attr(got["running"][0], "gate.action")
	assert.Equal(t, "allow", a, "the decision as committed")
	assert.Equal(t, int64(1), r2.sp.Stats().Interrupted)
	require.NoError(t, r2.tp.Shutdown(context.Background()))
}

func TestCommitErrors(t *testing.T) {
	c := &memClient{}
	c.down.Store(true)
	r := open(t, spool.Config{Dir: t.TempDir(), MaxBytes: 4096, Full: spool.Refuse}, c)
	// A non-recording span.
	_, s := r.tr.Start(context.Background(), "x")
	s.End()
	require.ErrorIs(t, r.sp.Commit(context.Background(), s), spool.ErrNotRecording)
	// A cancelled context.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, s2 := r.tr.Start(context.Background(), "y")
	require.ErrorIs(t, r.sp.Commit(ctx, s2), context.Canceled)
	// Full under Refuse.
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, s := r.tr.Start(context.Background(), "z")
		err = r.sp.Commit(context.Background(), s)
	}
	require.ErrorIs(t, err, spool.ErrFull)
	assert.Equal(t, int64(1), r.sp.Stats().RefusedCommits)
	r.sp.Abandon()
	_, s3 := r.tr.Start(context.Background(), "w")
	require.ErrorIs(t, r.sp.Commit(context.Background(), s3), spool.ErrClosed)
}

// TestBudget: a full budget applies the policy and counts it.
func TestBudget(t *testing.T) {
	tests := []struct {
		full        spool.FullPolicy
		wantDropped bool
	}{{spool.DropOldest, true}, {spool.Refuse, false}}
	for _, tt := range tests {
		t.Run(tt.full.String(), func(t *testing.T) {
			dir := t.TempDir()
			c := &memClient{}
			c.down.Store(true)
			r := open(t, spool.Config{Dir: dir, MaxBytes: 8 << 10, Full: tt.full}, c)
			const n = 200
			for i := range n {
				r.end(name(i))
			}
			st := r.sp.Stats()
			assert.LessOrEqual(t, st.BudgetBytes, int64(8<<10))
			if tt.wantDropped {
				assert.Positive(t, st.Dropped)
				assert.Zero(t, st.Refused)
			} else {
				assert.Positive(t, st.Refused)
				assert.Zero(t, st.Dropped)
			}
			c.down.Store(false)
			require.NoError(t, r.tp.Shutdown(context.Background()))
			st = r.sp.Stats()
			got := c.names()
			assert.Equal(t, int64(n), int64(len(got))+st.Lost(), "every span sent or counted lost")
			if tt.wantDropped {
				assert.Contains(t, got, name(n-1), "the newest kept")
				assert.NotContains(t, got, name(0), "the oldest dropped")
			} else {
				assert.Contains(t, got, name(0), "the oldest kept")
				assert.NotContains(t, got, name(n-1), "the newest refused")
			}
			// Disk holds at most the budget plus two segments.
			assert.LessOrEqual(t, dirSize(t, dir), int64(8<<10+2*16<<10+4096))
		})
	}
}

func name(i int) string {
	return "span-" + string(rune('A'+i/26/26%26)) + string(rune('A'+i/26%26)) + string(rune('A'+i%26))
}

func dirSize(t *testing.T, dir string) int64 {
	var n int64
	ents, err := os.ReadDir(dir + "/wal")
	require.NoError(t, err)
	for _, e := range ents {
		fi, err := e.Info()
		require.NoError(t, err)
		n += fi.Size()
	}
	return n
}

// TestTornTail: garbage or a cut at the end of the last segment is cut
// off and counted; the records before it are sent.
func TestTornTail(t *testing.T) {
	tests := map[string]func(t *testing.T, path string){
		"garbage appended": func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte{0x80, 0x05, 1, 2, 3})
			require.NoError(t, err)
			require.NoError(t, f.Close())
		},
		"zeros appended (power loss)": func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.Write(make([]byte, 4096))
			require.NoError(t, err)
			require.NoError(t, f.Close())
		},
		"last record cut": func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, fi.Size()-3))
		},
	}
	for name, damage := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			c := &memClient{}
			c.down.Store(true)
			r := open(t, spool.Config{Dir: dir}, c)
			for _, n := range []string{"a", "b", "c"} {
				r.end(n)
			}
			r.sp.Abandon()
			damage(t, lastSegment(t, dir))
			c.down.Store(false)
			r2 := open(t, spool.Config{Dir: dir}, c)
			require.NoError(t, r2.tp.Shutdown(context.Background()))
			assert.Equal(t, int64(1), r2.sp.Stats().TornRecovered)
			got := c.names()
			assert.Subset(t, got, []string{"a", "b"})
			if name != "last record cut" {
				assert.Contains(t, got, "c")
			}
			// And a third open finds a clean log.
			r3 := open(t, spool.Config{Dir: dir}, c)
			require.NoError(t, r3.tp.Shutdown(context.Background()))
			assert.Zero(t, r3.sp.Stats().TornRecovered)
		})
	}
}
