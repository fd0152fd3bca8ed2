package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/gate"
)

// memStore is an in-memory Store (and Approvers), the smallest
// implementation of the interfaces; the property test runs against it and
// against the bbolt DB.
type memStore struct {
	mu   sync.Mutex
	reqs map[string][]byte
	who  map[string]bool
}

func newMemStore(approvers ...string) *memStore {
	m := &memStore{reqs: map[string][]byte{}, who: map[string]bool{}}
	for _, a := range approvers {
		m.who[a] = true
	}
	return m
}

func (m *memStore) Create(_ context.Context, r Request) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.reqs[r.ID]; ok {
		return ErrExists
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	m.reqs[r.ID] = b
	return nil
}

func (m *memStore) get(id string) (Request, error) {
	b, ok := m.reqs[id]
	if !ok {
		return Request{}, ErrNotFound
	}
	var r Request
	err := json.Unmarshal(b, &r)
	return r, err
}

func (m *memStore) Get(_ context.Context, id string) (Request, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.get(id)
}

func (m *memStore) Update(_ context.Context, id string, f func(*Request) error) (Request, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.get(id)
	if err != nil {
		return Request{}, err
	}
	if err := f(&r); err != nil {
		return Request{}, err
	}
	r.ID = id
	b, err := json.Marshal(r)
	if err != nil {
		return Request{}, err
	}
	m.reqs[id] = b
	return r, nil
}

func (m *memStore) List(_ context.Context, f Filter) ([]Request, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Request
	for id := range m.reqs {
		r, err := m.get(id)
		if err != nil {
			return nil, err
		}
		if matchStored(r, f, f.Now) {
			out = append(out, r)
		}
	}
	sortNewest(out)
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

func (m *memStore) Add(context.Context, string) (string, error) {
	return "", errors.New("not supported")
}

func (m *memStore) Known(_ context.Context, name string) (bool, error) { return m.who[name], nil }

func (m *memStore) ByToken(context.Context, string) (string, bool, error) { return "", false, nil }

// The inputs a call can have, by class: two inputs of one class are one
// call (they differ only in insignificant whitespace).
var propInputs = []struct {
	raw   string
	class int
}{
	{`{"cmd":"ls"}`, 0},
	{`{ "cmd" : "ls" }`, 0},
	{`{"cmd":"ls","n":1}`, 1},
	{`{"cmd":"ls","n":1.0}`, 2},
	{`{"n":1,"cmd":"ls"}`, 3},
	{`{"cmd":"rm -rf /"}`, 4},
}

// model is what the test expects of one request.
type model struct {
	id      string
	class   int
	run     string
	expires time.Time
	status  Status
	approve bool
}

func (m *model) at(now time.Time) Status {
	if m.status == StatusPending && !now.Before(m.expires) {
		m.status = StatusExpired
	}
	return m.status
}

func propCall(input string, run string) gate.ToolCallContext {
	c := testCall(input)
	c.RunID = run
	return c
}

// checkInbox drives an Inbox through arbitrary interleavings of Ask,
// Answer (by known, unknown and empty approvers, with the right or a
// tampered call hash), Take (with the asked call or another), Abandon and
// the passing of time, and checks every result against a model. In
// particular: Take approves only a request a known approver approved, for
// the very call it was asked for, before it expired, and only once; a
// refused answer changes nothing.
func checkInbox(t *rapid.T, st Store, ap Approvers) {
	ctx := context.Background()
	c := newClock()
	ib := New(st, ap, Config{TTL: testTTL, Now: c.Now, MaxPendingPerRun: -1})
	var reqs []*model
	runs := []string{"run-1", "run-2"}

	pick := func(t *rapid.T) (*model, string) {
		if len(reqs) == 0 || rapid.IntRange(0, 9).Draw(t, "unknownID") == 0 {
			return nil, rapid.SampledFrom([]string{NewID(), "", "apr_x", "../x"}).Draw(t, "badID")
		}
		m := rapid.SampledFrom(reqs).Draw(t, "req")
		return m, m.id
	}
	expectErr := func(t *rapid.T, op string, got, want error) {
		if want == nil && got != nil || want != nil && !errors.Is(got, want) {
			t.Fatalf("%s: got error %v, want %v", op, got, want)
		}
	}

	t.Repeat(map[string]func(*rapid.T){
		"ask": func(t *rapid.T) {
			in := rapid.IntRange(0, len(propInputs)-1).Draw(t, "input")
			run := rapid.SampledFrom(runs).Draw(t, "run")
			req := testRequest(propInputs[in].raw)
			req.Call.RunID = run
			r, err := ib.Ask(ctx, req)
			if err != nil {
				t.Fatalf("ask: %v", err)
			}
			if r.Status != StatusPending || r.CallHash != gate.CallHash(req.Call) {
				t.Fatalf("ask stored %+v", r)
			}
			reqs = append(reqs, &model{id: r.ID, class: propInputs[in].class, run: run, expires: c.Now().Add(testTTL), status: StatusPending})
		},
		"answer": func(t *rapid.T) {
			m, id := pick(t)
			who := rapid.SampledFrom([]string{"alice", "bob", "mallory", "", "Alice", "alice\x00"}).Draw(t, "approver")
			approve := rapid.Bool().Draw(t, "approve")
			tamper := rapid.IntRange(0, 3).Draw(t, "tamper") == 0
			a := Answer{Approve: approve, Approver: who, ForRun: rapid.Bool().Draw(t, "forRun")}
			if m != nil {
				stored, err := st.Get(ctx, m.id)
				if err != nil {
					t.Fatalf("get: %v", err)
				}
				a.CallHash = stored.CallHash
				if tamper {
					a.CallHash = gate.CallHash(propCall(`{"cmd":"other"}`, m.run))
				}
			}
			_, err := ib.Answer(ctx, id, a)
			var want error
			switch {
			case who != "alice" && who != "bob":
				want = ErrUnknownApprover
			case m == nil:
				want = ErrNotFound
			default:
				switch m.at(c.Now()) {
				case StatusPending:
					if tamper {
						want = ErrCallChanged
					} else if approve {
						m.status, m.approve = StatusApproved, true
					} else {
						m.status = StatusDeclined
					}
				case StatusApproved, StatusDeclined:
					want = ErrAnswered
				case StatusExpired:
					want = ErrExpired
				case StatusUsed:
					want = ErrUsed
				}
			}
			expectErr(t, "answer", err, want)
		},
		"take": func(t *rapid.T) {
			m, id := pick(t)
			in := rapid.IntRange(0, len(propInputs)-1).Draw(t, "input")
			run := rapid.SampledFrom(runs).Draw(t, "run")
			r, err := ib.Take(ctx, id, propCall(propInputs[in].raw, run))
			var want error
			wantStatus := Status("")
			switch {
			case m == nil:
				want = ErrNotFound
			case m.class != propInputs[in].class || m.run != run:
				want = ErrCallChanged
			default:
				switch m.at(c.Now()) {
				case StatusPending:
					wantStatus = StatusPending
				case StatusApproved:
					wantStatus, m.status = StatusUsed, StatusUsed
				case StatusDeclined:
					wantStatus = StatusDeclined
				case StatusExpired:
					want = ErrExpired
				case StatusUsed:
					want = ErrUsed
				}
			}
			expectErr(t, "take", err, want)
			if err == nil && r.Status != wantStatus {
				t.Fatalf("take: status %s, want %s", r.Status, wantStatus)
			}
			// (a)/(b): the only way Take lets a call run.
			if err == nil && r.Status == StatusUsed {
				if r.Answer == nil || !r.Answer.Approve || (r.Answer.Approver != "alice" && r.Answer.Approver != "bob") {
					t.Fatalf("take let through a request without a known approval: %+v", r)
				}
				if r.CallHash != gate.CallHash(propCall(propInputs[in].raw, run)) {
					t.Fatalf("take let through another call")
				}
			}
		},
		"abandon": func(t *rapid.T) {
			m, id := pick(t)
			err := ib.Abandon(ctx, id, "gone")
			var want error
			if m == nil {
				want = ErrNotFound
			} else if m.at(c.Now()) == StatusPending {
				m.status = StatusExpired
			}
			expectErr(t, "abandon", err, want)
		},
		"time passes": func(t *rapid.T) {
			c.Advance(time.Duration(rapid.Int64Range(0, int64(testTTL)).Draw(t, "d")))
		},
		"": func(t *rapid.T) { // invariant: the inbox agrees with the model
			for _, m := range reqs {
				r, err := ib.Get(ctx, m.id)
				if err != nil {
					t.Fatalf("get %s: %v", m.id, err)
				}
				if want := m.at(c.Now()); r.Status != want {
					t.Fatalf("%s: status %s, model %s", m.id, r.Status, want)
				}
				if (r.Answer != nil) != (m.status == StatusApproved || m.status == StatusDeclined || m.status == StatusUsed) {
					t.Fatalf("%s: answer %+v in status %s", m.id, r.Answer, r.Status)
				}
			}
			rs, err := ib.List(ctx, Filter{Status: []Status{StatusPending}})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			var got, want []string
			for _, r := range rs {
				got = append(got, r.ID)
			}
			for _, m := range reqs {
				if m.status == StatusPending {
					want = append(want, m.id)
				}
			}
			sort.Strings(got)
			sort.Strings(want)
			if len(got) != len(want) {
				t.Fatalf("pending list %v, model %v", got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("pending list %v, model %v", got, want)
				}
			}
		},
	})
}

func TestPropertyInboxMemory(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := newMemStore("alice", "bob")
		checkInbox(t, s, s)
	})
}

func TestPropertyInboxBolt(t *testing.T) {
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		db, err := Open(filepath.Join(dir, strconv.Itoa(n)+".db"), OpenConfig{})
		if err != nil {
			rt.Fatalf("open: %v", err)
		}
		for _, a := range []string{"alice", "bob"} {
			if _, err := db.Add(context.Background(), a); err != nil {
				rt.Fatalf("add: %v", err)
			}
		}
		checkInbox(rt, db, db)
	})
}
