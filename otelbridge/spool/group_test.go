package spool_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// TestConcurrentEnds: spans ending on many goroutines at once (their
// records appended together, one write per group) are each spooled and
// sent once, committed calls' finals supersede their pending records
// (none is interrupted at the next Open), and under a small budget with
// Refuse every span is either spooled or counted refused.
func TestConcurrentEnds(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  spool.Config
	}{
		{"interval", spool.Config{}},
		{"always", spool.Config{Sync: spool.SyncAlways}},
		{"refuse-small-budget", spool.Config{MaxBytes: 64 << 10, Full: spool.Refuse}},
		{"drop-oldest-small-budget", spool.Config{MaxBytes: 64 << 10}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const workers, per = 16, 60
			dir := t.TempDir()
			cfg := tt.cfg
			cfg.Dir = dir
			c := &memClient{}
			if cfg.MaxBytes > 0 {
				c.down.Store(true) // fill the budget
			}
			r := open(t, cfg, c)
			var wg sync.WaitGroup
			for g := range workers {
				wg.Go(func() {
					for i := range per {
						_, s := r.tr.Start(context.Background(), fmt.Sprintf("w%d-%d", g, i))
						s.SetAttributes(attribute.String("phase", "final"))
						if i%5 == 0 {
							_ = r.sp.Commit(context.Background(), s) // may be refused: then the call would not run
						}
						s.End()
					}
				})
			}
			wg.Wait()
			st := r.sp.Stats()
			assert.Equal(t, int64(workers*per), st.Spooled+st.Refused, "every span spooled or counted refused")
			c.down.Store(false)
			require.NoError(t, r.tp.Shutdown(context.Background()))
			st = r.sp.Stats()
			got := c.byName()
			for n, ss := range got {
				assert.Len(t, ss, 1, "%s sent once", n)
			}
			assert.Equal(t, st.Sent, int64(len(got)))
			assert.Equal(t, st.Spooled, st.Sent+st.Dropped, "every spooled span sent or counted dropped")
			if cfg.MaxBytes == 0 {
				assert.Len(t, got, workers*per)
				assert.Zero(t, st.Lost())
			}
			c2 := &memClient{}
			r2 := open(t, spool.Config{Dir: dir}, c2)
			require.NoError(t, r2.tp.Shutdown(context.Background()))
			assert.Zero(t, r2.sp.Stats().Interrupted, "every committed call ended")
			assert.Empty(t, c2.names(), "nothing left to send")
		})
	}
}
