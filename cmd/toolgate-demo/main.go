// Command toolgate-demo is toolgate's main job on real input: it replays
// recorded coding-agent runs (testdata/real/trajectories.jsonl) through a
// gated executor — the bash classifier gate and the file-path gate, with
// review-level calls answered by a policy file — exports every call as an
// OpenTelemetry span to the collector, waits until ClickHouse holds every
// decision, checks the decisions against the replay and Jaeger against the
// run with the most denials, and prints a summary.
//
// `make demo` starts the local stack (scripts/stack.sh) and runs it; see the
// README. Nothing in a transcript is executed: allowed calls return a dry-run
// result.
//
// With --spool DIR the spans go through the durable spool; with --strict
// each call's decision is fsynced there before its tool runs (strict mode).
// With --calls or --duration it is an agent process for load and fault
// tests instead (agent.go): the transcript repeated at --rate, each call
// whose tool ran appended to --ran, counts printed as one JSON line, no
// verification.
//
// Exit codes: 0 ok, 1 error (including a mismatch between the replay and
// what ClickHouse or Jaeger hold), 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// options are the command's flags.
type options struct {
	transcript string
	policy     string
	profile    string
	endpoint   string
	dsn        string
	jaegerURL  string
	sampling   string
	wait       time.Duration
	verify     bool
	agent      agentOptions
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, args []string, out, errw io.Writer) int {
	fs := flag.NewFlagSet("toolgate-demo", flag.ContinueOnError)
	fs.SetOutput(errw)
	var o options
	fs.StringVar(&o.transcript, "transcript", "testdata/real/trajectories.jsonl", "recorded tool calls (JSON Lines)")
	fs.StringVar(&o.policy, "policy", "", "approval policy YAML for review-level calls (default: deny, \"needs human review\")")
	fs.StringVar(&o.profile, "profile", envOr("TOOLGATE_DEMO_PROFILE", ""), "permission profile of the gates: read-only, workspace or strict (default strict; $TOOLGATE_DEMO_PROFILE)")
	fs.StringVar(&o.endpoint, "otlp-endpoint", envOr("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", envOr("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")), "OTLP/gRPC collector endpoint")
	fs.StringVar(&o.dsn, "dsn", envOr("AUDITQ_DSN", "http://127.0.0.1:8123"), "ClickHouse DSN to verify decisions (reader is enough)")
	fs.StringVar(&o.jaegerURL, "jaeger-url", envOr("TOOLGATE_JAEGER_QUERY", "http://127.0.0.1:16686"), "Jaeger query base URL")
	fs.StringVar(&o.sampling, "sampling", envOr("TOOLGATE_SAMPLING", "all"), "span sampling: all | decisions | deny-only | ratio:R (default: $TOOLGATE_SAMPLING, else all)")
	fs.DurationVar(&o.wait, "wait", 2*time.Minute, "how long to wait for ClickHouse and Jaeger to hold every decision")
	fs.BoolVar(&o.verify, "verify", true, "check ClickHouse and Jaeger against the replay")
	// Load mode (agent.go): the demo as an agent process for load and
	// fault tests.
	a := &o.agent
	fs.IntVar(&a.calls, "calls", 0, "load mode: make this many calls (the transcript repeated), print counts as JSON, verify nothing")
	fs.DurationVar(&a.duration, "duration", 0, "load mode: make calls for this long")
	rate := fs.String("rate", "0", "load mode: calls per second, e.g. 100/s (0: as fast as possible)")
	fs.StringVar(&a.ran, "ran", "", "load mode: append the ID of every call whose tool starts to this file (fsynced)")
	fs.DurationVar(&a.toolTime, "tool-time", 0, "load mode: how long each tool runs (replayed tools are dry runs)")
	fs.StringVar(&a.tag, "tag", "", "load mode: suffix that makes this process's run and call IDs unique (default: pid and time)")
	fs.StringVar(&a.service, "service", "toolgate-demo", "service.name of the exported spans")
	fs.BoolVar(&a.strict, "strict", false, "strict mode: a tool runs only once its decision is in the spool, synced (needs --spool)")
	fs.DurationVar(&a.linger, "linger", 0, "load mode: after the calls, wait up to this long for the spool to drain")
	fs.DurationVar(&a.flush, "flush-timeout", 30*time.Second, "load mode: bound of the final flush")
	fs.StringVar(&a.spool.Dir, "spool", "", "durable spool directory (default $TOOLGATE_SPOOL_DIR; budget, sync and full policy: TOOLGATE_SPOOL_MAX_BYTES, _SYNC, _FULL)")
	fs.Usage = func() {
		fmt.Fprintf(errw, "Usage: toolgate-demo [flags]\n\nReplays recorded agent runs through the gate and reports what was stopped.\nExample:\n  toolgate-demo --transcript testdata/real/trajectories.jsonl --policy examples/replay-policy.yaml\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errw, "toolgate-demo: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var err error
	a.rate, err = splitRate(*rate)
	if err == nil && o.profile != "" {
		if _, perr := classify.New(classify.WithProfile(o.profile)); perr != nil {
			err = fmt.Errorf("--profile %q: want read-only, workspace or strict", o.profile)
		}
	}
	if err == nil && a.strict && a.spool.Dir == "" && os.Getenv(spool.EnvDir) == "" {
		err = errors.New("--strict needs --spool DIR: strict mode records each decision in the spool before its tool runs")
	}
	if err != nil {
		fmt.Fprintf(errw, "toolgate-demo: %v\n", err)
		return 2
	}
	load := false
	fs.Visit(func(f *flag.Flag) { load = load || f.Name == "calls" || f.Name == "duration" })
	if load {
		if err := agent(ctx, o, out, errw); err != nil {
			fmt.Fprintf(errw, "toolgate-demo: %v\n", err)
			return 1
		}
		return 0
	}
	if err := demo(ctx, o, out, errw); err != nil {
		fmt.Fprintf(errw, "toolgate-demo: %v\n", err)
		return 1
	}
	return 0
}
