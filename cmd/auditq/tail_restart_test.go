package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestTailSurvivesServerRestart: `auditq tail` says once that the server
// went away, keeps trying, says when it is back, and then shows the
// decisions inserted after the restart — each once — without stopping.
func TestTailSurvivesServerRestart(t *testing.T) {
	env := audittest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	batch := func(prefix byte) []audittest.Span {
		spans := audittest.Fixture()
		for i := range spans {
			spans[i].TraceID = string(prefix) + spans[i].TraceID[1:]
			spans[i].SpanID = string(prefix) + spans[i].SpanID[1:]
			if spans[i].ParentSpanID != "" {
				spans[i].ParentSpanID = string(prefix) + spans[i].ParentSpanID[1:]
			}
		}
		return spans
	}
	denials := 0
	for _, s := range batch('a') {
		if s.Attrs[gate.AttrAction] == "deny" {
			denials++
		}
	}
	require.Positive(t, denials)

	var out, errw testenv.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"tail", "--dsn", env.ReaderDSN, "--action", "deny", "--format", "jsonl", "--interval", "200ms"},
			stdio{in: strings.NewReader(""), out: &out, err: &errw})
	}()
	lines := func() int { return strings.Count(out.String(), "\n") }
	time.Sleep(time.Second) // the follower starts from now

	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, batch('a')))
	require.Eventually(t, func() bool { return lines() == denials }, 20*time.Second, 100*time.Millisecond, "first batch: %s", out.String())

	require.NoError(t, env.Stop())
	require.Eventually(t, func() bool { return strings.Contains(errw.String(), "lost the server") }, 20*time.Second, 100*time.Millisecond)
	require.NoError(t, env.Start(ctx))
	require.Eventually(t, func() bool { return strings.Contains(errw.String(), "answers again") }, 30*time.Second, 100*time.Millisecond, errw.String())

	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, batch('b')))
	require.Eventually(t, func() bool { return lines() == 2*denials }, 20*time.Second, 100*time.Millisecond, "second batch: %s", out.String())
	time.Sleep(time.Second) // nothing is reported twice
	require.Equal(t, 2*denials, lines())
	require.Equal(t, 1, strings.Count(errw.String(), "lost the server"), errw.String())

	cancel()
	select {
	case code := <-done:
		require.Equal(t, 0, code, errw.String())
	case <-time.After(10 * time.Second):
		t.Fatal("tail did not stop on cancel")
	}
}
