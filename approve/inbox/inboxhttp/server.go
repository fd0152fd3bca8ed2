// Package inboxhttp answers approval requests over HTTP: a JSON API for
// chat-ops integrations and a small web page that lists pending requests and
// lets a person approve or decline them. It is meant for a loopback address
// (auditq approvals serve refuses any other).
//
// Every request must name a loopback host in its Host header ("localhost",
// 127.0.0.0/8, ::1), so a DNS-rebinding page cannot reach the server under
// another name. The API authenticates with "Authorization: Bearer TOKEN",
// the token an approver got from Approvers.Add (auditq approvals approvers
// add NAME); the approver the token belongs to is the one who answers. The
// web page lives under a host name of its own, http://LABEL.localhost:PORT/
// (LABEL is random per server, see Server.PageHost): it authenticates once
// with GET /login?token=TOKEN there (a login on any other loopback host is
// redirected there), which sets a host-only HttpOnly, SameSite=Strict
// session cookie that is accepted only with that exact Host — a browser
// sends cookies of 127.0.0.1 to every port of 127.0.0.1, so a cookie
// bound to a bare loopback host would reach any local server; its forms carry a per-session
// CSRF token, and every state-changing request is refused when its Origin
// (or Sec-Fetch-Site) says it comes from another site.
//
//	GET  /api/v1/approvals?status=&agent=&run=&older_than=&limit=   JSON list
//	GET  /api/v1/approvals/{id}                                     one request
//	POST /api/v1/approvals/{id}/approve   {"reason","for_run","call_hash"}
//	POST /api/v1/approvals/{id}/decline   {"reason","call_hash"} (reason required)
//	GET  /login?token=T, POST /logout, GET / (the page), GET /ui/{id} (one request, whole),
//	POST /ui/{id}/approve|decline
//
// Errors are JSON {"error": message, "code": code} with status 400
// (bad_request), 401 (unauthorized), 403 (forbidden, unknown_approver), 404
// (not_found), 409 (answered, expired, used, call_changed), 413
// (too_large), 415 (unsupported_media_type).
package inboxhttp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/approve/inbox"
)

// Defaults of Options.
const (
	DefaultSessionTTL = time.Hour
	DefaultListLimit  = 100
	MaxListLimit      = 1000
	// MaxBodyBytes bounds a POST body (an answer is a few fields).
	MaxBodyBytes = 64 << 10
	// maxSessions bounds the sessions kept in memory.
	maxSessions = 1024
)

// SessionCookie is the name of the web page's session cookie.
const SessionCookie = "toolgate_approvals_session"

// Options configure a Server.
type Options struct {
	// Inbox answers and lists requests (required).
	Inbox *inbox.Inbox
	// Approvers resolves bearer tokens to approver names (required; the
	// bbolt DB is both a Store and Approvers).
	Approvers inbox.Approvers
	// Now is the clock for ages and session expiry (nil: time.Now).
	Now func() time.Time
	// Logger logs every answer and refusal (nil: discard).
	Logger *slog.Logger
	// SessionTTL is how long a web session lasts (0: DefaultSessionTTL).
	SessionTTL time.Duration
	// PageLimit caps the requests the page shows (0: DefaultListLimit).
	PageLimit int
	// HostLabel is the first label of the page's host name,
	// LABEL.localhost (""): 16 random lowercase base32 characters). The
	// session cookie is accepted only on that host.
	HostLabel string
}

// Server is the HTTP API and the web page over an inbox. Use New.
type Server struct {
	opt     Options
	mux     *http.ServeMux
	csrfKey [32]byte

	mu       sync.Mutex
	sessions map[string]session // session ID → session
}

// session is one web login: the bearer token it was opened with (checked
// again on every request, so replacing an approver's token ends its
// sessions) and its expiry.
type session struct {
	token   string
	expires time.Time
}

// New returns a Server.
func New(opt Options) (*Server, error) {
	if opt.Inbox == nil || opt.Approvers == nil {
		return nil, errors.New("inboxhttp: Options.Inbox and Options.Approvers are required")
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.SessionTTL <= 0 {
		opt.SessionTTL = DefaultSessionTTL
	}
	if opt.PageLimit <= 0 {
		opt.PageLimit = DefaultListLimit
	}
	if opt.HostLabel == "" {
		opt.HostLabel = randomLabel()
	} else if !validLabel(opt.HostLabel) {
		return nil, fmt.Errorf("inboxhttp: Options.HostLabel %q: want 1 to 63 lowercase letters and digits", opt.HostLabel)
	}
	s := &Server{opt: opt, mux: http.NewServeMux(), sessions: map[string]session{}}
	_, _ = rand.Read(s.csrfKey[:])
	s.mux.HandleFunc("GET /api/v1/approvals", s.apiList)
	s.mux.HandleFunc("GET /api/v1/approvals/{id}", s.apiGet)
	s.mux.HandleFunc("POST /api/v1/approvals/{id}/approve", s.apiAnswer(true))
	s.mux.HandleFunc("POST /api/v1/approvals/{id}/decline", s.apiAnswer(false))
	s.mux.HandleFunc("GET /login", s.login)
	s.mux.HandleFunc("POST /logout", s.logout)
	s.mux.HandleFunc("GET /{$}", s.page)
	s.mux.HandleFunc("GET /static/inbox.css", serveCSS)
	s.mux.HandleFunc("GET /ui/{id}", s.one)
	s.mux.HandleFunc("POST /ui/{id}/approve", s.uiAnswer(true))
	s.mux.HandleFunc("POST /ui/{id}/decline", s.uiAnswer(false))
	return s, nil
}

// ServeHTTP implements http.Handler: the Host and cross-origin checks, the
// security headers, then the routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with the page's own form posts, which sameOrigin
	// refuses. No other site ever gets a Referer (the login URL's token).
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	if !LoopbackHost(r.Host) {
		s.opt.Logger.Warn("refused a request for a host that is not loopback", "host", r.Host, "remote", r.RemoteAddr)
		writeError(w, http.StatusForbidden, "forbidden", "the Host header must name a loopback address (localhost, 127.0.0.1, [::1])")
		return
	}
	if !safeMethod(r.Method) {
		if err := sameOrigin(r); err != nil {
			s.opt.Logger.Warn("refused a cross-origin request", "origin", r.Header.Get("Origin"), "path", r.URL.Path, "err", err)
			writeError(w, http.StatusForbidden, "forbidden", err.Error())
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// randomLabel returns 16 random lowercase base32 characters (80 bits).
func randomLabel() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}

func validLabel(l string) bool {
	if l == "" || len(l) > 63 {
		return false
	}
	for _, c := range l {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// HostLabel returns the first label of the page's host name.
func (s *Server) HostLabel() string { return s.opt.HostLabel }

// PageHost returns the Host of the web page for a server listening on
// port: LABEL.localhost:PORT. Browsers (Chromium, Firefox) and curl
// resolve every *.localhost name to loopback.
func (s *Server) PageHost(port string) string {
	return s.opt.HostLabel + ".localhost:" + port
}

// LoginURL returns the page's sign-in URL for a server listening on port.
func (s *Server) LoginURL(port, token string) string {
	return "http://" + s.PageHost(port) + "/login?token=" + url.QueryEscape(token)
}

// requestPort returns the port the request came in on: the connection's
// local address, else the Host header's port.
func requestPort(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			return p
		}
	}
	if _, p, err := net.SplitHostPort(r.Host); err == nil {
		return p
	}
	return "80"
}

// onPageHost reports whether the request's Host is exactly the page's
// host on the port the request came in on.
func (s *Server) onPageHost(r *http.Request) bool {
	return strings.EqualFold(r.Host, s.PageHost(requestPort(r)))
}

// toPageHost redirects the browser to the same path on the page's host.
func (s *Server) toPageHost(w http.ResponseWriter, r *http.Request) {
	u := url.URL{Scheme: "http", Host: s.PageHost(requestPort(r)), Path: r.URL.Path, RawQuery: r.URL.RawQuery}
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// LoopbackHost reports whether host (a Host header: a name or IP, with an
// optional port) names this machine's loopback interface: "localhost" (or
// a name under .localhost), an address in 127.0.0.0/8, or ::1.
func LoopbackHost(host string) bool {
	if host == "" {
		return false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin refuses a state-changing request that a browser sends from
// another site: an Origin header that is not this server (http://Host), or
// Sec-Fetch-Site other than same-origin or none. Requests without either
// header (curl, a chat-ops bot) pass; they must still authenticate.
func sameOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if o == "null" || err != nil || u.Scheme != "http" || !strings.EqualFold(u.Host, r.Host) {
			return fmt.Errorf("cross-origin request refused (Origin %q is not http://%s)", truncate(o, 100), truncate(r.Host, 100))
		}
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return fmt.Errorf("cross-origin request refused (Sec-Fetch-Site: %s)", truncate(site, 40))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// ---- errors ----

// apiError is the JSON body of an error response.
type apiError struct {
	Error   string         `json:"error"`
	Code    string         `json:"code"`
	Request *inbox.Request `json:"request,omitempty"` // the request as it stands, for a 409
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apiError{Error: msg, Code: code})
}

// answerStatus maps an inbox error to an HTTP status and an error code.
func answerStatus(err error) (int, string) {
	switch {
	case errors.Is(err, inbox.ErrNotFound):
		return http.StatusNotFound, "not_found"
	case errors.Is(err, inbox.ErrAnswered):
		return http.StatusConflict, "answered"
	case errors.Is(err, inbox.ErrExpired):
		return http.StatusConflict, "expired"
	case errors.Is(err, inbox.ErrUsed):
		return http.StatusConflict, "used"
	case errors.Is(err, inbox.ErrCallChanged):
		return http.StatusConflict, "call_changed"
	case errors.Is(err, inbox.ErrUnknownApprover):
		return http.StatusForbidden, "unknown_approver"
	}
	return http.StatusInternalServerError, "internal"
}

// ---- authentication ----

// bearer returns the approver of the request's bearer token, or writes a
// 401 and returns false.
func (s *Server) bearer(w http.ResponseWriter, r *http.Request) (string, bool) {
	auth := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(auth, " ")
	if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate approvals"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "send Authorization: Bearer TOKEN (auditq approvals approvers add NAME prints an approver's token)")
		return "", false
	}
	name, ok, err := s.opt.Approvers.ByToken(r.Context(), strings.TrimSpace(token))
	if err != nil {
		s.opt.Logger.Error("look up a token", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "could not check the token")
		return "", false
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate approvals", error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "unknown token")
		return "", false
	}
	return name, true
}

// newSession stores a session for token and returns its ID.
func (s *Server) newSession(token string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	id := base64.RawURLEncoding.EncodeToString(b[:])
	now := s.opt.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.sessions {
		if !now.Before(v.expires) {
			delete(s.sessions, k)
		}
	}
	for k := range s.sessions { // full: drop an arbitrary one
		if len(s.sessions) < maxSessions {
			break
		}
		delete(s.sessions, k)
	}
	s.sessions[id] = session{token: token, expires: now.Add(s.opt.SessionTTL)}
	return id
}

// sessionApprover returns the session ID and approver of the request's
// session cookie; ok is false without a live session, and always when the
// request's Host is not the page's host (a cookie replayed to another
// host or port is worth nothing).
func (s *Server) sessionApprover(r *http.Request) (id, name string, ok bool, err error) {
	if !s.onPageHost(r) {
		return "", "", false, nil
	}
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return "", "", false, nil
	}
	s.mu.Lock()
	sess, found := s.sessions[c.Value]
	if found && !s.opt.Now().Before(sess.expires) {
		delete(s.sessions, c.Value)
		found = false
	}
	s.mu.Unlock()
	if !found {
		return "", "", false, nil
	}
	name, ok, err = s.opt.Approvers.ByToken(r.Context(), sess.token)
	if err != nil || !ok {
		return "", "", false, err
	}
	return c.Value, name, true, nil
}

// csrfToken is the form token of a session: an HMAC of its ID under a key
// that lives as long as the server.
func (s *Server) csrfToken(sessionID string) string {
	m := hmac.New(sha256.New, s.csrfKey[:])
	m.Write([]byte(sessionID))
	return hex.EncodeToString(m.Sum(nil))
}

// ---- the API ----

// parseAge reads an age: a Go duration ("90m") or whole days ("7d").
func parseAge(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i > 36500 {
			return 0, fmt.Errorf("bad age %q", v)
		}
		return time.Duration(i) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad age %q: want a duration like 10m, 2h or 7d", v)
	}
	return d, nil
}

// ParseStatus reads a status filter: pending (""), approved, declined,
// expired, used or all (nil: every status).
func ParseStatus(v string) ([]inbox.Status, error) {
	switch v {
	case "", string(inbox.StatusPending):
		return []inbox.Status{inbox.StatusPending}, nil
	case "all":
		return nil, nil
	case string(inbox.StatusApproved), string(inbox.StatusDeclined), string(inbox.StatusExpired), string(inbox.StatusUsed):
		return []inbox.Status{inbox.Status(v)}, nil
	}
	return nil, fmt.Errorf("status %q: want pending, approved, declined, expired, used or all", truncate(v, 40))
}

func (s *Server) apiList(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.bearer(w, r); !ok {
		return
	}
	q := r.URL.Query()
	var f inbox.Filter
	var err error
	if f.Status, err = ParseStatus(q.Get("status")); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	f.Agent, f.RunID = q.Get("agent"), q.Get("run")
	if v := q.Get("older_than"); v != "" {
		if f.OlderThan, err = parseAge(v); err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", "older_than: "+err.Error())
			return
		}
	}
	f.Limit = DefaultListLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxListLimit {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("limit: want 1 to %d", MaxListLimit))
			return
		}
		f.Limit = n
	}
	rs, err := s.opt.Inbox.List(r.Context(), f)
	if err != nil {
		s.opt.Logger.Error("list approval requests", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "could not list the requests")
		return
	}
	if rs == nil {
		rs = []inbox.Request{}
	}
	writeJSON(w, http.StatusOK, rs)
}

func (s *Server) apiGet(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.bearer(w, r); !ok {
		return
	}
	req, err := s.opt.Inbox.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		st, code := answerStatus(err)
		writeError(w, st, code, errMessage(err))
		return
	}
	writeJSON(w, http.StatusOK, req)
}

// AnswerBody is the JSON body of POST …/approve and …/decline.
type AnswerBody struct {
	Reason string `json:"reason"`
	// ForRun approves the same tool and input for the rest of the run
	// (approve only; ignored on a decline).
	ForRun bool `json:"for_run"`
	// CallHash, when set, must be the request's callHash (the call the
	// approver was shown); otherwise 409 call_changed.
	CallHash string `json:"call_hash"`
}

func (s *Server) apiAnswer(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, ok := s.bearer(w, r)
		if !ok {
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "" {
			if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
				writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send the answer as application/json")
				return
			}
		}
		var body AnswerBody
		raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is larger than %d bytes", MaxBodyBytes))
				return
			}
			writeError(w, http.StatusBadRequest, "bad_request", "could not read the body")
			return
		}
		if len(strings.TrimSpace(string(raw))) > 0 {
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&body); err != nil {
				writeError(w, http.StatusBadRequest, "bad_request", "the body is not an answer: "+truncate(err.Error(), 200))
				return
			}
			if dec.More() {
				writeError(w, http.StatusBadRequest, "bad_request", "the body has more than one JSON value")
				return
			}
		}
		req, st, code, msg := s.answer(r.Context(), r.PathValue("id"), name, approve, body)
		if st != http.StatusOK {
			e := apiError{Error: msg, Code: code}
			if st == http.StatusConflict && req.ID != "" {
				e.Request = &req
			}
			writeJSON(w, st, e)
			return
		}
		writeJSON(w, http.StatusOK, req)
	}
}

// answer answers request id as approver and returns the request, or the
// status, code and message of a refusal.
func (s *Server) answer(ctx context.Context, id, approver string, approve bool, body AnswerBody) (inbox.Request, int, string, string) {
	verb := "approve"
	if !approve {
		verb = "decline"
		if strings.TrimSpace(body.Reason) == "" {
			return inbox.Request{}, http.StatusBadRequest, "bad_request", "a decline needs a reason"
		}
	}
	req, err := s.opt.Inbox.Answer(ctx, id, inbox.Answer{
		Approve: approve, Approver: approver, Reason: body.Reason, ForRun: approve && body.ForRun, CallHash: body.CallHash,
	})
	if err != nil {
		st, code := answerStatus(err)
		if st == http.StatusInternalServerError {
			s.opt.Logger.Error("answer an approval request", "id", id, "err", err)
			return inbox.Request{}, st, code, "could not store the answer"
		}
		s.opt.Logger.Warn("refused an answer", "id", id, "approver", approver, "answer", verb, "code", code)
		if errors.Is(err, inbox.ErrNotFound) {
			req = inbox.Request{}
		} else if req.ID == "" {
			req, _ = s.opt.Inbox.Get(ctx, id)
		}
		return req, st, code, errMessage(err)
	}
	s.opt.Logger.Info("answered an approval request", "id", id, "approver", approver, "answer", verb,
		"tool", req.Tool, "agent", req.Agent, "run", req.RunID, "for_run", req.Answer != nil && req.Answer.ForRun)
	return req, http.StatusOK, "", ""
}

// errMessage is an inbox error without the package prefix.
func errMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "inbox: ")
}
