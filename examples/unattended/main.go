// Command unattended is an agent that runs with nobody at its terminal:
// a shell command that needs a person's approval is stored as a durable
// approval request (approve/inbox) and the call is suspended; the agent
// persists the call and exits (or is killed); a person answers later from
// another process (auditq approve, the HTTP API or the web page); the
// agent, started again with --resume, runs exactly the approved call,
// once.
//
//	go run ./examples/unattended                  # asks: prints the request ID and exits
//	bin/auditq approvals                          # a person sees the request …
//	bin/auditq approve apr_… --reason "fine"      # … and approves it
//	go run ./examples/unattended --resume         # the call runs, once
//
// With --wait the agent blocks for the answer instead (at most that long).
// The inbox is --inbox (default $TOOLGATE_INBOX, else
// ~/.local/state/toolgate/approvals.db: outside the workspace, where the
// agent's own tools cannot write its approvals); the suspended call is kept in --state (default:
// unattended-run.json beside the inbox). Spans go
// to the collector OTEL_EXPORTER_OTLP_ENDPOINT names (source .demo/env
// after make demo). Nothing is executed: the bash tool only reports what
// it would run (and appends it to --ran, for tests).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/examples/internal/tracing"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// agentName is the agent the calls are made as.
const agentName = "unattended"

// options are the command's flags.
type options struct {
	inbox   string
	state   string
	command string
	runID   string
	callID  string
	resume  bool
	wait    time.Duration
	ttl     time.Duration
	linger  time.Duration
	ran     string
	jsonOut bool
}

// state is the suspended call, as the agent persists it to resume later.
type state struct {
	Agent      string          `json:"agent"`
	RunID      string          `json:"runId"`
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Input      json.RawMessage `json:"input"`
	ApprovalID string          `json:"approvalId"`
}

// outcome is what the agent prints (one JSON line with --json).
type outcome struct {
	Status     string `json:"status"` // ran | pending | denied
	ApprovalID string `json:"approvalId,omitempty"`
	Approval   string `json:"approval,omitempty"`
	Approver   string `json:"approver,omitempty"`
	Content    string `json:"content"`
	TraceID    string `json:"traceId,omitempty"`
}

func main() {
	o := options{}
	def, _ := inbox.DefaultPath() // $TOOLGATE_INBOX, else outside the workspace
	flag.StringVar(&o.inbox, "inbox", def, "the approval inbox (a bbolt file shared with auditq; default $TOOLGATE_INBOX, else ~/.local/state/toolgate/approvals.db)")
	flag.StringVar(&o.state, "state", "", "where the suspended call is kept (default: unattended-run.json beside the inbox)")
	flag.StringVar(&o.command, "command", "pip install requests", "the shell command the agent wants to run")
	flag.StringVar(&o.runID, "run", "", "the run ID (default: a new one)")
	flag.StringVar(&o.callID, "call-id", "call_1", "the tool-call ID")
	flag.BoolVar(&o.resume, "resume", false, "resume the call kept in --state")
	flag.DurationVar(&o.wait, "wait", 0, "block up to this long for the answer (0: suspend and exit)")
	flag.DurationVar(&o.ttl, "ttl", inbox.DefaultTTL, "how long a request waits for an answer")
	flag.DurationVar(&o.linger, "linger", 0, "after suspending, stay up this long (a test kills the process meanwhile)")
	flag.StringVar(&o.ran, "ran", "", "append each command the tool runs to this file (fsynced)")
	flag.BoolVar(&o.jsonOut, "json", false, "print the outcome as one JSON line")
	flag.Parse()
	if o.state == "" {
		o.state = filepath.Join(filepath.Dir(o.inbox), "unattended-run.json")
	}
	code, err := run(context.Background(), o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "unattended:", err)
	}
	os.Exit(code)
}

// run makes (or resumes) the one call and reports it: exit code 0 when the
// call ran or is pending, 3 when it was denied, 1 on an error.
func run(ctx context.Context, o options, out io.Writer) (code int, err error) {
	tp, shutdown, err := tracing.Setup(ctx, agentName, io.Discard)
	if err != nil {
		return 1, err
	}
	defer func() {
		if serr := shutdown(); serr != nil && err == nil {
			code, err = 1, serr
		}
	}()
	db, err := inbox.Open(o.inbox, inbox.OpenConfig{})
	if err != nil {
		return 1, err
	}
	mode := inbox.Suspend
	if o.wait > 0 {
		mode = inbox.Block
	}
	ib := inbox.New(db, db, inbox.Config{TTL: o.ttl})
	bash, err := classify.BashGate() // safe → allow, review → ask, high → deny
	if err != nil {
		return 1, err
	}
	reg, err := executor.NewRegistry(executor.Tool{
		Name:        "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","minLength":1}},"required":["command"]}`),
		Execute: func(_ context.Context, in json.RawMessage) (executor.Result, error) {
			var v struct{ Command string }
			if err := json.Unmarshal(in, &v); err != nil {
				return executor.Result{}, err
			}
			if err := appendLine(o.ran, v.Command); err != nil {
				return executor.Result{}, err
			}
			return executor.Text("would run: " + v.Command), nil
		},
	})
	if err != nil {
		return 1, err
	}
	opts := []executor.Option{executor.WithGates(bash), executor.WithApprover(inbox.NewApprover(ib, inbox.ApproverConfig{Mode: mode})),
		executor.WithGrantStore(db)}
	if o.wait > 0 {
		opts = append(opts, executor.WithApprovalTimeout(o.wait))
	}
	if tp != nil {
		opts = append(opts, executor.WithTracerProvider(tp))
	}
	ex, err := executor.New(reg, opts...)
	if err != nil {
		return 1, err
	}
	agent, err := ex.Agent(agentName, executor.AgentPresets(executor.PresetAll))
	if err != nil {
		return 1, err
	}
	st := state{Agent: agentName, RunID: o.runID, CallID: o.callID, Tool: "bash"}
	if o.resume {
		if st, err = readState(o.state); err != nil {
			return 1, err
		}
		ctx = gate.WithResume(ctx, st.ApprovalID)
	} else {
		if st.RunID == "" {
			st.RunID = "run-" + time.Now().UTC().Format("20060102T150405.000")
		}
		if st.Input, err = json.Marshal(map[string]string{"command": o.command}); err != nil {
			return 1, err
		}
	}
	r := agent.Run(st.RunID)
	res := r.Execute(ctx, executor.ToolCall{ID: st.CallID, Name: st.Tool, Input: st.Input})
	r.End()
	oc := outcome{Content: res.Content, ApprovalID: res.Gate.ApprovalID, Approval: string(res.Gate.Approval), Approver: res.Gate.Approver}
	if res.TraceID.IsValid() {
		oc.TraceID = res.TraceID.String()
	}
	switch {
	case errors.Is(res.Err, executor.ErrApprovalPending):
		oc.Status, code = "pending", 0
		st.ApprovalID = res.Gate.ApprovalID
		if err := writeState(o.state, st); err != nil {
			return 1, err
		}
	case res.IsError:
		oc.Status, code = "denied", 3
	default:
		oc.Status, code = "ran", 0
	}
	report(out, o.jsonOut, oc)
	if oc.Status == "pending" && o.linger > 0 {
		time.Sleep(o.linger) // a test kills the process here: the request is already stored
	}
	return code, nil
}

func report(out io.Writer, asJSON bool, oc outcome) {
	if asJSON {
		b, _ := json.Marshal(oc)
		fmt.Fprintln(out, string(b))
		return
	}
	switch oc.Status {
	case "pending":
		fmt.Fprintf(out, "waiting for approval %s\n  %s\n  answer with: auditq approve %s   (or auditq decline %s --reason …)\n  then resume: go run ./examples/unattended --resume\n",
			oc.ApprovalID, oc.Content, oc.ApprovalID, oc.ApprovalID)
	case "ran":
		fmt.Fprintf(out, "ran (approved by %s, request %s): %s\n", oc.Approver, oc.ApprovalID, oc.Content)
	default:
		fmt.Fprintf(out, "denied: %s\n", oc.Content)
	}
}

// writeState keeps st at path (written to a temporary file, fsynced and
// renamed, so a kill leaves the old state or the new one).
func writeState(path string, st state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readState(path string) (state, error) {
	var st state
	b, err := os.ReadFile(path)
	if err != nil {
		return st, fmt.Errorf("no suspended call to resume: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("reading %s: %w", path, err)
	}
	if st.ApprovalID == "" {
		return st, fmt.Errorf("%s names no approval request", path)
	}
	return st, nil
}

// appendLine appends line to path and fsyncs it ("" writes nothing).
func appendLine(path, line string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
