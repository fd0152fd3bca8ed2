package chserve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/toolgate/toolgate/audit/chdb"
)

// ErrNoEngine is returned by [New] without an engine session.
var ErrNoEngine = errors.New("chserve: no engine session")

// ErrNoUsers is returned by [New] when no user is configured and anonymous
// access is off: nobody could use the server.
var ErrNoUsers = errors.New("chserve: no users configured (set AUDITQ_SERVE_USERS, e.g. writer:PASS:rw,reader:PASS:ro) and anonymous access is off (--allow-anonymous)")

// Server serves ClickHouse's HTTP interface over engine sessions. It is an
// http.Handler; the caller runs the http.Server and closes the engines.
type Server struct {
	opts     options
	pool     *pool
	timezone string
}

// New returns a Server over sessions, each one engine connection (a chDB
// session) used by one request at a time; with one session every request
// is serialized. It asks the engine for its time zone.
func New(sessions []Engine, opts ...Option) (*Server, error) {
	if len(sessions) == 0 {
		return nil, ErrNoEngine
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if len(o.users) == 0 && !o.allowAnonymous {
		return nil, ErrNoUsers
	}
	s := &Server{opts: o, pool: newPool(sessions), timezone: "UTC"}
	if res, err := sessions[0].Query([]byte("SELECT timezone()"), "TabSeparated"); err == nil {
		s.timezone = strings.TrimSpace(string(res.Data))
	} else {
		return nil, fmt.Errorf("chserve: engine does not answer: %w", err)
	}
	return s, nil
}

// ServeHTTP answers /ping and /replicas_status with "Ok.\n" and everything
// else as a query (ClickHouse's default HTTP handlers).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/ping", "/replicas_status":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		_, _ = io.WriteString(w, "Ok.\n")
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if r.URL.Path == "/" && r.URL.Query().Get("query") == "" {
			w.Header().Set("Content-Type", "text/html; charset=UTF-8")
			_, _ = io.WriteString(w, "Ok.\n")
			return
		}
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		writeException(w, r, &Exception{Code: 36, Name: "BAD_ARGUMENTS", Text: "HTTP method " + r.Method + " is not supported; use GET or POST"})
		return
	}
	s.serveQuery(w, r)
}

// request is one query in flight.
type request struct {
	p         *params
	role      Role
	user      string
	text      string    // the SQL text (query parameter + "\n" + body, or body)
	st        Statement // what text is
	spoolFile string    // INSERT data spooled to a file, or ""
	readOnly  bool
}

func (s *Server) serveQuery(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := r.Context()
	req, ex := s.prepare(r)
	if req != nil && req.spoolFile != "" {
		defer os.Remove(req.spoolFile)
	}
	if ex != nil {
		s.fail(w, r, ex)
		return
	}
	sql := s.compose(req)
	format := req.p.defaultFormat
	if format == "" {
		format = "TabSeparated"
	}
	sess, err := s.pool.acquire(ctx)
	if err != nil {
		s.opts.logger.Info("client went away before its query ran", "remote", r.RemoteAddr, "err", err)
		return
	}
	outFormat := req.st.Format
	if outFormat == "" || req.st.Kind == KindInsert {
		outFormat = format
	}
	if req.streamable(r, outFormat) {
		err := func() error {
			// The stream holds the session until it ends, also when a
			// failure mid-stream aborts the handler.
			defer s.pool.release(sess)
			return s.stream(ctx, w, r, sess, req, sql, format, outFormat, start)
		}()
		if !errors.Is(err, errFallback) {
			return
		}
		if sess, err = s.pool.acquire(ctx); err != nil {
			return
		}
	}
	res, err := s.execute(ctx, sess, req, sql, format)
	s.pool.release(sess)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			s.opts.logger.Info("client went away before its query ran", "remote", r.RemoteAddr)
			return
		}
		s.fail(w, r, asException(err).forUser(req))
		return
	}
	data := res.Data
	if strings.EqualFold(outFormat, "Native") && req.p.revision > 0 && req.st.Kind != KindInsert {
		if data, err = nativeForClient(data, req.p.revision); err != nil {
			s.fail(w, r, &Exception{Code: codeNotImplemented, Name: "NOT_IMPLEMENTED",
				Text: "Cannot send this result as Native at client_protocol_version " + fmt.Sprint(req.p.revision) + ": " + err.Error() + "; use another FORMAT"})
			return
		}
	}
	s.respond(w, r, req, res, outFormat, data, time.Since(start))
}

// prepare authenticates and authorizes the request, reads its SQL and
// spools INSERT data. On error the request may still name a spool file
// the caller removes.
func (s *Server) prepare(r *http.Request) (*request, *Exception) {
	role, user, ex := s.authenticate(r)
	if ex != nil {
		return nil, ex
	}
	p, ex := parseParams(r.URL.Query())
	if ex != nil {
		return nil, ex
	}
	req := &request{p: p, role: role, user: user}
	body, done, ex := s.requestBody(r, p.decompress)
	defer done()
	if ex != nil {
		return nil, ex
	}
	if p.query != "" {
		st := Analyze(p.query)
		if st.Kind == KindInsert && st.Data >= 0 && strings.TrimSpace(p.query[st.Data:]) == "" {
			// The usual clickhouse-go and curl insert: the statement in the
			// URL, the data in the body, streamed to a file.
			req.text, req.st = p.query, st
			if ex := s.authorize(r, req); ex != nil {
				return req, ex
			}
			name, ex := s.spool(body)
			req.spoolFile = name
			return req, ex
		}
		rest, ex := s.readAll(body)
		if ex != nil {
			return nil, ex
		}
		req.text = p.query
		if len(rest) > 0 {
			req.text = p.query + "\n" + string(rest)
		}
	} else {
		all, ex := s.readAll(body)
		if ex != nil {
			return nil, ex
		}
		req.text = string(all)
	}
	req.st = Analyze(req.text)
	if ex := s.authorize(r, req); ex != nil {
		return req, ex
	}
	if req.st.Kind == KindInsert && req.st.Data >= 0 {
		data := req.text[req.st.Data:]
		if strings.EqualFold(req.st.Format, "Values") && len(data) <= s.opts.inlineValues {
			return req, nil // small VALUES run inline: expressions and {params} work
		}
		name, ex := s.spool(strings.NewReader(data))
		req.spoolFile = name
		return req, ex
	}
	return req, nil
}

// authorize refuses what the request's user, method or the server does not
// allow. Read-only requests are marked to run with readonly=1.
func (s *Server) authorize(r *http.Request, req *request) *Exception {
	st := req.st
	switch {
	case st.Kind == KindEmpty:
		return &Exception{Code: codeSyntaxError, Name: "SYNTAX_ERROR", Text: "Empty query"}
	case st.Multi:
		return &Exception{Code: codeSyntaxError, Name: "SYNTAX_ERROR", Text: "Multi-statements are not allowed"}
	case st.Kind == KindSession:
		return &Exception{Code: codeNotImplemented, Name: "NOT_IMPLEMENTED",
			Text: st.Keyword + " is not supported by auditq serve: one chDB session serves every request, so session state would leak into other clients' queries; pass settings as URL parameters (e.g. ?max_threads=4) or in a SETTINGS clause, and the database as ?database="}
	case st.IntoOutfile || st.FromInfile:
		return &Exception{Code: codeAccessDenied, Name: "ACCESS_DENIED",
			Text: "INTO OUTFILE and FROM INFILE would use files on the server host and are not allowed over HTTP; send the data in the request body"}
	}
	for _, name := range settingNames(req.text, st.Settings) {
		if fileSetting(strings.ToLower(name)) {
			return refusedSettingError(name, refusedSetting(name))
		}
	}
	readOnly := req.role == RoleReadOnly || req.p.readonly || r.Method == http.MethodGet || r.Method == http.MethodHead
	if readOnly && st.Kind != KindRead {
		who := "user " + req.user + " is read-only"
		switch {
		case req.p.readonly:
			who = "the request set readonly"
		case req.role != RoleReadOnly:
			who = "GET requests are read-only, use POST"
		}
		return &Exception{Code: codeReadonly, Name: "READONLY", Text: "Cannot execute " + st.Keyword + " in readonly mode: " + who}
	}
	if req.role == RoleAnonymous && st.Kind > KindCreate {
		return &Exception{Code: codeAccessDenied, Name: "ACCESS_DENIED",
			Text: "Anonymous access may read, INSERT and CREATE but not run " + st.Keyword + "; authenticate as a rw user (AUDITQ_SERVE_USERS)"}
	}
	req.readOnly = readOnly || st.Kind == KindRead
	if req.readOnly && nestedSettings(req.text) {
		// The engine applies a SETTINGS clause inside a subquery without
		// checking it against readonly: (SELECT … FROM file(…) SETTINGS
		// readonly = 0) read /etc/passwd as the read-only user (red team,
		// session 13). Only the statement's own clauses are allowed.
		return &Exception{Code: codeReadonly, Name: "READONLY",
			Text: "Cannot execute a SETTINGS clause inside a subquery in readonly mode: put settings in the statement's own SETTINGS clause or in URL parameters"}
	}
	return nil
}

// compose builds the SQL the engine runs.
func (s *Server) compose(req *request) string {
	st, text := req.st, req.text
	if req.spoolFile != "" {
		// INSERT INTO t [(cols)] FROM INFILE 'f' [SETTINGS …] FORMAT name
		head, tail := text[:st.FormatPos], ""
		if st.SettingsPos >= 0 && st.SettingsPos < st.FormatPos {
			head, tail = text[:st.SettingsPos], text[st.SettingsPos:st.FormatPos]
		}
		format := text[st.FormatPos:st.End]
		if strings.EqualFold(st.Format, "Values") {
			format = "FORMAT Values"
		}
		return strings.TrimRight(head, " \t\r\n") + " FROM INFILE " + quoteString(req.spoolFile) + " " + tail + format
	}
	if st.Kind == KindInsert && st.Data >= 0 {
		return text // small inline VALUES
	}
	sql := text[:st.End]
	if req.readOnly {
		// Belt and braces for read-only users: the engine itself refuses
		// writes, table functions and setting changes in this query.
		format := "TabSeparated"
		if req.p != nil && req.p.defaultFormat != "" {
			format = req.p.defaultFormat
		}
		return readOnlySQL(text, st, format)
	}
	return sql
}

// execute applies the request's settings and database to the session and
// runs sql, unless the client has already gone away.
func (s *Server) execute(ctx context.Context, sess *session, req *request, sql, format string) (*chdb.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := sess.prepare(req.p.settings, req.p.database); err != nil {
		return nil, err
	}
	res, err := sess.eng.QueryWithParams([]byte(sql), format, req.p.bind)
	if err == nil && len(res.Data) == 0 && req.wantsNativeHeader(format) {
		// chDB writes nothing for an empty Native result; a client still
		// needs the column names and types, which a header block carries.
		if header, herr := emptyNativeHeader(sess.eng, req); herr == nil {
			res.Data = header
		} else {
			s.opts.logger.Debug("no header for an empty result", "err", herr)
		}
	}
	return res, err
}

// wantsNativeHeader reports a query whose result is Native and has
// columns worth describing (a SELECT; not SHOW, DESCRIBE or EXISTS).
func (r *request) wantsNativeHeader(format string) bool {
	out := r.st.Format
	if out == "" {
		out = format
	}
	if !strings.EqualFold(out, "Native") {
		return false
	}
	switch r.st.Keyword {
	case "SELECT", "WITH", "(":
		return true
	}
	return false
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, ex *Exception) {
	level := slog.LevelDebug
	if httpStatus(ex.Code) == http.StatusInternalServerError {
		level = slog.LevelWarn
	}
	s.opts.logger.Log(r.Context(), level, "query failed", "remote", r.RemoteAddr, "code", ex.Code, "err", ex.Error())
	writeException(w, r, ex)
}

// respond writes a successful result with ClickHouse's headers, compressed
// as the client asked.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, req *request, res *chdb.Result, format string, data []byte, elapsed time.Duration) {
	h := w.Header()
	s.resultHeaders(h, req, format, res.RowsRead, res.BytesRead, res.RowsWritten, res.BytesWritten, len(data), elapsed)
	if len(data) > 0 {
		var err error
		var enc string
		switch {
		case req.p.compress:
			data, err = compressBlocks(data, req.p.method)
		case req.p.httpCompression:
			data, enc, err = encodeHTTP(data, r.Header.Get("Accept-Encoding"))
		}
		if err != nil {
			s.fail(w, r, &Exception{Code: codeUnknownException, Name: "STD_EXCEPTION", Text: "compressing the result: " + err.Error()})
			return
		}
		if enc != "" {
			h.Set("Content-Encoding", enc)
		}
	}
	h.Set("Content-Length", fmt.Sprint(len(data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.Copy(w, bytes.NewReader(data))
	}
}

// contentType is the Content-Type a ClickHouse server sends for format.
func contentType(format string) string {
	f := strings.ToLower(format)
	switch {
	case strings.HasPrefix(f, "json"):
		return "application/json; charset=UTF-8"
	case strings.HasPrefix(f, "tabseparated"), strings.HasPrefix(f, "tsv"):
		return "text/tab-separated-values; charset=UTF-8"
	case strings.HasPrefix(f, "csv"):
		return "text/csv; charset=UTF-8; header=absent"
	case f == "xml":
		return "application/xml; charset=UTF-8"
	case strings.HasPrefix(f, "pretty"), f == "vertical", f == "markdown", f == "values", f == "template":
		return "text/plain; charset=UTF-8"
	}
	return "application/octet-stream"
}

func newQueryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:4]) + "-" + hex.EncodeToString(b[4:6]) + "-" + hex.EncodeToString(b[6:8]) + "-" + hex.EncodeToString(b[8:10]) + "-" + hex.EncodeToString(b[10:])
}

// resultHeaders sets the headers of a result, as ClickHouse's HTTP
// interface sends them: the query ID (the client's, or a new one), the
// format, the time zone, the summary of counts and the content type.
func (s *Server) resultHeaders(h http.Header, req *request, format string, readRows, readBytes, writtenRows, writtenBytes uint64, resultBytes int, elapsed time.Duration) {
	queryID := req.p.queryID
	if queryID == "" {
		queryID = newQueryID()
	}
	h.Set("X-ClickHouse-Query-Id", queryID)
	h.Set("X-ClickHouse-Format", format)
	h.Set("X-ClickHouse-Timezone", s.timezone)
	h.Set("X-ClickHouse-Server-Display-Name", "auditq-serve")
	h.Set("X-ClickHouse-Summary", fmt.Sprintf(
		`{"read_rows":"%d","read_bytes":"%d","written_rows":"%d","written_bytes":"%d","total_rows_to_read":"0","result_rows":"%d","result_bytes":"%d","elapsed_ns":"%d"}`,
		readRows, readBytes, writtenRows, writtenBytes, readRows, resultBytes, elapsed.Nanoseconds()))
	h.Set("Content-Type", contentType(format))
}
