package classify_test

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/classify/internal/callgrind"
)

// perCommand runs f over every command b.N times and returns the median and
// mean nanoseconds per command.
func perCommand(b *testing.B, cmds []string, f func(string)) (median, mean float64) {
	times := make([]float64, len(cmds))
	var total time.Duration
	for i, c := range cmds {
		start := time.Now()
		for n := 0; n < b.N; n++ {
			f(c)
		}
		d := time.Since(start)
		total += d
		times[i] = float64(d.Nanoseconds()) / float64(b.N)
	}
	slices.Sort(times)
	return times[len(times)/2], float64(total.Nanoseconds()) / float64(b.N*len(cmds))
}

func parseOnly(s string) {
	_, _ = syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
}

func corpusCommands(b *testing.B) []string {
	var cmds []string
	for _, l := range loadCorpus(b) {
		cmds = append(cmds, l.Command)
	}
	return cmds
}

// BenchmarkBashCorpus: classification of the labelled corpus, reported as
// median and mean ns per command.
func BenchmarkBashCorpus(b *testing.B) {
	cmds := corpusCommands(b)
	c, err := classify.New()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	med, mean := perCommand(b, cmds, func(s string) { c.Bash(s) })
	b.ReportMetric(med, "median-ns/cmd")
	b.ReportMetric(mean, "mean-ns/cmd")
}

// BenchmarkParseCorpus: parsing alone with mvdan.cc/sh (the floor).
func BenchmarkParseCorpus(b *testing.B) {
	cmds := corpusCommands(b)
	b.ReportAllocs()
	b.ResetTimer()
	med, mean := perCommand(b, cmds, parseOnly)
	b.ReportMetric(med, "median-ns/cmd")
	b.ReportMetric(mean, "mean-ns/cmd")
}

// BenchmarkBashVsParse reports the ratio of classification to parsing
// alone, per command (median of the per-command ratios) and overall.
func BenchmarkBashVsParse(b *testing.B) {
	cmds := corpusCommands(b)
	c, err := classify.New()
	if err != nil {
		b.Fatal(err)
	}
	ratios := make([]float64, len(cmds))
	var tb, tp time.Duration
	b.ResetTimer()
	for i, s := range cmds {
		start := time.Now()
		for n := 0; n < b.N; n++ {
			c.Bash(s)
		}
		db := time.Since(start)
		start = time.Now()
		for n := 0; n < b.N; n++ {
			parseOnly(s)
		}
		dp := time.Since(start)
		tb, tp = tb+db, tp+dp
		ratios[i] = float64(db) / float64(dp)
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
	b.ReportMetric(float64(tb)/float64(tp), "total-ratio")
}

// BenchmarkBashReal: the real agents' commands (longer: here-documents).
func BenchmarkBashReal(b *testing.B) {
	var cmds []string
	for _, rc := range loadRealBash(b) {
		cmds = append(cmds, rc.command)
	}
	c, err := classify.New()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	med, mean := perCommand(b, cmds, func(s string) { c.Bash(s) })
	b.ReportMetric(med, "median-ns/cmd")
	b.ReportMetric(mean, "mean-ns/cmd")
}

// parseWalk is the latency floor: parsing with mvdan.cc/sh and one
// syntax.Walk over the tree.
func parseWalk(s string) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err == nil {
		n := 0
		syntax.Walk(f, func(syntax.Node) bool { n++; return true })
	}
}

// reusedFloor is parseWalk with one parser reused across calls, as Bash
// reuses its parsers (a second floor: NewParser alone allocates ~3 KB).
func reusedFloor() func(string) {
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	var rd strings.Reader
	return func(s string) {
		rd.Reset(s)
		f, err := p.Parse(&rd, "")
		if err == nil {
			n := 0
			syntax.Walk(f, func(syntax.Node) bool { n++; return true })
		}
	}
}

// minTime is the fastest of reps runs of f(s) (the least disturbed).
func minTime(reps int, s string, f func(string)) time.Duration {
	best := time.Duration(1<<63 - 1)
	for i := 0; i < reps; i++ {
		start := time.Now()
		f(s)
		if d := time.Since(start); d < best {
			best = d
		}
	}
	return best
}

func quantile(xs []time.Duration, q float64) time.Duration {
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}

func oneLiners(b *testing.B) []string {
	data, err := os.ReadFile("../testdata/real/commands.txt")
	if err != nil {
		b.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

// BenchmarkTail reports the latency distribution of classification over
// the labelled corpus and the 10,000 real one-liners: p50, p99 and max
// per command (µs), and as ratios to the parse-plus-walk floor's p50;
// p99/p50 is the flatness of the tail; the same against a floor whose
// parser is reused (reusedFloor). Each command's time is the
// fastest of 7 runs, and for the slowest 1% of 51 more. Run with -benchtime=1x; nothing here asserts
// a time.
func BenchmarkTail(b *testing.B) {
	c, err := classify.New()
	if err != nil {
		b.Fatal(err)
	}
	for _, set := range []struct {
		name string
		cmds func(*testing.B) []string
	}{{"corpus", corpusCommands}, {"one-liners", oneLiners}} {
		b.Run(set.name, func(b *testing.B) {
			cmds := set.cmds(b)
			bash := make([]time.Duration, len(cmds))
			floor := make([]time.Duration, len(cmds))
			floor2 := make([]time.Duration, len(cmds))
			reused := reusedFloor()
			for i, s := range cmds {
				c.Bash(s)
				bash[i] = minTime(7, s, func(s string) { c.Bash(s) })
				floor[i] = minTime(7, s, parseWalk)
				floor2[i] = minTime(7, s, reused)
			}
			// The slowest 1% again with more runs each: on a loaded
			// machine seven runs of a long command may all be disturbed.
			again := func(ts []time.Duration, f func(string)) {
				idx := make([]int, len(ts))
				for i := range idx {
					idx[i] = i
				}
				slices.SortFunc(idx, func(x, y int) int { return cmp.Compare(ts[y], ts[x]) })
				for _, i := range idx[:max(1, len(idx)/100)] {
					ts[i] = min(ts[i], minTime(51, cmds[i], f))
				}
			}
			again(bash, func(s string) { c.Bash(s) })
			again(floor, parseWalk)
			again(floor2, reused)
			slices.Sort(bash)
			slices.Sort(floor)
			slices.Sort(floor2)
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
			f50 := us(quantile(floor, 0.5))
			p50, p99, mx := us(quantile(bash, 0.5)), us(quantile(bash, 0.99)), us(bash[len(bash)-1])
			b.ReportMetric(p50, "p50-µs")
			b.ReportMetric(p99, "p99-µs")
			b.ReportMetric(mx, "max-µs")
			b.ReportMetric(f50, "floor-p50-µs")
			b.ReportMetric(us(quantile(floor, 0.99)), "floor-p99-µs")
			b.ReportMetric(us(floor[len(floor)-1]), "floor-max-µs")
			b.ReportMetric(p50/f50, "p50/floor")
			b.ReportMetric(p99/f50, "p99/floor")
			b.ReportMetric(mx/f50, "max/floor")
			b.ReportMetric(p99/p50, "p99/p50")
			r50 := us(quantile(floor2, 0.5))
			b.ReportMetric(r50, "reused-floor-p50-µs")
			b.ReportMetric(p50/r50, "p50/reused-floor")
			b.ReportMetric(mx/r50, "max/reused-floor")
		})
	}
}

// slowest lists the n slowest commands of a set (for profiling the tail).
func slowest(c *classify.Classifier, cmds []string, n int) []string {
	type ct struct {
		cmd string
		d   time.Duration
	}
	all := make([]ct, len(cmds))
	for i, s := range cmds {
		all[i] = ct{s, minTime(5, s, func(s string) { c.Bash(s) })}
	}
	slices.SortFunc(all, func(a, b ct) int { return int(b.d - a.d) })
	out := make([]string, 0, n)
	for _, x := range all[:min(n, len(all))] {
		out = append(out, x.d.String()+"  "+x.cmd)
	}
	return out
}

// BenchmarkSlowest logs the slowest one-liners (run with -v).
func BenchmarkSlowest(b *testing.B) {
	c, err := classify.New()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range slowest(c, oneLiners(b), 15) {
		b.Log(l)
	}
}

// BenchmarkOneLiners: every one-liner once per iteration (for profiles).
func BenchmarkOneLiners(b *testing.B) {
	c, err := classify.New()
	if err != nil {
		b.Fatal(err)
	}
	cmds := oneLiners(b)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for _, s := range cmds {
			c.Bash(s)
		}
	}
}

// BenchmarkTailOnly: the 200 slowest one-liners (for profiling the tail).
func BenchmarkTailOnly(b *testing.B) {
	c, err := classify.New()
	if err != nil {
		b.Fatal(err)
	}
	var cmds []string
	for _, l := range slowest(c, oneLiners(b), 200) {
		_, cmd, _ := strings.Cut(l, "  ")
		cmds = append(cmds, cmd)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for _, s := range cmds {
			c.Bash(s)
		}
	}
}

// BenchmarkOne classifies the command in $TOOLGATE_BENCH_CMD_FILE.
func BenchmarkOne(b *testing.B) {
	data, err := os.ReadFile(os.Getenv("TOOLGATE_BENCH_CMD_FILE"))
	if err != nil {
		b.Skip("TOOLGATE_BENCH_CMD_FILE not set")
	}
	c, err := classify.New()
	if err != nil {
		b.Fatal(err)
	}
	s := strings.TrimRight(string(data), "\n")
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		c.Bash(s)
	}
}

// BenchmarkInstr reports per-command instruction counts under callgrind
// (repeatable on a loaded machine, unlike times): for each command of
// $TOOLGATE_INSTR_SET ("corpus" or "one-liners") it runs the floor
// (parseWalk), the floor with a reused parser (reusedFloor) and then
// Bash, each once to warm caches and once between
// callgrind.ZeroStats and callgrind.DumpStats, reads each dump's
// "summary:" count back (and removes the dump), and reports p50, p99 and
// max in instructions and as ratios to the floor's p50, as BenchmarkTail
// does for times; with -test.v it logs the 20 costliest commands, and
// with $TOOLGATE_INSTR_LIST set it writes every command's count, its own
// floor's and the command (Go-quoted), tab-separated, to that file;
// $TOOLGATE_INSTR_EVERY=N measures every N-th command only. Run as
//
//	GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 TOOLGATE_INSTR_SET=one-liners \
//	  TOOLGATE_INSTR_OUT=/tmp/cg/cg.out valgrind --tool=callgrind \
//	  --separate-threads=yes --callgrind-out-file=/tmp/cg/cg.out ./classify.test -test.run '^$' \
//	  -test.bench BenchmarkInstr -test.benchtime 1x
//
// (the test binary built with CGO_ENABLED=0: callgrind trips over cgo's
// signal masks). Skipped unless both variables are set.
func BenchmarkInstr(b *testing.B) {
	var cmds []string
	switch os.Getenv("TOOLGATE_INSTR_SET") {
	case "corpus":
		cmds = corpusCommands(b)
	case "one-liners":
		cmds = oneLiners(b)
	default:
		b.Skip("TOOLGATE_INSTR_SET not set")
	}
	if n, err := strconv.Atoi(os.Getenv("TOOLGATE_INSTR_EVERY")); err == nil && n > 1 {
		// A sample: every n-th command (the one-liners take callgrind
		// about half an hour in full).
		var sample []string
		for i := 0; i < len(cmds); i += n {
			sample = append(sample, cmds[i])
		}
		cmds = sample
	}
	out := os.Getenv("TOOLGATE_INSTR_OUT")
	if out == "" {
		b.Skip("TOOLGATE_INSTR_OUT not set")
	}
	c, err := classify.New()
	if err != nil {
		b.Fatal(err)
	}
	callgrind.DumpStats() // dump 1: start-up
	dump := 1
	// With --separate-threads=yes each dump is one file per thread
	// (OUT.N-TT): the benchmark's thread (locked to it) is the one with
	// the largest count, the others (sysmon) being idle or nearly so.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	next := func() float64 {
		dump++
		names, _ := filepath.Glob(fmt.Sprintf("%s.%d-*", out, dump))
		if len(names) == 0 {
			b.Fatalf("no dump %s.%d-*: not under callgrind --separate-threads=yes --callgrind-out-file=%s?", out, dump, out)
		}
		best := -1.0
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				b.Fatal(err)
			}
			_ = os.Remove(name)
			for _, l := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(l, "summary: "); ok {
					n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
					if err != nil {
						b.Fatalf("%s: %v", name, err)
					}
					best = max(best, n)
					break
				}
			}
		}
		if best < 0 {
			b.Fatalf("dump %d: no summary line", dump)
		}
		return best
	}
	type ci struct {
		cmd string
		n   float64
	}
	bash := make([]ci, len(cmds))
	floor := make([]float64, len(cmds))
	own := make([]float64, len(cmds)) // each command's own floor, for the list
	floor2 := make([]float64, len(cmds))
	reused := reusedFloor()
	for i, s := range cmds {
		if i%20 == 0 {
			// Under GOGC=off the heap would only grow, and finding free
			// pages in it costs more and more: collect outside the counted
			// windows instead (the collector's own work is not counted).
			runtime.GC()
		}
		parseWalk(s)
		callgrind.ZeroStats()
		parseWalk(s)
		callgrind.DumpStats()
		floor[i] = next()
		own[i] = floor[i]
		reused(s)
		callgrind.ZeroStats()
		reused(s)
		callgrind.DumpStats()
		floor2[i] = next()
		c.Bash(s)
		callgrind.ZeroStats()
		c.Bash(s)
		callgrind.DumpStats()
		bash[i] = ci{s, next()}
	}
	if list := os.Getenv("TOOLGATE_INSTR_LIST"); list != "" {
		var sb strings.Builder
		for i, x := range bash {
			fmt.Fprintf(&sb, "%.0f\t%.0f\t%q\n", x.n, own[i], x.cmd)
		}
		if err := os.WriteFile(list, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	slices.SortFunc(bash, func(x, y ci) int { return cmp.Compare(x.n, y.n) })
	slices.Sort(floor)
	q := func(p float64) float64 { return bash[min(len(bash)-1, int(p*float64(len(bash))))].n }
	f50 := floor[len(floor)/2]
	p50, p99, mx := q(0.5), q(0.99), bash[len(bash)-1].n
	b.ReportMetric(p50, "p50-instr")
	b.ReportMetric(p99, "p99-instr")
	b.ReportMetric(mx, "max-instr")
	b.ReportMetric(f50, "floor-p50-instr")
	b.ReportMetric(p50/f50, "p50/floor")
	b.ReportMetric(p99/f50, "p99/floor")
	b.ReportMetric(mx/f50, "max/floor")
	b.ReportMetric(p99/p50, "p99/p50")
	slices.Sort(floor2)
	r50 := floor2[len(floor2)/2]
	b.ReportMetric(r50, "reused-floor-p50-instr")
	b.ReportMetric(p50/r50, "p50/reused-floor")
	b.ReportMetric(mx/r50, "max/reused-floor")
	for _, x := range slices.Backward(bash[max(0, len(bash)-20):]) {
		b.Logf("%8.0f  %s", x.n, clip(x.cmd, 200))
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
