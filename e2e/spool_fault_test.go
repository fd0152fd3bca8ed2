package e2e_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// The fault tests of the spool and strict mode (issue 12): the agent is a
// separate process (cmd/toolgate-demo in load mode), the collector and
// ClickHouse are real, and faults are real: the collector stopped, the
// agent SIGKILLed, the spool's log torn, its budget exhausted.

// waitStored polls gate_decisions until it holds every ID of want for
// service, or timeout; it returns the IDs still missing.
func (s *stack) waitStored(t testing.TB, service string, want []string, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := s.storedIDs(context.Background(), t, service)
		var missing []string
		for _, id := range want {
			if got[id] == 0 {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			return missing
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestFaultSpoolCollectorDown: the collector is down for 5 minutes while
// the agent makes 100 calls/s through its spool; no decision is lost, and
// every decision made before the collector came back is in ClickHouse
// within a minute of its return. (TOOLGATE_E2E_SHORT: a 1-minute outage.)
func TestFaultSpoolCollectorDown(t *testing.T) {
	t.Parallel()
	s := startStack(t, withoutJaeger())
	service := "e2e-spool-outage"
	const rate = 100
	before, down, after := outage(10*time.Second), outage(5*time.Minute), outage(20*time.Second)
	calls := rate * int((before + down + after).Seconds())
	a := startAgent(t, s, "--service", service, "--spool", t.TempDir(), "--calls", strconv.Itoa(calls),
		"--rate", strconv.Itoa(rate)+"/s", "--linger", "2m", "--flush-timeout", "30s")
	time.Sleep(before)
	t.Logf("stopping the collector for %s", down)
	require.NoError(t, s.collector.Stop())
	time.Sleep(down)
	returned := time.Now()
	require.NoError(t, s.collector.Start(context.Background()))
	t.Logf("collector back after %s", time.Since(returned.Add(-down)).Round(time.Second))
	beforeReturn := func() uint64 {
		var n uint64
		require.NoError(t, s.store.Conn().QueryRow(withParam(context.Background(), "s", service),
			"SELECT count() FROM otel.gate_decisions FINAL WHERE ServiceName = {s:String} AND Timestamp <= fromUnixTimestamp64Nano("+
				strconv.FormatInt(returned.UnixNano(), 10)+")").Scan(&n))
		return n
	}
	// The count of decisions made before the return, sampled for a minute.
	type mark struct {
		at time.Duration
		n  uint64
	}
	var marks []mark
	for time.Since(returned) < time.Minute {
		marks = append(marks, mark{time.Since(returned), beforeReturn()})
		time.Sleep(time.Second)
	}
	withinMinute := beforeReturn()
	res := a.wait(t, 5*time.Minute)
	require.Equal(t, calls, res.Calls)
	got := s.waitSettled(t, service, calls, 2*time.Minute)
	stored := s.storedIDs(context.Background(), t, service)
	final := beforeReturn()
	caughtUp := time.Minute
	for _, m := range marks {
		if m.n == final {
			caughtUp = m.at
			break
		}
	}
	t.Logf("REPORT %s: %d calls, %d stored (%d rows), outage %s; decided before the return: %d, of which in ClickHouse a minute after it: %d (all by %s after the return); spool %+v",
		t.Name(), calls, got, len(stored), down, final, withinMinute, caughtUp.Round(time.Second), res.Spool)
	assert.Equal(t, calls, got, "decisions lost")
	assert.Len(t, stored, calls, "one row per call")
	assert.Equal(t, final, withinMinute, "every decision made before the collector's return is stored within a minute of it")
	assert.Zero(t, res.Lost)
	assert.Zero(t, res.Spool.Dropped+res.Spool.Refused, "the spool lost nothing")
	assert.Positive(t, res.Spool.UploadFailed, "uploads failed during the outage (and were retried)")
}

// tearTail appends a torn record to the spool's last log segment: a
// length that promises more bytes than follow, then random bytes — what a
// write cut short by a crash leaves.
func tearTail(t testing.TB, spoolDir string, rng *rand.Rand) {
	t.Helper()
	walDir := filepath.Join(spoolDir, "wal")
	ents, err := os.ReadDir(walDir)
	require.NoError(t, err)
	var segs []string
	for _, e := range ents {
		if len(e.Name()) == 20 && !e.IsDir() {
			segs = append(segs, e.Name())
		}
	}
	require.NotEmpty(t, segs, "no log segment in %s", walDir)
	sort.Strings(segs)
	f, err := os.OpenFile(filepath.Join(walDir, segs[len(segs)-1]), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	junk := binary.AppendUvarint(nil, uint64(200+rng.IntN(2000)))
	for range 1 + rng.IntN(150) {
		junk = append(junk, byte(rng.UintN(256)))
	}
	_, err = f.Write(junk)
	require.NoError(t, err)
}

// TestFaultAgentKilled: the agent is killed with SIGKILL at 20 random
// points of a replay (startup and recovery included) and started again on
// the same spool each time; every fourth kill, and before the last start,
// the log's tail is torn; the collector is down for the first half of the
// kills. A last start with no calls drains the spool.
// Each tool runs 3 ms and records its call's ID (fsynced) when it starts,
// so kills land while tools run. With strict mode every call whose tool
// started has its decision in ClickHouse (as interrupted when the kill
// came first); without it the loss is measured and bounded by the calls
// in flight. No start crashes on a torn log, and the torn
// record is counted.
func TestFaultAgentKilled(t *testing.T) {
	t.Parallel()
	s := startStack(t, withoutJaeger())
	kills := 20
	if short() {
		kills = 6
	}
	const rate = 300
	for _, strict := range []bool{true, false} {
		name := map[bool]string{true: "strict", false: "spool only"}[strict]
		t.Run(name, func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			rng := rand.New(rand.NewPCG(seed, 12))
			t.Logf("seed %d", seed)
			service := fmt.Sprintf("e2e-kill-%v", strict)
			// Each start's tag names its run IDs (<run>@<tag>.<pass>): one
			// prefix per subtest, so that their runs never share an ID.
			tagPrefix := map[bool]string{true: "s", false: "n"}[strict] + "k"
			began := time.Now()
			dir := t.TempDir()
			spoolDir, ran := filepath.Join(dir, "spool"), filepath.Join(dir, "ran")
			args := []string{"--service", service, "--spool", spoolDir, "--ran", ran, "--rate", strconv.Itoa(rate) + "/s",
				"--tool-time", "3ms", "--calls", "1000000", "--flush-timeout", "1s"}
			if strict {
				args = append(args, "--strict")
			}
			// The collector is down for the first half of the kills, so
			// that kills leave unsent records for the next start to recover.
			require.NoError(t, s.collector.Stop())
			torn := 0
			for i := range kills {
				if i == kills/2 {
					require.NoError(t, s.collector.Start(context.Background()))
				}
				a := startAgent(t, s, append(args, "--tag", tagPrefix+strconv.Itoa(i))...)
				time.Sleep(time.Duration(200+rng.IntN(1800)) * time.Millisecond)
				a.kill(t)
				if i%4 == 3 || i == kills-1 {
					if _, err := os.Stat(filepath.Join(spoolDir, "wal")); err == nil {
						tearTail(t, spoolDir, rng)
						torn++
					}
				}
			}
			ids := ranIDs(t, ran)
			require.NotEmpty(t, ids, "no tool ran before the kills")
			last := startAgent(t, s, "--service", service, "--spool", spoolDir, "--calls", "0", "--linger", "90s", "--tag", "drain")
			res := last.wait(t, 3*time.Minute)
			assert.True(t, res.Drained, "the last start drained the spool: %+v", res.Spool)
			assert.Positive(t, res.Spool.TornRecovered, "the torn record before the last start was recovered and counted")
			missing := s.waitStored(t, service, ids, time.Minute)
			var interrupted uint64
			require.NoError(t, s.store.Conn().QueryRow(withParam(context.Background(), "s", service),
				"SELECT count() FROM otel.gate_decisions FINAL WHERE ServiceName = {s:String} AND StatusMessage = '"+spool.InterruptedMessage+"'").Scan(&interrupted))
			t.Logf("REPORT %s: %d kills, %d torn tails; %d calls started their tool, %d of them without a decision in ClickHouse; %d stored as interrupted; last start: %+v",
				t.Name(), kills, torn, len(ids), len(missing), interrupted, res.Spool)
			verifyKilledRuns(t, s, service, tagPrefix, began, kills, missing)
			if strict {
				assert.Empty(t, missing, "strict mode: a call whose tool started has its decision stored")
				assert.Positive(t, interrupted, "calls killed while their tool ran are stored as interrupted")
				return
			}
			// Without strict mode a kill loses what had not been handed to
			// the OS: the call in flight (the replay makes one call at a
			// time; a call's span is written when it ends), far less than
			// one sync interval (100 ms) of calls.
			assert.LessOrEqual(t, len(missing), kills, "at most the call in flight per kill is lost")
			assert.Zero(t, interrupted, "only strict mode commits calls before they run")
		})
	}
}

// killVerify is `auditq verify -o json` as the kill test reads it.
type killVerify struct {
	Chains         int                 `json:"chains"`
	CompleteChains int                 `json:"complete_chains"`
	OpenChains     int                 `json:"open_chains"`
	ProblemChains  int                 `json:"problem_chains"`
	Unchained      uint64              `json:"unchained"`
	Reports        []audit.ChainReport `json:"reports"`
}

// splitCall splits a replayed call's ID, "<run ID>#<seq>", into its run
// ID and its position in the run (the replay's calls are all decisions,
// one per position, in call order: the position is the chain's).
func splitCall(t testing.TB, id string) (string, uint64) {
	t.Helper()
	i := strings.LastIndexByte(id, '#')
	require.Positive(t, i, "call ID %q", id)
	seq, err := strconv.ParseUint(id[i+1:], 10, 64)
	require.NoError(t, err, "call ID %q", id)
	return id[:i], seq
}

// runTag is the start (--tag) that made a run: "<run>@<tag>.<pass>".
func runTag(runID string) string {
	tag := runID[strings.LastIndexByte(runID, '@')+1:]
	return tag[:strings.LastIndexByte(tag, '.')]
}

// verifyKilledRuns runs `auditq verify` (the binary) over the runs of the
// kill test (their run IDs carry tagPrefix) and checks what an auditor
// sees after the kills:
//   - no edited row, broken link, duplicate or head mismatch: a kill loses
//     decisions, it never changes or re-links one;
//   - every stored decision holds its call's position (the call's seq in
//     its run) and every run that ended is complete to its recorded end;
//   - each start has at most one run whose end is not stored (open): the
//     run the kill cut off; a missing position (only visible before a
//     stored one) is at most one per start, in that run;
//   - a call whose tool started but whose decision is not stored (ran,
//     without strict mode) is the position right after its run's last
//     stored one — the call in flight whose span the kill cut off, which
//     verify cannot see in an open chain;
//   - with strict mode, every call stored as interrupted (killed while
//     its tool ran) holds its position, committed before the tool ran: the
//     last of its open chain, hashing to its stored hash.
func verifyKilledRuns(t *testing.T, s *stack, service, tagPrefix string, since time.Time, kills int, lost []string) {
	t.Helper()
	ctx := context.Background()
	mine := func(runID string) bool { return strings.Contains(runID, "@"+tagPrefix) }
	var res killVerify
	var took time.Duration
	openPerTag := map[string]int{}
	// The run spans of the runs that ended may reach otel_traces after
	// their decisions: wait until no start has more than one open run.
	for deadline := time.Now().Add(time.Minute); ; {
		began := time.Now()
		out, err := exec.CommandContext(ctx, testenv.AuditqBinary(t), "verify", "--since", since.Add(-time.Minute).UTC().Format(time.RFC3339),
			"--dsn", s.ch.ReaderDSN, "-o", "json").Output()
		took = time.Since(began)
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() != 3 {
			require.Failf(t, "auditq verify failed", "exit %d: %s", ee.ExitCode(), ee.Stderr)
		}
		res = killVerify{}
		require.NoError(t, json.Unmarshal(out, &res), string(out))
		clear(openPerTag)
		settled := true
		for _, r := range res.Reports {
			if mine(r.RunID) && r.Status != audit.StatusComplete {
				if openPerTag[runTag(r.RunID)]++; openPerTag[runTag(r.RunID)] > 1 {
					settled = false
				}
			}
		}
		if settled || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	reports := map[string]audit.ChainReport{} // by run ID
	var open, complete, missing int
	for _, r := range res.Reports {
		if !mine(r.RunID) {
			continue
		}
		_, dup := reports[r.RunID]
		require.False(t, dup, "one chain per run: %s", r.RunID)
		reports[r.RunID] = r
		switch r.Status {
		case audit.StatusComplete:
			complete++
			assert.Equal(t, r.Length, r.Rows, "run %s ended: every position to its recorded length", r.RunID)
		case audit.StatusOpen:
			open++
		}
		for _, p := range r.Problems {
			require.Equal(t, audit.ProblemMissing, p.Kind, "run %s: a kill loses decisions, it does not change one: %+v", r.RunID, p)
			missing += int(p.Last - p.Seq + 1)
			assert.Equal(t, p.Seq, p.Last, "run %s: at most one position lost per kill: %+v", r.RunID, p)
		}
	}
	for tag, n := range openPerTag {
		assert.LessOrEqual(t, n, 1, "start %s: only the run its kill cut off is open or incomplete", tag)
	}
	assert.LessOrEqual(t, len(openPerTag), kills, "one cut-off run per kill at most")
	assert.LessOrEqual(t, missing, kills, "at most one missing position per kill")
	assert.Positive(t, complete, "runs that ended before a kill verify complete")
	assert.Zero(t, res.Unchained, "every decision of the replay is chained")

	// Every stored decision holds its call's position in its run's chain.
	rows, err := s.store.Conn().Query(withParam(ctx, "s", service),
		"SELECT ToolCallId, RunId, ChainSeq, StatusMessage = '"+spool.InterruptedMessage+"' FROM otel.gate_decisions FINAL WHERE ServiceName = {s:String}")
	require.NoError(t, err)
	var interrupted int
	for rows.Next() {
		var id, run string
		var seq uint64
		var intr bool
		require.NoError(t, rows.Scan(&id, &run, &seq, &intr))
		callRun, want := splitCall(t, id)
		require.Equal(t, callRun, run)
		require.Equal(t, want, seq, "call %s holds its position", id)
		r, ok := reports[run]
		require.True(t, ok, "run %s of a stored decision was verified", run)
		if intr {
			interrupted++
			assert.Equal(t, audit.StatusOpen, r.Status, "interrupted call %s: its run never ended: %s", id, r)
			assert.Equal(t, seq, r.Last, "interrupted call %s is the last position of its run (the kill came while its tool ran)", id)
		}
	}
	require.NoError(t, rows.Err())
	rows.Close()
	// A call whose tool started and whose decision is not stored is the
	// position after its open run's last stored one: the call in flight.
	perTag := map[string]int{}
	for _, id := range lost {
		run, seq := splitCall(t, id)
		r, ok := reports[run]
		if ok {
			assert.NotEqual(t, audit.StatusComplete, r.Status, "call %s is lost: its run cannot verify complete", id)
			assert.Equal(t, r.Last+1, seq, "call %s is lost: the position after its run's last stored one", id)
		} else {
			assert.EqualValues(t, 1, seq, "call %s is lost and its run has no stored decision: its first", id)
		}
		perTag[runTag(run)]++
	}
	for tag, n := range perTag {
		assert.Equal(t, 1, n, "start %s: one lost call, the one in flight at its kill", tag)
	}
	t.Logf("REPORT %s: auditq verify over %d runs after the kills (%s): %d complete, %d open (cut off by a kill), %d missing positions; %d interrupted calls hold their position; %d lost calls, each the position after its open run's last",
		t.Name(), len(reports), took.Round(time.Millisecond), complete, open, missing, interrupted, len(lost))
}

// TestFaultSpoolFull: the collector is down and the spool's budget is
// tiny. DropOldest drops the oldest spans and counts them, and what it kept
// arrives once the collector is back; Refuse in strict mode denies calls
// "audit unavailable" (their tools never run), counts them, and every
// call whose tool ran is stored.
func TestFaultSpoolFull(t *testing.T) {
	t.Parallel()
	s := startStack(t, withoutJaeger())
	const calls = 3000
	const budget = 256 << 10
	for _, policy := range []string{"drop-oldest", "refuse"} {
		t.Run(policy, func(t *testing.T) {
			require.NoError(t, s.collector.Stop())
			service := "e2e-spool-full-" + policy
			dir := t.TempDir()
			spoolDir, ran := filepath.Join(dir, "spool"), filepath.Join(dir, "ran")
			args := []string{"--service", service, "--spool", spoolDir, "--ran", ran, "--calls", strconv.Itoa(calls),
				"--flush-timeout", "1s", "--tag", "full"}
			if policy == "refuse" {
				args = append(args, "--strict")
			}
			env := []string{"TOOLGATE_SPOOL_MAX_BYTES=" + strconv.Itoa(budget), "TOOLGATE_SPOOL_FULL=" + policy}
			res := startAgentEnv(t, s, env, args...).wait(t, 3*time.Minute)
			require.Equal(t, calls, res.Calls)
			require.NoError(t, s.collector.Start(context.Background()))
			drain := startAgentEnv(t, s, env[:1], "--service", service, "--spool", spoolDir,
				"--calls", "0", "--linger", "90s", "--tag", "drain").wait(t, 3*time.Minute)
			assert.True(t, drain.Drained)
			ids := ranIDs(t, ran)
			s.waitSettled(t, service, calls, time.Minute)
			if policy == "refuse" {
				s.waitStored(t, service, ids, time.Minute)
			}
			stored := s.storedIDs(context.Background(), t, service)
			require.Len(t, ids, res.Ran, "--ran holds every call whose tool ran")
			var auditDenied uint64
			require.NoError(t, s.store.Conn().QueryRow(withParam(context.Background(), "s", service),
				"SELECT count() FROM otel.gate_decisions FINAL WHERE ServiceName = {s:String} AND ErrorKind = 'audit_unavailable'").Scan(&auditDenied))
			t.Logf("REPORT %s: %d calls (%d ran, %d denied, %d for the audit), %d stored, %d audit denials stored; spool while down %+v; drain %+v",
				t.Name(), res.Calls, res.Ran, res.Denied, res.AuditUnavailable, len(stored), auditDenied, res.Spool, drain.Spool)
			switch policy {
			case "drop-oldest":
				assert.Positive(t, res.Spool.Dropped, "the budget was exhausted and the oldest spans dropped")
				assert.Zero(t, res.AuditUnavailable, "without strict mode no call is denied for the audit")
				assert.Less(t, len(stored), calls)
				assert.GreaterOrEqual(t, int64(len(stored))+res.Spool.Dropped, int64(calls), "every missing decision was counted as dropped")
				assert.Positive(t, stored[ids[len(ids)-1]], "the newest decision was kept")
			case "refuse":
				assert.Positive(t, res.AuditUnavailable, "a full spool denies strict-mode calls")
				assert.Equal(t, int64(res.AuditUnavailable), res.Spool.RefusedCommits, "each denial is a counted refused commit")
				assert.Equal(t, calls, res.Ran+res.Denied, "every call ran or was denied")
				for _, id := range ids {
					assert.Positive(t, stored[id], "call %s ran: its decision is stored", id)
				}
				assert.GreaterOrEqual(t, int64(auditDenied)+res.Spool.Refused, int64(res.AuditUnavailable),
					"each audit denial is stored or counted as refused")
			}
		})
	}
}
