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

// refusedSettingError is the answer to a refused setting.
func refusedSettingError(name, why string) *Exception {
	return &Exception{Code: codeSettingConstraint, Name: "SETTING_CONSTRAINT_VIOLATION",
		Text: "Setting " + name + " should not be changed: " + why}
}

// refusedSetting returns why a setting is refused from any user, in the
// URL or (for fileSetting) in a statement's SETTINGS clause, or "":
//
//   - it changes how the engine reads statement text (parserSetting);
//   - it changes the defaults of other settings in a way the reset
//     (SET x = DEFAULT) does not undo: compatibility (the red team's
//     compatibility=1.1 left 540 changed settings, the analyzer off, on a
//     session every user shares), profile;
//   - its value names a file on the server that the engine reads
//     (fileSetting).
func refusedSetting(name string) string {
	n := strings.ToLower(name)
	switch {
	case parserSetting(n):
		return "on auditq serve it would change how the engine reads every later statement of a shared session (the read-only guard that the server appends, and the reset of the session's settings)"
	case n == "compatibility" || n == "profile":
		return "on auditq serve it would change the defaults of a shared session beyond what resetting its settings undoes"
	case fileSetting(n):
		return "its value names a file on the server, which the engine reads (a template or schema path; the red team read /etc/passwd through an error message)"
	}
	return ""
}

// parserSetting reports whether a setting (lower case) changes how the
// engine reads statement text: the SQL dialect (kusto, prql: a text the
// statement lexer reads as a ClickHouse read then runs without the
// readonly = 1 the server appends, which those dialects drop — the red
// team read a server file and ran url() as the read-only user), the
// limits of the parser (a session whose max_query_size is 1 cannot run
// the SET that resets it), and implicit SELECTs.
func parserSetting(n string) bool {
	switch n {
	case "dialect", "implicit_select", "max_query_size", "max_parser_depth", "max_parser_backtracks",
		"allow_settings_after_format_in_insert":
		return true
	}
	return strings.HasPrefix(n, "allow_experimental_") && strings.HasSuffix(n, "_dialect")
}

// fileSetting reports whether a setting's (lower case) value is a path
// the engine reads a format's template or schema from: the engine runs as
// clickhouse-local, which reads any absolute path, and readonly = 1 does
// not restrict format settings.
func fileSetting(n string) bool {
	switch n {
	case "format_template_row", "format_template_resultset", "format_schema", "output_format_schema", "format_schema_source":
		return true
	}
	return false
}

// parseParams reads the URL parameters the way ClickHouse's HTTP interface
// does. Errors: session_id (sessions are not supported), a malformed setting
// name or client_protocol_version, a refused setting (refusedSetting).
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
			if why := refusedSetting(k); why != "" {
				return nil, refusedSettingError(k, why)
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
