package spool_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

const envChildDir, envChildSync, envChildRound = "SPOOL_TEST_CHILD_DIR", "SPOOL_TEST_CHILD_SYNC", "SPOOL_TEST_CHILD_ROUND"

// TestChildProcess is the process TestSIGKILL kills: it spools spans as
// fast as it can, the collector down, and prints each span's name once
// OnEnd (or Commit) returned; every 4th call is committed and left
// running.
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
	w := bufio.NewWriter(os.Stdout)
	pre := os.Getenv(envChildRound)
	for i := 0; ; i++ {
		if i%4 == 3 {
			_, s := r.tr.Start(context.Background(), fmt.Sprint(pre, "c", i))
			s.SetAttributes(attribute.String("gate.action", "allow"))
			require.NoError(t, r.sp.Commit(context.Background(), s))
			fmt.Fprintf(w, "%sc%d\n", pre, i)
		} else {
			r.end(fmt.Sprint(pre, "f", i))
			fmt.Fprintf(w, "%sf%d\n", pre, i)
		}
		_ = w.Flush()
	}
}

// TestSIGKILL kills a spooling process mid-stream (SIGKILL, no shutdown)
// and reopens its directory: every span whose OnEnd returned is sent,
// every committed call still running is sent as interrupted, and nothing
// else.
func TestSIGKILL(t *testing.T) {
	if os.Getenv(envChildDir) != "" {
		t.Skip("in the child")
	}
	for _, sync := range []string{"interval", "always"} {
		t.Run(sync, func(t *testing.T) {
			dir := t.TempDir()
			for round := range 3 {
				cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$")
				cmd.Env = append(os.Environ(), envChildDir+"="+dir, envChildSync+"="+sync, fmt.Sprintf("%s=r%d", envChildRound, round))
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
				for n, ss := range got { // only what the child started: at most one line it had not printed yet
					for _, s := range ss {
						_, intr := attr(s, spool.AttrInterrupted)
						_, final := attr(s, "phase")
						assert.True(t, intr || final, "%s: a pending snapshot uploaded", n)
					}
				}
				assert.LessOrEqual(t, len(got), len(done)+1)
				st := r.sp.Stats()
				assert.Zero(t, st.Lost())
				t.Logf("round %d: %d spans sent after SIGKILL, %d interrupted calls, %d torn", round, len(got), st.Interrupted, st.TornRecovered)
			}
		})
	}
}
