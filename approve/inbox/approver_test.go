package inbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

func spanCtx(t *testing.T, traceHex, spanHex string) context.Context {
	t.Helper()
	tid, err := trace.TraceIDFromHex(traceHex)
	require.NoError(t, err)
	sid, err := trace.SpanIDFromHex(spanHex)
	require.NoError(t, err)
	return trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
}

// resumeReq is the ask the gates raise again for the resumed call: a new
// nonce (so a new CallHash), the same call, ResumeID set.
func resumeReq(input, id string) gate.ApprovalRequest {
	req := testRequest(input)
	req.ResumeID = id
	return req
}

func TestSuspendThenResume(t *testing.T) {
	f := newFixture(t)
	ap := NewApprover(f.ib, ApproverConfig{Mode: Suspend})
	ctx := spanCtx(t, "0102030405060708090a0b0c0d0e0f10", "0102030405060708")
	first := testRequest(`{"cmd":"ls"}`)
	res, err := ap.Approve(ctx, first)
	require.NoError(t, err)
	assert.Equal(t, gate.ApprovalPending, res.Outcome)
	assert.Equal(t, "inbox", res.Approver)
	assert.Equal(t, first.CallHash, res.CallHash)
	assert.True(t, ValidID(res.RequestID))
	assert.Equal(t, f.clock.Now(), res.AskedAt)
	id := res.RequestID
	askedAt := res.AskedAt

	// Resumed before an answer: pending again, same ID, nothing new stored.
	again := resumeReq(`{"cmd":"ls"}`, id)
	res, err = ap.Approve(context.Background(), again)
	require.NoError(t, err)
	assert.Equal(t, gate.ApprovalPending, res.Outcome)
	assert.Equal(t, id, res.RequestID)
	assert.Equal(t, again.CallHash, res.CallHash)
	all, err := f.ib.List(context.Background(), Filter{})
	require.NoError(t, err)
	assert.Len(t, all, 1)

	f.clock.Advance(3 * time.Minute)
	_, err = f.ib.Answer(context.Background(), id, Answer{Approve: true, Approver: "alice", Reason: "fine"})
	require.NoError(t, err)
	answeredAt := f.clock.Now()
	f.clock.Advance(time.Minute)

	resumed := resumeReq(`{"cmd":"ls"}`, id)
	res, err = ap.Approve(context.Background(), resumed)
	require.NoError(t, err)
	assert.Equal(t, gate.ApprovalApproved, res.Outcome)
	assert.Equal(t, "alice", res.Approver)
	assert.Equal(t, "fine", res.Reason)
	assert.Equal(t, resumed.CallHash, res.CallHash)
	assert.Equal(t, gate.GrantScopeNone, res.Remember)
	assert.Equal(t, id, res.RequestID)
	assert.Equal(t, askedAt, res.AskedAt)
	assert.Equal(t, answeredAt, res.AnsweredAt)
	assert.Equal(t, "0102030405060708090a0b0c0d0e0f10", res.AskTraceID)
	assert.Equal(t, "0102030405060708", res.AskSpanID)

	// A second resume of the same approval is refused.
	_, err = ap.Approve(context.Background(), resumeReq(`{"cmd":"ls"}`, id))
	assert.ErrorIs(t, err, ErrUsed)
}

func TestResumeOutcomes(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		answer  func(f *fixture, id string)
		input   string // of the resumed call
		outcome gate.ApprovalOutcome
		remem   gate.GrantScope
		wantErr error
	}{
		{name: "approved for run", answer: func(f *fixture, id string) {
			_, err := f.ib.Answer(ctx, id, Answer{Approve: true, Approver: "alice", ForRun: true})
			require.NoError(t, err)
		}, input: `{"cmd":"ls"}`, outcome: gate.ApprovalApproved, remem: gate.GrantScopeRun},
		{name: "declined", answer: func(f *fixture, id string) {
			_, err := f.ib.Answer(ctx, id, Answer{Approve: false, Approver: "alice", Reason: "no"})
			require.NoError(t, err)
		}, input: `{"cmd":"ls"}`, outcome: gate.ApprovalDeclined},
		{name: "expired", answer: func(f *fixture, id string) { f.clock.Advance(testTTL) },
			input: `{"cmd":"ls"}`, outcome: gate.ApprovalTimeout},
		{name: "tampered input", answer: func(f *fixture, id string) {
			_, err := f.ib.Answer(ctx, id, Answer{Approve: true, Approver: "alice"})
			require.NoError(t, err)
		}, input: `{"cmd":"rm -rf /"}`, wantErr: ErrCallChanged},
		{name: "tampered input, declined", answer: func(f *fixture, id string) {
			_, err := f.ib.Answer(ctx, id, Answer{Approve: false, Approver: "alice"})
			require.NoError(t, err)
		}, input: `{"cmd":"rm -rf /"}`, wantErr: ErrCallChanged},
		{name: "unknown approver's answer does not stick", answer: func(f *fixture, id string) {
			_, err := f.ib.Answer(ctx, id, Answer{Approve: true, Approver: "mallory"})
			require.ErrorIs(t, err, ErrUnknownApprover)
		}, input: `{"cmd":"ls"}`, outcome: gate.ApprovalPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			ap := NewApprover(f.ib, ApproverConfig{Mode: Suspend})
			res, err := ap.Approve(ctx, testRequest(`{"cmd":"ls"}`))
			require.NoError(t, err)
			id := res.RequestID
			tt.answer(f, id)
			req := resumeReq(tt.input, id)
			res, err = ap.Approve(ctx, req)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.outcome, res.Outcome)
			assert.Equal(t, tt.remem, res.Remember)
			assert.Equal(t, req.CallHash, res.CallHash)
			assert.Equal(t, id, res.RequestID)
			assert.False(t, res.AskedAt.IsZero())
			if tt.outcome == gate.ApprovalTimeout {
				assert.Equal(t, "inbox", res.Approver)
				assert.Contains(t, res.Reason, id)
			}
		})
	}
}

func TestResumeUnknownID(t *testing.T) {
	f := newFixture(t)
	ap := NewApprover(f.ib, ApproverConfig{Mode: Suspend})
	for _, id := range []string{NewID(), "nope", "apr_" + string(make([]byte, 26))} {
		_, err := ap.Approve(context.Background(), resumeReq(`{"cmd":"ls"}`, id))
		assert.ErrorIs(t, err, ErrNotFound)
	}
}

func TestBlockWaitsForTheAnswer(t *testing.T) {
	f := newFixture(t)
	ap := NewApprover(f.ib, ApproverConfig{Mode: Block, Poll: 5 * time.Millisecond})
	req := testRequest(`{"cmd":"ls"}`)
	type out struct {
		res gate.ApprovalResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := ap.Approve(context.Background(), req)
		done <- out{res, err}
	}()
	var id string
	require.Eventually(t, func() bool {
		rs, err := f.ib.List(context.Background(), Filter{Status: []Status{StatusPending}})
		if err != nil || len(rs) == 0 {
			return false
		}
		id = rs[0].ID
		return true
	}, 5*time.Second, 5*time.Millisecond)
	_, err := f.ib.Answer(context.Background(), id, Answer{Approve: true, Approver: "alice", Reason: "go"})
	require.NoError(t, err)
	o := <-done
	require.NoError(t, o.err)
	assert.Equal(t, gate.ApprovalApproved, o.res.Outcome)
	assert.Equal(t, req.CallHash, o.res.CallHash)
	assert.Equal(t, id, o.res.RequestID)
	assert.Equal(t, "alice", o.res.Approver)
	assert.Empty(t, o.res.AskTraceID, "not a resume")
	// Consumed: a resume of it cannot run the call again.
	got, err := f.ib.Get(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, StatusUsed, got.Status)
}

func TestBlockDecline(t *testing.T) {
	f := newFixture(t)
	ap := NewApprover(f.ib, ApproverConfig{Mode: Block, Poll: 5 * time.Millisecond})
	done := make(chan gate.ApprovalResult, 1)
	go func() {
		res, err := ap.Approve(context.Background(), testRequest(`{"cmd":"ls"}`))
		assert.NoError(t, err)
		done <- res
	}()
	require.Eventually(t, func() bool {
		rs, _ := f.ib.List(context.Background(), Filter{})
		if len(rs) == 0 {
			return false
		}
		_, err := f.ib.Answer(context.Background(), rs[0].ID, Answer{Approver: "alice", Reason: "no"})
		return err == nil
	}, 5*time.Second, 5*time.Millisecond)
	res := <-done
	assert.Equal(t, gate.ApprovalDeclined, res.Outcome)
	assert.Equal(t, "no", res.Reason)
}

func TestBlockExpires(t *testing.T) {
	f := newFixture(t)
	ap := NewApprover(f.ib, ApproverConfig{Mode: Block, Poll: 5 * time.Millisecond})
	done := make(chan gate.ApprovalResult, 1)
	go func() {
		res, err := ap.Approve(context.Background(), testRequest(`{"cmd":"ls"}`))
		assert.NoError(t, err)
		done <- res
	}()
	require.Eventually(t, func() bool {
		rs, _ := f.ib.List(context.Background(), Filter{})
		return len(rs) == 1
	}, 5*time.Second, 5*time.Millisecond)
	f.clock.Advance(testTTL)
	res := <-done
	assert.Equal(t, gate.ApprovalTimeout, res.Outcome)
}

func TestBlockContextEndAbandons(t *testing.T) {
	f := newFixture(t)
	ap := NewApprover(f.ib, ApproverConfig{Mode: Block, Poll: 5 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := ap.Approve(ctx, testRequest(`{"cmd":"ls"}`))
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	rs, err := f.ib.List(context.Background(), Filter{})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, StatusExpired, rs[0].Status)
	assert.Contains(t, rs[0].Note, "stopped waiting")
	// A late answer is refused.
	_, err = f.ib.Answer(context.Background(), rs[0].ID, Answer{Approve: true, Approver: "alice"})
	assert.ErrorIs(t, err, ErrExpired)
}

func TestBlockResumeWaits(t *testing.T) {
	f := newFixture(t)
	r := f.ask(t, `{"cmd":"ls"}`)
	ap := NewApprover(f.ib, ApproverConfig{Mode: Block, Poll: 5 * time.Millisecond})
	done := make(chan gate.ApprovalResult, 1)
	go func() {
		res, err := ap.Approve(context.Background(), resumeReq(`{"cmd":"ls"}`, r.ID))
		assert.NoError(t, err)
		done <- res
	}()
	time.Sleep(30 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("Block answered a pending resume")
	default:
	}
	_, err := f.ib.Answer(context.Background(), r.ID, Answer{Approve: true, Approver: "alice"})
	require.NoError(t, err)
	res := <-done
	assert.Equal(t, gate.ApprovalApproved, res.Outcome)
	assert.Equal(t, r.ID, res.RequestID)
}
