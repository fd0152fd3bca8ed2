package chserve

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Role is what an authenticated user may do.
type Role int

// Roles, from least to most privileged.
const (
	// RoleAnonymous is a request without credentials, accepted only with
	// [WithAnonymous]: reads, INSERT and CREATE, never DROP, TRUNCATE,
	// ALTER or any other statement that can destroy data.
	RoleAnonymous Role = iota
	// RoleReadOnly may run read statements only (SELECT, SHOW, DESCRIBE,
	// EXPLAIN, EXISTS), each executed with ClickHouse's readonly=1.
	RoleReadOnly
	// RoleReadWrite may insert and change the schema (the exporter and
	// migrations use it).
	RoleReadWrite
)

// String is the role's spelling in AUDITQ_SERVE_USERS: ro, rw or anonymous.
func (r Role) String() string {
	switch r {
	case RoleReadOnly:
		return "ro"
	case RoleReadWrite:
		return "rw"
	}
	return "anonymous"
}

// User is one account of the server.
type User struct {
	Name     string
	Password string
	Role     Role
}

// ErrBadUsers is returned by [ParseUsers] for a malformed user list.
var ErrBadUsers = errors.New("bad user list")

// ParseUsers parses the AUDITQ_SERVE_USERS syntax, a comma-separated list
// of name:password:role entries with role ro or rw, for example
// "writer:s3cret:rw,reader:0ther:ro". A password may contain ':' (the name
// ends at the first colon, the role starts after the last) but not ','.
// An empty string is an empty list.
func ParseUsers(spec string) ([]User, error) {
	var users []User
	seen := map[string]bool{}
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		first, last := strings.Index(entry, ":"), strings.LastIndex(entry, ":")
		if first <= 0 || first == last {
			return nil, fmt.Errorf("%w: entry %q is not name:password:role", ErrBadUsers, redact(entry))
		}
		u := User{Name: entry[:first], Password: entry[first+1 : last]}
		switch entry[last+1:] {
		case "rw":
			u.Role = RoleReadWrite
		case "ro":
			u.Role = RoleReadOnly
		default:
			return nil, fmt.Errorf("%w: user %q has role %q, want rw or ro", ErrBadUsers, u.Name, entry[last+1:])
		}
		if u.Password == "" {
			return nil, fmt.Errorf("%w: user %q has an empty password", ErrBadUsers, u.Name)
		}
		if seen[u.Name] {
			return nil, fmt.Errorf("%w: user %q listed twice", ErrBadUsers, u.Name)
		}
		seen[u.Name] = true
		users = append(users, u)
	}
	return users, nil
}

// redact hides the password of a name:password:role entry in messages.
func redact(entry string) string {
	if i := strings.Index(entry, ":"); i >= 0 {
		return entry[:i] + ":***"
	}
	return entry
}

// credentials extracts a user name and password the way ClickHouse's HTTP
// interface does: HTTP basic auth, the X-ClickHouse-User/X-ClickHouse-Key
// headers, or the user/password URL parameters. ok is false when the
// request carries none.
func credentials(r *http.Request) (name, password string, ok bool) {
	if u, p, basic := r.BasicAuth(); basic {
		return u, p, true
	}
	if u := r.Header.Get("X-ClickHouse-User"); u != "" {
		return u, r.Header.Get("X-ClickHouse-Key"), true
	}
	q := r.URL.Query()
	if u := q.Get("user"); u != "" {
		return u, q.Get("password"), true
	}
	return "", "", false
}

// authenticate returns the role of the request's user, or an exception.
func (s *Server) authenticate(r *http.Request) (Role, string, *Exception) {
	name, password, ok := credentials(r)
	if ok && name == "default" && password == "" && s.opts.allowAnonymous && !s.hasUser("default") {
		// ClickHouse clients send the password-less "default" user when
		// given no credentials (clickhouse-go does).
		ok = false
	}
	if !ok {
		if s.opts.allowAnonymous {
			return RoleAnonymous, "", nil
		}
		return 0, "", &Exception{Code: codeRequiredPassword, Name: "REQUIRED_PASSWORD",
			Text: "Credentials are required: pass a user and password (HTTP basic auth, X-ClickHouse-User/X-ClickHouse-Key headers, or user/password URL parameters); anonymous access needs `auditq serve --allow-anonymous`"}
	}
	for _, u := range s.opts.users {
		nameOK := subtle.ConstantTimeCompare([]byte(u.Name), []byte(name)) == 1
		passOK := subtle.ConstantTimeCompare([]byte(u.Password), []byte(password)) == 1
		if nameOK && passOK {
			return u.Role, u.Name, nil
		}
	}
	return 0, "", &Exception{Code: codeAuthenticationFailed, Name: "AUTHENTICATION_FAILED",
		Text: name + ": Authentication failed: password is incorrect, or there is no user with such name"}
}

func (s *Server) hasUser(name string) bool {
	for _, u := range s.opts.users {
		if u.Name == name {
			return true
		}
	}
	return false
}
