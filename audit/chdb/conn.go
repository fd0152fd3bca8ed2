package chdb

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// ErrClosed is returned for a query on a closed [Conn].
var ErrClosed = errors.New("chdb: connection closed")

// Conn is one chDB connection, which is one session: SET, USE and temporary
// tables persist from one query to the next. A Conn is not safe for
// concurrent use; callers serialize queries on it.
type Conn struct {
	lib  *Library
	ptr  *unsafe.Pointer // chdb_connection*
	args []string
}

// Connect opens a connection with ClickHouse command-line arguments, e.g.
// "--path=/var/lib/auditq" for the data directory (the default is an
// in-memory engine) or "--readonly=1" for a query-level setting applied to
// this connection. The engine boots on the first connect of the process and
// keeps that data path until every connection is closed.
func (l *Library) Connect(args ...string) (*Conn, error) {
	argv := make([]*byte, 0, len(args)+2)
	argv = append(argv, cString("clickhouse"))
	for _, a := range args {
		argv = append(argv, cString(a))
	}
	argv = append(argv, nil)
	l.connMu.Lock()
	defer l.connMu.Unlock()
	ptr := l.connect(int32(len(args)+1), argv)
	runtime.KeepAlive(argv)
	if ptr == nil || *ptr == nil {
		return nil, fmt.Errorf("chdb: connect %v failed: the engine refused (is another process using the data directory, or another data path open in this process?); the engine's own message is on stderr", args)
	}
	return &Conn{lib: l, ptr: ptr, args: args}, nil
}

// MemoryLimitArg is the Connect argument that caps the engine's memory at
// bytes (ClickHouse's server setting max_server_memory_usage: every query,
// insert, merge and cache of the process together). A query that would go
// past it fails with code 241 MEMORY_LIMIT_EXCEEDED ("(total) memory limit
// exceeded: would use …, maximum: …") and the engine goes on serving; no
// allocation past it is made, so the process is not killed for it. The
// engine reads it when it boots (the first Connect of the process, or the
// first after every connection was closed). bytes <= 0: the engine's own
// default, 90 % of the machine's RAM.
func MemoryLimitArg(bytes int64) string {
	return fmt.Sprintf("--max_server_memory_usage=%d", max(bytes, 0))
}

// Close closes the connection. Closing twice is a no-op.
func (c *Conn) Close() error {
	if c.ptr == nil {
		return nil
	}
	c.lib.connMu.Lock()
	defer c.lib.connMu.Unlock()
	c.lib.closeConn(c.ptr)
	c.ptr = nil
	return nil
}

// Result is a completed query's output and statistics.
type Result struct {
	// Data is the output in the requested format (a copy owned by Go).
	Data []byte
	// Elapsed is the engine's execution time in seconds.
	Elapsed float64
	// RowsRead and BytesRead count the result set (chdb_result_rows_read /
	// chdb_result_bytes_read).
	RowsRead, BytesRead uint64
	// RowsWritten and BytesWritten count inserted rows, including rows
	// written by cascading materialized views.
	RowsWritten, BytesWritten uint64
}

// Query runs query (binary-safe: it may contain NUL bytes) and returns the
// output in format, the default output format (a FORMAT clause in the query
// wins), e.g. "TabSeparated", "JSONEachRow" or "Native".
//
// Errors: [ErrClosed]; a *[Error] carrying the engine's code and name when
// the engine rejects the query.
func (c *Conn) Query(query []byte, format string) (*Result, error) {
	if c.ptr == nil {
		return nil, ErrClosed
	}
	if len(query) == 0 {
		return nil, &Error{Code: 62, Name: "SYNTAX_ERROR", Message: "Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)"}
	}
	res := c.lib.queryN(*c.ptr, query, uintptr(len(query)), format, uintptr(len(format)))
	runtime.KeepAlive(query)
	return c.collect(res)
}

// QueryWithParams is [Conn.Query] with server-side parameter binding: each
// {name:Type} placeholder in query takes params[name], a value in the
// text form ClickHouse's HTTP interface accepts for param_<name>.
func (c *Conn) QueryWithParams(query []byte, format string, params map[string]string) (*Result, error) {
	if len(params) == 0 {
		return c.Query(query, format)
	}
	if c.ptr == nil {
		return nil, ErrClosed
	}
	names := make([]*byte, 0, len(params))
	nameLens := make([]uintptr, 0, len(params))
	values := make([]*byte, 0, len(params))
	valueLens := make([]uintptr, 0, len(params))
	for k, v := range params {
		names = append(names, cString(k))
		nameLens = append(nameLens, uintptr(len(k)))
		values = append(values, cString(v))
		valueLens = append(valueLens, uintptr(len(v)))
	}
	if len(query) == 0 {
		return c.Query(query, format)
	}
	res := c.lib.queryWithParamsN(*c.ptr, query, uintptr(len(query)), format, uintptr(len(format)),
		names, nameLens, values, valueLens, uintptr(len(params)))
	runtime.KeepAlive(query)
	runtime.KeepAlive(names)
	runtime.KeepAlive(values)
	return c.collect(res)
}

// collect copies a chdb_result into Go memory and destroys it.
func (c *Conn) collect(res unsafe.Pointer) (*Result, error) {
	if res == nil {
		return nil, &Error{Code: 0, Message: "chDB returned no result"}
	}
	defer c.lib.destroyResult(res)
	if msg := goString(c.lib.resultError(res)); msg != "" {
		return nil, parseError(msg)
	}
	out := &Result{
		Elapsed:      c.lib.resultElapsed(res),
		RowsRead:     c.lib.resultRowsRead(res),
		BytesRead:    c.lib.resultBytesRead(res),
		RowsWritten:  c.lib.resultRowsWritten(res),
		BytesWritten: c.lib.resultBytesWritten(res),
	}
	if n := c.lib.resultLength(res); n > 0 {
		if buf := c.lib.resultBuffer(res); buf != nil {
			out.Data = make([]byte, n)
			copy(out.Data, unsafe.Slice((*byte)(buf), n))
		}
	}
	return out, nil
}
