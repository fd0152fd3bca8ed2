package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolgate/toolgate/policy"
)

// BenchmarkHookInvocation measures the wall time of one `toolgate hook
// claude` process per tool call, as the agent sees it: start, read the
// event, decide, commit to the spool, export (to the real collector,
// waiting at most 200 ms) and exit; with the collector up and down (the
// spans then stay in the spool). Reports p50 and p99 in ms. Integration:
// it starts ClickHouse and the collector.
//
//	TOOLGATE_INTEGRATION=1 go test ./cmd/toolgate -run '^$' -bench HookInvocation -benchtime 200x
func BenchmarkHookInvocation(b *testing.B) {
	s := startHookStack(b)
	bin := buildToolgate(b, "")
	dir := b.TempDir()
	env := []string{"TOOLGATE_OTLP_ENDPOINT=" + s.collector.GRPCEndpoint, "TOOLGATE_OTLP_TOKEN=" + s.collector.Token,
		"TOOLGATE_SPOOL_DIR=" + filepath.Join(dir, "spool"), "XDG_CONFIG_HOME=" + dir}
	// TOOLGATE_HOOK_BASELINE=path/to/an/older/toolgate: each iteration
	// also runs that binary on the same event, interleaved, in its own
	// spool (reported as base-*): before/after ratios from one run.
	base := os.Getenv("TOOLGATE_HOOK_BASELINE")
	baseEnv := append(slices.Clone(env), "TOOLGATE_SPOOL_DIR="+filepath.Join(dir, "spool-baseline"))
	measure := func(b *testing.B, name string) {
		var walls, cpus, bwalls, bcpus []time.Duration
		for i := 0; b.Loop(); i++ {
			cmd := "ls -la"
			if i%2 == 1 {
				cmd = "rm -r ~/canary"
			}
			event := claudeEvent(fmt.Sprintf("bench-%s-%d", name, i), fmt.Sprintf("c%d", i), cmd)
			_, stderr, code, took, cpu := runHookBinaryCPU(b, bin, env, event, "claude")
			if code != 0 {
				b.Fatalf("exit %d: %s", code, stderr)
			}
			walls, cpus = append(walls, took), append(cpus, cpu)
			if i < 8 && os.Getenv(envDebug) == "1" {
				b.Logf("%s", stderr) // the phases of a few invocations
			}
			if base != "" {
				_, stderr, code, took, cpu := runHookBinaryCPU(b, base, baseEnv, event, "claude")
				if code != 0 {
					b.Fatalf("baseline: exit %d: %s", code, stderr)
				}
				bwalls, bcpus = append(bwalls, took), append(bcpus, cpu)
			}
		}
		pct := func(ds []time.Duration, p float64) float64 {
			ds = slices.Sorted(slices.Values(ds))
			return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
		}
		b.ReportMetric(pct(walls, 0.50), "p50-ms")
		b.ReportMetric(pct(walls, 0.99), "p99-ms")
		b.ReportMetric(pct(cpus, 0.50), "cpu-p50-ms")
		if base != "" {
			b.ReportMetric(pct(bwalls, 0.50), "base-p50-ms")
			b.ReportMetric(pct(bwalls, 0.99), "base-p99-ms")
			b.ReportMetric(pct(bcpus, 0.50), "base-cpu-p50-ms")
		}
		b.ReportMetric(0, "ns/op")
	}
	b.Run("collector-up", func(b *testing.B) { measure(b, "up") })
	if err := s.collector.Stop(); err != nil {
		b.Fatal(err)
	}
	b.Run("collector-down", func(b *testing.B) { measure(b, "down") })
}

// BenchmarkHookDecision is the in-process part of one invocation: parse
// the event and judge it through the executor with the policy's gate (no
// process start, no spool, no export). The gap to BenchmarkHookInvocation
// is the process and the audit trail.
func BenchmarkHookDecision(b *testing.B) {
	a := agents["claude"]
	pol := policy.Default()
	tp := sdktrace.NewTracerProvider()
	event := []byte(claudeEvent("bench", "c1", "git status && ls -la src"))
	for b.Loop() {
		ev, err := readEvent(context.Background(), bytes.NewReader(event), a)
		if err != nil {
			b.Fatal(err)
		}
		g, err := pol.Gate(ev.Cwd)
		if err != nil {
			b.Fatal(err)
		}
		out, _, err := execute(context.Background(), pipeline{tp: tp, wal: noWAL{}}, a, pol, g, a.genAI, ev, true)
		if err != nil || out.verdict != verdictAllow {
			b.Fatal(err, out)
		}
	}
}

// BenchmarkHookInProcess runs the whole `toolgate hook claude` command in
// process (policy, spool slot, gate, executor, write-ahead fsync, export
// with the collector down), without the process start and package init:
// for a CPU profile of one invocation's work (-cpuprofile).
func BenchmarkHookInProcess(b *testing.B) {
	dir := b.TempDir()
	fresh := os.Getenv("TOOLGATE_BENCH_FRESH_SPOOL") == "1" // no backlog: a new spool each time
	for i := 0; b.Loop(); i++ {
		if fresh {
			dir = filepath.Join(b.TempDir(), fmt.Sprint(i))
		}
		cmd := "ls -la"
		if i%2 == 1 {
			cmd = "rm -r ~/canary"
		}
		_, stderr, code := inProcess(b, dir, claudeEvent("bench", fmt.Sprintf("c%d", i), cmd), "claude")
		if code != 0 {
			b.Fatalf("exit %d: %s", code, stderr)
		}
	}
}
