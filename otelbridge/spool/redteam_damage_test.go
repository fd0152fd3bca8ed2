package spool_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// segmentFiles lists the log's segment files, oldest first.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "wal"))
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if len(e.Name()) == 20 {
			out = append(out, filepath.Join(dir, "wal", e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// TestRedTeamDamagedSpoolDir (red team): a spool directory damaged while
// the agent was down — a middle segment truncated, a byte flipped inside
// a record of a middle segment, a foreign file in the log's directory, a
// foreign file with a segment's name — is opened (never a crash or a
// refusal to start: the agent must keep recording), every span of the
// undamaged segments is delivered, and what was lost is counted.
func TestRedTeamDamagedSpoolDir(t *testing.T) {
	const n = 600
	damages := map[string]func(t *testing.T, dir string, segs []string){
		"middle segment truncated": func(t *testing.T, _ string, segs []string) {
			fi, err := os.Stat(segs[1])
			require.NoError(t, err)
			require.NoError(t, os.Truncate(segs[1], fi.Size()/2))
		},
		"byte flipped in a middle record": func(t *testing.T, _ string, segs []string) {
			b, err := os.ReadFile(segs[1])
			require.NoError(t, err)
			b[len(b)/2] ^= 0x40
			require.NoError(t, os.WriteFile(segs[1], b, 0o600))
		},
		"foreign file in wal/": func(t *testing.T, dir string, _ []string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "wal", "notes.txt"), []byte("hello"), 0o600))
		},
		"foreign file in dir": func(t *testing.T, dir string, _ []string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "core.1234"), []byte("junk"), 0o600))
		},
		"ACK garbled": func(t *testing.T, dir string, _ []string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "ACK"), []byte("\xff\xff\xff\xff\xff\xff\xff\xffjunk"), 0o600))
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := spool.Config{Dir: dir, MaxBytes: 64 << 10, Full: spool.Refuse} // 16 KiB segments
			c := &memClient{}
			c.down.Store(true)
			r := open(t, cfg, c)
			for i := range n {
				r.end(fmt.Sprint("s", i))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_ = r.tp.Shutdown(ctx) // the collector is down: all stay on disk
			refused := r.sp.Stats().Refused
			segs := segmentFiles(t, dir)
			require.GreaterOrEqual(t, len(segs), 3)
			damage(t, dir, segs)

			c.down.Store(false)
			sp, err := spool.Open(context.Background(), cfg, c)
			require.NoError(t, err, "a damaged directory must not stop the agent")
			require.NoError(t, sp.Shutdown(context.Background()))
			got := len(c.byName())
			st := sp.Stats()
			t.Logf("spooled %d, delivered %d, torn %d", n-int(refused), got, st.TornRecovered)
			assert.GreaterOrEqual(t, int64(got)+st.TornRecovered, int64(n)-refused, "every span delivered or counted")
			assert.Greater(t, got, (n-int(refused))/2, "the undamaged segments delivered")
		})
	}
}
