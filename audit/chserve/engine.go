package chserve

import (
	"context"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/audit/chdb"
)

// Engine runs SQL. [*chdb.Conn] is the production implementation; a
// connection is a session and is used by one request at a time.
type Engine interface {
	Query(query []byte, format string) (*chdb.Result, error)
	QueryWithParams(query []byte, format string, params map[string]string) (*chdb.Result, error)
}

// session is one engine connection and the state the server put on it:
// the settings it SET and the database it switched to.
type session struct {
	eng      Engine
	settings map[string]string
	database string
}

// pool hands out sessions, one request at a time each.
type pool struct {
	free chan *session
}

func newPool(engines []Engine) *pool {
	p := &pool{free: make(chan *session, len(engines))}
	for _, e := range engines {
		p.free <- &session{eng: e, settings: map[string]string{}, database: "default"}
	}
	return p
}

// acquire waits for a free session or for ctx to end.
func (p *pool) acquire(ctx context.Context) (*session, error) {
	select {
	case s := <-p.free:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pool) release(s *session) { p.free <- s }

// prepare makes the session's settings exactly want (SET for new or changed
// values, SET … = DEFAULT for settings a previous request left) and its
// current database db. Setting names were validated by the caller; values
// are sent as string literals, which ClickHouse converts to each setting's
// type.
func (s *session) prepare(want map[string]string, db string) error {
	var assigns []string
	for k, v := range want {
		if cur, ok := s.settings[k]; !ok || cur != v {
			assigns = append(assigns, k+" = "+quoteString(v))
		}
	}
	for k := range s.settings {
		if _, ok := want[k]; !ok {
			assigns = append(assigns, k+" = DEFAULT")
		}
	}
	if len(assigns) > 0 {
		sort.Strings(assigns)
		if _, err := s.eng.Query([]byte("SET "+strings.Join(assigns, ", ")), "TabSeparated"); err != nil {
			// ClickHouse checks every change before applying any, so a
			// failed SET left the session as it was.
			return err
		}
		s.settings = make(map[string]string, len(want))
		for k, v := range want {
			s.settings[k] = v
		}
	}
	if db == "" {
		db = "default"
	}
	if db != s.database {
		if _, err := s.eng.Query([]byte("USE "+quoteIdent(db)), "TabSeparated"); err != nil {
			return err
		}
		s.database = db
	}
	return nil
}

// quoteString renders v as a ClickHouse string literal.
func quoteString(v string) string {
	var b strings.Builder
	b.Grow(len(v) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\'', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// quoteIdent renders name as a back-quoted ClickHouse identifier.
func quoteIdent(name string) string {
	return "`" + strings.NewReplacer("\\", "\\\\", "`", "\\`").Replace(name) + "`"
}

// validSettingName reports whether name can be a setting name in SET
// (letters, digits, underscore, dot; not starting with a digit).
func validSettingName(name string) bool {
	if name == "" || isDigit(name[0]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '.' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')) {
			return false
		}
	}
	return true
}
