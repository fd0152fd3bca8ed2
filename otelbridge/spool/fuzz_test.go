package spool_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// FuzzRecoverTail damages the last log segment — cut to any length, then
// any bytes appended — and opens the spool: Open never fails, every record
// wholly before the damage is sent, and a damaged tail is counted once.
func FuzzRecoverTail(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{0x80}, uint16(0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, uint16(3))
	f.Add(make([]byte, 100), uint16(0))
	f.Add([]byte{5, 1, 0, 0, 0, 1}, uint16(7))
	f.Add([]byte("garbage"), uint16(1000))
	f.Fuzz(func(t *testing.T, tail []byte, cut uint16) {
		dir := t.TempDir()
		c := &memClient{}
		c.down.Store(true)
		r := open(t, spool.Config{Dir: dir}, c)
		seg := ""
		var ends []int64 // the segment's size after each record
		for i := range 5 {
			r.end(fmt.Sprint("s", i))
			if seg == "" {
				seg = lastSegment(t, dir)
			}
			fi, err := os.Stat(seg)
			require.NoError(t, err)
			ends = append(ends, fi.Size())
		}
		r.sp.Abandon()
		orig, err := os.ReadFile(seg)
		require.NoError(t, err)
		size := ends[len(ends)-1]
		keep := size - int64(cut)%(size+1)
		damaged := append(slices.Clone(orig[:keep]), tail...)
		common := int64(0) // what the damage left as it was
		for common < int64(min(len(damaged), len(orig))) && damaged[common] == orig[common] {
			common++
		}
		require.NoError(t, os.Truncate(seg, keep))
		require.NoError(t, os.WriteFile(seg, damaged, 0o600))

		c.down.Store(false)
		r2 := open(t, spool.Config{Dir: dir}, c)
		require.NoError(t, r2.tp.Shutdown(context.Background()))
		got := c.names()
		for i, end := range ends {
			if end <= common {
				require.Contains(t, got, fmt.Sprint("s", i), "record %d ends at %d, damage at %d", i, end, common)
			}
		}
		st := r2.sp.Stats()
		require.LessOrEqual(t, st.TornRecovered, int64(1))
		n := int64(len(damaged))
		if clean := (n == 0 || slices.Contains(ends, n)) && common == n; clean {
			require.Zero(t, st.TornRecovered, "a whole-record prefix is not torn")
		} else {
			require.Equal(t, int64(1), st.TornRecovered, "damage after byte %d", common)
		}
	})
}
