package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/approve/inbox/inboxhttp"
	"github.com/toolgate/toolgate/audit/chserve"
)

// defaultApprovalsAddr is where approvals serve listens by default.
const defaultApprovalsAddr = "127.0.0.1:8470"

func newApprovalsServeCmd(io stdio, ib *inboxFlag) *cobra.Command {
	var (
		addr    string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8470] [--inbox PATH]",
		Short: "Serve the approvals HTTP API and web page on a loopback address",
		Long: `serve answers approval requests over HTTP on a loopback address (only: any
other address is refused): a JSON API for chat-ops integrations
(/api/v1/approvals, Authorization: Bearer TOKEN) and a web page that lists
the pending requests and approves or declines them (/login?token=TOKEN, then
/). The page lives on a host name of its own, http://LABEL.localhost:PORT/
(LABEL random per start; printed below), and its session cookie is valid
only there. Tokens come from 'auditq approvals approvers add NAME'; the approver a
token belongs to is the one who answers. Requests whose Host header is not a
loopback name, and cross-origin form posts, are refused. See
docs/approvals.md for the API. It stops on SIGINT/SIGTERM.`,
		Example: `  auditq approvals serve
  auditq approvals serve --addr 127.0.0.1:9000 --inbox .toolgate/approvals.db
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8470/api/v1/approvals`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a, err := net.ResolveTCPAddr("tcp", addr); err != nil {
				return usagef("approvals serve: --addr %s: %v", addr, err)
			} else if !chserve.IsLoopback(a) {
				return usagef("approvals serve: --addr %s is not a loopback address: the approvals server listens on 127.0.0.1 or [::1] only (reach it from elsewhere through an SSH tunnel or a reverse proxy you secure)", addr)
			}
			in, db, err := ib.open(false)
			if err != nil {
				return err
			}
			level := slog.LevelInfo
			if verbose {
				level = slog.LevelDebug
			}
			logger := slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{Level: level}))
			srv, err := inboxhttp.New(inboxhttp.Options{Inbox: in, Approvers: db, Logger: logger})
			if err != nil {
				return err
			}
			return runApprovalsServe(cmd.Context(), io, addr, srv, db.Path(), logger)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", defaultApprovalsAddr, "loopback address to listen on (port 0 picks a free port)")
	f.BoolVar(&verbose, "verbose", false, "log more")
	return cmd
}

func runApprovalsServe(ctx context.Context, io stdio, addr string, h *inboxhttp.Server, path string, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("approvals serve: %w", err)
	}
	if !chserve.IsLoopback(ln.Addr()) {
		ln.Close()
		return usagef("approvals serve: --addr %s (%s) is not a loopback address", addr, ln.Addr())
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug)}
	fmt.Fprintf(io.out, "auditq approvals serve: listening on http://%s (inbox %s)\n", ln.Addr(), path)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	fmt.Fprintf(io.out, "  web page: http://%s/login?token=TOKEN  (a token: auditq approvals approvers add NAME)\n", h.PageHost(port))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("approvals serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("approvals serve: shutdown: %w", err)
	}
	fmt.Fprintln(io.out, "auditq approvals serve: stopped")
	return nil
}
