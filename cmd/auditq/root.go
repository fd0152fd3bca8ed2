package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/audit"
)

// stdio are the streams a command reads and writes; tests pass buffers.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// usageError marks errors that should exit with code 2 (bad usage).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a bad-usage error (exit code 2).
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// newRootCmd builds the command tree. Each subcommand lives in its own file
// as newXxxCmd(io stdio) *cobra.Command and is added here.
func newRootCmd(io stdio) *cobra.Command {
	root := &cobra.Command{
		Use:           "auditq",
		Version:       versionString(),
		Short:         "Question toolgate's audit trail: what did our agents try, and what did we stop?",
		SilenceUsage:  true,
		SilenceErrors: true,
		Example: `  auditq decisions --since 24h --action deny
  auditq stats --by tool,action --every 1h
  auditq classify -- 'rm -rf ~'`,
	}
	root.SetIn(io.in)
	root.SetOut(io.out)
	root.SetErr(io.err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		newVersionCmd(io),
		newServeCmd(io),
		newDecisionsCmd(io), newStatsCmd(io), newTraceCmd(io), newTailCmd(io), newExportCmd(io), newMigrateCmd(io),
		newClassifyCmd(io), newDoctorCmd(io), newVerifyCmd(io),
		newApprovalsCmd(io), newApproveCmd(io), newDeclineCmd(io),
	)
	return root
}

// run executes auditq with args and returns the process exit code.
func run(ctx context.Context, args []string, io stdio) int {
	root := newRootCmd(io)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintf(io.err, "auditq: %s\n", scrubDSNs(err.Error(), args))
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return 2
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// isCobraUsage recognises cobra's own argument and command errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// scrubDSNs removes the secrets of every DSN the user gave (AUDITQ_DSN and
// --dsn values) from msg: a library's error may quote the DSN it was given.
func scrubDSNs(msg string, args []string) string {
	dsns := []string{os.Getenv(dsnEnv)}
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--dsn="):
			dsns = append(dsns, strings.TrimPrefix(a, "--dsn="))
		case a == "--dsn" && i+1 < len(args):
			dsns = append(dsns, args[i+1])
		}
	}
	for _, d := range dsns {
		if d != "" {
			msg = audit.ScrubDSN(msg, d)
		}
	}
	return msg
}
