package classify_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolgate/toolgate/classify"
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
