package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/mcpgate"
	"github.com/toolgate/toolgate/policy"
)

// mcpFlags are the command line of `toolgate mcp`.
type mcpFlags struct {
	policy string
	listen string
	quiet  bool
}

func newMCPCmd(io stdio) *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP gateway: present the policy's upstream MCP servers' tools and gate every tools/call",
		Long: `Connects to the MCP servers in the policy's mcp.upstreams (a command started
over stdio, or a streamable-HTTP URL), presents their tools as
<upstream>_<tool>, and runs every tools/call through toolgate's executor:
the upstream tool's input schema is validated, the policy decides (per-tool
rules of the upstream, the built-in rules for @modelcontextprotocol/
server-filesystem, else a review from the tool's annotations), and only an
allowed call is forwarded. A denial is an isError result with the reason;
an ask is put to the client through MCP elicitation when it supports it,
else denied. Every call is an execute_tool span (gate.*) under a
tools/call server span, exported through the durable spool to the
collector (the policy's export section).

Serves stdio by default (the MCP client starts this command); --listen
HOST:PORT serves streamable HTTP at /mcp on a loopback address only.
Logs go to stderr.

Policy: --policy FILE, else $TOOLGATE_POLICY, else
~/.config/toolgate/toolgate.yaml, else built-in defaults (which have no
upstreams: an error). See docs/mcp-gateway.md.`,
		Example: `  toolgate mcp --policy examples/policy/mcp-filesystem.yaml
  toolgate mcp --policy toolgate.yaml --listen 127.0.0.1:8931`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCP(cmd.Context(), io, f)
		},
	}
	cmd.Flags().StringVar(&f.policy, "policy", "", "policy file (default: $TOOLGATE_POLICY, else ~/.config/toolgate/toolgate.yaml)")
	cmd.Flags().StringVar(&f.listen, "listen", "", "serve streamable HTTP on this loopback HOST:PORT instead of stdio (default: the policy's mcp.listen)")
	cmd.Flags().BoolVar(&f.quiet, "quiet", false, "log only errors")
	return cmd
}

func runMCP(ctx context.Context, io stdio, f mcpFlags) error {
	level := slog.LevelInfo
	if f.quiet {
		level = slog.LevelError
	}
	logger := slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{Level: level}))
	pol, err := loadHookPolicy(f.policy)
	if err != nil {
		return usageError{err}
	}
	if len(pol.MCP.Upstreams) == 0 {
		return usageError{fmt.Errorf("the policy (%s) has no mcp.upstreams: nothing to serve (see docs/mcp-gateway.md)", policyName(pol))}
	}
	timeout, err := pol.MCP.Timeout()
	if err != nil {
		return usageError{err}
	}
	listen := f.listen
	if listen == "" {
		listen = pol.MCP.Listen
	}

	var l net.Listener
	if listen != "" {
		// Bind first: a bad address fails before any upstream starts.
		if l, err = mcpgate.Listen(listen); err != nil {
			return usageError{err}
		}
		defer l.Close()
	}

	target, err := resolveExport(pol)
	if err != nil {
		return usageError{err}
	}
	tel, err := openTelemetry(ctx, target, "toolgate-mcp", 2*time.Second)
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	defer func() {
		if unsent := tel.finish(2 * time.Second); unsent > 0 {
			logger.Warn("decision spans left in the spool for the next start or `toolgate flush`", "unsent", unsent, "dir", slotDir(target.spoolDir, tel.slot))
		}
	}()

	opts, err := gatewayOptions(pol, target, tel, logger, timeout)
	if err != nil {
		return usageError{err}
	}
	gw, err := mcpgate.New(ctx, mcpUpstreams(pol), opts...)
	if err != nil {
		if errors.Is(err, mcpgate.ErrConfig) {
			return usageError{err}
		}
		return err
	}
	defer gw.Close()
	for _, u := range gw.Upstreams() {
		if u.Err != nil {
			logger.Error("upstream unavailable", "upstream", u.Name, "err", u.Err)
		} else {
			logger.Info("upstream connected", "upstream", u.Name, "tools", u.Tools)
		}
	}
	if l == nil {
		logger.Info("serving MCP on stdio", "tools", len(gw.Tools()), "run", gw.RunID())
		return gw.ServeStdio(ctx)
	}
	logger.Info("serving MCP over streamable HTTP", "url", "http://"+l.Addr().String()+"/mcp", "tools", len(gw.Tools()), "run", gw.RunID())
	return gw.ServeHTTP(ctx, l)
}

// gatewayOptions maps the policy onto the gateway: the classifier set-up
// of policy.Gate (workspace, profile, trusted workspace, high action), the
// agent name, the durable export (write-ahead: an allowed call is on disk
// before it is forwarded), the call timeout.
func gatewayOptions(pol *policy.Policy, target exportTarget, tel *telemetry, logger *slog.Logger, timeout time.Duration) ([]mcpgate.Option, error) {
	ws := pol.Workspace
	if ws == "" {
		// The gateway's working directory is whatever its client chose
		// (a desktop client may start it in / or the home directory, where
		// "inside the workspace" would mean everything): refuse those.
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		home, _ := os.UserHomeDir()
		if wd == "/" || (home != "" && filepath.Clean(wd) == filepath.Clean(home)) {
			return nil, fmt.Errorf("the policy sets no workspace and the gateway runs in %s: set workspace: in the policy (the directory the upstreams work in)", wd)
		}
		ws = wd
	}
	self := append([]string{pol.Source()}, selfPaths(pol, target)...)
	copts := append(pol.ClassifierOptions(ws), classify.WithProtectedPaths(self...))
	gopts := pol.GateOptions()
	agent := pol.Export.Agent
	if agent == "" {
		agent = mcpgate.DefaultAgentName
	}
	opts := []mcpgate.Option{
		mcpgate.WithAgentName(agent),
		mcpgate.WithVersion(versionString()),
		mcpgate.WithClassifier(copts...),
		mcpgate.WithGateOptions(pol.Profile == classify.ProfileReadOnly, gopts...),
		mcpgate.WithTracerProvider(tel.p),
		mcpgate.WithExecutorOptions(executor.WithWriteAhead(tel.p), executor.WithRecordContent(true)),
		mcpgate.WithCallTimeout(timeout),
		mcpgate.WithLogger(logger),
		mcpgate.WithProtected(ws, self...), // the gate cannot be changed through the gate
	}
	if pol.Approver.Kind == policy.ApproverInbox {
		// Asks a client cannot answer (no elicitation) wait in the
		// approvals inbox; the model is told to call again once a person
		// approved (auditq approve), and that call runs once.
		path := pol.Approver.Inbox
		if path == "" {
			p, err := inbox.DefaultPath()
			if err != nil {
				return nil, fmt.Errorf("approver inbox: %w", err)
			}
			path = p
		}
		db, err := inbox.Open(path, inbox.OpenConfig{})
		if err != nil {
			return nil, fmt.Errorf("approver inbox %s: %w", path, err)
		}
		ib := inbox.New(db, db, inbox.Config{})
		opts = append(opts, mcpgate.WithApprover(inbox.NewApprover(ib, inbox.ApproverConfig{Mode: inbox.Suspend})),
			mcpgate.WithExecutorOptions(executor.WithGrantStore(db)))
		logger.Info("asks a client cannot answer wait in the approvals inbox", "inbox", path)
	}
	return opts, nil
}

// mcpUpstreams converts the policy's upstreams.
func mcpUpstreams(pol *policy.Policy) []mcpgate.Upstream {
	out := make([]mcpgate.Upstream, 0, len(pol.MCP.Upstreams))
	for _, u := range pol.MCP.Upstreams {
		m := mcpgate.Upstream{Name: u.Name, Command: u.Command, Env: u.Env, URL: u.URL, Roots: u.Roots, Trusted: u.Trusted, Hide: u.Hide}
		for _, r := range u.Tools {
			m.Tools = append(m.Tools, mcpgate.Rule{Match: r.Match, Kind: r.Kind, Fields: r.Fields, Reason: r.Reason})
		}
		out = append(out, m)
	}
	return out
}

func policyName(p *policy.Policy) string {
	if p.Source() != "" {
		return p.Source()
	}
	return "built-in defaults"
}
