package inboxhttp

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/internal/textsafe"
)

//go:embed assets/page.html assets/inbox.css
var assets embed.FS

var pageTmpl = template.Must(template.ParseFS(assets, "assets/page.html"))

var css = func() []byte {
	b, err := assets.ReadFile("assets/inbox.css")
	if err != nil {
		panic(err)
	}
	return b
}()

func serveCSS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(css)
}

// pageData is what page.html renders. Every string from the inbox has been
// passed through textsafe (invisible and bidi characters shown as escapes);
// html/template escapes the rest.
type pageData struct {
	Title    string
	Approver string // "" when not signed in
	CSRF     string
	// View: "inbox", "signin" (not signed in or a bad token), "signedin".
	View      string
	Message   string // the sign-in views' text
	Flash     string
	FlashKind string // "ok" or "error"
	Requests  []requestView
	More      int // pending requests not shown (PageLimit)
	Now       string
	Single    bool // the per-request page /ui/{id}
	Preview   int  // PreviewBytes, for the page's text
}

// PreviewBytes is how much of an input the list page shows; a longer one
// is cut there, marked, and can be answered only on its own page /ui/{id},
// which shows it whole.
const PreviewBytes = 2 << 10

// requestView is one pending request on the page.
type requestView struct {
	ID, Tool, Agent, Run, Task    string
	Dir                           string // where the call runs (WorkingDir), when known
	Reason, Risk, RiskClass, Rule string
	Source, CallHash, TraceID     string
	Input, Original               string
	InputBytes                    int
	// Cut: the list shows only a preview of the input (or the original);
	// the answer form is then only on /ui/{id}.
	Cut                            bool
	Pending                        bool
	Asked, Age, Expires, ExpiresIn string
}

// Visible returns s safe to show a person: every line through
// textsafe.Escape (control, format, bidi and other invisible characters
// written as \u escapes), the lines kept.
func Visible(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = textsafe.Escape(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n")
}

// PrettyInput returns a JSON input indented for reading, through Visible
// (and ReadableJSON).
func PrettyInput(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return Visible(string(raw))
	}
	return Visible(ReadableJSON(b.String()))
}

// ReadableJSON undoes the HTML-safe escapes of Go's JSON encoder in a JSON
// text (\u003c, \u003e, \u0026 back to <, >, &), so that a person reads
// "a && b", not "a \u0026\u0026 b"; the value is the same. Other escapes
// are kept; an escaped backslash is never taken for the start of one. The
// result must still be HTML-escaped (html/template does).
func ReadableJSON(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch strings.ToLower(s[i+2 : i+6]) {
			case "003c":
				b.WriteByte('<')
				i += 5
				continue
			case "003e":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteByte(c) // an escape: keep it and the character it escapes
		b.WriteByte(s[i+1])
		i++
	}
	return b.String()
}

// humanAge renders a duration compactly: 45s, 12m, 3h05m, 2d4h.
func humanAge(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

func riskClass(risk string) string {
	switch risk {
	case "high", "review", "safe":
		return "risk-" + risk
	}
	return "risk-none"
}

// preview cuts s to at most n bytes at a rune boundary; cut reports
// whether anything was left out.
func preview(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// view renders a request; with cut, the input is a preview of at most
// PreviewBytes.
func (s *Server) view(r inbox.Request, cut bool) requestView {
	now := s.opt.Now()
	v := requestView{
		ID: r.ID, Tool: Visible(r.Tool), Agent: Visible(r.Agent), Run: Visible(r.RunID), Task: Visible(r.TaskID), Dir: Visible(r.WorkingDir),
		Reason: Visible(r.Reason), Risk: Visible(r.Risk), RiskClass: riskClass(r.Risk), Rule: Visible(r.Rule),
		Source: Visible(r.Source), CallHash: r.CallHash, TraceID: Visible(r.TraceID),
		Input: PrettyInput(r.Input), InputBytes: len(r.Input),
		Asked:     r.AskedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
		Age:       humanAge(now.Sub(r.AskedAt)),
		Expires:   r.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC"),
		ExpiresIn: humanAge(r.ExpiresAt.Sub(now)),
	}
	if len(r.Original) > 0 {
		v.Original = PrettyInput(r.Original)
	}
	v.Pending = r.Status == inbox.StatusPending
	if cut {
		var c1, c2 bool
		v.Input, c1 = preview(v.Input, PreviewBytes)
		v.Original, c2 = preview(v.Original, PreviewBytes)
		v.Cut = c1 || c2
	}
	if v.Risk == "" {
		v.Risk = "unrated"
	}
	return v
}

func (s *Server) render(w http.ResponseWriter, status int, d pageData) {
	if d.Title == "" {
		d.Title = "toolgate approvals"
	}
	d.Now = s.opt.Now().UTC().Format("2006-01-02 15:04:05 UTC")
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, d); err != nil {
		s.opt.Logger.Error("render the page", "err", err)
		http.Error(w, "could not render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

const signInHelp = "Open the sign-in link that 'auditq approvals serve' printed, or /login?token=TOKEN with the token 'auditq approvals approvers add NAME' printed."

// login checks the token, opens a session and sends the browser on to the
// inbox (a same-origin refresh, so the SameSite=Strict cookie goes with it
// even when the link was opened from another site, and the token leaves
// the address bar).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	name, ok, err := s.opt.Approvers.ByToken(r.Context(), token)
	if err != nil {
		s.opt.Logger.Error("look up a token", "err", err)
		s.render(w, http.StatusInternalServerError, pageData{View: "signin", Message: "Could not check the token."})
		return
	}
	if !ok {
		s.opt.Logger.Warn("refused a sign-in with an unknown token", "remote", r.RemoteAddr)
		s.render(w, http.StatusUnauthorized, pageData{View: "signin", Message: "Unknown token. " + signInHelp})
		return
	}
	if !s.onPageHost(r) {
		// The cookie is only ever set on the page's own host, and only a
		// valid token learns that host's name (a model that knows it could
		// lure a browser's cookie to a port of its own).
		s.toPageHost(w, r)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: s.newSession(token), Path: "/",
		MaxAge: int(s.opt.SessionTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	w.Header().Set("Refresh", "0; url=/")
	s.opt.Logger.Info("signed in", "approver", name, "remote", r.RemoteAddr)
	s.render(w, http.StatusOK, pageData{View: "signedin", Approver: Visible(name)})
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if !s.onPageHost(r) {
		s.notPageHost(w)
		return
	}
	if err := cookieFetchSite(r); err != nil {
		s.render(w, http.StatusForbidden, pageData{View: "signin", Message: err.Error()})
		return
	}
	id, _, ok, _ := s.sessionApprover(r)
	if ok {
		if err := r.ParseForm(); err == nil && s.checkCSRF(id, r.PostFormValue("csrf")) {
			s.mu.Lock()
			delete(s.sessions, id)
			s.mu.Unlock()
		} else {
			s.render(w, http.StatusForbidden, pageData{View: "signin", Message: "The form is stale; reload the page."})
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// cookieFetchSite refuses a cookie-authenticated POST whose Sec-Fetch-Site
// is present and not same-origin (not even "none": the page's forms are
// always posted from the page).
func cookieFetchSite(r *http.Request) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return fmt.Errorf("cross-origin request refused (Sec-Fetch-Site: %s); nothing was answered", truncate(site, 40))
	}
	return nil
}

func (s *Server) checkCSRF(sessionID, got string) bool {
	want := s.csrfToken(sessionID)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// page lists the pending requests.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	if !s.onPageHost(r) {
		s.notPageHost(w)
		return
	}
	id, name, ok, err := s.sessionApprover(r)
	if err != nil {
		s.opt.Logger.Error("look up a session", "err", err)
	}
	if !ok {
		s.render(w, http.StatusUnauthorized, pageData{View: "signin", Message: "Not signed in. " + signInHelp})
		return
	}
	d := pageData{View: "inbox", Approver: Visible(name), CSRF: s.csrfToken(id)}
	if a := r.URL.Query().Get("answered"); a != "" {
		if req, err := s.opt.Inbox.Get(r.Context(), a); err == nil && req.Answer != nil {
			d.Flash = fmt.Sprintf("%s %s (%s) as %s.", answerVerb(req.Answer.Approve), req.ID, Visible(req.Tool), Visible(req.Answer.Approver))
			d.FlashKind = "ok"
		}
	}
	s.fill(w, r, &d)
}

// one shows one request whole, with its answer form when it is pending.
func (s *Server) one(w http.ResponseWriter, r *http.Request) {
	if !s.onPageHost(r) {
		s.notPageHost(w)
		return
	}
	sid, name, ok, err := s.sessionApprover(r)
	if err != nil {
		s.opt.Logger.Error("look up a session", "err", err)
	}
	if !ok {
		s.render(w, http.StatusUnauthorized, pageData{View: "signin", Message: "Not signed in. " + signInHelp})
		return
	}
	d := pageData{View: "inbox", Approver: Visible(name), CSRF: s.csrfToken(sid), Single: true}
	req, err := s.opt.Inbox.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		st, _ := answerStatus(err)
		d.Flash, d.FlashKind = "No such request: "+Visible(truncate(r.PathValue("id"), 40))+".", "error"
		s.render(w, st, d)
		return
	}
	if req.Status != inbox.StatusPending {
		d.Flash, d.FlashKind = fmt.Sprintf("%s is %s; it cannot be answered.", req.ID, req.Status), "error"
	}
	d.Requests = []requestView{s.view(req, false)}
	s.render(w, http.StatusOK, d)
}

func answerVerb(approve bool) string {
	if approve {
		return "Approved"
	}
	return "Declined"
}

// fill lists the pending requests into d and renders it; status is 200.
func (s *Server) fill(w http.ResponseWriter, r *http.Request, d *pageData) {
	s.fillStatus(w, r, d, http.StatusOK)
}

func (s *Server) fillStatus(w http.ResponseWriter, r *http.Request, d *pageData, status int) {
	rs, err := s.opt.Inbox.List(r.Context(), inbox.Filter{Status: []inbox.Status{inbox.StatusPending}})
	if err != nil {
		s.opt.Logger.Error("list approval requests", "err", err)
		d.Flash, d.FlashKind = "Could not read the inbox.", "error"
		s.render(w, http.StatusInternalServerError, *d)
		return
	}
	if len(rs) > s.opt.PageLimit { // newest first: the newest PageLimit
		d.More = len(rs) - s.opt.PageLimit
		rs = rs[:s.opt.PageLimit]
	}
	d.Preview = PreviewBytes
	for _, req := range rs {
		d.Requests = append(d.Requests, s.view(req, true))
	}
	s.render(w, status, *d)
}

// uiAnswer is a form's Approve or Decline.
func (s *Server) uiAnswer(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sid, name, ok, err := s.sessionApprover(r)
		if err != nil {
			s.opt.Logger.Error("look up a session", "err", err)
		}
		if !ok {
			s.render(w, http.StatusUnauthorized, pageData{View: "signin", Message: "Not signed in. " + signInHelp})
			return
		}
		if err := cookieFetchSite(r); err != nil {
			s.opt.Logger.Warn("refused a form post that is not same-origin", "approver", name, "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
			s.render(w, http.StatusForbidden, pageData{View: "signin", Message: err.Error()})
			return
		}
		d := pageData{View: "inbox", Approver: Visible(name), CSRF: s.csrfToken(sid)}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		if err := r.ParseForm(); err != nil {
			d.Flash, d.FlashKind = "Nothing was answered: the form could not be read.", "error"
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				s.fillStatus(w, r, &d, http.StatusRequestEntityTooLarge)
				return
			}
			s.fillStatus(w, r, &d, http.StatusBadRequest)
			return
		}
		if !s.checkCSRF(sid, r.PostFormValue("csrf")) {
			s.opt.Logger.Warn("refused a form without this session's CSRF token", "approver", name)
			d.Flash, d.FlashKind = "Nothing was answered: the form is stale or did not come from this page. Reload and try again.", "error"
			s.fillStatus(w, r, &d, http.StatusForbidden)
			return
		}
		hash := r.PostFormValue("call_hash")
		if hash == "" {
			d.Flash, d.FlashKind = "Nothing was answered: the form does not name the call it answers.", "error"
			s.fillStatus(w, r, &d, http.StatusBadRequest)
			return
		}
		id := r.PathValue("id")
		body := AnswerBody{Reason: r.PostFormValue("reason"), ForRun: r.PostFormValue("for_run") != "", CallHash: hash}
		_, st, _, msg := s.answer(r.Context(), id, name, approve, body)
		if st != http.StatusOK {
			d.Flash = fmt.Sprintf("Could not %s %s: %s. Nothing was answered.", strings.ToLower(strings.TrimSuffix(answerVerb(approve), "d")), Visible(truncate(id, 40)), msg)
			d.FlashKind = "error"
			s.fillStatus(w, r, &d, st)
			return
		}
		http.Redirect(w, r, "/?answered="+id, http.StatusSeeOther)
	}
}

// notPageHost answers a page request on another host than the page's
// without naming the page's host (only a valid token at /login learns it).
func (s *Server) notPageHost(w http.ResponseWriter) {
	s.render(w, http.StatusUnauthorized, pageData{View: "signin", Message: signInHelp})
}
