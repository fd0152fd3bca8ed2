package mcpgate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNotLoopback is returned by Listen for an address that is not on the
// loopback interface: the gateway serves only this machine.
var ErrNotLoopback = errors.New("mcpgate: listen address is not loopback")

// Handler serves the gateway over streamable HTTP, both protocol eras:
// a request whose Mcp-Protocol-Version header is 2026-07-28 or later goes
// to a stateless handler (the SDK serves that revision only statelessly;
// asks are MRTR input_required results), any other to a stateful one
// (handshake sessions with Mcp-Session-Id; asks are pushed
// elicitation/create requests). The SDK's DNS-rebinding protection for
// localhost is on in both.
func (g *Gateway) Handler() http.Handler {
	get := func(*http.Request) *mcp.Server { return g.server }
	stateful := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Logger: g.cfg.logger, MaxRequestBodyBytes: 4 << 20})
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Logger: g.cfg.logger, MaxRequestBodyBytes: 4 << 20,
		Stateless: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= statelessVersion {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// statelessVersion is the first MCP revision without sessions.
const statelessVersion = "2026-07-28"

// Listen binds addr ("127.0.0.1:8931", "[::1]:0", "localhost:0"), which
// must resolve to loopback addresses only. Errors: ErrNotLoopback, or the
// bind's error.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mcpgate: listen %q: %w", addr, err)
	}
	ips, err := net.DefaultResolver.LookupIPAddr(context.Background(), host)
	if host == "" || err != nil || len(ips) == 0 {
		return nil, fmt.Errorf("%w: %q (give 127.0.0.1:PORT)", ErrNotLoopback, addr)
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return nil, fmt.Errorf("%w: %q resolves to %s", ErrNotLoopback, addr, ip.IP)
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mcpgate: listen %q: %w", addr, err)
	}
	return l, nil
}

// ServeHTTP serves Handler at path "/mcp" (and "/") on l until ctx ends,
// then shuts the server down (at most 5 s).
func (g *Gateway) ServeHTTP(ctx context.Context, l net.Listener) error {
	mux := http.NewServeMux()
	h := g.Handler()
	mux.Handle("/mcp", h)
	mux.Handle("/", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
		return nil
	}
}
