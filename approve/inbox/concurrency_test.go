package inbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// TestConcurrentTakeOnce: many goroutines resume the same approved request
// at once, through one DB value and through several DB values over the
// same file (each its own file handle and lock); exactly one gets it.
func TestConcurrentTakeOnce(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("sharedDB=%v", shared), func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t)
			r := f.ask(t, `{"cmd":"ls"}`)
			_, err := f.ib.Answer(ctx, r.ID, Answer{Approve: true, Approver: "alice"})
			require.NoError(t, err)

			const n = 16
			var wins, used atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range n {
				ib := f.ib
				if !shared {
					db, err := Open(f.db.Path(), OpenConfig{})
					require.NoError(t, err)
					ib = New(db, db, Config{TTL: testTTL, Now: f.clock.Now})
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					got, err := ib.Take(ctx, r.ID, testCall(`{"cmd":"ls"}`))
					switch {
					case err == nil && got.Status == StatusUsed:
						wins.Add(1)
					case errors.Is(err, ErrUsed):
						used.Add(1)
					default:
						t.Errorf("take: %+v, %v", got, err)
					}
				}()
			}
			close(start)
			wg.Wait()
			assert.EqualValues(t, 1, wins.Load())
			assert.EqualValues(t, n-1, used.Load())
		})
	}
}

// TestConcurrentAnswers: of concurrent answers to one request, exactly one
// sticks; the others get ErrAnswered.
func TestConcurrentAnswers(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	r := f.ask(t, `{"cmd":"ls"}`)
	const n = 8
	var ok, answered atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.ib.Answer(ctx, r.ID, Answer{Approve: i%2 == 0, Approver: "alice"})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrAnswered):
				answered.Add(1)
			default:
				t.Errorf("answer: %v", err)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, ok.Load())
	assert.EqualValues(t, n-1, answered.Load())
}

// TestLockTimeout: an operation waits for the lock another holder has, at
// most LockTimeout.
func TestLockTimeout(t *testing.T) {
	f := newFixture(t)
	holder, err := bolt.Open(f.db.Path(), 0o600, &bolt.Options{Timeout: time.Second})
	require.NoError(t, err)
	db, err := Open(filepath.Join(t.TempDir(), "other.db"), OpenConfig{})
	require.NoError(t, err)
	db.path = f.db.Path() // a second DB value, with a short timeout, over the held file
	db.cfg.LockTimeout = 150 * time.Millisecond
	begin := time.Now()
	_, err = db.Get(context.Background(), NewID())
	assert.ErrorIs(t, err, bolt.ErrTimeout)
	assert.GreaterOrEqual(t, time.Since(begin), 100*time.Millisecond)
	require.NoError(t, holder.Close())
	_, err = db.Get(context.Background(), NewID())
	assert.ErrorIs(t, err, ErrNotFound)
}

// Cross-process tests: the test binary runs itself as a child process
// (TestChildProcess, selected by -test.run and enabled by childEnv) that
// works on the same DB file as the parent.
const childEnv = "TOOLGATE_INBOX_CHILD"

// child starts this test binary as a child doing op on the DB at path.
func child(t *testing.T, path, op, id string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join([]string{op, path, id}, "|"))
	cmd.Stderr = os.Stderr
	return cmd
}

// TestChildProcess is the child's side; it does nothing unless childEnv
// is set. It prints "READY" once it runs, then opens the DB and prints one
// line with the outcome of op.
func TestChildProcess(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("only run as a child process of the cross-process tests")
	}
	parts := strings.SplitN(spec, "|", 3)
	op, path, id := parts[0], parts[1], parts[2]
	fmt.Println("READY", os.Getpid())
	db, err := Open(path, OpenConfig{LockTimeout: 30 * time.Second})
	if err != nil {
		fmt.Println("ERROR open", err)
		return
	}
	ib := New(db, db, Config{})
	ctx := context.Background()
	switch op {
	case "approve":
		_, err := ib.Answer(ctx, id, Answer{Approve: true, Approver: "alice", Reason: "from another process"})
		fmt.Println("ANSWER", errString(err))
	case "take":
		r, err := ib.Take(ctx, id, testCall(`{"cmd":"ls"}`))
		if err == nil {
			fmt.Println("TAKE won", r.Status)
		} else {
			fmt.Println("TAKE", errString(err))
		}
	case "ask":
		r, err := ib.Ask(ctx, testRequest(`{"cmd":"ls"}`))
		fmt.Println("ASK", r.ID, errString(err))
	default:
		fmt.Println("ERROR unknown op", op)
	}
}

func errString(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrUsed):
		return "used"
	case errors.Is(err, ErrAnswered):
		return "answered"
	}
	return "error: " + err.Error()
}

// runChild runs a child to completion and returns its output lines after
// READY.
func runChild(t *testing.T, path, op, id string) []string {
	t.Helper()
	out, err := child(t, path, op, id).Output()
	require.NoError(t, err, "child output: %s", out)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(l, "READY") || strings.HasPrefix(l, "PASS") || strings.HasPrefix(l, "ok") {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// TestCrossProcessAskAnswerTake: a request asked in one process is
// answered by a second and resumed by a third, once; the parent sees each
// step.
func TestCrossProcessAskAnswerTake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "inbox.db")
	db, err := Open(path, OpenConfig{})
	require.NoError(t, err)
	_, err = db.Add(ctx, "alice")
	require.NoError(t, err)
	ib := New(db, db, Config{})

	lines := runChild(t, path, "ask", "")
	require.Len(t, lines, 1)
	fields := strings.Fields(lines[0])
	require.Equal(t, []string{"ASK", fields[1], "ok"}, fields)
	id := fields[1]
	got, err := ib.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, StatusPending, got.Status, "the parent sees the child's request")

	assert.Equal(t, []string{"ANSWER ok"}, runChild(t, path, "approve", id))
	got, err = ib.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, StatusApproved, got.Status)
	assert.Equal(t, "from another process", got.Answer.Reason)

	assert.Equal(t, []string{"ANSWER answered"}, runChild(t, path, "approve", id))
	assert.Equal(t, []string{"TAKE won used"}, runChild(t, path, "take", id), "the child took it")
	assert.Equal(t, []string{"TAKE used"}, runChild(t, path, "take", id), "once")
	_, err = ib.Take(ctx, id, testCall(`{"cmd":"ls"}`))
	assert.ErrorIs(t, err, ErrUsed, "and the parent cannot take it again")
}

// TestCrossProcessTakeOnce: the parent holds the file's lock while two
// child processes start and try to take the same approved request (they
// wait for the lock); then the parent takes it too, concurrently with
// them. Exactly one of the three gets it.
func TestCrossProcessTakeOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "inbox.db")
	db, err := Open(path, OpenConfig{})
	require.NoError(t, err)
	_, err = db.Add(ctx, "alice")
	require.NoError(t, err)
	ib := New(db, db, Config{})
	r, err := ib.Ask(ctx, testRequest(`{"cmd":"ls"}`))
	require.NoError(t, err)
	_, err = ib.Answer(ctx, r.ID, Answer{Approve: true, Approver: "alice"})
	require.NoError(t, err)

	holder, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	require.NoError(t, err)
	held := true
	defer func() {
		if held {
			_ = holder.Close()
		}
	}()

	type result struct {
		lines []string
		err   error
	}
	results := make(chan result, 2)
	ready := make(chan struct{}, 2)
	for range 2 {
		cmd := child(t, path, "take", r.ID)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		go func() {
			var lines []string
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				l := sc.Text()
				if strings.HasPrefix(l, "READY") {
					ready <- struct{}{}
					continue
				}
				if strings.HasPrefix(l, "TAKE") || strings.HasPrefix(l, "ERROR") {
					lines = append(lines, l)
				}
			}
			results <- result{lines, cmd.Wait()}
		}()
	}
	for range 2 {
		select {
		case <-ready:
		case <-time.After(30 * time.Second):
			t.Fatal("children did not start")
		}
	}
	// Both children are up and blocked on the lock the parent holds.
	time.Sleep(100 * time.Millisecond)
	select {
	case res := <-results:
		t.Fatalf("a child finished while the parent held the lock: %v", res)
	default:
	}
	require.NoError(t, holder.Close())
	held = false
	parent, perr := ib.Take(ctx, r.ID, testCall(`{"cmd":"ls"}`))

	wins := 0
	if perr == nil {
		require.Equal(t, StatusUsed, parent.Status)
		wins++
	} else {
		require.ErrorIs(t, perr, ErrUsed)
	}
	for range 2 {
		res := <-results
		require.NoError(t, res.err)
		require.Len(t, res.lines, 1, "%v", res.lines)
		switch res.lines[0] {
		case "TAKE won used":
			wins++
		case "TAKE used":
		default:
			t.Fatalf("child: %s", res.lines[0])
		}
	}
	assert.Equal(t, 1, wins, "exactly one of three processes took the approval")
	got, err := ib.Get(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, StatusUsed, got.Status)
}
