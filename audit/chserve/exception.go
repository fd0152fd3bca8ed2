package chserve

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/audit/chdb"
)

// ClickHouse error codes the server raises itself (src/Common/ErrorCodes.cpp).
const (
	codeNotImplemented       = 48
	codeSyntaxError          = 62
	codeUnknownFormat        = 73
	codeCannotParseInput     = 27
	codeUnknownTable         = 60
	codeUnknownDatabase      = 81
	codeReadonly             = 164
	codeRequiredPassword     = 194
	codeTooManyBytes         = 307
	codeQueryWasCancelled    = 394
	codeAccessDenied         = 497
	codeAuthenticationFailed = 516
	codeUnknownException     = 1002
)

// Exception is an error in ClickHouse's terms, sent to clients as the body
// "Code: N. DB::Exception: text. (NAME)" with the X-ClickHouse-Exception-Code
// header, as a ClickHouse server does.
type Exception struct {
	Code int
	Name string
	Text string
	// Message, when set, is an engine message already in the
	// "Code: N. DB::Exception: …" form, sent as is.
	Message string
}

func (e *Exception) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("Code: %d. DB::Exception: %s. (%s)", e.Code, e.Text, e.Name)
}

// asException converts an engine or server error to an Exception.
func asException(err error) *Exception {
	var ex *Exception
	if errors.As(err, &ex) {
		return ex
	}
	var ce *chdb.Error
	if errors.As(err, &ce) {
		code := ce.Code
		if code == 0 {
			code = codeUnknownException
		}
		return &Exception{Code: code, Name: ce.Name, Message: ce.Message}
	}
	return &Exception{Code: codeUnknownException, Name: "STD_EXCEPTION", Text: err.Error()}
}

// engineUser is the user chDB runs every query as; its messages name it
// ("default: Cannot execute query in readonly mode").
const engineUser = "default"

// forUser makes an engine exception name the request's authenticated user
// ("anonymous" without credentials) instead of the engine's own "default",
// which the client never logged in as; a READONLY refusal also says why the
// query ran read-only. Other exceptions are returned as they are.
func (ex *Exception) forUser(req *request) *Exception {
	prefix := "DB::Exception: " + engineUser + ": "
	i := strings.Index(ex.Message, prefix)
	if req == nil || ex.Message == "" || i < 0 {
		return ex
	}
	name := req.user
	if name == "" {
		name = "anonymous"
	}
	msg := ex.Message[:i] + "DB::Exception: " + name + ": " + ex.Message[i+len(prefix):]
	if ex.Code == codeReadonly {
		why := "auditq serve runs every read statement with readonly=1, which forbids table functions and setting changes"
		if req.role == RoleReadOnly {
			why = "user " + name + " is read-only"
		}
		msg = strings.Replace(msg, "in readonly mode", "in readonly mode ("+why+")", 1)
	}
	return &Exception{Code: ex.Code, Name: ex.Name, Message: msg}
}

// httpStatus maps an exception code to the HTTP status a ClickHouse server
// answers with (after HTTPHandler's exceptionCodeToHTTPStatus).
func httpStatus(code int) int {
	switch code {
	case codeRequiredPassword:
		return http.StatusUnauthorized
	case 192, 193, codeAuthenticationFailed, codeAccessDenied, codeReadonly: // UNKNOWN_USER, WRONG_PASSWORD
		return http.StatusForbidden
	case codeTooManyBytes:
		return http.StatusRequestEntityTooLarge
	case codeNotImplemented:
		return http.StatusNotImplemented
	case codeUnknownTable, codeUnknownDatabase, 46, 47, 16: // UNKNOWN_FUNCTION, UNKNOWN_IDENTIFIER, NO_SUCH_COLUMN_IN_TABLE
		return http.StatusNotFound
	case codeSyntaxError, codeUnknownFormat, codeCannotParseInput, 33, 40, 36, 43, 44, 53, 115, 117, 69, 70, 6, 26, 41, 38, 42:
		// BAD_ARGUMENTS, ILLEGAL_TYPE_OF_ARGUMENT, ILLEGAL_COLUMN, TYPE_MISMATCH,
		// UNKNOWN_SETTING, INCORRECT_DATA, ARGUMENT_OUT_OF_BOUND, CANNOT_CONVERT_TYPE,
		// CANNOT_PARSE_TEXT, CANNOT_PARSE_QUOTED_STRING, CANNOT_PARSE_DATETIME,
		// CANNOT_PARSE_DATE, NUMBER_OF_ARGUMENTS_DOESNT_MATCH
		return http.StatusBadRequest
	case codeQueryWasCancelled:
		return 499
	}
	return http.StatusInternalServerError
}

// writeException sends ex as a ClickHouse server would: the message as
// text/plain with X-ClickHouse-Exception-Code and the HTTP status of
// httpStatus. When the request asked for compressed answers (compress=1),
// the message is framed in ClickHouse compressed blocks
// (network_compression_method, default LZ4) like any other answer, as
// ClickHouse's HTTP handler does: clickhouse-go reads every non-200 body of a
// compressing connection as compressed blocks, so a plain body there reached
// the client as "read next block: data size should be 0 < N < …" instead of
// the exception — the clickhouse exporter's report of a wrong password.
func writeException(w http.ResponseWriter, r *http.Request, ex *Exception) {
	body := []byte(ex.Error() + "\n")
	if r != nil {
		if q := r.URL.Query(); truthy(q.Get("compress")) {
			if framed, err := compressBlocks(body, strings.ToUpper(q.Get("network_compression_method"))); err == nil {
				body = framed
			}
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=UTF-8")
	h.Set("X-ClickHouse-Exception-Code", fmt.Sprint(ex.Code))
	h.Del("Content-Encoding")
	w.WriteHeader(httpStatus(ex.Code))
	_, _ = w.Write(body)
}
