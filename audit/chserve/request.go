package chserve

import (
	"net/url"
	"strconv"
	"strings"
)

// params is what a request's URL says besides the SQL.
type params struct {
	query         string
	database      string
	defaultFormat string
	queryID       string
	// settings are ClickHouse settings to apply for this request only.
	settings map[string]string
	// bind are the values for {name:Type} placeholders (param_name=value).
	bind map[string]string
	// compress: answer in ClickHouse compressed blocks (compress=1).
	compress bool
	// decompress: the body is in ClickHouse compressed blocks (decompress=1).
	decompress bool
	// method is the block compression for the answer (LZ4 or ZSTD).
	method string
	// httpCompression: enable_http_compression=1 (gzip/deflate/br answers).
	httpCompression bool
	// revision is client_protocol_version (0: Native at revision 0).
	revision uint64
	// readonly: the URL asked for readonly=1 or 2.
	readonly bool
}

// isHandlerParam reports URL parameters the HTTP interface itself
// consumes; they are never applied as settings.
func isHandlerParam(name string) bool {
	switch name {
	case "query", "database", "default_format", "user", "password", "query_id", "quota_key", "session_id", "session_timeout", "session_check", "compress", "decompress", "client_protocol_version", "buffer_size", "wait_end_of_query", "enable_http_compression", "http_zlib_compression_level", "http_native_compression_disable_checksumming_on_decompress", "network_compression_method", "network_zstd_compression_level", "readonly", "role", "stacktrace":
		return true
	}
	return false
}

// codeSettingConstraint is ClickHouse's SETTING_CONSTRAINT_VIOLATION.
const codeSettingConstraint = 452

// parserSetting reports whether a setting changes how the engine reads
// statement text: the SQL dialect (kusto, prql: a text the statement
// lexer reads as a ClickHouse read then runs without the readonly = 1 the
// server appends, which those dialects drop — the red team read a server
// file and ran url() as the read-only user), the limits of the parser
// (a session whose max_query_size is 1 cannot run the SET that resets
// it), and implicit SELECTs. URL settings are SET on a session that every
// user's next request shares, so none of these is accepted from anyone.
func parserSetting(name string) bool {
	switch strings.ToLower(name) {
	case "dialect", "implicit_select", "max_query_size", "max_parser_depth", "max_parser_backtracks",
		"allow_settings_after_format_in_insert":
		return true
	}
	n := strings.ToLower(name)
	return strings.HasPrefix(n, "allow_experimental_") && strings.HasSuffix(n, "_dialect")
}

// parseParams reads the URL parameters the way ClickHouse's HTTP interface
// does. Errors: session_id (sessions are not supported), a malformed setting
// name or client_protocol_version, a setting that changes how statements
// are parsed (parserSetting).
func parseParams(q url.Values) (*params, *Exception) {
	p := &params{
		query:         q.Get("query"),
		database:      q.Get("database"),
		defaultFormat: q.Get("default_format"),
		queryID:       q.Get("query_id"),
		settings:      map[string]string{},
		bind:          map[string]string{},
		compress:      truthy(q.Get("compress")),
		decompress:    truthy(q.Get("decompress")),
		method:        strings.ToUpper(q.Get("network_compression_method")),
		readonly:      q.Get("readonly") != "" && q.Get("readonly") != "0",
	}
	p.httpCompression = truthy(q.Get("enable_http_compression"))
	if p.method == "" {
		p.method = "LZ4"
	}
	if p.method != "LZ4" && p.method != "ZSTD" && p.method != "NONE" && p.method != "LZ4HC" {
		return nil, &Exception{Code: 36, Name: "BAD_ARGUMENTS", Text: "Unknown network_compression_method " + strconv.Quote(p.method) + ": supported are LZ4, LZ4HC, ZSTD and NONE"}
	}
	if sid := q.Get("session_id"); sid != "" {
		return nil, &Exception{Code: codeNotImplemented, Name: "NOT_IMPLEMENTED",
			Text: "Sessions (session_id) are not supported by auditq serve: one chDB session serves every request; pass settings as URL parameters instead"}
	}
	if v := q.Get("client_protocol_version"); v != "" {
		rev, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, &Exception{Code: 36, Name: "BAD_ARGUMENTS", Text: "client_protocol_version must be a number, got " + strconv.Quote(v)}
		}
		p.revision = rev
	}
	for k, vs := range q {
		if len(vs) == 0 {
			continue
		}
		v := vs[len(vs)-1]
		switch {
		case strings.HasPrefix(k, "param_"):
			p.bind[strings.TrimPrefix(k, "param_")] = v
		case isHandlerParam(k):
		default:
			if !validSettingName(k) {
				return nil, &Exception{Code: 115, Name: "UNKNOWN_SETTING", Text: "Unknown setting " + strconv.Quote(k)}
			}
			if parserSetting(k) {
				return nil, &Exception{Code: codeSettingConstraint, Name: "SETTING_CONSTRAINT_VIOLATION",
					Text: "Setting " + k + " should not be changed: on auditq serve it would change how the engine reads every later statement of a shared session (the read-only guard that the server appends, and the reset of the session's settings)"}
			}
			p.settings[k] = v
		}
	}
	return p, nil
}

func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
