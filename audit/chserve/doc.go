// Package chserve serves ClickHouse's HTTP interface over an embedded
// engine (chDB, see package chdb), so that clickhouse-go/v2 with an http://
// DSN, the OpenTelemetry collector's clickhouse exporter and curl work
// against it as against a ClickHouse server. `auditq serve` runs it.
//
// What it implements (ClickHouse HTTP interface,
// https://clickhouse.com/docs/interfaces/http):
//
//   - GET and POST on any path; the SQL is the query URL parameter, the body,
//     or the parameter followed by a newline and the body. GET is read-only.
//   - Output in the FORMAT clause, else default_format, else TabSeparated.
//     Native output is re-encoded at client_protocol_version (chDB always
//     writes revision 0) with clickhouse-go's lib/proto; an empty Native
//     result gets a header block (columns, no rows) from DESCRIBE (query).
//   - INSERT … FORMAT f / VALUES with the data after the statement: the data
//     is spooled to a temporary file and inserted with INSERT … FROM INFILE
//     (chDB fails on large inline data).
//   - param_<name> values for {name:Type} placeholders (server-side binding),
//     database, query_id, and any other URL parameter as a ClickHouse setting
//     for this request only (applied with SET and reset afterwards; the
//     engine session is shared).
//   - compress=1 / decompress=1 with ClickHouse's compressed-block framing
//     (LZ4, LZ4HC, ZSTD; network_compression_method) through ch-go's
//     compress package; Content-Encoding gzip, deflate, br and zstd on
//     request bodies; gzip, deflate and br answers with
//     enable_http_compression=1.
//   - Errors as "Code: N. DB::Exception: … (NAME)" with the
//     X-ClickHouse-Exception-Code header and ClickHouse's HTTP statuses.
//   - Users from HTTP basic auth, X-ClickHouse-User/X-ClickHouse-Key or the
//     user/password parameters, with roles ([RoleReadWrite], [RoleReadOnly],
//     and [RoleAnonymous] only when allowed).
//   - /ping and /replicas_status answer "Ok.\n".
//
// What it refuses, with a clear error: SET and USE statements and
// session_id (one engine session serves every request), URL settings that
// change how the engine parses text (dialect and its experimental switches,
// max_query_size, max_parser_depth, implicit_select), change a session's
// defaults beyond a reset (compatibility, profile), or name a template or
// schema file (format_template_row, format_schema, …, also in a SETTINGS
// clause): SETTING_CONSTRAINT_VIOLATION; multi-statements, INTO OUTFILE and FROM
// INFILE, bodies over the size limit (TOO_MANY_BYTES).
// A request whose client went away before its turn is not executed.
//
// Limits (docs/embedded-clickhouse.md): as many queries run at once as there
// are engine sessions; results are buffered whole in memory; no progress
// headers, mid-stream exceptions, external tables or KILL QUERY.
package chserve
