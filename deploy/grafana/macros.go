package grafana

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

// AllValue is the value of a template variable set to "All".
const AllValue = "$__all"

// MacroEnv is what Grafana knows when it runs a panel's query: the time
// range, the panel's interval and the template variables' values.
type MacroEnv struct {
	From, To time.Time
	// Interval is the panel's $__interval (at least 1 s is used).
	Interval time.Duration
	// Vars maps a variable name to its selected values; a missing name or
	// the single value AllValue means "All".
	Vars map[string][]string
}

// ErrMacro is wrapped by ExpandMacros' errors.
var ErrMacro = errors.New("grafana: macro")

func (e MacroEnv) all(name string) bool {
	v, ok := e.Vars[name]
	return !ok || len(v) == 0 || (len(v) == 1 && v[0] == AllValue)
}

var (
	conditionalAll = "$__conditionalAll("
	// ${name:format} or ${name} or $name.
	varRef   = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::([a-z]+))?\}|\$([A-Za-z][A-Za-z0-9_]*)`)
	macroRef = regexp.MustCompile(`\$__([A-Za-z_]+)(\(([^()]*)\))?`)
)

// ExpandMacros expands sql the way Grafana and the ClickHouse data source
// plugin (grafana/clickhouse-datasource v4) do before the query reaches
// ClickHouse, so that a dashboard's SQL can be run and tested outside
// Grafana:
//
//  1. $__conditionalAll(condition, $var) (plugin front end): "1=1" when
//     var is All, else condition;
//  2. template variables (Grafana): ${var:singlequote} → 'a','b';
//     ${var:csv} and ${var} / $var → a,b;
//  3. the plugin's back-end macros (pkg/macros): $__timeFilter(col) →
//     col >= toDateTime(from) AND col <= toDateTime(to) (Unix seconds),
//     $__timeFilter_ms(col) (fromUnixTimestamp64Milli), $__dateFilter(col),
//     $__timeInterval(col) → toStartOfInterval(toDateTime(col), INTERVAL n
//     second), $__timeInterval_ms(col), $__interval_s, $__fromTime,
//     $__toTime, $__fromTime_ms, $__toTime_ms.
//
// Errors (wrapping ErrMacro): an unknown macro, a wrong argument count, an
// unbalanced $__conditionalAll, or a variable with no value.
func ExpandMacros(sql string, env MacroEnv) (string, error) {
	s, err := expandConditionalAll(sql, env)
	if err != nil {
		return "", err
	}
	var verr error
	s = varRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRef.FindStringSubmatch(m)
		name, format := sub[1], sub[2]
		if name == "" {
			name = sub[3]
		}
		if strings.HasPrefix(name, "__") {
			return m // a macro, expanded below
		}
		vals, ok := env.Vars[name]
		if !ok || len(vals) == 0 || (len(vals) == 1 && vals[0] == AllValue) {
			verr = fmt.Errorf("%w: variable %q has no values (All must be handled by $__conditionalAll)", ErrMacro, name)
			return m
		}
		switch format {
		case "singlequote":
			q := make([]string, len(vals))
			for i, v := range vals {
				q[i] = "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", `\'`) + "'"
			}
			return strings.Join(q, ",")
		case "", "csv", "raw":
			return strings.Join(vals, ",")
		default:
			verr = fmt.Errorf("%w: variable format %q", ErrMacro, format)
			return m
		}
	})
	if verr != nil {
		return "", verr
	}
	seconds := int(math.Max(env.Interval.Seconds(), 1))
	ms := int(math.Max(float64(env.Interval.Milliseconds()), 1))
	dt := func(t time.Time) string { return fmt.Sprintf("toDateTime(%d)", t.Unix()) }
	dt64 := func(t time.Time) string { return fmt.Sprintf("fromUnixTimestamp64Milli(%d)", t.UnixMilli()) }
	date := func(t time.Time) string { return fmt.Sprintf("toDate('%s')", t.UTC().Format("2006-01-02")) }
	s = macroRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := macroRef.FindStringSubmatch(m)
		name, hasArgs, arg := sub[1], sub[2] != "", strings.TrimSpace(sub[3])
		one := func(f func(col string) string) string {
			if !hasArgs || arg == "" || strings.Contains(arg, ",") {
				verr = fmt.Errorf("%w: $__%s needs one column argument", ErrMacro, name)
				return m
			}
			return f(arg)
		}
		switch name {
		case "timeFilter":
			return one(func(c string) string { return c + " >= " + dt(env.From) + " AND " + c + " <= " + dt(env.To) })
		case "timeFilter_ms":
			return one(func(c string) string { return c + " >= " + dt64(env.From) + " AND " + c + " <= " + dt64(env.To) })
		case "dateFilter":
			return one(func(c string) string { return c + " >= " + date(env.From) + " AND " + c + " <= " + date(env.To) })
		case "timeInterval":
			return one(func(c string) string {
				return fmt.Sprintf("toStartOfInterval(toDateTime(%s), INTERVAL %d second)", c, seconds)
			})
		case "timeInterval_ms":
			return one(func(c string) string {
				return fmt.Sprintf("toStartOfInterval(toDateTime64(%s, 3), INTERVAL %d millisecond)", c, ms)
			})
		}
		var out string
		switch name {
		case "interval_s":
			out = fmt.Sprint(seconds)
		case "fromTime":
			out = dt(env.From)
		case "toTime":
			out = dt(env.To)
		case "fromTime_ms":
			out = dt64(env.From)
		case "toTime_ms":
			out = dt64(env.To)
		default:
			verr = fmt.Errorf("%w: unknown macro $__%s", ErrMacro, name)
			return m
		}
		if hasArgs && arg != "" {
			verr = fmt.Errorf("%w: $__%s takes no argument", ErrMacro, name)
			return m
		}
		return out
	})
	if verr != nil {
		return "", verr
	}
	return s, nil
}

// expandConditionalAll replaces each $__conditionalAll(cond, $var).
func expandConditionalAll(sql string, env MacroEnv) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(sql, conditionalAll)
		if i < 0 {
			b.WriteString(sql)
			return b.String(), nil
		}
		b.WriteString(sql[:i])
		rest := sql[i+len(conditionalAll):]
		depth, end, comma := 1, -1, -1
		for j, r := range rest {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			case ',':
				if depth == 1 {
					comma = j // the last top-level comma separates the variable
				}
			}
			if depth == 0 {
				end = j
				break
			}
		}
		if end < 0 || comma < 0 {
			return "", fmt.Errorf("%w: unbalanced or one-argument $__conditionalAll", ErrMacro)
		}
		cond := strings.TrimSpace(rest[:comma])
		v := strings.TrimSpace(rest[comma+1 : end])
		name := strings.Trim(strings.TrimPrefix(v, "$"), "{}")
		if env.all(name) {
			b.WriteString("1=1")
		} else {
			b.WriteString(cond)
		}
		sql = rest[end+1:]
	}
}
