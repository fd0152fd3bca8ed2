// Command embed is what a new user writes to embed the executor: three
// tools (bash, read_file, http_get), the bash classifier gate, the path
// gate and a custom gate for URLs. Each gate judges only the tools in its
// scope — the classifiers the tools whose input schema has the field they
// read, the custom gate the tool it is scoped to — so a read_file or
// http_get call is never denied by the bash gate. The tools only echo:
// nothing is run, read or fetched.
//
//	go run ./examples/embed
//	# and export its spans when OTEL_EXPORTER_OTLP_ENDPOINT is set (with the
//	# collector's token in OTEL_EXPORTER_OTLP_HEADERS); after make demo:
//	source .demo/env && go run ./examples/embed
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"strings"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/examples/internal/tracing"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// echo stands in for a real tool: it says what it would do.
func echo(what string) func(context.Context, json.RawMessage) (executor.Result, error) {
	return func(_ context.Context, in json.RawMessage) (executor.Result, error) {
		return executor.Text("would " + what + ": " + string(in)), nil
	}
}

// noInternalURLs is a custom gate: it denies URLs that reach this machine,
// its network or the cloud metadata endpoint, and allows the rest.
var noInternalURLs = gate.Named("no-internal-urls", gate.Func(func(_ context.Context, call gate.ToolCallContext) (gate.Decision, error) {
	u, err := url.Parse(call.String("url"))
	if err != nil || u.Hostname() == "" {
		return gate.Deny("not an absolute URL").WithRisk(gate.RiskHigh), nil
	}
	host := strings.ToLower(u.Hostname())
	if ip, err := netip.ParseAddr(host); err == nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()) ||
		host == "localhost" || strings.HasSuffix(host, ".internal") {
		return gate.Deny(host + " is an internal address: fetching it could reach this machine or the cloud's credentials").WithRisk(gate.RiskHigh), nil
	}
	d := gate.Allow().WithRisk(gate.RiskSafe) // safe as far as this gate sees
	d.Reason = "external URL"
	return d, nil
}))

func run(ctx context.Context, out io.Writer) (err error) {
	// Spans: to the collector OTEL_EXPORTER_OTLP_ENDPOINT names (with the
	// token in OTEL_EXPORTER_OTLP_HEADERS), flushed before returning;
	// without the variable, nothing is exported.
	tp, shutdown, err := tracing.Setup(ctx, "embed", out)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, shutdown()) }()
	bash, err := classify.BashGate() // judges tools with a "command" field: safe → allow, review → ask, high → deny
	if err != nil {
		return err
	}
	files, err := classify.PathGate() // judges tools with a "path" or "file_path" field
	if err != nil {
		return err
	}
	reg, err := executor.NewRegistry(
		executor.Tool{
			Name:        "bash",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
			Execute:     echo("run"),
		},
		executor.Tool{
			Name:        "read_file",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
			Annotations: gate.Annotations{ReadOnlyHint: true},
			Execute:     echo("read"),
		},
		executor.Tool{
			Name:        "http_get",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`),
			Annotations: gate.Annotations{ReadOnlyHint: true},
			Execute:     echo("fetch"),
		},
	)
	if err != nil {
		return err
	}
	ex, err := executor.New(reg,
		executor.WithGates(bash, files,
			gate.Scoped(noInternalURLs, gate.Scope{Tools: []string{"http_get"}, Needs: []string{"url"}})),
		executor.WithApprover(approve.NewTerminal()), // asks (review-level calls) go to the terminal
		executor.WithTracerProvider(tp),
	)
	if err != nil {
		return err // a gate that fits no registered tool is reported here (executor.ErrGateScope)
	}
	agent, err := ex.Agent("coder", executor.AgentPresets(executor.PresetAll))
	if err != nil {
		return err
	}
	run := agent.Run("run-42") // its calls form one trace under the run's invoke_agent span
	defer run.End()
	for i, c := range []struct{ tool, input string }{
		{"bash", `{"command":"ls -la"}`},
		{"bash", `{"command":"rm -rf ~"}`},
		{"read_file", `{"path":"README.md"}`},
		{"read_file", `{"path":"~/.ssh/id_ed25519"}`},
		{"http_get", `{"url":"https://example.com/"}`},
		{"http_get", `{"url":"http://169.254.169.254/latest/meta-data/"}`},
	} {
		res := run.Execute(ctx, executor.ToolCall{ID: fmt.Sprintf("call_%d", i+1), Name: c.tool, Input: json.RawMessage(c.input)})
		// Send res.Content (with res.IsError) back to the model as the
		// tool result; res.Gate is the decision (also on the call's span).
		fmt.Fprintf(out, "%s %s\n  isError=%v gate=%s risk=%s\n  %s\n", c.tool, c.input, res.IsError, res.Gate.Source, res.Gate.Risk, res.Content)
	}
	return nil
}
