package spool_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// spoolModel drives a spool through random interleavings of appends,
// commits, ends of committed calls, collector outages, crashes (reopen)
// with torn tails, and a small budget.
type spoolModel struct {
	t      *testing.T
	dir    string
	cfg    spool.Config
	r      *rig
	client *memClient // this process lifetime's uploads
	down   bool
	n      int

	finals      map[string]bool       // spans ended (final record appended)
	live        map[string]trace.Span // committed, not ended, in this lifetime
	interrupted map[string]bool       // committed, process died before the end
	lifetimes   []*memClient
	lost        int64 // Dropped + Refused over lifetimes
	errs        atomic.Pointer[error]
	cuts        int // tails cut by a tear
}

func (m *spoolModel) reopen(t *rapid.T) {
	m.client = &memClient{}
	m.client.down.Store(m.down)
	m.lifetimes = append(m.lifetimes, m.client)
	cfg := m.cfg
	cfg.MaxBackoff = 5 * time.Millisecond
	cfg.ErrorHandler = func(err error) {
		// Upload failures (collector down) and recovery findings are
		// expected; a failed write, fsync or truncation is not.
		if msg := err.Error(); strings.Contains(msg, "fsync") || strings.Contains(msg, "write to") || strings.Contains(msg, "truncate") || strings.Contains(msg, "move") {
			m.errs.CompareAndSwap(nil, &err)
		}
	}
	sp, err := spool.Open(context.Background(), cfg, m.client)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	m.r = &rig{sp: sp}
	m.r.tp, m.r.tr = newTP(sp)
}

func (m *spoolModel) End(t *rapid.T) {
	m.n++
	n := fmt.Sprintf("f%d", m.n)
	m.r.end(n)
	m.finals[n] = true
}

func (m *spoolModel) Commit(t *rapid.T) {
	m.n++
	n := fmt.Sprintf("c%d", m.n)
	_, s := m.r.tr.Start(context.Background(), n)
	s.SetAttributes(attribute.String("gate.action", "allow"))
	if err := m.r.sp.Commit(context.Background(), s); err != nil {
		if !errors.Is(err, spool.ErrFull) {
			t.Fatalf("commit: %v", err)
		}
		// The executor denies the call: the denial is a final.
		s.SetAttributes(attribute.String("phase", "final"))
		s.End()
		m.finals[n] = true
		return
	}
	m.live[n] = s
}

func (m *spoolModel) EndCommitted(t *rapid.T) {
	if len(m.live) == 0 {
		t.Skip("no live call")
	}
	n := rapid.SampledFrom(sortedKeys(m.live)).Draw(t, "call")
	s := m.live[n]
	delete(m.live, n)
	s.SetAttributes(attribute.String("phase", "final"))
	s.End()
	m.finals[n] = true
}

func (m *spoolModel) Outage(t *rapid.T) {
	m.down = !m.down
	m.client.down.Store(m.down)
}

func (m *spoolModel) Wait(t *rapid.T) {
	time.Sleep(time.Duration(rapid.IntRange(0, 3).Draw(t, "ms")) * time.Millisecond)
}

func (m *spoolModel) Crash(t *rapid.T) {
	m.lost += m.r.sp.Stats().Lost()
	m.r.sp.Abandon()
	for n := range m.live {
		m.interrupted[n] = true
	}
	m.live = map[string]trace.Span{}
	switch rapid.IntRange(0, 2).Draw(t, "tear") {
	case 1: // garbage after the last record
		garbage := rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(t, "garbage")
		f, err := os.OpenFile(lastSegment(t, m.dir), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write(garbage)
		_ = f.Close()
	case 2: // the last record cut (records are > 20 bytes: only it)
		p := lastSegment(t, m.dir)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 0 {
			k := rapid.Int64Range(1, min(20, fi.Size())).Draw(t, "cut")
			if err := os.Truncate(p, fi.Size()-k); err != nil {
				t.Fatal(err)
			}
			m.cuts++
		}
	}
	m.reopen(t)
}

func (m *spoolModel) Check(t *rapid.T) {
	if d := m.r.sp.TailMismatch(); d != "" {
		t.Fatalf("fsync target: %s", d)
	}
	if e := m.errs.Load(); e != nil {
		t.Fatalf("spool error: %v", *e)
	}
	if err := m.r.sp.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

func sortedKeys[V any](mp map[string]V) []string {
	var out []string
	for k := range mp {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// TestPropertyNothingLostNothingTwice: every final span and every
// committed call interrupted by a crash is uploaded at least once, except
// what the spool counted lost and at most one record per torn tail; no
// pending snapshot is ever uploaded; nothing is uploaded twice within one
// process lifetime; an interrupted copy is uploaded only for a call whose
// final never reached the log.
func TestPropertyNothingLostNothingTwice(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := &spoolModel{t: t, dir: t.TempDir(), finals: map[string]bool{}, live: map[string]trace.Span{},
			interrupted: map[string]bool{}}
		m.cfg = spool.Config{Dir: m.dir,
			MaxBytes: rapid.SampledFrom([]int64{0, 6000, 20000}).Draw(rt, "budget"),
			Full:     rapid.SampledFrom([]spool.FullPolicy{spool.DropOldest, spool.Refuse}).Draw(rt, "full"),
			Sync:     rapid.SampledFrom([]spool.SyncPolicy{spool.SyncInterval, spool.SyncAlways}).Draw(rt, "sync"),
		}
		m.reopen(rt)
		rt.Repeat(rapid.StateMachineActions(m))
		// Finish: collector up, shut down, reopen once more to send what
		// is left and the calls still live (they become interrupted).
		m.down = false
		m.client.down.Store(false)
		m.Crash(rt) // live calls die with the process
		require.NoError(t, m.r.tp.Shutdown(context.Background()))
		m.lost += m.r.sp.Stats().Lost()

		seen := map[string]int{}
		interruptedSeen := map[string]bool{}
		for i, c := range m.lifetimes {
			once := map[string]bool{}
			for _, s := range c.got {
				n := s.GetName()
				if once[n] {
					rt.Fatalf("lifetime %d uploaded %s twice", i, n)
				}
				once[n] = true
				seen[n]++
				_, final := attr(s, "phase")
				_, intr := attr(s, spool.AttrInterrupted)
				if !final && !intr {
					rt.Fatalf("pending snapshot of %s uploaded", n)
				}
				if intr {
					interruptedSeen[n] = true
				}
			}
		}
		missing := 0
		for n := range m.finals {
			if seen[n] == 0 {
				missing++
			}
		}
		for n := range m.interrupted {
			if seen[n] == 0 {
				missing++
			}
		}
		if int64(missing) > m.lost+int64(m.cuts) {
			rt.Fatalf("%d spans missing, %d counted lost, %d tails cut", missing, m.lost, m.cuts)
		}
		wrong := 0
		for n := range interruptedSeen {
			if m.finals[n] {
				wrong++
			}
		}
		if wrong > m.cuts {
			rt.Fatalf("%d calls uploaded as interrupted although their final was spooled (%d tails cut)", wrong, m.cuts)
		}
	})
}
