package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve"
)

func TestApproverExample(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "") // print only: export nothing to a collector the shell names
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	cmds := []string{"ls -la", "make test", "make test", "git push origin main", "git status"}
	tests := []struct {
		name    string
		answers []string
		tty     bool
		want    []string
	}{
		{
			name: "always, then no", answers: []string{"a", "n"}, tty: true,
			want: []string{
				"ls -la                   ran    approval=         approver=",
				"make test                ran    approval=approved approver=terminal",
				"make test                ran    approval=approved approver=grant:run",
				"git push origin main     denied approval=declined approver=terminal",
				"git status               ran    approval=         approver=",
			},
		},
		{
			name: "no TTY denies every ask", answers: []string{"y", "y"}, tty: false,
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
			var out bytes.Buffer
			h := newHuman(tc.answers...)
			ap := approve.NewTerminal(approve.WithTerminalIO(h.in, h, tc.tty), approve.WithTerminalTimeout(5*time.Second))
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
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "") // print only: export nothing to a collector the shell names
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	pr, pw := io.Pipe()
	defer pw.Close()
	var out, prompts bytes.Buffer
	ap := approve.NewTerminal(approve.WithTerminalIO(pr, &prompts, true), approve.WithTerminalTimeout(20*time.Millisecond))
	require.NoError(t, run(context.Background(), &out, ap, []string{"make deploy"}))
	assert.Contains(t, out.String(), "denied approval=timeout")
}

// human answers the terminal approver's prompts: each answer once its
// prompt is on screen (a line typed earlier would be discarded), in order;
// after the last one it closes the input.
type human struct {
	in *io.PipeReader
	pw *io.PipeWriter

	mu      sync.Mutex
	answers []string
}

func newHuman(answers ...string) *human {
	pr, pw := io.Pipe()
	return &human{in: pr, pw: pw, answers: answers}
}

// Write takes the approver's output; a prompt gets the next answer.
func (h *human) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("Allow?")) {
		return len(p), nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.answers) == 0 {
		go h.pw.Close()
		return len(p), nil
	}
	a := h.answers[0]
	h.answers = h.answers[1:]
	go func() { _, _ = io.WriteString(h.pw, a+"\n") }()
	return len(p), nil
}
