package audit_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// TestStoreScale is the store's benchmark at scale (make bench-store; not
// part of make test): for each size in $TOOLGATE_STORE_BENCH (decisions,
// comma-separated, e.g. 100000,1000000,10000000; unset skips the test) it
// loads audittest.LoadShaped decisions through otel_traces (so the view
// fills gate_decisions) into a fresh embedded server with merges stopped,
// samples the process's RSS (the engine runs in it) while loading, rolls
// the hourly roll-up up, and measures the median of 7 runs of each auditq
// question, first right after loading (parts unmerged), then after
// OPTIMIZE … FINAL, and for stats also without the roll-up
// (gate_decisions FINAL alone, as before schema version 10); then the
// export's rows/s over 50,000 and 200,000 decisions and its time to the
// first decision, from the range's start and from 28 days deep. The
// markdown table goes to the log and to $TOOLGATE_STORE_BENCH_OUT when
// set. Bounded: each size loads once, every question runs 7 times (the
// baselines without the roll-up 3 times from 5M on), and the
// export reads 250,003 decisions from each of its two starting points.
func TestStoreScale(t *testing.T) {
	spec := os.Getenv("TOOLGATE_STORE_BENCH")
	if spec == "" {
		t.Skip("set TOOLGATE_STORE_BENCH=100000,1000000 (make bench-store)")
	}
	var lines []string
	lines = append(lines,
		"| decisions | state | parts | decisions --since 24h | decisions --action deny --agent A --since 720h | stats --by tool,action --since 720h | stats --by agent,rule --every 1d --since 720h | trace | export rows/s (from the start / 28 days deep) |",
		"|---|---|---|---|---|---|---|---|---|")
	var notes []string
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(t, err, "TOOLGATE_STORE_BENCH")
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			rows, note := scaleRun(t, n)
			lines = append(lines, rows...)
			notes = append(notes, note)
		})
		// After each size, so that a run stopped by its timeout keeps
		// what it measured.
		table := strings.Join(lines, "\n") + "\n\n" + strings.Join(notes, "\n") + "\n"
		t.Log("\n" + table)
		if out := os.Getenv("TOOLGATE_STORE_BENCH_OUT"); out != "" {
			require.NoError(t, os.WriteFile(out, []byte(table), 0o644))
		}
	}
}

// rssSampler records the largest resident set of this process (VmRSS)
// while it runs.
type rssSampler struct {
	mu   sync.Mutex
	peak uint64 // bytes
	stop chan struct{}
	done chan struct{}
}

func startRSS() *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := rss(); v > 0 {
				s.mu.Lock()
				s.peak = max(s.peak, v)
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) Stop() uint64 {
	close(s.stop)
	<-s.done
	return s.peak
}

func rss() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// questionRuns is how many times median runs each auditq question, at
// every size (a median of 3 let one background merge or refresh decide
// the cell: 117 ms once for a question measured at 58–70 ms in 9 runs).
const questionRuns = 7

// baselineRuns is how many times median runs a stats question without the
// roll-up (the baseline): 7, or 3 from 5M decisions on (a scan of the
// trail takes seconds there).
func baselineRuns(n int) int {
	if n >= 5000000 {
		return 3
	}
	return 7
}

// median runs run times times and returns the median time.
func median(t *testing.T, times int, run func() error) time.Duration {
	t.Helper()
	var ds []time.Duration
	for range times {
		t0 := time.Now()
		require.NoError(t, run())
		ds = append(ds, time.Since(t0))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func ms(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// scaleRun loads n decisions and measures; it returns the table's rows
// and a note on the load.
func scaleRun(t *testing.T, n int) ([]string, string) {
	env := audittest.Start(t)
	ctx := context.Background()
	w := env.Writer
	require.NoError(t, w.Exec(ctx, "SYSTEM STOP MERGES otel.gate_decisions"))
	require.NoError(t, w.Exec(ctx, "SYSTEM STOP VIEW otel.gate_decisions_hourly_mv"))
	end := time.Now()
	sampler := startRSS()
	t0 := time.Now()
	require.NoError(t, audittest.LoadShaped(ctx, w, env.Database, n, end, audittest.ShapedOptions{Batch: 50000}))
	loadTime := time.Since(t0)
	peak := sampler.Stop()
	t1 := time.Now()
	require.NoError(t, audit.Roll(ctx, w, audit.WithRollupDelay(0)))
	rollTime := time.Since(t1)
	var count uint64
	require.NoError(t, w.QueryRow(ctx, "SELECT count() FROM otel.gate_decisions").Scan(&count))
	require.EqualValues(t, n, count)

	st := env.Store
	since720 := end.Add(-720 * time.Hour)
	since24 := end.Add(-24 * time.Hour)
	var trace string
	require.NoError(t, w.QueryRow(ctx, "SELECT TraceId FROM otel.gate_decisions WHERE Timestamp >= now() - INTERVAL 3 DAY LIMIT 1").Scan(&trace))
	questions := []func(rollup bool) error{
		func(bool) error { _, err := st.Decisions(ctx, audit.Filter{Since: since24}, audit.Page{}); return err },
		func(bool) error {
			_, err := st.Decisions(ctx, audit.Filter{Since: since720, Action: "deny", Agent: "agent-07"}, audit.Page{})
			return err
		},
		func(rollup bool) error {
			_, _, err := audit.StatsFrom(ctx, st, audit.StatsQuery{Filter: audit.Filter{Since: since720}, By: []audit.Dimension{audit.ByTool, audit.ByAction}}, rollup)
			return err
		},
		func(rollup bool) error {
			_, _, err := audit.StatsFrom(ctx, st, audit.StatsQuery{Filter: audit.Filter{Since: since720}, By: []audit.Dimension{audit.ByAgent, audit.ByRule}, Every: 24 * time.Hour}, rollup)
			return err
		},
		func(bool) error { _, err := st.Trace(ctx, trace); return err },
	}
	parts := func() uint64 {
		var p uint64
		require.NoError(t, w.QueryRow(ctx, "SELECT count() FROM system.parts WHERE database = 'otel' AND table = 'gate_decisions' AND active").Scan(&p))
		return p
	}
	var rows []string
	measure := func(state string) {
		cells := []string{fmt.Sprint(n), state, fmt.Sprint(parts())}
		for i, q := range questions {
			d := median(t, questionRuns, func() error { return q(true) })
			cell := ms(d)
			if i == 2 || i == 3 {
				raw := median(t, baselineRuns(n), func() error { return q(false) })
				cell = fmt.Sprintf("%s (without roll-up %s)", ms(d), ms(raw))
			}
			cells = append(cells, cell)
		}
		first, deep := exportRates(t, ctx, env, since720, end)
		before, now := deepPage(t, ctx, env, end)
		cells = append(cells, fmt.Sprintf("%.0fk / %.0fk (over 200k decisions %.0fk / %.0fk; first row after %s / %s; one page 28 days deep: %s, with main's cursor %s)",
			first.short/1000, deep.short/1000, first.long/1000, deep.long/1000, ms(first.first), ms(deep.first), ms(now), ms(before)))
		rows = append(rows, "| "+strings.Join(cells, " | ")+" |")
	}
	measure("right after loading")
	require.NoError(t, w.Exec(ctx, "SYSTEM START MERGES otel.gate_decisions"))
	require.NoError(t, w.Exec(ctx, "OPTIMIZE TABLE otel.gate_decisions FINAL"))
	measure("parts merged")
	require.NoError(t, w.Exec(ctx, "OPTIMIZE TABLE otel.otel_traces FINAL"))
	require.NoError(t, w.Exec(ctx, "OPTIMIZE TABLE otel.gate_decisions_hourly FINAL"))
	size := func(table string) float64 {
		var b uint64
		var p audit.Params
		p.String("t", table)
		require.NoError(t, w.QueryRow(p.Context(ctx), "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'otel' AND table = {t:String} AND active").Scan(&b))
		return float64(b)
	}
	var hourly uint64
	require.NoError(t, w.QueryRow(ctx, "SELECT count() FROM otel.gate_decisions_hourly FINAL").Scan(&hourly))
	note := fmt.Sprintf("- %d decisions: loaded in %v (%.0f decisions/s through otel_traces and the view, batches of 50,000), peak RSS while loading %d MiB; "+
		"roll-up of every hour in %v → %d roll-up rows (%.1f decisions per row); on disk, merged, without recorded inputs: gate_decisions %.1f B/decision, "+
		"otel_traces %.1f B/span, gate_decisions_hourly %.1f B/decision.",
		n, loadTime.Round(time.Second), float64(n)/loadTime.Seconds(), peak>>20, rollTime.Round(time.Millisecond), hourly, float64(n)/float64(max(hourly, 1)),
		size("gate_decisions")/float64(n), size("otel_traces")/float64(n), size("gate_decisions_hourly")/float64(n))
	return rows, note
}

// exportRate is what exportRates measures from one starting point.
type exportRate struct {
	short, long float64       // rows/s over exportShort and exportLong decisions (or all there are)
	first       time.Duration // until the first decision is handed over (median of 3)
}

// exportShort and exportLong are how many decisions exportRates reads per
// export: the shorter one's rate includes the time to the first row (the
// hour counts and the first window's sort), the longer one's is nearer the
// export's steady rate.
const (
	exportShort = 50000
	exportLong  = 200000
)

// exportRates reads exportShort and exportLong decisions newest first with
// Store.Export (what auditq export runs) from the start of the range and
// from a cursor 28 days before end, and times the first decision of each.
func exportRates(t *testing.T, ctx context.Context, env *audittest.Env, since, end time.Time) (first, deep exportRate) {
	// read returns rows/s over n decisions (fewer where the trail ends
	// first: 28 days deep, 1M holds about 67k) and the time taken.
	read := func(after *audit.Cursor, n int) (float64, time.Duration) {
		var rows int
		t0 := time.Now()
		err := env.Store.Export(ctx, audit.Filter{Since: since}, after, func(audit.Decision) error {
			if rows++; rows == n {
				return errStop
			}
			return nil
		})
		if !errors.Is(err, errStop) {
			require.NoError(t, err)
		}
		d := time.Since(t0)
		return float64(rows) / d.Seconds(), d
	}
	rate := func(after *audit.Cursor) exportRate {
		var firsts []time.Duration
		for range 3 {
			_, d := read(after, 1)
			firsts = append(firsts, d)
		}
		sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
		short, _ := read(after, exportShort)
		long, _ := read(after, exportLong)
		return exportRate{short: short, long: long, first: firsts[1]}
	}
	var c audit.Cursor
	var ts time.Time
	var p audit.Params
	p.Int64("t", end.Add(-28*24*time.Hour).UnixNano())
	require.NoError(t, env.Writer.QueryRow(p.Context(ctx), "SELECT Timestamp, SpanId FROM otel.gate_decisions WHERE Timestamp <= fromUnixTimestamp64Nano({t:Int64}) ORDER BY Timestamp DESC LIMIT 1").Scan(&ts, &c.SpanID))
	c.Timestamp = ts
	return rate(nil), rate(&c)
}

// deepPage times one export page 28 days deep (10,001 rows of every
// column, FINAL) with main's cursor condition before schema version 10
// (the tuple alone: every row after the cursor is read) and with the
// pruning bound on Timestamp that Decisions adds now.
func deepPage(t *testing.T, ctx context.Context, env *audittest.Env, end time.Time) (before, now time.Duration) {
	var ts time.Time
	var span string
	var p audit.Params
	p.Int64("t", end.Add(-28*24*time.Hour).UnixNano())
	require.NoError(t, env.Writer.QueryRow(p.Context(ctx), "SELECT Timestamp, SpanId FROM otel.gate_decisions WHERE Timestamp <= fromUnixTimestamp64Nano({t:Int64}) ORDER BY Timestamp DESC LIMIT 1").Scan(&ts, &span))
	p.Int64("lo", ts.Add(-time.Hour).UnixNano()).Int64("at", ts.UnixNano()).String("span", span)
	tuple := "(Timestamp, SpanId) < (fromUnixTimestamp64Nano({at:Int64}), {span:String})"
	page := func(cond string) time.Duration {
		return median(t, questionRuns, func() error {
			rows, err := env.Writer.Query(p.Context(ctx), "SELECT * FROM otel.gate_decisions FINAL WHERE Timestamp >= fromUnixTimestamp64Nano({lo:Int64}) AND "+cond+
				" ORDER BY Timestamp DESC, SpanId DESC LIMIT 10001")
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			rows.Close()
			return rows.Err()
		})
	}
	return page(tuple), page("Timestamp <= fromUnixTimestamp64Nano({at:Int64}) AND " + tuple)
}
