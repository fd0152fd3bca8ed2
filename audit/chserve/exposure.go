package chserve

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// ErrAnonymousOnNetwork is returned by [Exposure.Check] for anonymous
// access on an address other machines can reach: anyone on the network
// could read and write the audit trail.
var ErrAnonymousOnNetwork = errors.New("anonymous access (--allow-anonymous) is allowed on a loopback address only (127.0.0.1, ::1): anyone who reaches the port could read and write; listen on 127.0.0.1 or set AUDITQ_SERVE_USERS and drop --allow-anonymous")

// ErrPlaintextOnNetwork is returned by [Exposure.Check] for users on a
// non-loopback address without TLS: their passwords would cross the
// network in plain HTTP.
var ErrPlaintextOnNetwork = errors.New("users on a non-loopback address need TLS, or their passwords cross the network in plain HTTP: pass --tls-cert FILE --tls-key FILE (PEM), listen on 127.0.0.1, or accept the risk with --insecure-plaintext-passwords")

// Exposure is who can reach a listening server and how: the policy of
// `auditq serve`, checked before it serves a request.
type Exposure struct {
	// Network is true when the listen address is not loopback (an
	// unspecified address such as 0.0.0.0 or [::] is network).
	Network bool
	// TLS is true when the server serves HTTPS.
	TLS bool
	// Anonymous is true when requests without credentials are accepted.
	Anonymous bool
	// Users is the number of accounts.
	Users int
	// InsecurePlaintext is the explicit opt-in to users with passwords in
	// plain HTTP on a network address.
	InsecurePlaintext bool
}

// ExposureOf is the exposure of a listener at addr (e.g. ln.Addr()).
func ExposureOf(addr net.Addr) Exposure {
	return Exposure{Network: !IsLoopback(addr)}
}

// IsLoopback reports whether addr is a loopback address (127.0.0.0/8,
// ::1). Unspecified addresses (0.0.0.0, ::) listen on every interface and
// are not loopback; a name that is not an IP is not either.
func IsLoopback(addr net.Addr) bool {
	var ip net.IP
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip = a.IP
	default:
		host, _, err := net.SplitHostPort(addr.String())
		if err != nil {
			return false
		}
		ip = net.ParseIP(host)
	}
	return ip != nil && ip.IsLoopback()
}

// Check refuses anonymous access on a network address
// ([ErrAnonymousOnNetwork]) and users on a network address without TLS
// unless InsecurePlaintext is set ([ErrPlaintextOnNetwork]).
func (e Exposure) Check() error {
	if !e.Network {
		return nil
	}
	if e.Anonymous {
		return ErrAnonymousOnNetwork
	}
	if e.Users > 0 && !e.TLS && !e.InsecurePlaintext {
		return ErrPlaintextOnNetwork
	}
	return nil
}

// String is the access mode for the start-up line, e.g.
// "users (2), TLS, loopback" or "anonymous, plaintext, loopback".
func (e Exposure) String() string {
	var parts []string
	switch {
	case e.Anonymous && e.Users > 0:
		parts = append(parts, fmt.Sprintf("users (%d) and anonymous", e.Users))
	case e.Anonymous:
		parts = append(parts, "anonymous")
	default:
		parts = append(parts, fmt.Sprintf("users (%d)", e.Users))
	}
	switch {
	case e.TLS:
		parts = append(parts, "TLS")
	case e.Network && e.InsecurePlaintext:
		parts = append(parts, "PLAINTEXT PASSWORDS ON THE NETWORK (--insecure-plaintext-passwords)")
	default:
		parts = append(parts, "plaintext")
	}
	if e.Network {
		parts = append(parts, "network")
	} else {
		parts = append(parts, "loopback")
	}
	return strings.Join(parts, ", ")
}
