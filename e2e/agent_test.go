package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testenv"
)

// The agent process of the fault tests is cmd/toolgate-demo in load mode
// (--calls/--duration): it replays testdata/real/trajectories.jsonl through
// the gated executor and exports through otelbridge, with the spool and
// strict mode when asked, and appends the ID of every call whose tool ran
// to its --ran file.

var (
	agentOnce sync.Once
	agentBin  string
	agentErr  error
)

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// agentBinary returns $TOOLGATE_DEMO, or ./cmd/toolgate-demo built once per
// test process (into a directory of this checkout's, under a file lock: test
// processes of several packages may build at once).
func agentBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TOOLGATE_DEMO"); p != "" {
		return p
	}
	agentOnce.Do(func() {
		// One directory per checkout, reused: go build leaves an
		// up-to-date binary alone, and nothing piles up in /tmp.
		sum := sha256.Sum256([]byte(moduleRoot()))
		dir := filepath.Join(os.TempDir(), "toolgate-e2e-agent-"+hex.EncodeToString(sum[:6]))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			agentErr = err
			return
		}
		agentBin = filepath.Join(dir, "toolgate-demo")
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goTool); err != nil {
			goTool = "go"
		}
		lock, err := os.OpenFile(filepath.Join(dir, "build.lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			agentErr = err
			return
		}
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			agentErr = fmt.Errorf("lock %s: %w", lock.Name(), err)
			return
		}
		defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
		cmd := exec.Command(goTool, "build", "-o", agentBin, "./cmd/toolgate-demo")
		cmd.Dir = moduleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			agentErr = fmt.Errorf("go build ./cmd/toolgate-demo: %w\n%s", err, out)
		}
	})
	require.NoError(t, agentErr)
	return agentBin
}

// agentProc is one agent process.
type agentProc struct {
	cmd    *exec.Cmd
	stdout testenv.SyncBuffer
	stderr testenv.SyncBuffer
	done   chan struct{}
	err    error
}

// agentResult is the JSON line the agent prints when it ends (see
// cmd/toolgate-demo/agent.go).
type agentResult struct {
	Calls            int   `json:"calls"`
	Ran              int   `json:"ran"`
	Denied           int   `json:"denied"`
	AuditUnavailable int   `json:"auditUnavailable"`
	Drained          bool  `json:"drained"`
	Lost             int64 `json:"lost"`
	Spool            struct {
		Spooled, Committed, Sent, Dropped, Refused, RefusedCommits int64
		TornRecovered, Interrupted, UploadFailed, Unsent, Pending  int64
	} `json:"spool"`
	ShutdownError string `json:"shutdownError"`
}

// startAgent starts the agent against the stack's collector with args
// after the common ones.
func startAgent(t testing.TB, s *stack, args ...string) *agentProc {
	t.Helper()
	return startAgentEnv(t, s, nil, args...)
}

// startAgentEnv is startAgent with more environment variables (KEY=value),
// such as the spool's TOOLGATE_SPOOL_*.
func startAgentEnv(t testing.TB, s *stack, env []string, args ...string) *agentProc {
	t.Helper()
	all := append([]string{
		"--transcript", filepath.Join(moduleRoot(), "testdata", "real", "trajectories.jsonl"),
		"--otlp-endpoint", "http://" + s.collector.GRPCEndpoint,
	}, args...)
	a := &agentProc{cmd: exec.Command(agentBinary(t), all...), done: make(chan struct{})}
	a.cmd.Env = append(append(os.Environ(), s.collector.HeadersEnv()), env...)
	a.cmd.Stdout, a.cmd.Stderr = &a.stdout, &a.stderr
	require.NoError(t, a.cmd.Start())
	go func() {
		a.err = a.cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		select {
		case <-a.done:
		default:
			_ = a.cmd.Process.Kill()
			<-a.done
		}
	})
	return a
}

// wait waits for the agent to exit (up to timeout), requires exit 0 and
// returns its result line.
func (a *agentProc) wait(t testing.TB, timeout time.Duration) agentResult {
	t.Helper()
	select {
	case <-a.done:
	case <-time.After(timeout):
		_ = a.cmd.Process.Kill()
		<-a.done
		t.Fatalf("agent did not end within %s; stderr:\n%s", timeout, tail(a.stderr.String()))
	}
	require.NoError(t, a.err, "agent failed; stderr:\n%s", tail(a.stderr.String()))
	var res agentResult
	lines := strings.Split(strings.TrimSpace(a.stdout.String()), "\n")
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &res), "agent stdout: %s", a.stdout.String())
	return res
}

// kill ends the agent with SIGKILL (a crash) and waits for it; it requires
// that the agent was still running (it did not exit or crash by itself).
func (a *agentProc) kill(t testing.TB) {
	t.Helper()
	select {
	case <-a.done:
		t.Fatalf("agent ended before the kill: %v; stderr:\n%s", a.err, tail(a.stderr.String()))
	default:
	}
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGKILL))
	<-a.done
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// ranIDs reads a --ran file: the IDs of the calls whose tool ran.
func ranIDs(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// storedIDs returns the tool call IDs gate_decisions holds for service,
// with how many rows each has.
func (s *stack) storedIDs(ctx context.Context, t testing.TB, service string) map[string]int {
	t.Helper()
	rows, err := s.store.Conn().Query(withParam(ctx, "s", service), "SELECT ToolCallId FROM otel.gate_decisions FINAL WHERE ServiceName = {s:String}")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		out[id]++
	}
	require.NoError(t, rows.Err())
	return out
}
