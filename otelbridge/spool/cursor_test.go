package spool_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// flushWithin is ForceFlush bounded: a flush that cannot finish fails the
// test instead of hanging it.
func flushWithin(t require.TestingT, sp *spool.Spool) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, sp.ForceFlush(ctx), "ForceFlush must return once the drainer runs")
}

// drainAll runs DrainStep until nothing is left, checking the invariants
// after each step.
func drainAll(t require.TestingT, sp *spool.Spool) {
	for {
		n, err := sp.DrainStep(context.Background())
		require.NoError(t, err)
		require.NoError(t, sp.CheckInvariants())
		if n == 0 {
			return
		}
	}
}

// TestMovedPendingRecordDoesNotHoldCursor: when every final is sent, the
// truncation that moves a long-running call's pending record to the log's
// end must not leave the cursor on it (the drainer, finding nothing to
// send, would sleep and ForceFlush wait forever: the hang of
// TestLongRunningCallPinsNoDisk under -race). Driven step by step, no
// goroutine timing involved.
func TestMovedPendingRecordDoesNotHoldCursor(t *testing.T) {
	r := open(t, spool.Config{Dir: t.TempDir(), MaxBytes: 64 << 10}, &memClient{})
	r.sp.StopDrainer()
	_, long := r.tr.Start(context.Background(), "long")
	require.NoError(t, r.sp.Commit(context.Background(), long))
	require.NoError(t, r.sp.CheckInvariants())
	for i := range 600 {
		r.end(fmt.Sprint("s", i))
		require.NoError(t, r.sp.CheckInvariants(), "after end %d", i)
		drainAll(t, r.sp) // every final sent: the cursor must reach the end
		require.Zero(t, r.sp.Stats().Unsent)
	}
	r.sp.RestartDrainer()
	flushWithin(t, r.sp)
	require.Equal(t, int64(1), r.sp.Stats().Pending)
	long.End()
	require.NoError(t, r.tp.Shutdown(context.Background()))
}

// cursorModel drives the spool's state machine with the drainer stopped:
// each upload is an explicit step, so that appends, group writes,
// commits, ends of committed calls, budget drops, acknowledgements,
// truncations and moves interleave in every order rapid draws.
type cursorModel struct {
	r    *rig
	c    *memClient
	n    int
	live map[string]trace.Span
}

func (m *cursorModel) End(t *rapid.T) {
	m.n++
	m.r.end(fmt.Sprint("f", m.n))
}

// EndMany ends several spans concurrently (the grouped write).
func (m *cursorModel) EndMany(t *rapid.T) {
	k := rapid.IntRange(2, 8).Draw(t, "k")
	var wg sync.WaitGroup
	for range k {
		m.n++
		name := fmt.Sprint("g", m.n)
		wg.Add(1)
		go func() { defer wg.Done(); m.r.end(name) }()
	}
	wg.Wait()
}

func (m *cursorModel) Commit(t *rapid.T) {
	m.n++
	n := fmt.Sprint("c", m.n)
	_, s := m.r.tr.Start(context.Background(), n)
	s.SetAttributes(attribute.String("gate.action", "allow"))
	if err := m.r.sp.Commit(context.Background(), s); err != nil {
		if !errors.Is(err, spool.ErrFull) {
			t.Fatalf("commit: %v", err)
		}
		s.End()
		return
	}
	m.live[n] = s
}

func (m *cursorModel) EndCommitted(t *rapid.T) {
	if len(m.live) == 0 {
		t.Skip("no live call")
	}
	n := rapid.SampledFrom(sortedKeys(m.live)).Draw(t, "call")
	m.live[n].End()
	delete(m.live, n)
}

func (m *cursorModel) Drain(t *rapid.T) {
	if _, err := m.r.sp.DrainStep(context.Background()); err != nil && !m.c.down.Load() {
		t.Fatalf("upload: %v", err)
	}
}

func (m *cursorModel) Outage(t *rapid.T) { m.c.down.Store(!m.c.down.Load()) }

func (m *cursorModel) Check(t *rapid.T) {
	if err := m.r.sp.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// TestPropertyCursorInvariant: after every operation the cursor is the
// first unsent final (or the log's end), no unsent record is below it,
// and the cached sums agree with the records; once the collector is up,
// draining leaves nothing unsent and ForceFlush returns.
func TestPropertyCursorInvariant(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := &memClient{}
		cfg := spool.Config{Dir: t.TempDir(),
			MaxBytes: rapid.SampledFrom([]int64{6000, 20000, 64 << 10}).Draw(rt, "budget"),
			Full:     rapid.SampledFrom([]spool.FullPolicy{spool.DropOldest, spool.Refuse}).Draw(rt, "full"),
		}
		r := open(t, cfg, c)
		r.sp.StopDrainer()
		m := &cursorModel{r: r, c: c, live: map[string]trace.Span{}}
		rt.Repeat(rapid.StateMachineActions(m))
		c.down.Store(false)
		drainAll(rt, r.sp)
		if u := r.sp.Stats().Unsent; u != 0 {
			rt.Fatalf("%d spans unsent after draining", u)
		}
		r.sp.RestartDrainer()
		m.End(rt) // one more, for the restarted drainer
		flushWithin(rt, r.sp)
		for _, s := range m.live {
			s.End()
		}
		require.NoError(rt, r.tp.Shutdown(context.Background()))
		require.NoError(rt, r.sp.CheckInvariants())
	})
}
