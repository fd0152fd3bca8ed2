package approve_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/gate"
)

func TestChannel(t *testing.T) {
	t.Run("answer is bound to its call and used once", func(t *testing.T) {
		c := approve.NewChannel("ui", 1)
		done := make(chan gate.ApprovalResult)
		req := request("c1")
		go func() {
			res, err := c.Approve(context.Background(), req)
			assert.NoError(t, err)
			done <- res
		}()
		got := <-c.Requests()
		assert.Equal(t, req.CallHash, got.CallHash)
		assert.ErrorIs(t, c.Resolve(request("other").CallHash, gate.ApprovalApproved, "", gate.GrantScopeNone), approve.ErrApprovalUnknown)
		assert.ErrorIs(t, c.Resolve("", gate.ApprovalApproved, "", gate.GrantScopeNone), approve.ErrApprovalUnknown)
		require.NoError(t, c.Resolve(got.CallHash, gate.ApprovalApproved, "looks fine", gate.GrantScopeNone))
		assert.ErrorIs(t, c.Resolve(got.CallHash, gate.ApprovalApproved, "", gate.GrantScopeNone), approve.ErrApprovalUnknown, "used once")
		res := <-done
		assert.True(t, res.Approved())
		assert.Equal(t, gate.ApprovalApproved, res.Outcome)
		assert.Equal(t, "ui", res.Approver)
		assert.Equal(t, "looks fine", res.Reason)
		assert.Equal(t, req.CallHash, res.CallHash)
		assert.Equal(t, gate.GrantScopeNone, res.Remember)
	})
	t.Run("concurrent asks get their own answers", func(t *testing.T) {
		c := approve.NewChannel("ui", 2)
		type answered struct {
			req gate.ApprovalRequest
			res gate.ApprovalResult
		}
		done := make(chan answered, 2)
		for _, id := range []string{"c1", "c2"} {
			go func() {
				req := request(id)
				res, err := c.Approve(context.Background(), req)
				assert.NoError(t, err)
				done <- answered{req, res}
			}()
		}
		for range 2 {
			r := <-c.Requests()
			outcome := gate.ApprovalDeclined
			if r.Call.ToolCallID == "c1" {
				outcome = gate.ApprovalApproved
			}
			require.NoError(t, c.Resolve(r.CallHash, outcome, "", gate.GrantScopeNone))
		}
		for range 2 {
			a := <-done
			assert.Equal(t, a.req.CallHash, a.res.CallHash)
			assert.Equal(t, a.req.Call.ToolCallID == "c1", a.res.Approved(), a.req.Call.ToolCallID)
		}
	})
	t.Run("outcomes", func(t *testing.T) {
		tests := []struct {
			name     string
			outcome  gate.ApprovalOutcome
			remember gate.GrantScope
		}{
			{"approve", gate.ApprovalApproved, gate.GrantScopeNone},
			{"approve for the run", gate.ApprovalApproved, gate.GrantScopeRun},
			{"decline", gate.ApprovalDeclined, gate.GrantScopeNone},
			{"time out", gate.ApprovalTimeout, gate.GrantScopeNone},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				c := approve.NewChannel("ui", 1)
				go func() {
					r := <-c.Requests()
					assert.NoError(t, c.Resolve(r.CallHash, tc.outcome, "because", tc.remember))
				}()
				req := request("c1")
				res, err := c.Approve(context.Background(), req)
				require.NoError(t, err)
				assert.Equal(t, tc.outcome, res.Outcome)
				assert.Equal(t, tc.remember, res.Remember)
				assert.Equal(t, "because", res.Reason)
				assert.Equal(t, "ui", res.Approver)
				assert.Equal(t, req.CallHash, res.CallHash)
			})
		}
	})
	t.Run("invalid answers are refused and leave the request pending", func(t *testing.T) {
		tests := []struct {
			name     string
			outcome  gate.ApprovalOutcome
			remember gate.GrantScope
		}{
			{"empty outcome", "", gate.GrantScopeNone},
			{"invalid is the executor's", gate.ApprovalInvalid, gate.GrantScopeNone},
			{"unknown outcome", "maybe", gate.GrantScopeNone},
			{"unknown scope", gate.ApprovalApproved, "forever"},
			{"scope on a decline", gate.ApprovalDeclined, gate.GrantScopeRun},
		}
		c := approve.NewChannel("ui", 1)
		done := make(chan gate.ApprovalResult)
		go func() {
			res, _ := c.Approve(context.Background(), request("c1"))
			done <- res
		}()
		r := <-c.Requests()
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				assert.ErrorIs(t, c.Resolve(r.CallHash, tc.outcome, "", tc.remember), approve.ErrInvalidAnswer)
			})
		}
		require.NoError(t, c.Resolve(r.CallHash, gate.ApprovalDeclined, "no", gate.GrantScopeNone))
		assert.Equal(t, gate.ApprovalDeclined, (<-done).Outcome)
	})
	t.Run("timeout, late answer rejected", func(t *testing.T) {
		c := approve.NewChannel("ui", 1)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		req := request("c1")
		res, err := c.Approve(ctx, req)
		require.NoError(t, err)
		assert.Equal(t, gate.ApprovalTimeout, res.Outcome)
		assert.Equal(t, req.CallHash, res.CallHash)
		assert.Equal(t, "ui", res.Approver)
		r := <-c.Requests()
		assert.ErrorIs(t, c.Resolve(r.CallHash, gate.ApprovalApproved, "", gate.GrantScopeNone), approve.ErrApprovalUnknown)
	})
	t.Run("nobody listening times out", func(t *testing.T) {
		c := approve.NewChannel("ui", 0)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		res, err := c.Approve(ctx, request("c1"))
		require.NoError(t, err)
		assert.Equal(t, gate.ApprovalTimeout, res.Outcome)
		assert.ErrorIs(t, c.Resolve(request("c1").CallHash, gate.ApprovalApproved, "", gate.GrantScopeNone), approve.ErrApprovalUnknown)
	})
	t.Run("duplicate pending call", func(t *testing.T) {
		c := approve.NewChannel("ui", 2)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { _, _ = c.Approve(ctx, request("c1")) }()
		<-c.Requests()
		_, err := c.Approve(context.Background(), request("c1"))
		assert.ErrorIs(t, err, approve.ErrApprovalPending)
	})
}
