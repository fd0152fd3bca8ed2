package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/gate"
)

func TestApproverExample(t *testing.T) {
	cmds := []string{"ls -la", "make test", "make test", "git push origin main", "git status"}
	tests := []struct {
		name    string
		answers string
		tty     bool
		want    []string
	}{
		{
			name: "always, then no", answers: "a\nn\n", tty: true,
			want: []string{
				"ls -la                   ran    approval=         approver=",
				"make test                ran    approval=approved approver=terminal",
				"make test                ran    approval=approved approver=grant:run",
				"git push origin main     denied approval=declined approver=terminal",
				"git status               ran    approval=         approver=",
			},
		},
		{
			name: "no TTY denies every ask", answers: "y\ny\n", tty: false,
			want: []string{
				"ls -la                   ran    approval=         approver=",
				"make test                denied approval=declined approver=terminal",
				"make test                denied approval=declined approver=terminal",
				"git push origin main     denied approval=declined approver=terminal",
				"git status               ran    approval=         approver=",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, prompts bytes.Buffer
			ap := gate.NewTerminalApprover(gate.WithTerminalIO(strings.NewReader(tc.answers), &prompts, tc.tty))
			require.NoError(t, run(context.Background(), &out, ap, cmds))
			got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			for i := range got {
				got[i] = strings.TrimRight(got[i], " ")
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestApproverExampleTimeout(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out, prompts bytes.Buffer
	ap := gate.NewTerminalApprover(gate.WithTerminalIO(pr, &prompts, true), gate.WithTerminalTimeout(20*time.Millisecond))
	require.NoError(t, run(context.Background(), &out, ap, []string{"make deploy"}))
	assert.Contains(t, out.String(), "denied approval=timeout")
}
