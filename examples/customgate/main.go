// Command customgate is docs/gates.md as a program: a custom gate written
// with gate.Func and gate.Named that allows, denies with a reason and a
// risk level, asks a human, rewrites the input and fails closed; what the
// model receives for each call; and what each call's span records.
//
// It also has the shape the README's "Embed it" section gives a program:
// otelbridge.Setup, executor.WithTracerProvider, and a deferred
// Provider.Shutdown with a timeout, so that a short-lived program delivers
// every span before it exits.
//
//	go run ./examples/customgate
//	# and export the spans to a collector (make demo's listens on 127.0.0.1:4317):
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 go run ./examples/customgate
//
// The write_file tool only echoes: nothing is written.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "customgate:", err)
		os.Exit(1)
	}
}

// workspaceGate judges write_file calls ({"path": "..."}); calls of
// other tools are not its business and it allows them.
func workspaceGate() gate.Gate {
	return gate.Named("workspace", gate.Func(func(_ context.Context, c gate.ToolCallContext) (gate.Decision, error) {
		if c.ToolName != "write_file" {
			return gate.Allow(), nil
		}
		p := c.String("path") // the validated input: the schema makes path a string
		switch {
		case strings.Contains(p, ".."):
			// An error denies the call (fail closed): gate.error=error.
			return gate.Decision{}, fmt.Errorf("cannot judge path %q: it contains ..", p)
		case strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "/work/"):
			d := gate.Deny("writes outside the workspace /work").WithRisk(gate.RiskHigh)
			d.Rule = "ws.outside"
			return d, nil
		case path.Ext(p) == ".env":
			return gate.Ask("writes a secrets file").WithRisk(gate.RiskReview), nil
		case !strings.HasPrefix(p, "/"):
			in, err := json.Marshal(map[string]string{"path": "/work/" + p})
			if err != nil {
				return gate.Decision{}, err
			}
			return gate.AllowRewritten(in, "relative path made absolute").WithRisk(gate.RiskSafe), nil
		}
		return gate.Allow().WithRisk(gate.RiskSafe), nil
	}))
}

// writeFile stands in for a real tool.
func writeFile(_ context.Context, in json.RawMessage) (executor.Result, error) {
	return executor.Text("would write " + string(in)), nil
}

// spanPrinter prints the gate.* attributes of every execute_tool span as
// it ends: exactly what the exporter sends.
type spanPrinter struct{ out io.Writer }

func (spanPrinter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (spanPrinter) Shutdown(context.Context) error                  { return nil }
func (spanPrinter) ForceFlush(context.Context) error                { return nil }
func (p spanPrinter) OnEnd(s sdktrace.ReadOnlySpan) {
	if !strings.HasPrefix(s.Name(), "execute_tool") {
		return
	}
	var b strings.Builder
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case gate.AttrAction, gate.AttrSource, gate.AttrRiskLevel, gate.AttrReason, gate.AttrError,
			gate.AttrApproval, gate.AttrApprover, gate.AttrRewritten, gate.AttrRewrittenBy, gate.AttrVerdicts:
			fmt.Fprintf(&b, " %s=%s", kv.Key, attrText(kv.Value))
		}
	}
	fmt.Fprintf(p.out, "  span %s:%s\n", s.Name(), b.String())
}

func attrText(v attribute.Value) string {
	if v.Type() == attribute.STRING {
		return fmt.Sprintf("%q", v.AsString())
	}
	return v.Emit()
}

func run(ctx context.Context, out io.Writer) (err error) {
	// Tracing: to the collector the OTEL_EXPORTER_OTLP_* variables name;
	// without one, the spans are only printed.
	cfg := otelbridge.Config{ServiceName: "customgate", SpanProcessors: []sdktrace.SpanProcessor{spanPrinter{out}}}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		cfg.Exporter = tracetest.NewNoopExporter()
	}
	tp, err := otelbridge.Setup(ctx, cfg)
	if err != nil {
		return err // e.g. a TLS/plaintext mismatch with the collector, with its fix
	}
	defer func() {
		// Flush before exit: without Shutdown the queued spans are lost.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if serr := tp.Shutdown(sctx); serr != nil {
			err = errors.Join(err, fmt.Errorf("spans lost: %w", serr))
		}
		st := tp.Stats()
		fmt.Fprintf(out, "spans: %d exported, %d lost\n", st.Batch.Exported, st.Lost())
	}()

	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "write_file",
		Description: "Write a file in the workspace.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Execute:     writeFile,
	})
	if err != nil {
		return err
	}
	// Asks go to an approver; this one declines every ask (see package
	// approve for a terminal prompt, a channel for a UI, a policy file).
	decline := gate.ApproverFunc(func(_ context.Context, req gate.ApprovalRequest) (gate.ApprovalResult, error) {
		return req.Decline("reviewer", "only by hand, in the editor"), nil
	})
	ex, err := executor.New(reg, executor.WithGates(workspaceGate()), executor.WithApprover(decline),
		executor.WithTracerProvider(tp))
	if err != nil {
		return err
	}
	agent, err := ex.Agent("coder", executor.AgentAllow("write_file"))
	if err != nil {
		return err
	}
	run := agent.Run("run-customgate")
	for i, p := range []string{"/work/main.go", "/etc/passwd", "/work/.env", "notes.txt", "../outside"} {
		in, err := json.Marshal(map[string]string{"path": p})
		if err != nil {
			return err
		}
		res := run.Execute(ctx, executor.ToolCall{ID: fmt.Sprintf("call_%d", i+1), Name: "write_file", Input: in})
		fmt.Fprintf(out, "%-14s model sees (isError=%v): %s\n", p, res.IsError, res.Content)
	}
	return nil
}
