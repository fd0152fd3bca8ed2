package gate_test

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

	"github.com/toolgate/toolgate/gate"
)

func request(id string) gate.ApprovalRequest {
	c := bash
	c.ToolCallID = id
	c.AgentName = "coder"
	return gate.ApprovalRequest{Call: c, Decision: gate.Ask("may change files"), CallHash: gate.CallHash(c.ToolName, c.Input, id)}
}

func TestTerminalApprover(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		tty      bool
		timeout  time.Duration
		approved bool
		outcome  string
		remember gate.GrantScope
		prompted bool
	}{
		{"yes", "y\n", true, time.Second, true, gate.ApprovalApproved, gate.GrantScopeNone, true},
		{"yes spelled out", " YES \n", true, time.Second, true, gate.ApprovalApproved, gate.GrantScopeNone, true},
		{"always", "a\n", true, time.Second, true, gate.ApprovalApproved, gate.GrantScopeRun, true},
		{"no", "n\n", true, time.Second, false, gate.ApprovalDeclined, gate.GrantScopeNone, true},
		{"empty line declines", "\n", true, time.Second, false, gate.ApprovalDeclined, gate.GrantScopeNone, true},
		{"closed input declines", "", true, time.Second, false, gate.ApprovalDeclined, gate.GrantScopeNone, true},
		{"no TTY declines without prompting", "y\n", false, time.Second, false, gate.ApprovalDeclined, gate.GrantScopeNone, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			a := gate.NewTerminalApprover(gate.WithTerminalIO(strings.NewReader(tc.input), &out, tc.tty), gate.WithTerminalTimeout(tc.timeout))
			req := request("c1")
			res, err := a.Approve(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, tc.approved, res.Approved)
			assert.Equal(t, tc.outcome, res.Outcome)
			assert.Equal(t, tc.remember, res.Remember)
			assert.Equal(t, "terminal", res.Approver)
			assert.Equal(t, req.CallHash, res.CallHash)
			if tc.prompted {
				assert.Contains(t, out.String(), `"bash"`)
				assert.Contains(t, out.String(), "may change files")
				assert.Contains(t, out.String(), `{"command":"ls"}`)
			} else {
				assert.Empty(t, out.String())
			}
		})
	}
}

func TestTerminalApproverTimeout(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out bytes.Buffer
	a := gate.NewTerminalApprover(gate.WithTerminalIO(pr, &out, true), gate.WithTerminalTimeout(20*time.Millisecond))
	res, err := a.Approve(context.Background(), request("c1"))
	require.NoError(t, err)
	assert.False(t, res.Approved)
	assert.Equal(t, gate.ApprovalTimeout, res.Outcome)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	a = gate.NewTerminalApprover(gate.WithTerminalIO(pr, &out, true), gate.WithTerminalTimeout(time.Hour))
	res, _ = a.Approve(ctx, request("c2"))
	assert.Equal(t, gate.ApprovalTimeout, res.Outcome)
}

func TestTerminalApproverSerialisesPrompts(t *testing.T) {
	pr, pw := io.Pipe()
	var out syncBuffer
	a := gate.NewTerminalApprover(gate.WithTerminalIO(pr, &out, true), gate.WithTerminalTimeout(5*time.Second))
	var wg sync.WaitGroup
	results := make([]gate.ApprovalResult, 3)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = a.Approve(context.Background(), request(string(rune('a'+i))))
		}()
	}
	for range results {
		_, err := io.WriteString(pw, "y\n")
		require.NoError(t, err)
	}
	wg.Wait()
	pw.Close()
	for _, r := range results {
		assert.True(t, r.Approved)
	}
	assert.Equal(t, 3, strings.Count(out.String(), "Allow?"))
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestChannelApprover(t *testing.T) {
	t.Run("answer is bound to its call and used once", func(t *testing.T) {
		c := gate.NewChannelApprover("ui", 1)
		done := make(chan gate.ApprovalResult)
		req := request("c1")
		go func() {
			res, err := c.Approve(context.Background(), req)
			assert.NoError(t, err)
			done <- res
		}()
		got := <-c.Requests()
		assert.Equal(t, req.CallHash, got.CallHash)
		assert.ErrorIs(t, c.Resolve(request("other").CallHash, gate.ApprovalResult{Approved: true}), gate.ErrApprovalUnknown)
		require.NoError(t, c.Resolve(got.CallHash, gate.ApprovalResult{Approved: true}))
		assert.ErrorIs(t, c.Resolve(got.CallHash, gate.ApprovalResult{Approved: true}), gate.ErrApprovalUnknown, "used once")
		res := <-done
		assert.True(t, res.Approved)
		assert.Equal(t, gate.ApprovalApproved, res.Outcome)
		assert.Equal(t, "ui", res.Approver)
		assert.Equal(t, req.CallHash, res.CallHash)
	})
	t.Run("decline fills outcome", func(t *testing.T) {
		c := gate.NewChannelApprover("ui", 1)
		go func() {
			r := <-c.Requests()
			_ = c.Resolve(r.CallHash, gate.ApprovalResult{Reason: "nope"})
		}()
		res, err := c.Approve(context.Background(), request("c1"))
		require.NoError(t, err)
		assert.False(t, res.Approved)
		assert.Equal(t, gate.ApprovalDeclined, res.Outcome)
		assert.Equal(t, "nope", res.Reason)
	})
	t.Run("timeout, late answer rejected", func(t *testing.T) {
		c := gate.NewChannelApprover("ui", 1)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		res, err := c.Approve(ctx, request("c1"))
		require.NoError(t, err)
		assert.Equal(t, gate.ApprovalTimeout, res.Outcome)
		r := <-c.Requests()
		assert.ErrorIs(t, c.Resolve(r.CallHash, gate.ApprovalResult{Approved: true}), gate.ErrApprovalUnknown)
	})
	t.Run("nobody listening times out", func(t *testing.T) {
		c := gate.NewChannelApprover("ui", 0)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		res, _ := c.Approve(ctx, request("c1"))
		assert.Equal(t, gate.ApprovalTimeout, res.Outcome)
	})
	t.Run("duplicate pending call", func(t *testing.T) {
		c := gate.NewChannelApprover("ui", 2)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { _, _ = c.Approve(ctx, request("c1")) }()
		<-c.Requests()
		_, err := c.Approve(context.Background(), request("c1"))
		assert.ErrorIs(t, err, gate.ErrApprovalPending)
	})
}
