// Command auditq is the auditor's command line over toolgate's audit store:
// it lists, counts and follows gate decisions in ClickHouse, runs the
// embedded ClickHouse server (serve) and the schema migrations (migrate),
// and classifies shell commands (classify).
//
// Exit codes: 0 ok, 1 error, 2 bad usage. Data goes to stdout, errors to
// stderr.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}
