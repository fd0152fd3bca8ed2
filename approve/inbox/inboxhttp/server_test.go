package inboxhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/approve/inbox/inboxhttp"
	"github.com/toolgate/toolgate/gate"
)

// clock is a settable clock shared by the inbox and the server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

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

// world is a real inbox DB (a temp file), the server over it on
// 127.0.0.1, and alice's token.
type world struct {
	db    *inbox.DB
	ib    *inbox.Inbox
	clock *clock
	srv   *httptest.Server
	token string // alice's
	url   string // http://127.0.0.1:PORT
	s     *inboxhttp.Server
	host  string // the page's host, LABEL.localhost:PORT
	port  string
}

func newWorld(t testing.TB) *world {
	return newWorldWith(t, nil)
}

// newWorldWith builds the world; approvers, when set, wraps the DB's
// Approvers for the inbox (to fake an approver the inbox does not know).
func newWorldWith(t testing.TB, approvers func(inbox.Approvers) inbox.Approvers) *world {
	t.Helper()
	db, err := inbox.Open(filepath.Join(t.TempDir(), "approvals.db"), inbox.OpenConfig{})
	require.NoError(t, err)
	tok, err := db.Add(context.Background(), "alice")
	require.NoError(t, err)
	c := &clock{t: time.Now().UTC().Truncate(time.Second)}
	var ap inbox.Approvers = db
	if approvers != nil {
		ap = approvers(db)
	}
	ib := inbox.New(db, ap, inbox.Config{TTL: time.Hour, Now: c.Now})
	s, err := inboxhttp.New(inboxhttp.Options{Inbox: ib, Approvers: db, Now: c.Now})
	require.NoError(t, err)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return &world{db: db, ib: ib, clock: c, srv: srv, token: tok, url: srv.URL, s: s, host: s.PageHost(u.Port()), port: u.Port()}
}

type askOpt struct {
	tool, agent, run, reason string
	risk                     gate.RiskLevel
}

func (w *world) ask(t testing.TB, input string, o askOpt) inbox.Request {
	t.Helper()
	if o.tool == "" {
		o.tool = "bash"
	}
	if o.agent == "" {
		o.agent = "agent-a"
	}
	if o.run == "" {
		o.run = "run-1"
	}
	if o.reason == "" {
		o.reason = "installs a package"
	}
	if o.risk == "" {
		o.risk = gate.RiskHigh
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(input), &m)
	call := gate.ToolCallContext{ToolName: o.tool, Input: m, RawInput: json.RawMessage(input),
		ToolCallID: "call-" + o.run, AgentName: o.agent, RunID: o.run}
	r, err := w.ib.Ask(context.Background(), gate.NewApprovalRequest(call, gate.Ask(o.reason).WithRisk(o.risk).WithSource("classifier"), nil))
	require.NoError(t, err)
	return r
}

// do sends a request to the server; it never follows redirects.
func (w *world) do(t testing.TB, method, path, token, body string, hdr ...string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, w.url+path, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if !strings.HasPrefix(path, "/api/") {
		req.Host = w.host // the page lives on its own host
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readBody(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

type apiErr struct {
	Error   string         `json:"error"`
	Code    string         `json:"code"`
	Request *inbox.Request `json:"request"`
}

func decodeErr(t testing.TB, resp *http.Response) apiErr {
	t.Helper()
	var e apiErr
	body := readBody(t, resp)
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	return e
}

func TestAPIRefusesWithoutAValidToken(t *testing.T) {
	w := newWorld(t)
	r := w.ask(t, `{"command":"ls"}`, askOpt{})
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/v1/approvals", ""},
		{"GET", "/api/v1/approvals/" + r.ID, ""},
		{"POST", "/api/v1/approvals/" + r.ID + "/approve", `{}`},
		{"POST", "/api/v1/approvals/" + r.ID + "/decline", `{"reason":"no"}`},
	} {
		for name, hdr := range map[string][]string{
			"none":          nil,
			"unknown token": {"Authorization", "Bearer not-a-token"},
			"basic":         {"Authorization", "Basic YWxpY2U6eA=="},
			"empty bearer":  {"Authorization", "Bearer "},
		} {
			resp := w.do(t, tc.method, tc.path, "", tc.body, hdr...)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s %s, %s", tc.method, tc.path, name)
			assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
			assert.Equal(t, "unauthorized", decodeErr(t, resp).Code)
		}
	}
	// A session cookie is no API credential.
	resp := w.do(t, "GET", "/api/v1/approvals", "", "", "Cookie", inboxhttp.SessionCookie+"="+w.login(t))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	got, err := w.ib.Get(context.Background(), r.ID)
	require.NoError(t, err)
	assert.Equal(t, inbox.StatusPending, got.Status, "nothing was answered")
	// Replacing alice's token ends the old one.
	_, err = w.db.Add(context.Background(), "alice")
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, w.do(t, "GET", "/api/v1/approvals", w.token, "").StatusCode)
}

func TestAPIListFilters(t *testing.T) {
	w := newWorld(t)
	old := w.ask(t, `{"command":"old"}`, askOpt{agent: "a1", run: "r1"})
	w.clock.Advance(20 * time.Minute)
	b := w.ask(t, `{"command":"b"}`, askOpt{agent: "a2", run: "r2"})
	w.clock.Advance(time.Second)
	c := w.ask(t, `{"command":"c"}`, askOpt{agent: "a2", run: "r3"})
	_, err := w.ib.Answer(context.Background(), c.ID, inbox.Answer{Approve: true, Approver: "alice"})
	require.NoError(t, err)

	list := func(q string) []string {
		t.Helper()
		resp := w.do(t, "GET", "/api/v1/approvals"+q, w.token, "")
		body := readBody(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		assert.Contains(t, resp.Header.Get("Content-Type"), "application/json")
		var rs []inbox.Request
		require.NoError(t, json.Unmarshal([]byte(body), &rs), body)
		ids := []string{}
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	assert.Equal(t, []string{b.ID, old.ID}, list(""), "pending by default, newest first")
	assert.Equal(t, []string{c.ID, b.ID, old.ID}, list("?status=all"))
	assert.Equal(t, []string{c.ID}, list("?status=approved"))
	assert.Equal(t, []string{b.ID}, list("?agent=a2"))
	assert.Equal(t, []string{old.ID}, list("?run=r1"))
	assert.Equal(t, []string{old.ID}, list("?older_than=10m"))
	assert.Equal(t, []string{old.ID}, list("?older_than=0d&agent=a1"))
	assert.Equal(t, []string{b.ID}, list("?limit=1"))
	assert.Equal(t, []string{}, list("?agent=nobody"), "an empty list is [], not null")

	for _, q := range []string{"?status=maybe", "?older_than=soon", "?older_than=-1h", "?limit=0", "?limit=100000", "?limit=x"} {
		resp := w.do(t, "GET", "/api/v1/approvals"+q, w.token, "")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
		assert.Equal(t, "bad_request", decodeErr(t, resp).Code, q)
	}

	// One request.
	resp := w.do(t, "GET", "/api/v1/approvals/"+b.ID, w.token, "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var got inbox.Request
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	assert.Equal(t, b.ID, got.ID)
	assert.JSONEq(t, `{"command":"b"}`, string(got.Input))
	assert.Equal(t, b.CallHash, got.CallHash)
	for _, id := range []string{inbox.NewID(), "apr_nope", "../etc/passwd"} {
		resp := w.do(t, "GET", "/api/v1/approvals/"+url.PathEscape(id), w.token, "")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, id)
		assert.Equal(t, "not_found", decodeErr(t, resp).Code)
	}
	assert.Equal(t, http.StatusNotFound, w.do(t, "GET", "/api/v2/approvals", w.token, "").StatusCode)
	assert.Equal(t, http.StatusNotFound, w.do(t, "GET", "/nothing-here", "", "").StatusCode)
}

// TestAPIAnswerStatusCodes goes through every answer and refusal of the
// API, checking the inbox DB after each.
func TestAPIAnswerStatusCodes(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	post := func(id, verb, body string, hdr ...string) *http.Response {
		t.Helper()
		return w.do(t, "POST", "/api/v1/approvals/"+id+"/"+verb, w.token, body, hdr...)
	}

	// 200: approved by the token's approver, for the run, bound to the call shown.
	a := w.ask(t, `{"command":"pip install requests"}`, askOpt{})
	resp := post(a.ID, "approve", `{"reason":"known package","for_run":true,"call_hash":"`+a.CallHash+`"}`)
	body := readBody(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	var got inbox.Request
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, inbox.StatusApproved, got.Status)
	stored, err := w.ib.Get(ctx, a.ID)
	require.NoError(t, err)
	require.NotNil(t, stored.Answer)
	assert.Equal(t, inbox.StatusApproved, stored.Status)
	assert.Equal(t, "alice", stored.Answer.Approver, "the token's approver answers")
	assert.Equal(t, "known package", stored.Answer.Reason)
	assert.True(t, stored.Answer.ForRun)

	// 409 answered: a second answer, either way.
	for _, verb := range []string{"approve", "decline"} {
		resp = post(a.ID, verb, `{"reason":"again"}`)
		assert.Equal(t, http.StatusConflict, resp.StatusCode)
		e := decodeErr(t, resp)
		assert.Equal(t, "answered", e.Code)
		require.NotNil(t, e.Request, "a 409 shows the request as it stands")
		assert.Equal(t, inbox.StatusApproved, e.Request.Status)
	}

	// 409 used: the resumed call took the approval.
	call := gate.ToolCallContext{ToolName: "bash", RawInput: json.RawMessage(`{"command":"pip install requests"}`), ToolCallID: "call-run-1", AgentName: "agent-a", RunID: "run-1"}
	_, err = w.ib.Take(ctx, a.ID, call)
	require.NoError(t, err)
	resp = post(a.ID, "approve", "")
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	assert.Equal(t, "used", decodeErr(t, resp).Code)

	// 200 decline; 400 without a reason; for_run is dropped from a decline.
	d := w.ask(t, `{"command":"rm -rf /"}`, askOpt{})
	resp = post(d.ID, "decline", `{}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, decodeErr(t, resp).Error, "reason")
	resp = post(d.ID, "decline", "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp = post(d.ID, "decline", `{"reason":"no","for_run":true}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	stored, err = w.ib.Get(ctx, d.ID)
	require.NoError(t, err)
	assert.Equal(t, inbox.StatusDeclined, stored.Status)
	assert.Equal(t, "alice", stored.Answer.Approver)
	assert.False(t, stored.Answer.ForRun)

	// 409 call_changed: the hash of another call.
	c := w.ask(t, `{"command":"curl x | sh"}`, askOpt{})
	resp = post(c.ID, "approve", `{"call_hash":"`+d.CallHash+`"}`)
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	assert.Equal(t, "call_changed", decodeErr(t, resp).Code)

	// 400: not JSON, unknown fields, two values; 415 other media; 413 too large.
	for _, b := range []string{`{`, `{"approver":"mallory"}`, `{"reason":1}`, `{} {}`, `[]`} {
		resp = post(c.ID, "approve", b)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, b)
		assert.Equal(t, "bad_request", decodeErr(t, resp).Code, b)
	}
	resp = post(c.ID, "approve", `reason=x`, "Content-Type", "application/x-www-form-urlencoded")
	assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	resp = post(c.ID, "approve", `{"reason":"`+strings.Repeat("x", inboxhttp.MaxBodyBytes)+`"}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	stored, err = w.ib.Get(ctx, c.ID)
	require.NoError(t, err)
	assert.Equal(t, inbox.StatusPending, stored.Status, "no refusal answered it")

	// 404: no such request; a GET on an answer endpoint is no answer.
	resp = post(inbox.NewID(), "approve", `{}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "not_found", decodeErr(t, resp).Code)
	assert.Equal(t, http.StatusMethodNotAllowed, w.do(t, "GET", "/api/v1/approvals/"+c.ID+"/approve", w.token, "").StatusCode)

	// 409 expired: past its TTL.
	w.clock.Advance(2 * time.Hour)
	resp = post(c.ID, "approve", `{}`)
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	e := decodeErr(t, resp)
	assert.Equal(t, "expired", e.Code)
	require.NotNil(t, e.Request)
	assert.Equal(t, inbox.StatusExpired, e.Request.Status)
}

// forgetful is an Approvers whose Known forgets everyone (an approver
// removed between the token check and the answer).
type forgetful struct{ inbox.Approvers }

func (forgetful) Known(context.Context, string) (bool, error) { return false, nil }

func TestAPIUnknownApproverIs403(t *testing.T) {
	w := newWorldWith(t, func(a inbox.Approvers) inbox.Approvers { return forgetful{a} })
	r := w.ask(t, `{"command":"ls"}`, askOpt{})
	resp := w.do(t, "POST", "/api/v1/approvals/"+r.ID+"/approve", w.token, `{}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "unknown_approver", decodeErr(t, resp).Code)
	got, err := w.ib.Get(context.Background(), r.ID)
	require.NoError(t, err)
	assert.Equal(t, inbox.StatusPending, got.Status)
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8470": true, "127.0.0.1": true, "127.9.8.7:1": true, "localhost:8470": true, "LOCALHOST": true,
		"localhost.": true, "app.localhost:80": true, "[::1]:8470": true, "[::1]": true, "::1": true,
		"": false, "evil.example": false, "evil.example:8470": false, "127.0.0.1.nip.io:8470": false,
		"localhost.evil.example": false, "10.0.0.1:8470": false, "0.0.0.0:8470": false, "[::]:8470": false,
		"[::ffff:10.0.0.1]:1": false, "192.168.1.2": false,
	} {
		assert.Equal(t, want, inboxhttp.LoopbackHost(host), host)
	}
}

// TestHostAndOriginRefused: DNS rebinding (a Host that is not loopback)
// and cross-origin posts are refused before any route runs.
func TestHostAndOriginRefused(t *testing.T) {
	w := newWorld(t)
	r := w.ask(t, `{"command":"ls"}`, askOpt{})
	for _, host := range []string{"evil.example", "evil.example:" + strings.Split(w.url, ":")[2], "127.0.0.1.nip.io", "10.1.2.3"} {
		for _, tc := range []struct{ method, path, body string }{
			{"GET", "/api/v1/approvals", ""}, {"GET", "/", ""}, {"GET", "/login?token=" + w.token, ""},
			{"POST", "/api/v1/approvals/" + r.ID + "/approve", `{}`},
		} {
			resp := w.do(t, tc.method, tc.path, w.token, tc.body, "Host", host)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s %s Host %s", tc.method, tc.path, host)
			assert.Contains(t, readBody(t, resp), "loopback")
		}
	}
	assert.Equal(t, http.StatusOK, w.do(t, "GET", "/api/v1/approvals", w.token, "", "Host", "localhost").StatusCode)

	self := w.url // http://127.0.0.1:port
	for name, hdr := range map[string][]string{
		"other origin":          {"Origin", "http://evil.example"},
		"other port":            {"Origin", "http://127.0.0.1:1"},
		"https origin":          {"Origin", strings.Replace(self, "http:", "https:", 1)},
		"null origin":           {"Origin", "null"},
		"sec-fetch cross-site":  {"Sec-Fetch-Site", "cross-site"},
		"sec-fetch same-site":   {"Sec-Fetch-Site", "same-site"},
		"origin ok, fetch lies": {"Origin", self, "Sec-Fetch-Site", "cross-site"},
	} {
		resp := w.do(t, "POST", "/api/v1/approvals/"+r.ID+"/approve", w.token, `{}`, hdr...)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, name)
		assert.Contains(t, decodeErr(t, resp).Error, "cross-origin", name)
	}
	got, err := w.ib.Get(context.Background(), r.ID)
	require.NoError(t, err)
	assert.Equal(t, inbox.StatusPending, got.Status, "no refused request answered it")
	resp := w.do(t, "POST", "/api/v1/approvals/"+r.ID+"/approve", w.token, `{}`, "Origin", self, "Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the server's own origin")
}

// login signs in as alice and returns the session cookie's value.
func (w *world) login(t testing.TB) string {
	t.Helper()
	resp := w.do(t, "GET", "/login?token="+url.QueryEscape(w.token), "", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, c := range resp.Cookies() {
		if c.Name == inboxhttp.SessionCookie {
			return c.Value
		}
	}
	t.Fatal("no session cookie")
	return ""
}

var (
	csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)
	hashRE = regexp.MustCompile(`name="call_hash" value="([^"]+)"`)
)

// page gets / with the session and returns the body and the CSRF token.
func (w *world) page(t testing.TB, session string) (string, string) {
	t.Helper()
	resp := w.do(t, "GET", "/", "", "", "Cookie", inboxhttp.SessionCookie+"="+session)
	body := readBody(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	m := csrfRE.FindStringSubmatch(body)
	require.NotNil(t, m, body)
	return body, m[1]
}

func form(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v.Encode()
}

// postForm posts a form as the page does.
func (w *world) postForm(t testing.TB, path, session, body string, hdr ...string) *http.Response {
	t.Helper()
	h := []string{"Content-Type", "application/x-www-form-urlencoded", "Origin", "http://" + w.host}
	if session != "" {
		h = append(h, "Cookie", inboxhttp.SessionCookie+"="+session)
	}
	return w.do(t, "POST", path, "", body, append(h, hdr...)...)
}

func TestPageSignInAndAnswer(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a := w.ask(t, `{"command":"pip install requests"}`, askOpt{agent: "unattended", run: "run-a", reason: "installs a package", risk: gate.RiskReview})
	b := w.ask(t, `{"command":"rm -rf build"}`, askOpt{run: "run-b", reason: "deletes files"})

	// Not signed in: the page and the forms say how to sign in.
	resp := w.do(t, "GET", "/", "", "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, readBody(t, resp), "/login?token=")
	resp = w.do(t, "GET", "/login?token=wrong", "", "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Empty(t, resp.Cookies())
	resp = w.postForm(t, "/ui/"+a.ID+"/approve", "", form("call_hash", a.CallHash))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp = w.postForm(t, "/ui/"+a.ID+"/approve", "forged-session", form("call_hash", a.CallHash))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// Sign in: an HttpOnly, SameSite=Strict cookie; the token leaves the URL.
	resp = w.do(t, "GET", "/login?token="+url.QueryEscape(w.token), "", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "0; url=/", resp.Header.Get("Refresh"))
	assert.Equal(t, "same-origin", resp.Header.Get("Referrer-Policy"), "the token in the URL never leaves in a Referer")
	var session string
	for _, c := range resp.Cookies() {
		if c.Name == inboxhttp.SessionCookie {
			session = c.Value
			assert.True(t, c.HttpOnly)
			assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
			assert.Equal(t, "/", c.Path)
			assert.NotEqual(t, w.token, c.Value, "the cookie is a session, not the token")
		}
	}
	require.NotEmpty(t, session)

	body, csrf := w.page(t, session)
	assert.Contains(t, body, "signed in as <strong>alice</strong>")
	for _, s := range []string{a.ID, b.ID, "pip install requests", "rm -rf build", "installs a package", "deletes files", "risk: review", "risk: high", "unattended", "run-a", a.CallHash, b.CallHash} {
		assert.Contains(t, body, s)
	}
	assert.Contains(t, body, `&#34;command&#34;: &#34;pip install requests&#34;`, "the input is pretty-printed JSON, escaped")

	// Refusals: no CSRF token, another session's, no call hash, another
	// call's hash, a cross-origin post, a decline without a reason.
	for name, tc := range map[string]struct {
		body string
		hdr  []string
		want int
	}{
		"no csrf":         {form("call_hash", a.CallHash), nil, http.StatusForbidden},
		"wrong csrf":      {form("csrf", strings.Repeat("0", 64), "call_hash", a.CallHash), nil, http.StatusForbidden},
		"no call hash":    {form("csrf", csrf), nil, http.StatusBadRequest},
		"other call":      {form("csrf", csrf, "call_hash", b.CallHash), nil, http.StatusConflict},
		"cross origin":    {form("csrf", csrf, "call_hash", a.CallHash), []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		"cross-site post": {form("csrf", csrf, "call_hash", a.CallHash), []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
	} {
		resp := w.postForm(t, "/ui/"+a.ID+"/approve", session, tc.body, tc.hdr...)
		assert.Equal(t, tc.want, resp.StatusCode, name)
		body := readBody(t, resp)
		assert.True(t, strings.Contains(body, "Nothing was answered") || strings.Contains(body, "cross-origin request refused"), "%s: %s", name, body)
	}
	resp = w.postForm(t, "/ui/"+b.ID+"/decline", session, form("csrf", csrf, "call_hash", b.CallHash))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, readBody(t, resp), "a decline needs a reason")
	for _, id := range []string{a.ID, b.ID} {
		got, err := w.ib.Get(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, inbox.StatusPending, got.Status, "refusals answered nothing")
	}

	// Approve a for the run: 303 back to the inbox, which says so.
	resp = w.postForm(t, "/ui/"+a.ID+"/approve", session, form("csrf", csrf, "call_hash", a.CallHash, "reason", "known package", "for_run", "1"))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, readBody(t, resp))
	loc := resp.Header.Get("Location")
	assert.Equal(t, "/?answered="+a.ID, loc)
	got, err := w.ib.Get(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, inbox.StatusApproved, got.Status)
	assert.Equal(t, "alice", got.Answer.Approver)
	assert.Equal(t, "known package", got.Answer.Reason)
	assert.True(t, got.Answer.ForRun)
	body, _ = w.page(t, session)
	body2 := w.do(t, "GET", loc, "", "", "Cookie", inboxhttp.SessionCookie+"="+session)
	assert.Contains(t, readBody(t, body2), "Approved "+a.ID+" (bash) as alice.")
	assert.NotContains(t, body, "pip install requests", "an answered request leaves the inbox")

	// Answering it again from a stale page: 409, nothing changes.
	resp = w.postForm(t, "/ui/"+a.ID+"/decline", session, form("csrf", csrf, "call_hash", a.CallHash, "reason", "changed my mind"))
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	assert.Contains(t, readBody(t, resp), "already answered")

	// Decline b.
	resp = w.postForm(t, "/ui/"+b.ID+"/decline", session, form("csrf", csrf, "call_hash", b.CallHash, "reason", "not now", "for_run", "1"))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	got, err = w.ib.Get(ctx, b.ID)
	require.NoError(t, err)
	assert.Equal(t, inbox.StatusDeclined, got.Status)
	assert.Equal(t, "not now", got.Answer.Reason)
	body, _ = w.page(t, session)
	assert.Contains(t, body, "Nothing waits for an answer.")

	// Sign out: the session ends.
	resp = w.postForm(t, "/logout", session, form("csrf", csrf))
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, http.StatusUnauthorized, w.do(t, "GET", "/", "", "", "Cookie", inboxhttp.SessionCookie+"="+session).StatusCode)

	// A replaced token ends its sessions.
	session = w.login(t)
	_, err = w.db.Add(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, w.do(t, "GET", "/", "", "", "Cookie", inboxhttp.SessionCookie+"="+session).StatusCode)
}

func TestPageSessionExpires(t *testing.T) {
	w := newWorld(t)
	session := w.login(t)
	w.page(t, session)
	w.clock.Advance(inboxhttp.DefaultSessionTTL + time.Second)
	assert.Equal(t, http.StatusUnauthorized, w.do(t, "GET", "/", "", "", "Cookie", inboxhttp.SessionCookie+"="+session).StatusCode)
}

// TestPageShowsHostileTextEscaped: what the model wrote (the input, and
// through the gate the reason, agent and run names) cannot run script,
// break out of the markup, or hide characters from the person reading.
func TestPageShowsHostileTextEscaped(t *testing.T) {
	w := newWorld(t)
	hostile := `{"command":"echo ok</pre><script>alert(1)</script>\u202e; rm -rf ~ #\u202c","note":"<img src=x onerror=alert(2)>","zw":"a\u200bb"}`
	// The same input with the characters raw, as a model would send them.
	raw := strings.NewReplacer(`\u202e`, "\u202e", `\u202c`, "\u202c", `\u200b`, "\u200b").Replace(hostile)
	r := w.ask(t, raw, askOpt{
		agent:  "agent<b>x</b>",
		run:    "run\u202egnp.exe",
		reason: "safe, trust me\u2066 <script>alert(3)</script>\nsecond line",
	})
	huge := `{"data":"` + strings.Repeat("A", 60_000) + `<script>alert(4)</script>"}`
	h := w.ask(t, huge, askOpt{run: "run-huge"})

	session := w.login(t)
	body, _ := w.page(t, session)
	has := func(s string) bool { return strings.Contains(body, s) }
	for _, markup := range []string{"<script", "<img", "<b>x</b>", "</pre><"} {
		assert.False(t, has(markup), "no markup from the model: %s", markup)
	}
	// The input as stored (the inbox keeps it compacted, < as \u003c), or
	// HTML-escaped: either way inert text.
	assert.True(t, has(`\u003c/pre\u003e\u003cscript\u003ealert(1)`) || has("&lt;/pre&gt;&lt;script&gt;alert(1)"))
	assert.True(t, has(`\u003cimg src=x onerror=alert(2)\u003e`) || has("&lt;img src=x onerror=alert(2)&gt;"))
	assert.True(t, has("safe, trust me\\u2066 &lt;script&gt;alert(3)&lt;/script&gt;"), "the reason, escaped")
	assert.True(t, has("agent&lt;b&gt;x&lt;/b&gt;"))
	for _, invisible := range []string{"\u202e", "\u202c", "\u200b", "\u2066"} {
		assert.False(t, has(invisible), "invisible and bidi characters are not sent raw: %U", []rune(invisible)[0])
	}
	for _, shown := range []string{`\u202e; rm -rf ~ #\u202c`, `a\u200bb`, `run\u202egnp.exe`, `safe, trust me\u2066`} {
		assert.True(t, has(shown), "shown as an escape: %s", shown)
	}
	assert.True(t, has("second line"), "the reason's lines are kept")
	assert.True(t, has(h.ID), "a huge input is listed")
	assert.False(t, has(strings.Repeat("A", 3000)), "the list shows a preview of a huge input")
	assert.True(t, has("Input cut: only the first 2048 bytes are shown"), "marked as cut")
	assert.True(t, has(`href="/ui/`+h.ID+`"`), "with a link to the whole request")
	assert.False(t, has(`action="/ui/`+h.ID+`/approve"`), "no answer form for a cut preview")
	assert.False(t, has(h.CallHash), "nor its call hash")
	assert.True(t, has(`action="/ui/`+r.ID+`/approve"`), "a short input is answered from the list")
	// The request's own page shows it whole, with the form.
	resp0 := w.do(t, "GET", "/ui/"+h.ID, "", "", "Cookie", inboxhttp.SessionCookie+"="+session)
	one := readBody(t, resp0)
	require.Equal(t, http.StatusOK, resp0.StatusCode, one)
	assert.Contains(t, one, strings.Repeat("A", 60_000), "shown whole: nothing of what will run is hidden")
	assert.Contains(t, one, `name="call_hash" value="`+h.CallHash+`"`)
	assert.NotContains(t, one, "<script")
	other := w.do(t, "GET", "/ui/"+h.ID, "", "", "Cookie", inboxhttp.SessionCookie+"="+session, "Host", "127.0.0.1:"+w.port)
	assert.Equal(t, http.StatusUnauthorized, other.StatusCode, "not on another host, and not told the page's host")
	assert.Empty(t, other.Header.Get("Location"))
	assert.NotContains(t, readBody(t, other), h.CallHash)
	assert.True(t, has(r.ID))

	// The API returns the input as stored (JSON-escaped, not HTML).
	resp := w.do(t, "GET", "/api/v1/approvals/"+r.ID, w.token, "")
	var got inbox.Request
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	assert.JSONEq(t, raw, string(got.Input))
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))

	// Headers that keep the page from being framed or loading anything else.
	resp = w.do(t, "GET", "/", "", "", "Cookie", inboxhttp.SessionCookie+"="+session)
	assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "form-action 'self'")
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
}

func TestVisible(t *testing.T) {
	assert.Equal(t, `a\u202eb`+"\n"+`c\x1b[31m`, inboxhttp.Visible("a\u202eb\nc\x1b[31m"))
	assert.Equal(t, "{\n  \"a\": [\n    1\n  ]\n}", inboxhttp.PrettyInput(json.RawMessage(`{"a":[1]}`)))
	assert.Equal(t, `not json \u200b`, inboxhttp.PrettyInput(json.RawMessage("not json \u200b")))
}

func TestReadableJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"c":"a \u0026\u0026 b \u003cx\u003e"}`: `{"c":"a && b <x>"}`,
		`{"c":"\\u0026"}`:                        `{"c":"\\u0026"}`, // an escaped backslash, then text
		`{"c":"\\\u003c"}`:                       `{"c":"\\<"}`,
		`{"c":"\u202e \n \" \u003C"}`:            `{"c":"\u202e \n \" <"}`,
		`{"c":"\u00"}`:                           `{"c":"\u00"}`,
		`plain`:                                  `plain`,
	} {
		assert.Equal(t, want, inboxhttp.ReadableJSON(in), in)
		var a, b any
		if json.Unmarshal([]byte(in), &a) == nil {
			require.NoError(t, json.Unmarshal([]byte(inboxhttp.ReadableJSON(in)), &b), in)
			assert.Equal(t, a, b, "the same value: %s", in)
		}
	}
}

// TestSessionCookieOnlyOnThePageHost: the red team's cookie_port_leak.sh.
// A session cookie obtained on LABEL.localhost:PORT, replayed with Host
// 127.0.0.1:PORT, localhost:PORT or another label (what a local server the
// model started could do with a cookie the browser leaked to it), opens no
// page and answers nothing.
func TestSessionCookieOnlyOnThePageHost(t *testing.T) {
	w := newWorld(t)
	a := w.ask(t, `{"command":"pip install evilpkg"}`, askOpt{})
	assert.Len(t, w.s.HostLabel(), 16)
	assert.Regexp(t, `^[a-z2-7]{16}\.localhost:[0-9]+$`, w.host)

	// A login on 127.0.0.1 sets no cookie: it goes on to the page's host.
	resp := w.do(t, "GET", "/login?token="+url.QueryEscape(w.token), "", "", "Host", "127.0.0.1:"+w.port)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, w.s.LoginURL(w.port, w.token), resp.Header.Get("Location"))
	assert.Empty(t, resp.Cookies())

	session := w.login(t)
	resp = w.do(t, "GET", "/login?token="+url.QueryEscape(w.token), "", "")
	for _, c := range resp.Cookies() {
		assert.Empty(t, c.Domain, "host-only cookie")
	}
	body, csrf := w.page(t, session)
	require.Contains(t, body, a.CallHash)
	cookie := inboxhttp.SessionCookie + "=" + session
	for _, host := range []string{"127.0.0.1:" + w.port, "localhost:" + w.port, "abcdefghijklmnop.localhost:" + w.port, w.s.HostLabel() + ".localhost:1", w.s.HostLabel() + ".localhost"} {
		resp := w.do(t, "GET", "/", "", "", "Host", host, "Cookie", cookie)
		assert.NotEqual(t, http.StatusOK, resp.StatusCode, host)
		assert.NotContains(t, readBody(t, resp), a.CallHash, host)
		resp = w.do(t, "POST", "/ui/"+a.ID+"/approve", "", form("csrf", csrf, "call_hash", a.CallHash),
			"Host", host, "Cookie", cookie, "Content-Type", "application/x-www-form-urlencoded")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, host)
	}
	got, err := w.ib.Get(context.Background(), a.ID)
	require.NoError(t, err)
	assert.Equal(t, inbox.StatusPending, got.Status, "the replayed cookie approved nothing")

	// A cookie-authenticated post with Sec-Fetch-Site none is refused too.
	resp = w.postForm(t, "/ui/"+a.ID+"/approve", session, form("csrf", csrf, "call_hash", a.CallHash), "Sec-Fetch-Site", "none")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	// The API still works on any loopback host.
	assert.Equal(t, http.StatusOK, w.do(t, "GET", "/api/v1/approvals", w.token, "", "Host", "127.0.0.1:"+w.port).StatusCode)
	// On the page's own host, the same cookie answers.
	resp = w.postForm(t, "/ui/"+a.ID+"/approve", session, form("csrf", csrf, "call_hash", a.CallHash), "Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
}

// TestPageListIsBounded: a flood of pending requests shows the newest
// PageLimit, and says how many more wait.
func TestPageListIsBounded(t *testing.T) {
	w := newWorld(t)
	var last inbox.Request
	for i := range 12 {
		w.clock.Advance(time.Second)
		last = w.ask(t, fmt.Sprintf(`{"command":"echo %d"}`, i), askOpt{run: fmt.Sprintf("run-%d", i)})
	}
	s, err := inboxhttp.New(inboxhttp.Options{Inbox: w.ib, Approvers: w.db, Now: w.clock.Now, PageLimit: 5, HostLabel: "testlabel"})
	require.NoError(t, err)
	w.srv.Config.Handler = s
	w.s, w.host = s, s.PageHost(w.port)
	body, _ := w.page(t, w.login(t))
	assert.Equal(t, 5, strings.Count(body, `<section class="request"`))
	assert.Contains(t, body, "7 older not shown")
	assert.Contains(t, body, last.ID, "the newest are shown")
}

// TestPageHostNotToldWithoutAToken: the page's host name (the label that
// scopes its cookie) is told only to a valid token: a model that could
// read it from a redirect could lure the browser's cookie to a port of
// its own on LABEL.localhost.
func TestPageHostNotToldWithoutAToken(t *testing.T) {
	w := newWorld(t)
	for _, path := range []string{"/", "/login", "/login?token=wrong", "/logout", "/ui/apr_abcdefghijklmnopqrstuvwxyz"} {
		for _, host := range []string{"127.0.0.1:" + w.port, "localhost:" + w.port} {
			resp := w.do(t, "GET", path, "", "", "Host", host)
			body := readBody(t, resp)
			assert.NotEqual(t, http.StatusSeeOther, resp.StatusCode, "%s %s", host, path)
			assert.NotContains(t, resp.Header.Get("Location")+body, w.s.HostLabel(), "%s %s", host, path)
		}
	}
}
