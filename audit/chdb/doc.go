// Package chdb is a thin binding of chDB, the ClickHouse engine as a shared
// library (libchdb.so), loaded at run time with purego so that the Go build
// needs no cgo and no library at build time.
//
// Why not github.com/chdb-io/chdb-go: v1.11.0 dlopens the library in an
// init() and panics when it is missing, so every program linking it would die
// before main on a machine without libchdb. This package loads nothing until
// [Open] is called, and a missing library is an error ([ErrLibraryNotFound])
// whose message says how to install it. It also binds the binary-safe
// chdb_query_n and chdb_query_with_params_n entry points, which chdb-go lacks.
//
// Only the dozen C functions the embedded server needs are bound (chDB C API,
// programs/local/chdb.h, as exported by @chdb/lib-linux-x64-gnu@26.5.3):
// chdb_connect, chdb_close_conn, chdb_query_n, chdb_query_with_params_n,
// chdb_destroy_query_result, chdb_result_buffer, chdb_result_length,
// chdb_result_elapsed, chdb_result_rows_read, chdb_result_bytes_read,
// chdb_result_rows_written, chdb_result_bytes_written and chdb_result_error;
// and, looked up lazily so that a library without them still loads, the
// streaming entry points chdb_stream_query_with_params_n,
// chdb_stream_fetch_result and chdb_stream_cancel_query ([Conn.Stream],
// [Library.CanStream]).
//
// A [Conn] is one chDB session (settings, current database and temporary
// tables persist between queries on it). The engine keeps one data path per
// process. Callers serialize use of a Conn; see [Conn.Query].
package chdb
