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
)

// options are the command's flags.
type options struct {
	transcript string
	policy     string
	endpoint   string
	dsn        string
	jaegerURL  string
	sampling   string
	wait       time.Duration
	verify     bool
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
	fs.StringVar(&o.endpoint, "otlp-endpoint", envOr("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", envOr("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")), "OTLP/gRPC collector endpoint")
	fs.StringVar(&o.dsn, "dsn", envOr("AUDITQ_DSN", "http://127.0.0.1:8123"), "ClickHouse DSN to verify decisions (reader is enough)")
	fs.StringVar(&o.jaegerURL, "jaeger-url", envOr("TOOLGATE_JAEGER_QUERY", "http://127.0.0.1:16686"), "Jaeger query base URL")
	fs.StringVar(&o.sampling, "sampling", envOr("TOOLGATE_SAMPLING", "all"), "span sampling: all | decisions | deny-only | ratio:R (default: $TOOLGATE_SAMPLING, else all)")
	fs.DurationVar(&o.wait, "wait", 2*time.Minute, "how long to wait for ClickHouse and Jaeger to hold every decision")
	fs.BoolVar(&o.verify, "verify", true, "check ClickHouse and Jaeger against the replay")
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
	if err := demo(ctx, o, out, errw); err != nil {
		fmt.Fprintf(errw, "toolgate-demo: %v\n", err)
		return 1
	}
	return 0
}
