package chserve_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/audit/chserve"
)

func TestIsLoopback(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8123", true},
		{"127.8.9.10:1", true},
		{"[::1]:8123", true},
		{"0.0.0.0:8123", false},
		{"[::]:8123", false},
		{"10.0.0.5:8123", false},
		{"192.168.1.2:8123", false},
		{"[2001:db8::1]:8123", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			a, err := net.ResolveTCPAddr("tcp", tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			assert.Equal(t, tt.want, chserve.IsLoopback(a))
		})
	}
	empty, err := net.ResolveTCPAddr("tcp", ":8123") // every interface
	assert.NoError(t, err)
	assert.False(t, chserve.IsLoopback(empty))
}

func TestExposureCheck(t *testing.T) {
	tests := []struct {
		name string
		e    chserve.Exposure
		want error
		mode string
	}{
		{"anonymous on loopback", chserve.Exposure{Anonymous: true}, nil, "anonymous, plaintext, loopback"},
		{"users on loopback, plaintext", chserve.Exposure{Users: 2}, nil, "users (2), plaintext, loopback"},
		{"anonymous on the network", chserve.Exposure{Network: true, Anonymous: true}, chserve.ErrAnonymousOnNetwork, ""},
		{"anonymous on the network, even with TLS and the opt-in", chserve.Exposure{Network: true, Anonymous: true, Users: 1, TLS: true, InsecurePlaintext: true}, chserve.ErrAnonymousOnNetwork, ""},
		{"users on the network, plaintext", chserve.Exposure{Network: true, Users: 1}, chserve.ErrPlaintextOnNetwork, ""},
		{"users on the network, TLS", chserve.Exposure{Network: true, Users: 1, TLS: true}, nil, "users (1), TLS, network"},
		{"users on the network, opt-in", chserve.Exposure{Network: true, Users: 1, InsecurePlaintext: true}, nil, "users (1), PLAINTEXT PASSWORDS ON THE NETWORK (--insecure-plaintext-passwords), network"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.e.Check()
			assert.ErrorIs(t, err, tt.want)
			if tt.want == nil {
				assert.NoError(t, err)
				assert.Equal(t, tt.mode, tt.e.String())
			}
		})
	}
}

// TestExposureProperty: whatever the flags, anonymous access is never
// allowed on the network, and users' passwords cross the network in plain
// HTTP only with the explicit opt-in; loopback is always allowed.
func TestExposureProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := chserve.Exposure{
			Network:           rapid.Bool().Draw(t, "network"),
			TLS:               rapid.Bool().Draw(t, "tls"),
			Anonymous:         rapid.Bool().Draw(t, "anonymous"),
			Users:             rapid.IntRange(0, 3).Draw(t, "users"),
			InsecurePlaintext: rapid.Bool().Draw(t, "insecure"),
		}
		err := e.Check()
		switch {
		case !e.Network:
			if err != nil {
				t.Fatalf("loopback refused: %v", err)
			}
		case e.Anonymous:
			if err == nil {
				t.Fatal("anonymous access allowed on the network")
			}
		case e.Users > 0 && !e.TLS && !e.InsecurePlaintext:
			if err == nil {
				t.Fatal("plaintext passwords allowed on the network without the opt-in")
			}
		default:
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
		}
	})
}
