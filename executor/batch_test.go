package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

func TestExecuteBatch(t *testing.T) {
	var inGate, maxInGate atomic.Int64
	// The gate holds each call briefly so that concurrency is observable,
	// denies "rm", panics on "panic" and allows the rest.
	g := gate.Named("batch-policy", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		n := inGate.Add(1)
		defer inGate.Add(-1)
		for {
			m := maxInGate.Load()
			if n <= m || maxInGate.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		switch c.String("command") {
		case "rm":
			return gate.Deny("no rm"), nil
		case "panic":
			panic("gate bug")
		}
		return gate.Allow(), nil
	}))
	for _, limit := range []int{1, 3, 8} {
		t.Run(fmt.Sprintf("concurrency %d", limit), func(t *testing.T) {
			inGate.Store(0)
			maxInGate.Store(0)
			h := newHarness(t, executor.WithGates(g), executor.WithConcurrency(limit))
			run := h.agent(t).Run("r")
			var calls []executor.ToolCall
			for i := range 24 {
				cmd := fmt.Sprintf("echo %d", i)
				switch i % 6 {
				case 1:
					cmd = "rm"
				case 4:
					cmd = "panic"
				}
				in, _ := json.Marshal(map[string]string{"command": cmd})
				calls = append(calls, executor.ToolCall{ID: fmt.Sprint("c", i), Name: "bash", Input: in})
			}
			calls = append(calls, call("c-bad", "bash", `{}`), call("c-unknown", "nope", `{}`), call("c-boom", "boom", `{}`))
			results := run.ExecuteBatch(context.Background(), calls)
			require.Len(t, results, len(calls))
			allowed := 0
			for i, res := range results {
				assert.Equal(t, calls[i].ID, res.ToolCallID, "results are in input order")
				switch {
				case i >= 24:
					assert.True(t, res.IsError)
				case i%6 == 1:
					assert.Equal(t, gate.ActionDeny, res.Gate.Action)
					assert.Empty(t, res.Gate.ErrorKind)
				case i%6 == 4:
					assert.Equal(t, gate.ErrorKindPanic, res.Gate.ErrorKind)
				default:
					allowed++
					assert.False(t, res.IsError, res.Content)
					assert.Equal(t, fmt.Sprintf("ran: echo %d", i), res.Content)
				}
			}
			assert.EqualValues(t, allowed, h.calls["bash"].Load(), "denied siblings never ran, allowed ones all did")
			assert.LessOrEqual(t, maxInGate.Load(), int64(limit))
			if limit > 1 {
				assert.Greater(t, maxInGate.Load(), int64(1), "gates run concurrently")
			}
			assert.Len(t, h.spans.GetSpans(), len(calls), "one span per call")
		})
	}
}

func TestExecuteBatchEmptyAndCancelled(t *testing.T) {
	h := newHarness(t)
	run := h.agent(t).Run("r")
	assert.Empty(t, run.ExecuteBatch(context.Background(), nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := run.ExecuteBatch(ctx, []executor.ToolCall{call("a", "read", `{}`), call("b", "read", `{}`)})
	require.Len(t, res, 2)
	for _, r := range res {
		assert.ErrorIs(t, r.Err, executor.ErrCancelled)
	}
	assert.Zero(t, h.calls["read"].Load())
}

func TestAbortOnDenyInBatch(t *testing.T) {
	// Calls after the denied one are aborted, not dropped: each still has
	// its result.
	h := newHarness(t, executor.WithGates(gate.DenyTools("no", "bash")), executor.WithAbortOnDeny(true), executor.WithConcurrency(1))
	run := h.agent(t).Run("r")
	res := run.ExecuteBatch(context.Background(), []executor.ToolCall{
		call("a", "read", `{}`), call("b", "bash", `{"command":"x"}`), call("c", "read", `{}`),
	})
	require.Len(t, res, 3)
	assert.False(t, res[0].IsError)
	assert.ErrorIs(t, res[1].Err, executor.ErrDenied)
	assert.ErrorIs(t, res[2].Err, executor.ErrRunAborted)
	assert.EqualValues(t, 1, h.calls["read"].Load())
}

func TestRegisterWhileExecuting(t *testing.T) {
	h := newHarness(t)
	run := h.agent(t).Run("r")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			err := h.ex.Registry().Register(executor.Tool{Name: fmt.Sprint("late", i),
				Execute: func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("late"), nil }})
			assert.NoError(t, err)
		}
	}()
	for range 20 {
		res := run.ExecuteBatch(context.Background(), []executor.ToolCall{call("a", "read", `{}`), call("b", "late3", `{}`)})
		assert.False(t, res[0].IsError)
	}
	<-done
	res := run.Execute(context.Background(), call("c", "late49", `{}`))
	assert.False(t, res.IsError, "PresetAll reaches tools registered later")
	assert.Len(t, h.ex.Registry().Names(), 8+50)
}
