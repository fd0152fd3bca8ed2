package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/gate"
)

// clock is a fake clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fixture struct {
	db    *DB
	ib    *Inbox
	clock *clock
	token string // alice's
}

const testTTL = time.Hour

func newFixture(t testing.TB) *fixture {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "sub", "inbox.db"), OpenConfig{})
	require.NoError(t, err)
	tok, err := db.Add(context.Background(), "alice")
	require.NoError(t, err)
	c := newClock()
	return &fixture{db: db, ib: New(db, db, Config{TTL: testTTL, Now: c.Now}), clock: c, token: tok}
}

func testCall(input string) gate.ToolCallContext {
	var m map[string]any
	_ = json.Unmarshal([]byte(input), &m)
	return gate.ToolCallContext{
		ToolName: "shell", Input: m, RawInput: json.RawMessage(input),
		ToolCallID: "call_1", AgentName: "agent-a", RunID: "run-1", TaskID: "task-1",
	}
}

func testRequest(input string) gate.ApprovalRequest {
	d := gate.Ask("deletes files").WithSource("classifier").WithRisk(gate.RiskHigh)
	d.Rule = "fs.delete"
	return gate.NewApprovalRequest(testCall(input), d, nil)
}

func (f *fixture) ask(t testing.TB, input string) Request {
	t.Helper()
	r, err := f.ib.Ask(context.Background(), testRequest(input))
	require.NoError(t, err)
	return r
}

func TestOpenCreatesPrivateFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "inbox.db")
	_, err := Open(path, OpenConfig{})
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	dst, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dst.Mode().Perm())
	// Opening again keeps what is there.
	db, err := Open(path, OpenConfig{})
	require.NoError(t, err)
	assert.Equal(t, path, db.Path())

	_, err = Open("", OpenConfig{})
	assert.Error(t, err)
	notDB := filepath.Join(t.TempDir(), "junk")
	require.NoError(t, os.WriteFile(notDB, []byte(strings.Repeat("not a bolt file ", 512)), 0o600))
	_, err = Open(notDB, OpenConfig{})
	assert.Error(t, err)
}

func TestIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		require.True(t, ValidID(id), id)
		require.Len(t, id, 30)
		require.Equal(t, strings.ToLower(id), id)
		require.False(t, seen[id])
		seen[id] = true
	}
	for _, bad := range []string{"", "apr_", "apr_ABCDEFGHIJKLMNOPQRSTUVWXYZ", "xyz_abcdefghijklmnopqrstuvwxyz",
		"apr_abcdefghijklmnopqrstuvwxy1", "apr_abcdefghijklmnopqrstuvwxyz0", "apr_abcdefghijklmnopqrstuvwxy\x00"} {
		assert.False(t, ValidID(bad), "%q", bad)
	}
}

func TestAskStoresTheCall(t *testing.T) {
	f := newFixture(t)
	tid, _ := trace.TraceIDFromHex("0102030405060708090a0b0c0d0e0f10")
	sid, _ := trace.SpanIDFromHex("0102030405060708")
	ctx := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	req := testRequest(`{ "cmd" : "rm -rf /tmp/x", "n": 1.0 }`)
	req.OriginalInput = json.RawMessage(`{"cmd": "rm -rf /"}`)
	r, err := f.ib.Ask(ctx, req)
	require.NoError(t, err)

	assert.True(t, ValidID(r.ID))
	assert.Equal(t, StatusPending, r.Status)
	assert.Equal(t, "shell", r.Tool)
	assert.Equal(t, "call_1", r.ToolCallID)
	assert.JSONEq(t, `{"cmd":"rm -rf /tmp/x","n":1.0}`, string(r.Input))
	assert.Equal(t, `{"cmd":"rm -rf /tmp/x","n":1.0}`, string(r.Input), "compact, exact bytes")
	assert.Equal(t, `{"cmd":"rm -rf /"}`, string(r.Original))
	assert.Equal(t, gate.CallHash(req.Call), r.CallHash)
	assert.Equal(t, "agent-a", r.Agent)
	assert.Equal(t, "run-1", r.RunID)
	assert.Equal(t, "task-1", r.TaskID)
	assert.Equal(t, tid.String(), r.TraceID)
	assert.Equal(t, sid.String(), r.SpanID)
	assert.Equal(t, "deletes files", r.Reason)
	assert.Equal(t, "high", r.Risk)
	assert.Equal(t, "fs.delete", r.Rule)
	assert.Equal(t, "classifier", r.Source)
	assert.Equal(t, f.clock.Now(), r.AskedAt)
	assert.Equal(t, f.clock.Now().Add(testTTL), r.ExpiresAt)
	assert.Nil(t, r.Answer)

	got, err := f.ib.Get(context.Background(), r.ID)
	require.NoError(t, err)
	assert.Equal(t, r.ID, got.ID)
	assert.Equal(t, r.CallHash, got.CallHash)
	assert.True(t, r.AskedAt.Equal(got.AskedAt))
}

func TestAskBoundsText(t *testing.T) {
	f := newFixture(t)
	req := testRequest(`{"cmd":"ls"}`)
	req.Decision.Reason = strings.Repeat("x", 100_000) + "\xff"
	req.Decision.Source = strings.Repeat("s", 10_000)
	req.Call.ToolCallID = "id\xfe" + strings.Repeat("i", 1000)
	req.CallHash = ""
	r, err := f.ib.Ask(context.Background(), req)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(r.Reason), gate.MaxTextBytes)
	assert.LessOrEqual(t, len(r.Source), gate.MaxNameBytes)
	assert.LessOrEqual(t, len(r.ToolCallID), gate.MaxNameBytes)
	// The hash is of the call as it runs, not the bounded copy.
	assert.Equal(t, gate.CallHash(req.Call), r.CallHash)

	_, err = f.ib.Ask(context.Background(), gate.ApprovalRequest{Call: gate.ToolCallContext{ToolName: "t", RawInput: json.RawMessage(`not json`)}})
	assert.Error(t, err)
	big := `{"a":"` + strings.Repeat("a", MaxInputBytes) + `"}`
	_, err = f.ib.Ask(context.Background(), gate.ApprovalRequest{Call: gate.ToolCallContext{ToolName: "t", RawInput: json.RawMessage(big)}})
	assert.Error(t, err)
	// No RawInput: the decoded input's JSON.
	r, err = f.ib.Ask(context.Background(), gate.ApprovalRequest{Call: gate.ToolCallContext{ToolName: "t", Input: map[string]any{"b": 2}}})
	require.NoError(t, err)
	assert.Equal(t, `{"b":2}`, string(r.Input))
}

func TestAnswerAndTake(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	r := f.ask(t, `{"cmd":"ls"}`)
	f.clock.Advance(time.Minute)
	got, err := f.ib.Answer(ctx, r.ID, Answer{Approve: true, Approver: "alice", Reason: "ok", ForRun: true, CallHash: r.CallHash})
	require.NoError(t, err)
	assert.Equal(t, StatusApproved, got.Status)
	require.NotNil(t, got.Answer)
	assert.Equal(t, f.clock.Now(), got.Answer.At)
	assert.True(t, got.Answer.ForRun)

	f.clock.Advance(time.Minute)
	taken, err := f.ib.Take(ctx, r.ID, testCall(`{"cmd":"ls"}`))
	require.NoError(t, err)
	assert.Equal(t, StatusUsed, taken.Status)
	assert.Equal(t, f.clock.Now(), taken.UsedAt)
	assert.True(t, taken.Answer.Approve)

	_, err = f.ib.Take(ctx, r.ID, testCall(`{"cmd":"ls"}`))
	assert.ErrorIs(t, err, ErrUsed)
}

func TestTakeWhitespaceInsensitive(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	r := f.ask(t, `{"cmd": "ls"}`)
	_, err := f.ib.Answer(ctx, r.ID, Answer{Approve: true, Approver: "alice"})
	require.NoError(t, err)
	taken, err := f.ib.Take(ctx, r.ID, testCall("{\n  \"cmd\":\"ls\"\n}"))
	require.NoError(t, err)
	assert.Equal(t, StatusUsed, taken.Status)
}

func TestAnswerRefusals(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(f *fixture, r Request) // brings r into a state
		id    func(r Request) string
		ans   Answer
		want  error
		// state is the status the request has after the refused answer.
		state Status
	}{
		{name: "unknown approver", ans: Answer{Approve: true, Approver: "mallory"}, want: ErrUnknownApprover, state: StatusPending},
		{name: "empty approver", ans: Answer{Approve: true}, want: ErrUnknownApprover, state: StatusPending},
		{name: "blank approver", ans: Answer{Approve: true, Approver: " "}, want: ErrUnknownApprover, state: StatusPending},
		{name: "overlong approver", ans: Answer{Approve: true, Approver: strings.Repeat("a", 300)}, want: ErrUnknownApprover, state: StatusPending},
		{name: "approver name case", ans: Answer{Approve: true, Approver: "Alice"}, want: ErrUnknownApprover, state: StatusPending},
		{name: "changed call", ans: Answer{Approve: true, Approver: "alice", CallHash: strings.Repeat("0", 64)}, want: ErrCallChanged, state: StatusPending},
		{name: "request hash is not the call hash", setup: nil, ans: Answer{Approve: true, Approver: "alice", CallHash: testRequest(`{"cmd":"ls"}`).CallHash}, want: ErrCallChanged, state: StatusPending},
		{name: "no such request", id: func(Request) string { return NewID() }, ans: Answer{Approve: true, Approver: "alice"}, want: ErrNotFound, state: StatusPending},
		{name: "malformed id", id: func(Request) string { return "../../etc/passwd" }, ans: Answer{Approve: true, Approver: "alice"}, want: ErrNotFound, state: StatusPending},
		{name: "already approved", setup: func(f *fixture, r Request) {
			_, err := f.ib.Answer(ctx, r.ID, Answer{Approve: true, Approver: "alice"})
			require.NoError(t, err)
		}, ans: Answer{Approve: false, Approver: "alice"}, want: ErrAnswered, state: StatusApproved},
		{name: "already declined", setup: func(f *fixture, r Request) {
			_, err := f.ib.Answer(ctx, r.ID, Answer{Approve: false, Approver: "alice"})
			require.NoError(t, err)
		}, ans: Answer{Approve: true, Approver: "alice"}, want: ErrAnswered, state: StatusDeclined},
		{name: "declined and resumed", setup: func(f *fixture, r Request) {
			_, err := f.ib.Answer(ctx, r.ID, Answer{Approve: false, Approver: "alice"})
			require.NoError(t, err)
			_, err = f.ib.Take(ctx, r.ID, testCall(`{"cmd":"ls"}`))
			require.NoError(t, err)
		}, ans: Answer{Approve: true, Approver: "alice"}, want: ErrAnswered, state: StatusDeclined},
		{name: "expired", setup: func(f *fixture, r Request) { f.clock.Advance(testTTL) },
			ans: Answer{Approve: true, Approver: "alice"}, want: ErrExpired, state: StatusExpired},
		{name: "abandoned", setup: func(f *fixture, r Request) { require.NoError(t, f.ib.Abandon(ctx, r.ID, "gone")) },
			ans: Answer{Approve: true, Approver: "alice"}, want: ErrExpired, state: StatusExpired},
		{name: "used", setup: func(f *fixture, r Request) {
			_, err := f.ib.Answer(ctx, r.ID, Answer{Approve: true, Approver: "alice"})
			require.NoError(t, err)
			_, err = f.ib.Take(ctx, r.ID, testCall(`{"cmd":"ls"}`))
			require.NoError(t, err)
		}, ans: Answer{Approve: true, Approver: "alice"}, want: ErrUsed, state: StatusUsed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.ask(t, `{"cmd":"ls"}`)
			if tt.setup != nil {
				tt.setup(f, r)
			}
			before, err := f.db.Get(ctx, r.ID)
			require.NoError(t, err)
			id := r.ID
			if tt.id != nil {
				id = tt.id(r)
			}
			_, err = f.ib.Answer(ctx, id, tt.ans)
			require.ErrorIs(t, err, tt.want)
			after, err := f.ib.Get(ctx, r.ID)
			require.NoError(t, err)
			assert.Equal(t, tt.state, after.Status)
			if before.Status == after.Status {
				assert.Equal(t, before.Answer, after.Answer, "a refused answer changes nothing")
			}
		})
	}
}

func TestExpiryIsPersistedWhenTouched(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	r := f.ask(t, `{"cmd":"ls"}`)
	f.clock.Advance(testTTL - time.Nanosecond)
	got, err := f.ib.Get(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, StatusPending, got.Status)
	f.clock.Advance(time.Nanosecond)
	got, err = f.ib.Get(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, StatusExpired, got.Status, "read as expired")
	stored, err := f.db.Get(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, StatusPending, stored.Status, "Get does not write")

	_, err = f.ib.Answer(ctx, r.ID, Answer{Approve: true, Approver: "alice"})
	require.ErrorIs(t, err, ErrExpired)
	stored, err = f.db.Get(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, StatusExpired, stored.Status, "Answer stored the expiry")
	assert.NotEmpty(t, stored.Note)
	assert.Nil(t, stored.Answer)
}

func TestTakeRefusals(t *testing.T) {
	ctx := context.Background()
	approve := func(f *fixture, r Request) {
		_, err := f.ib.Answer(ctx, r.ID, Answer{Approve: true, Approver: "alice"})
		require.NoError(t, err)
	}
	tests := []struct {
		name  string
		setup func(f *fixture, r Request)
		id    func(r Request) string
		call  gate.ToolCallContext
		want  error
		state Status // after the refused Take
	}{
		{name: "other input", setup: approve, call: testCall(`{"cmd":"rm -rf /"}`), want: ErrCallChanged, state: StatusApproved},
		{name: "number spelled differently", setup: approve, call: testCall(`{"cmd":"ls","n":1}`), want: ErrCallChanged, state: StatusApproved},
		{name: "other tool", setup: approve, call: func() gate.ToolCallContext { c := testCall(`{"cmd":"ls"}`); c.ToolName = "shell2"; return c }(), want: ErrCallChanged, state: StatusApproved},
		{name: "other call ID", setup: approve, call: func() gate.ToolCallContext { c := testCall(`{"cmd":"ls"}`); c.ToolCallID = "call_2"; return c }(), want: ErrCallChanged, state: StatusApproved},
		{name: "other agent", setup: approve, call: func() gate.ToolCallContext { c := testCall(`{"cmd":"ls"}`); c.AgentName = "agent-b"; return c }(), want: ErrCallChanged, state: StatusApproved},
		{name: "other run", setup: approve, call: func() gate.ToolCallContext { c := testCall(`{"cmd":"ls"}`); c.RunID = "run-2"; return c }(), want: ErrCallChanged, state: StatusApproved},
		{name: "changed call on a declined request", setup: func(f *fixture, r Request) {
			_, err := f.ib.Answer(ctx, r.ID, Answer{Approve: false, Approver: "alice"})
			require.NoError(t, err)
		}, call: testCall(`{"cmd":"rm"}`), want: ErrCallChanged, state: StatusDeclined},
		{name: "expired", setup: func(f *fixture, r Request) { f.clock.Advance(2 * testTTL) }, call: testCall(`{"cmd":"ls"}`), want: ErrExpired, state: StatusExpired},
		{name: "abandoned", setup: func(f *fixture, r Request) { require.NoError(t, f.ib.Abandon(ctx, r.ID, "gone")) }, call: testCall(`{"cmd":"ls"}`), want: ErrExpired, state: StatusExpired},
		{name: "used", setup: func(f *fixture, r Request) {
			approve(f, r)
			_, err := f.ib.Take(ctx, r.ID, testCall(`{"cmd":"ls"}`))
			require.NoError(t, err)
		}, call: testCall(`{"cmd":"ls"}`), want: ErrUsed, state: StatusUsed},
		{name: "no such request", id: func(Request) string { return NewID() }, call: testCall(`{"cmd":"ls"}`), want: ErrNotFound, state: StatusPending},
		{name: "empty id", id: func(Request) string { return "" }, call: testCall(`{"cmd":"ls"}`), want: ErrNotFound, state: StatusPending},
		{name: "hostile id", id: func(Request) string { return strings.Repeat("\x00", 70000) }, call: testCall(`{"cmd":"ls"}`), want: ErrNotFound, state: StatusPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.ask(t, `{"cmd":"ls"}`)
			if tt.setup != nil {
				tt.setup(f, r)
			}
			id := r.ID
			if tt.id != nil {
				id = tt.id(r)
			}
			_, err := f.ib.Take(ctx, id, tt.call)
			require.ErrorIs(t, err, tt.want)
			after, err := f.ib.Get(ctx, r.ID)
			require.NoError(t, err)
			assert.Equal(t, tt.state, after.Status)
		})
	}
}

func TestTakePendingAndDeclined(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	r := f.ask(t, `{"cmd":"ls"}`)
	got, err := f.ib.Take(ctx, r.ID, testCall(`{"cmd":"ls"}`))
	require.NoError(t, err)
	assert.Equal(t, StatusPending, got.Status)
	assert.Nil(t, got.Answer)

	_, err = f.ib.Answer(ctx, r.ID, Answer{Approve: false, Approver: "alice", Reason: "no", ForRun: true})
	require.NoError(t, err)
	f.clock.Advance(time.Minute)
	got, err = f.ib.Take(ctx, r.ID, testCall(`{"cmd":"ls"}`))
	require.NoError(t, err)
	assert.Equal(t, StatusDeclined, got.Status)
	assert.False(t, got.Answer.Approve)
	assert.False(t, got.Answer.ForRun, "ForRun is dropped from a decline")
	assert.Equal(t, f.clock.Now(), got.UsedAt)
	// Again: still declined, UsedAt kept.
	f.clock.Advance(time.Minute)
	again, err := f.ib.Take(ctx, r.ID, testCall(`{"cmd":"ls"}`))
	require.NoError(t, err)
	assert.Equal(t, StatusDeclined, again.Status)
	assert.True(t, got.UsedAt.Equal(again.UsedAt))
}

func TestAbandon(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	r := f.ask(t, `{"cmd":"ls"}`)
	require.NoError(t, f.ib.Abandon(ctx, r.ID, "the call stopped waiting"))
	got, err := f.ib.Get(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, StatusExpired, got.Status)
	assert.Equal(t, "the call stopped waiting", got.Note)

	r2 := f.ask(t, `{"cmd":"ls"}`)
	_, err = f.ib.Answer(ctx, r2.ID, Answer{Approve: true, Approver: "alice"})
	require.NoError(t, err)
	require.NoError(t, f.ib.Abandon(ctx, r2.ID, "late"))
	got, err = f.ib.Get(ctx, r2.ID)
	require.NoError(t, err)
	assert.Equal(t, StatusApproved, got.Status, "an answered request is left as it is")

	assert.ErrorIs(t, f.ib.Abandon(ctx, NewID(), "x"), ErrNotFound)
}

func TestList(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	mk := func(agent, run string) Request {
		req := testRequest(`{"cmd":"ls"}`)
		req.Call.AgentName, req.Call.RunID = agent, run
		r, err := f.ib.Ask(ctx, req)
		require.NoError(t, err)
		f.clock.Advance(10 * time.Minute)
		return r
	}
	a1 := mk("a", "r1") // asked at t0
	a2 := mk("a", "r2") // t0+10m
	b1 := mk("b", "r1") // t0+20m
	b2 := mk("b", "r3") // t0+30m
	// now t0+40m
	_, err := f.ib.Answer(ctx, a2.ID, Answer{Approve: true, Approver: "alice"})
	require.NoError(t, err)

	ids := func(rs []Request) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	list := func(fl Filter) []string {
		rs, err := f.ib.List(ctx, fl)
		require.NoError(t, err)
		return ids(rs)
	}
	assert.Equal(t, []string{b2.ID, b1.ID, a2.ID, a1.ID}, list(Filter{}))
	assert.Equal(t, []string{a2.ID, a1.ID}, list(Filter{Agent: "a"}))
	assert.Equal(t, []string{b1.ID, a1.ID}, list(Filter{RunID: "r1"}))
	assert.Equal(t, []string{a2.ID, a1.ID}, list(Filter{OlderThan: 30 * time.Minute}))
	assert.Equal(t, []string{b2.ID, b1.ID}, list(Filter{Limit: 2}))
	assert.Equal(t, []string{b2.ID, b1.ID, a1.ID}, list(Filter{Status: []Status{StatusPending}}))
	assert.Equal(t, []string{b2.ID, b1.ID}, list(Filter{Status: []Status{StatusPending}, Limit: 2}))
	assert.Equal(t, []string{a2.ID}, list(Filter{Status: []Status{StatusApproved}, Limit: 2}))

	f.clock.Advance(testTTL - 15*time.Minute) // a1 (t0) and b1 (t0+20m) now past TTL
	assert.Equal(t, []string{b2.ID}, list(Filter{Status: []Status{StatusPending}}))
	assert.Equal(t, []string{b1.ID, a1.ID}, list(Filter{Status: []Status{StatusExpired}}))
	assert.Equal(t, []string{b1.ID, a2.ID}, list(Filter{Status: []Status{StatusExpired, StatusApproved}, Limit: 2}))
	assert.Empty(t, list(Filter{Agent: "nobody"}))
}

func TestApprovers(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	name, ok, err := f.db.ByToken(ctx, f.token)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "alice", name)
	assert.Len(t, f.token, 43)

	ok, err = f.db.Known(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, ok)
	for _, n := range []string{"", "bob", "alice ", strings.Repeat("x", 1000)} {
		ok, err = f.db.Known(ctx, n)
		require.NoError(t, err)
		assert.False(t, ok, n)
	}
	for _, tok := range []string{"", "x", f.token + "x", f.token[:42], strings.Repeat("a", 5000), tokenHash(f.token)} {
		_, ok, err = f.db.ByToken(ctx, tok)
		require.NoError(t, err)
		assert.False(t, ok, tok)
	}

	// Adding again replaces the token.
	tok2, err := f.db.Add(ctx, "alice")
	require.NoError(t, err)
	assert.NotEqual(t, f.token, tok2)
	_, ok, err = f.db.ByToken(ctx, f.token)
	require.NoError(t, err)
	assert.False(t, ok, "the old token is revoked")
	name, ok, err = f.db.ByToken(ctx, tok2)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "alice", name)

	for _, bad := range []string{"", "  ", "a\nb", "a\x00", "\xff", strings.Repeat("n", gate.MaxNameBytes+1)} {
		_, err := f.db.Add(ctx, bad)
		assert.Error(t, err, "%q", bad)
	}
	// The file keeps only hashes.
	raw, err := os.ReadFile(f.db.Path())
	require.NoError(t, err)
	assert.NotContains(t, string(raw), tok2)
}

func TestGrants(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	ok, err := f.db.Granted(ctx, "run-1", "k")
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, f.db.Grant(ctx, "run-1", "k"))
	// A new DB value over the same file: the grant persisted.
	db2, err := Open(f.db.Path(), OpenConfig{})
	require.NoError(t, err)
	ok, err = db2.Granted(ctx, "run-1", "k")
	require.NoError(t, err)
	assert.True(t, ok)
	for _, q := range [][2]string{{"run-2", "k"}, {"run-1", "k2"}, {"run-1\x00k", ""}, {"run", "1\x00k"}, {"", ""}} {
		ok, err = db2.Granted(ctx, q[0], q[1])
		require.NoError(t, err)
		assert.False(t, ok, "%q", q)
	}
	assert.Error(t, f.db.Grant(ctx, "", "k"))
}

func TestStoreContract(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	r := f.ask(t, `{"cmd":"ls"}`)
	assert.ErrorIs(t, f.db.Create(ctx, r), ErrExists)
	_, err := f.db.Get(ctx, NewID())
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = f.db.Update(ctx, NewID(), func(*Request) error { return nil })
	assert.ErrorIs(t, err, ErrNotFound)
	boom := errors.New("boom")
	_, err = f.db.Update(ctx, r.ID, func(r *Request) error { r.Status = StatusApproved; return boom })
	assert.ErrorIs(t, err, boom)
	got, err := f.db.Get(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, StatusPending, got.Status, "an error from f stores nothing")
	got, err = f.db.Update(ctx, r.ID, func(r *Request) error { r.ID = "apr_other"; r.Note = "n"; return nil })
	require.NoError(t, err)
	assert.Equal(t, r.ID, got.ID, "Update cannot change the ID")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = f.db.Get(cctx, r.ID)
	assert.ErrorIs(t, err, context.Canceled)
}
