package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
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
		newClassifyCmd(io), newDoctorCmd(io),
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
	fmt.Fprintf(io.err, "auditq: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return 2
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
