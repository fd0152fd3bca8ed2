package chdb

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ErrNoStreaming is returned by [Conn.Stream] when the loaded libchdb does
// not export the streaming entry points (chdb_stream_query_with_params_n,
// chdb_stream_fetch_result, chdb_stream_cancel_query); callers fall back
// to [Conn.QueryWithParams].
var ErrNoStreaming = errors.New("chdb: this libchdb has no streaming query API")

// streamFuncs are chDB's streaming entry points (chdb.h, 26.x):
//
//	chdb_result *chdb_stream_query_with_params_n(conn, query, query_len, format, format_len,
//	    names, name_lens, values, value_lens, count)
//	chdb_result *chdb_stream_fetch_result(conn, stream)  // an empty chunk ends the stream
//	void chdb_stream_cancel_query(conn, stream)
//
// The stream handle and every chunk are chdb_results, destroyed with
// chdb_destroy_query_result.
type streamFuncs struct {
	query  func(conn unsafe.Pointer, query []byte, queryLen uintptr, format string, formatLen uintptr, names []*byte, nameLens []uintptr, values []*byte, valueLens []uintptr, count uintptr) unsafe.Pointer
	fetch  func(conn unsafe.Pointer, stream unsafe.Pointer) unsafe.Pointer
	cancel func(conn unsafe.Pointer, stream unsafe.Pointer)
}

// bindStream looks the streaming symbols up (dlsym) and binds them, or
// returns nil when any is missing.
func bindStream(h uintptr) *streamFuncs {
	var f streamFuncs
	syms := []struct {
		name string
		fn   any
	}{
		{"chdb_stream_query_with_params_n", &f.query},
		{"chdb_stream_fetch_result", &f.fetch},
		{"chdb_stream_cancel_query", &f.cancel},
	}
	for _, s := range syms {
		ptr, err := purego.Dlsym(h, s.name)
		if err != nil || ptr == 0 {
			return nil
		}
		purego.RegisterFunc(s.fn, ptr)
	}
	return &f
}

// CanStream reports whether the library exports the streaming query API
// that [Conn.Stream] uses.
func (l *Library) CanStream() bool { return l.stream != nil }

// Stream is a query whose output arrives chunk by chunk ([Conn.Stream]).
// It holds its connection: no other query may run on the Conn until the
// stream ended ([Stream.Next] returned an error) or was closed. Not safe
// for concurrent use.
type Stream struct {
	c      *Conn
	handle unsafe.Pointer // chdb_result* of the stream, nil once closed
	done   bool           // the engine ended the stream (last chunk read or error)
	// RowsRead and BytesRead add up the chunks' statistics so far.
	RowsRead, BytesRead uint64
}

// Stream starts query (binary-safe) with server-side parameters like
// [Conn.QueryWithParams] and returns its output as it is produced, in
// format (a FORMAT clause in the query wins): the engine never holds the
// whole result, only the chunk being handed over.
//
// Each chunk is written by a fresh instance of the output format, so the
// concatenated chunks equal the buffered result only for formats without a
// prefix or suffix (Native, RowBinary, TabSeparated, CSV, JSONEachRow, …;
// CSVWithNames would repeat its header, JSON its brackets); see
// [StreamsWhole].
//
// Errors: [ErrClosed]; [ErrNoStreaming] when the library lacks the API; a
// *[Error] when the engine rejects the query. The engine may report a
// rejected query (syntax, unknown table, …) here or from the first
// [Stream.Next]; errors while the query runs come from Stream.Next.
func (c *Conn) Stream(query []byte, format string, params map[string]string) (*Stream, error) {
	if c.ptr == nil {
		return nil, ErrClosed
	}
	if c.lib.stream == nil {
		return nil, ErrNoStreaming
	}
	if len(query) == 0 {
		return nil, &Error{Code: 62, Name: "SYNTAX_ERROR", Message: "Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)"}
	}
	names := make([]*byte, 0, len(params)+1)
	nameLens := make([]uintptr, 0, len(params)+1)
	values := make([]*byte, 0, len(params)+1)
	valueLens := make([]uintptr, 0, len(params)+1)
	for k, v := range params {
		names = append(names, cString(k))
		nameLens = append(nameLens, uintptr(len(k)))
		values = append(values, cString(v))
		valueLens = append(valueLens, uintptr(len(v)))
	}
	// purego passes a nil slice as NULL, which the engine accepts only
	// with a count of 0; keep one element of backing store either way.
	names, nameLens, values, valueLens = append(names, nil), append(nameLens, 0), append(values, nil), append(valueLens, 0)
	h := c.lib.stream.query(*c.ptr, query, uintptr(len(query)), format, uintptr(len(format)),
		names, nameLens, values, valueLens, uintptr(len(params)))
	runtime.KeepAlive(query)
	runtime.KeepAlive(names)
	runtime.KeepAlive(values)
	if h == nil {
		return nil, &Error{Code: 0, Message: "chDB returned no stream"}
	}
	if msg := goString(c.lib.resultError(h)); msg != "" {
		c.lib.destroyResult(h)
		return nil, parseError(msg)
	}
	return &Stream{c: c, handle: h}, nil
}

// StreamsWhole reports whether format writes no prefix or suffix, so that
// [Conn.Stream]'s chunks concatenate to exactly the buffered result
// (case-insensitive).
func StreamsWhole(format string) bool {
	switch strings.ToLower(format) {
	case "native", "rowbinary", "tabseparated", "tsv", "tabseparatedraw", "tsvraw", "csv",
		"jsoneachrow", "jsonlines", "ndjson", "jsoncompacteachrow", "jsonstringseachrow":
		return true
	}
	return false
}

// Next returns the next chunk of output (a copy owned by Go; with the
// Native format, whole blocks). At the end of the output it returns nil
// and io.EOF; a query that fails while running returns a *[Error]. After
// either, the stream is finished (Close is still safe).
func (s *Stream) Next() ([]byte, error) {
	if s.handle == nil || s.done {
		return nil, io.EOF
	}
	if s.c.ptr == nil {
		return nil, ErrClosed
	}
	lib := s.c.lib
	for {
		chunk := lib.stream.fetch(*s.c.ptr, s.handle)
		if chunk == nil {
			s.done = true
			return nil, &Error{Code: 0, Message: "chDB returned no chunk"}
		}
		if msg := goString(lib.resultError(chunk)); msg != "" {
			lib.destroyResult(chunk)
			s.done = true
			return nil, parseError(msg)
		}
		n := lib.resultLength(chunk)
		s.RowsRead += lib.resultRowsRead(chunk)
		s.BytesRead += lib.resultBytesRead(chunk)
		if n == 0 {
			lib.destroyResult(chunk)
			s.done = true
			return nil, io.EOF
		}
		var out []byte
		if buf := lib.resultBuffer(chunk); buf != nil {
			out = make([]byte, n)
			copy(out, unsafe.Slice((*byte)(buf), n))
		}
		lib.destroyResult(chunk)
		if len(out) > 0 {
			return out, nil
		}
	}
}

// Close ends the stream, cancelling the query if it is still running, and
// frees it. Closing twice is a no-op.
func (s *Stream) Close() error {
	if s.handle == nil {
		return nil
	}
	if !s.done && s.c.ptr != nil {
		s.c.lib.stream.cancel(*s.c.ptr, s.handle)
	}
	s.c.lib.destroyResult(s.handle)
	s.handle = nil
	s.done = true
	return nil
}
