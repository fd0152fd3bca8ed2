package spool_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

const envChildDir, envChildSync, envChildRound = "SPOOL_TEST_CHILD_DIR", "SPOOL_TEST_CHILD_SYNC", "SPOOL_TEST_CHILD_ROUND"

// envChildWorkers is the number of goroutines spooling in the child (1
// when unset): concurrent OnEnd calls share a write.
const envChildWorkers = "SPOOL_TEST_CHILD_WORKERS"

// TestChildProcess is the process TestSIGKILL kills: it spools spans as
// fast as it can on $SPOOL_TEST_CHILD_WORKERS goroutines, the collector
// down, and prints each span's name once OnEnd (or Commit) returned; every
// 4th call is committed and left running.
func TestChildProcess(t *testing.T) {
	dir := os.Getenv(envChildDir)
	if dir == "" {
		t.Skip("the child of TestSIGKILL")
	}
	c := &memClient{}
	c.down.Store(true)
	cfg := spool.Config{Dir: dir}
	if os.Getenv(envChildSync) == "always" {
		cfg.Sync = spool.SyncAlways
	}
	r := open(t, cfg, c)
	workers, _ := strconv.Atoi(os.Getenv(envChildWorkers))
	workers = max(workers, 1)
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	pre := os.Getenv(envChildRound)
	for g := range workers {
		go func() {
			for i := g; ; i += workers {
				name := fmt.Sprint(pre, "f", i)
				if i%4 == 3 {
					name = fmt.Sprint(pre, "c", i)
					_, s := r.tr.Start(context.Background(), name)
					s.SetAttributes(attribute.String("gate.action", "allow"))
					if err := r.sp.Commit(context.Background(), s); err != nil {
						panic(err)
					}
				} else {
					r.end(name)
				}
				mu.Lock()
				fmt.Fprintln(w, name)
				_ = w.Flush()
				mu.Unlock()
			}
		}()
	}
	select {}
}

// TestSIGKILL kills a spooling process mid-stream (SIGKILL, no shutdown)
// and reopens its directory: every span whose OnEnd returned is sent,
// every committed call still running is sent as interrupted, and nothing
// else.
func TestSIGKILL(t *testing.T) {
	if os.Getenv(envChildDir) != "" {
		t.Skip("in the child")
	}
	for _, tt := range []struct {
		sync    string
		workers int
	}{{"interval", 1}, {"always", 1}, {"interval", 4}, {"always", 4}} {
		t.Run(fmt.Sprintf("%s-%d", tt.sync, tt.workers), func(t *testing.T) {
			dir := t.TempDir()
			for round := range 3 {
				cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$")
				cmd.Env = append(os.Environ(), envChildDir+"="+dir, envChildSync+"="+tt.sync, fmt.Sprintf("%s=r%d", envChildRound, round),
					fmt.Sprintf("%s=%d", envChildWorkers, tt.workers))
				out, err := cmd.StdoutPipe()
				require.NoError(t, err)
				require.NoError(t, cmd.Start())
				sc := bufio.NewScanner(out)
				var done []string // spans whose OnEnd or Commit returned
				pre := fmt.Sprintf("r%d", round)
				for sc.Scan() {
					if l := sc.Text(); strings.HasPrefix(l, pre) {
						done = append(done, l)
					}
					if len(done) == 150+round*37 {
						require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
					}
				}
				_ = cmd.Wait()

				c := &memClient{}
				r := open(t, spool.Config{Dir: dir}, c)
				require.NoError(t, r.tp.Shutdown(context.Background()))
				got := c.byName()
				for _, n := range done {
					require.Len(t, got[n], 1, "round %d: %s", round, n)
					s := got[n][0]
					_, intr := attr(s, spool.AttrInterrupted)
					_, final := attr(s, "phase")
					if strings.HasPrefix(n, pre+"c") {
						assert.True(t, intr, "%s interrupted", n)
					} else {
						assert.True(t, final, "%s final", n)
					}
				}
				for n, ss := range got { // only what the child started: at most one line per worker it had not printed yet
					for _, s := range ss {
						_, intr := attr(s, spool.AttrInterrupted)
						_, final := attr(s, "phase")
						assert.True(t, intr || final, "%s: a pending snapshot uploaded", n)
					}
				}
				assert.LessOrEqual(t, len(got), len(done)+tt.workers)
				st := r.sp.Stats()
				assert.Zero(t, st.Lost())
				t.Logf("round %d: %d spans sent after SIGKILL, %d interrupted calls, %d torn", round, len(got), st.Interrupted, st.TornRecovered)
			}
		})
	}
}
