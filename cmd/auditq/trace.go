package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/gate"
)

func newTraceCmd(io stdio) *cobra.Command {
	var (
		conn       connFlags
		out        outFlags
		jaegerURL  string
		jaegerKind string
	)
	formats := []string{formatTable, formatJSON, formatJSONL, formatCSV}
	cmd := &cobra.Command{
		Use:   "trace TRACE-ID",
		Short: "Show one run as a tree: agent → tool calls, each with its decision",
		Long: `trace prints every span of one trace (from otel_traces) as a tree: the
invoke_agent span, the tool calls below it, and for each gated call its
decision, risk, reason and durations (the call's, and the gate's own).

json prints the nested tree; jsonl and csv print one flat row per span with
its depth. With a Jaeger URL (--jaeger-url, else $` + jaegerURLEnv + `, which
` + "`source .demo/env`" + ` sets after make demo; --jaeger-url none prints no link)
the trace's Jaeger link is printed too:
--jaeger-link ui is the UI's page ({url}/trace/ID, the official Jaeger
images), api the query API's JSON ({url}/api/traces/ID, every Jaeger,
including bin/jaeger of the local stack, which has no UI), and auto (the
default) asks the Jaeger once which one it serves and says on stderr when
it does not hold the trace.`,
		Example: `  auditq trace 4bf92f3577b34da6a3ce929d0e0e4736
  auditq trace 4bf92f3577b34da6a3ce929d0e0e4736 --jaeger-url http://127.0.0.1:16686
  auditq trace 4bf92f3577b34da6a3ce929d0e0e4736 --jaeger-url https://jaeger.example.com --jaeger-link ui
  AUDITQ_JAEGER_URL=http://127.0.0.1:16686 auditq trace 4bf92f3577b34da6a3ce929d0e0e4736
  auditq decisions --action deny -n 1 --format json | jq -r '.[0].trace_id' | xargs auditq trace`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("trace: want exactly one trace ID, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(formats...); err != nil {
				return err
			}
			switch jaegerKind {
			case jaegerLinkAuto, jaegerLinkUI, jaegerLinkAPI:
			default:
				return usagef("--jaeger-link %q: want auto, ui or api", jaegerKind)
			}
			id := strings.ToLower(strings.TrimSpace(args[0]))
			if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
				return usagef("trace: %q is not a trace ID (32 hex digits)", args[0])
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), conn.timeout)
			defer cancel()
			st, err := conn.open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			tree, err := st.Trace(ctx, id)
			if errors.Is(err, audit.ErrTraceNotFound) {
				return fmt.Errorf("trace %s not found in %s.%s", id, conn.database, audit.DefaultTracesTable)
			}
			if err != nil {
				return explain(err, conn.database)
			}
			link := ""
			if jaegerURL = resolveJaegerURL(jaegerURL); jaegerURL != "" {
				var note string
				link, note = jaegerLink(ctx, http.DefaultClient, jaegerURL, id, jaegerKind)
				if note != "" {
					fmt.Fprintln(io.err, "auditq: "+note)
				}
			}
			return writeTrace(io.out, out, tree, link)
		},
	}
	conn.add(cmd)
	out.add(cmd, formats...)
	cmd.Flags().StringVar(&jaegerURL, "jaeger-url", "", "Jaeger query base URL; prints the trace's link (e.g. http://127.0.0.1:16686; default $"+jaegerURLEnv+"; none: no link)")
	cmd.Flags().StringVar(&jaegerKind, "jaeger-link", jaegerLinkAuto, "link to the Jaeger UI (ui), the query API's JSON (api), or whichever the Jaeger serves (auto)")
	_ = cmd.RegisterFlagCompletionFunc("jaeger-link", cobra.FixedCompletions([]string{jaegerLinkAuto, jaegerLinkUI, jaegerLinkAPI}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// jaegerURLEnv is the environment variable of auditq trace's Jaeger URL
// (scripts/stack.sh env, and so .demo/env, sets it to the stack's Jaeger).
const jaegerURLEnv = "AUDITQ_JAEGER_URL"

// resolveJaegerURL is the Jaeger query base URL auditq trace links to: the
// flag, else $AUDITQ_JAEGER_URL; "" (no link) when neither is set or the
// one that is says none.
func resolveJaegerURL(flag string) string {
	u := strings.TrimSpace(flag)
	if u == "" {
		u = strings.TrimSpace(os.Getenv(jaegerURLEnv))
	}
	if strings.EqualFold(u, "none") {
		return ""
	}
	return u
}

// spanFlat is one span in jsonl/csv output.
func spanFlat(sp *audit.Span, depth int, loc *time.Location) record {
	var r record
	r.set("depth", depth)
	r.set("timestamp", timeValue(sp.Timestamp, loc))
	r.set("span_id", sp.SpanID)
	r.set("parent_span_id", sp.ParentSpanID)
	r.set("name", sp.Name)
	r.set("operation", sp.Operation)
	r.set("agent", sp.Agent)
	r.set("tool_name", sp.ToolName)
	r.set("duration_ns", sp.DurationNs)
	r.set("status_code", sp.StatusCode)
	d := sp.Decision
	if d == nil {
		d = &audit.Decision{}
	}
	r.set("action", d.Action)
	r.set("reason", d.Reason)
	r.set("risk_level", d.RiskLevel)
	r.set("source", d.Source)
	r.set("stage", d.Stage)
	r.set("gate_duration_ns", d.GateDuration)
	return r
}

// spanNested is one span with its children for json output.
func spanNested(sp *audit.Span, loc *time.Location) record {
	var r record
	r.set("timestamp", timeValue(sp.Timestamp, loc))
	r.set("span_id", sp.SpanID)
	r.set("parent_span_id", sp.ParentSpanID)
	r.set("name", sp.Name)
	r.set("kind", sp.Kind)
	r.set("service_name", sp.ServiceName)
	r.set("operation", sp.Operation)
	r.set("agent", sp.Agent)
	r.set("tool_name", sp.ToolName)
	r.set("duration_ns", sp.DurationNs)
	r.set("status_code", sp.StatusCode)
	r.set("status_message", sp.StatusMessage)
	if sp.Decision != nil {
		r.set("decision", structRecord(*sp.Decision, loc))
	} else {
		r.set("decision", nil)
	}
	children := make([]record, 0, len(sp.Children))
	for _, c := range sp.Children {
		children = append(children, spanNested(c, loc))
	}
	r.set("children", children)
	return r
}

func walk(spans []*audit.Span, depth int, fn func(*audit.Span, int) error) error {
	for _, sp := range spans {
		if err := fn(sp, depth); err != nil {
			return err
		}
		if err := walk(sp.Children, depth+1, fn); err != nil {
			return err
		}
	}
	return nil
}

func writeTrace(w io.Writer, o outFlags, tree *audit.TraceTree, link string) error {
	loc := o.location()
	switch o.format {
	case formatJSON:
		var r record
		r.set("trace_id", tree.TraceID)
		r.set("spans", tree.Spans)
		if link != "" {
			r.set("jaeger_url", link)
		}
		roots := make([]record, 0, len(tree.Roots))
		for _, sp := range tree.Roots {
			roots = append(roots, spanNested(sp, loc))
		}
		r.set("roots", roots)
		return writeJSON(w, r)
	case formatJSONL:
		return walk(tree.Roots, 0, func(sp *audit.Span, depth int) error {
			return writeJSONL(w, spanFlat(sp, depth, loc))
		})
	case formatCSV:
		cw := newCSV(w)
		if err := cw.Write(spanFlat(&audit.Span{}, 0, loc).keys); err != nil {
			return err
		}
		if err := walk(tree.Roots, 0, func(sp *audit.Span, depth int) error {
			return cw.Write(spanFlat(sp, depth, loc).csvRow())
		}); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	}
	term := detectTerminal(w, o.noColor)
	var decisions, denied int
	_ = walk(tree.Roots, 0, func(sp *audit.Span, _ int) error {
		if sp.Decision != nil {
			decisions++
			if sp.Decision.Action == string(gate.ActionDeny) {
				denied++
			}
		}
		return nil
	})
	var b strings.Builder
	fmt.Fprintf(&b, "trace %s: %d spans, %d decisions, %d denied\n", tree.TraceID, tree.Spans, decisions, denied)
	var draw func(spans []*audit.Span, prefix string)
	draw = func(spans []*audit.Span, prefix string) {
		for i, sp := range spans {
			branch, next := "├─ ", "│  "
			if i == len(spans)-1 {
				branch, next = "└─ ", "   "
			}
			b.WriteString(prefix + branch + spanLine(sp, loc, term) + "\n")
			draw(sp.Children, prefix+next)
		}
	}
	for _, root := range tree.Roots {
		b.WriteString(spanLine(root, loc, term) + "\n")
		draw(root.Children, "")
	}
	if link != "" {
		fmt.Fprintf(&b, "jaeger: %s\n", link)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// spanLine is one tree line: start time, name, then for a decision its
// action, risk, reason and gate time, and the span's duration.
func spanLine(sp *audit.Span, loc *time.Location, term terminal) string {
	if term.width > 0 && term.color {
		plain := term
		plain.color = false
		if line := spanLine(sp, loc, plain); len([]rune(line)) >= term.width {
			return line // cut to fit, so without colours
		}
	}
	paint := func(col, s string) string {
		if term.color && col != "" {
			return col + s + ansiReset
		}
		return s
	}
	name := oneLine(sp.Name)
	if sp.Name == "execute_tool" && sp.ToolName != "" {
		name += " [" + oneLine(sp.ToolName) + "]" // an unregistered tool: the span name leaves it out
	}
	parts := []string{formatTime(sp.Timestamp, loc)[11:], name}
	if d := sp.Decision; d != nil {
		parts = append(parts, paint(colorFor("ACTION", d.Action), oneLine(d.Action)))
		if gate.Stage(d.Stage).PreGate() {
			parts = append(parts, "before the gate ("+oneLine(d.Stage)+")")
		}
		if d.RiskLevel != "" {
			parts = append(parts, "risk "+paint(colorFor("RISK", d.RiskLevel), oneLine(d.RiskLevel)))
		}
		if d.Reason != "" {
			parts = append(parts, `"`+oneLine(d.Reason)+`"`)
		}
		if d.Source != "" {
			parts = append(parts, "by "+oneLine(d.Source))
		}
		if d.Approval != "" {
			parts = append(parts, "approval "+oneLine(d.Approval))
		}
		if d.GateDuration != 0 {
			parts = append(parts, "gate "+formatDuration(d.GateDuration))
		}
	} else if sp.StatusCode == "Error" {
		parts = append(parts, paint(ansiRed, "error"))
	}
	if sp.DurationNs != 0 {
		parts = append(parts, formatDuration(sp.DurationNs))
	}
	line := strings.Join(parts, "  ")
	if term.width > 0 {
		line = truncate(line, term.width)
	}
	return line
}
