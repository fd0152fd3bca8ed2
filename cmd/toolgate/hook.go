package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/approve/inbox"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/policy"
)

// Time budgets of one hook invocation. The agents' own hook timeouts are
// 600 s (Claude Code, Codex) and 60 s (Gemini CLI), after which they run
// the call: the hook answers deny long before.
const (
	// DefaultBudget bounds the whole decision (reading stdin, the policy,
	// the gate); past it the hook denies.
	DefaultBudget = 5 * time.Second
	// DefaultExportWait bounds the wait for the collector after the
	// decision; what is not sent by then stays in the spool.
	DefaultExportWait = 200 * time.Millisecond
	// faultTraceBudget bounds recording a fault's denial.
	faultTraceBudget = time.Second
	// maxEventBytes bounds the hook event read from stdin.
	maxEventBytes = 16 << 20
)

// Environment knobs of the hook (durations, Go syntax).
const (
	envBudget     = "TOOLGATE_HOOK_BUDGET"
	envExportWait = "TOOLGATE_HOOK_EXPORT_WAIT"
)

// ServiceName is the service.name of the hook's spans.
const ServiceName = "toolgate-hook"

// hookEvent is the part of a pre-tool-use event the hook reads (Claude
// Code's and Codex's PreToolUse, Gemini CLI's BeforeTool).
type hookEvent struct {
	SessionID     string          `json:"session_id"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
	Cwd           string          `json:"cwd"`
	TurnID        string          `json:"turn_id"`
}

// hookFlags are the command line of `toolgate hook`.
type hookFlags struct {
	policy string
	ask    string // "", native or deny
}

// nativeAsk reports whether a policy ask goes to the agent's own prompt.
func (f hookFlags) nativeAsk(a *agentSpec) bool {
	switch f.ask {
	case "native":
		return a.canAsk
	case "deny":
		return false
	}
	return a.askByDefault
}

func newHookCmd(io stdio) *cobra.Command {
	var f hookFlags
	cmd := &cobra.Command{
		Use:   "hook claude|codex|gemini",
		Short: "Pre-tool-use hook: judge one tool call of a coding agent and answer in its format",
		Long: `Reads the agent's hook event (JSON) on stdin, judges the tool call with the
policy's gate through toolgate's executor (schema validation, the gate, one
execute_tool span), records the decision span in the durable spool and
uploads it to the collector (waiting at most 200 ms), and answers on stdout
in the agent's format. Any fault answers deny in the agent's blocking form
(exit 2, the reason on stderr and the block JSON on stdout).

Policy: --policy FILE, else $TOOLGATE_POLICY, else
$XDG_CONFIG_HOME/toolgate/toolgate.yaml (~/.config/toolgate/toolgate.yaml)
when it exists, else the built-in defaults (profile strict). A toolgate.yaml
in the agent's working directory is NOT read: the agent can write there.`,
		Example: `  echo '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' | toolgate hook claude`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a := agentByName(args[0])
			if a == nil {
				return usageError{fmt.Errorf("unknown agent %q (want %s)", args[0], agentNames())}
			}
			if f.ask != "" && f.ask != "native" && f.ask != "deny" {
				return usageError{fmt.Errorf("--ask %q: want native or deny", f.ask)}
			}
			code := runHook(cmd.Context(), io, a, f)
			if code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.ask, "ask", "", "what a policy ask becomes: native (the agent asks its user; default for claude) or deny (default for codex, which cannot ask, and gemini, which waits forever when headless)")
	cmd.Flags().StringVar(&f.policy, "policy", "", "policy file (default: $TOOLGATE_POLICY, else ~/.config/toolgate/toolgate.yaml, else built-in)")
	return cmd
}

// hookMemoryLimit is the heap size at which a hook process collects
// garbage (see shortLivedGC): far above one invocation's few MiB, and
// room for an event of maxEventBytes decoded several times over.
const hookMemoryLimit = 512 << 20

// shortLivedGC turns the garbage collector's pacing off for the hook
// process, which lives a few tens of milliseconds: the default (GOGC=100
// from a 4 MiB heap) ran two collections per invocation, on the
// invocation's critical path, to free memory the exit frees anyway. The
// collector still runs if the heap reaches hookMemoryLimit. GOGC or
// GOMEMLIMIT in the environment win.
func shortLivedGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(hookMemoryLimit)
	debug.SetGCPercent(-1)
}

// loadHookPolicy finds the hook's policy (see the command's help).
func loadHookPolicy(flag string) (*policy.Policy, error) {
	if flag != "" {
		return policy.Load(flag)
	}
	if env := os.Getenv(policy.EnvPolicy); env != "" {
		return policy.Load(env)
	}
	if f := userPolicyFile(); f != "" {
		if _, err := os.Stat(f); err == nil {
			return policy.Load(f)
		}
	}
	return policy.Default(), nil
}

// userPolicyFile is $XDG_CONFIG_HOME/toolgate/toolgate.yaml, else
// ~/.config/toolgate/toolgate.yaml ("" when the home is unknown).
func userPolicyFile() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "toolgate", policy.DefaultFile)
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".config", "toolgate", policy.DefaultFile)
	}
	return ""
}

// envDuration reads a positive duration from the environment, else def.
func envDuration(name string, def time.Duration) time.Duration {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return def
}

// outcome is the hook's answer, before it is written.
type outcome struct {
	verdict verdict
	reason  string
}

// fault is an error inside the hook: the call is denied in the blocking form.
type fault struct{ err error }

func (f fault) Error() string { return f.err.Error() }

// runHook runs one hook invocation within its budget and writes the
// answer; it returns the exit code. The decision runs on its own
// goroutine: when it panics or has not answered within the budget, the
// hook denies (the fault's denial is recorded on a fresh spool slot).
func runHook(ctx context.Context, io stdio, a *agentSpec, f hookFlags) int {
	budget := envDuration(envBudget, DefaultBudget)
	wait := envDuration(envExportWait, DefaultExportWait)
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	var tl *timeline
	if os.Getenv(envDebug) == "1" {
		tl = &timeline{start: processStart()}
		ctx = withTimeline(ctx, tl)
		defer tl.print(io.err)
		mark(ctx, "main")
	}

	type result struct {
		out  outcome
		tel  *telemetry
		ev   hookEvent
		err  error
		done chan struct{}
	}
	res := &result{done: make(chan struct{})}
	var seen atomic.Pointer[hookEvent]   // the event, once read (for a timed-out decision's record)
	var opened atomic.Pointer[telemetry] // the pipeline, once open (closed after a panic)
	go func() {
		defer close(res.done)
		defer func() {
			if r := recover(); r != nil {
				res.err = fault{fmt.Errorf("panic: %v\n%s", r, firstLines(debug.Stack(), 12))}
			}
		}()
		res.out, res.tel, res.ev, res.err = decideHook(ctx, io.in, a, f, &seen, &opened)
	}()
	select {
	case <-res.done:
	case <-ctx.Done():
		// The decision did not finish in time: deny. Its goroutine may
		// still hold a spool slot; the fault is recorded on another.
		err := fmt.Errorf("no decision within the hook's budget of %s", budget)
		ev := hookEvent{}
		if p := seen.Load(); p != nil {
			ev = *p
		}
		return writeFault(io, a, err, traceFault(a, ev, f, err))
	}
	if res.err != nil {
		// The decision's goroutine has ended (returned or panicked): its
		// pipeline, if it opened one, is closed here, so that its slot is
		// free for the fault's own record.
		if tel := opened.Load(); tel != nil {
			tel.finish(wait)
		}
		ev := res.ev
		if p := seen.Load(); p != nil {
			ev = *p // a panic returned no event
		}
		return writeFault(io, a, res.err, traceFault(a, ev, f, res.err))
	}
	out, code := a.answer(res.out.verdict, res.out.reason)
	if len(out) > 0 {
		if _, err := io.out.Write(append(out, '\n')); err != nil {
			return 2
		}
	}
	mark(ctx, "answered")
	// The answer is out; the agent reads it at exit. Deliver the span
	// (bounded), else leave it in the spool.
	if res.tel != nil {
		res.tel.warnUnsent(io.err, res.tel.finish(wait))
	}
	mark(ctx, "exported")
	return code
}

// decideHook reads the event, loads the policy and runs the call through
// the executor. A returned error is a fault (deny in the blocking form);
// the telemetry, when set, holds the spans made so far.
func decideHook(ctx context.Context, in io.Reader, a *agentSpec, f hookFlags, seen *atomic.Pointer[hookEvent], opened *atomic.Pointer[telemetry]) (outcome, *telemetry, hookEvent, error) {
	testFault("start")
	ev, err := readEvent(ctx, in, a)
	if err != nil {
		return outcome{}, nil, ev, err
	}
	mark(ctx, "event")
	evCopy := ev
	seen.Store(&evCopy)
	pol, err := loadHookPolicy(f.policy)
	if err != nil {
		return outcome{}, nil, ev, fmt.Errorf("policy: %w", err)
	}
	if a.typesInto {
		pol = pol.WithInteractiveInput()
	}
	target, err := resolveExport(pol)
	if err != nil {
		return outcome{}, nil, ev, fmt.Errorf("policy export: %w", err)
	}
	mark(ctx, "policy")
	tel, err := openTelemetry(ctx, target, ServiceName, envDuration(envExportWait, DefaultExportWait))
	if err != nil {
		return outcome{}, nil, ev, fmt.Errorf("audit trail: %w", err)
	}
	mark(ctx, "spool")
	opened.Store(tel)
	testFault("decide")
	g, err := pol.GateAt(hookWorkspace(a, pol), absOrEmpty(ev.Cwd), selfPaths(pol, target)...)
	if err != nil {
		return outcome{}, tel, ev, err
	}
	mark(ctx, "gate")
	name := pol.Export.Agent
	if name == "" {
		name = a.genAI
	}
	out, _, err := execute(ctx, pipeline{tp: tel.p, wal: tel.p}, a, pol, g, name, ev, f.nativeAsk(a))
	mark(ctx, "decided")
	return out, tel, ev, err
}

// hookWorkspace is the workspace root the hook judges against: the
// policy's workspace; else the project directory the agent names in the
// hook's environment (Claude Code's $CLAUDE_PROJECT_DIR, Gemini CLI's
// $GEMINI_PROJECT_DIR: where the agent was started, which the model
// cannot move); else the hook process's own working directory (the agent
// runs its hooks where its session started: Codex, which names no project
// directory). Never the event's cwd: Codex puts a call's workdir there,
// which the model chooses per call. "" means the policy's own (Gate's
// convention). The event's cwd — where the call runs — is passed to
// GateAt separately: calls are judged where they run.
func hookWorkspace(a *agentSpec, pol *policy.Policy) string {
	if pol.Workspace != "" {
		return ""
	}
	d := ""
	if wd, err := os.Getwd(); err == nil {
		d = absOrEmpty(wd)
	}
	for _, v := range a.projectEnv {
		if p := absOrEmpty(os.Getenv(v)); p != "" {
			d = p
			break
		}
	}
	if broadWorkspace(d) {
		// An agent started in ~ or /: no workspace (the gateway refuses
		// such a workspace too), rather than "all of the home is inside".
		return ""
	}
	return d
}

// broadWorkspace reports whether dir is too broad to be the workspace the
// policy leaves to the event's cwd: "/" or the home directory (an agent
// started in ~ would make every file of the home "inside the workspace").
func broadWorkspace(dir string) bool {
	if dir == "" {
		return false
	}
	d := filepath.Clean(dir)
	if d == "/" {
		return true
	}
	home, err := os.UserHomeDir()
	return err == nil && home != "" && d == filepath.Clean(home)
}

// absOrEmpty is p when it is absolute, else "".
func absOrEmpty(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return ""
}

// readEvent reads and checks the hook event.
func readEvent(ctx context.Context, in io.Reader, a *agentSpec) (hookEvent, error) {
	var ev hookEvent
	type read struct {
		b   []byte
		err error
	}
	ch := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(in, maxEventBytes+1))
		ch <- read{b, err}
	}()
	var r read
	select {
	case r = <-ch:
	case <-ctx.Done():
		return ev, errors.New("no hook event on stdin within the hook's budget")
	}
	if r.err != nil {
		return ev, fmt.Errorf("reading the hook event: %w", r.err)
	}
	if len(r.b) > maxEventBytes {
		return ev, fmt.Errorf("the hook event is larger than %d bytes", maxEventBytes)
	}
	if err := checkEventNames(r.b); err != nil {
		return ev, err
	}
	dec := json.NewDecoder(bytes.NewReader(r.b))
	if err := dec.Decode(&ev); err != nil {
		return ev, fmt.Errorf("the hook event is not a JSON object: %w", err)
	}
	if dec.More() {
		return ev, errors.New("the hook event has data after its JSON object")
	}
	if ev.HookEventName != a.event {
		return ev, fmt.Errorf("hook event %q is not %s's %s (install the hook on %s only)", ev.HookEventName, a.genAI, a.event, a.event)
	}
	if ev.ToolName == "" {
		return ev, errors.New("the hook event has no tool_name")
	}
	if t := bytes.TrimSpace(ev.ToolInput); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		ev.ToolInput = json.RawMessage(`{}`)
	}
	return ev, nil
}

// execute runs the call through a real executor: the agent's registry
// (schema validation), the policy's gate, the approver for asks, the
// write-ahead commit of an allowed call to the spool, one execute_tool
// span; the tool itself only says "allowed" (the agent runs it).
func execute(ctx context.Context, pl pipeline, a *agentSpec, pol *policy.Policy, g gate.Gate, agentName string, ev hookEvent, native bool) (outcome, executor.ToolResult, error) {
	reg, err := registryFor(a, ev.ToolName)
	if err != nil {
		return outcome{}, executor.ToolResult{}, err
	}
	callID := ev.ToolUseID
	if callID == "" {
		callID = a.name + "-" + randomID() // Gemini sends no call ID
	}
	approver := gate.Approver(hookApprover(a, callID, native))
	var box *hookInbox
	if !native && pol.Approver.Kind == policy.ApproverInbox {
		if box, err = openHookInbox(pol); err != nil {
			return outcome{}, executor.ToolResult{}, err
		}
		approver = inbox.NewApprover(box.ib, inbox.ApproverConfig{Mode: inbox.Suspend})
		r, ok, err := box.approved(ctx, agentName, ev.SessionID, ev.ToolName, ev.ToolInput, absOrEmpty(ev.Cwd))
		if err != nil {
			return outcome{}, executor.ToolResult{}, err
		}
		if ok {
			// The same call again, after a person approved it: resume the
			// request (it runs once; the gates judge it again).
			ctx = gate.WithResume(ctx, r.ID)
			callID = r.ToolCallID
		}
	}
	ex, err := executor.New(reg,
		executor.WithTracerProvider(pl.tp),
		executor.WithGates(gate.Named(policy.SourcePolicy, g)),
		executor.WithApprover(approver),
		executor.WithWriteAhead(pl.wal),
		executor.WithRecordContent(true),
		executor.WithRefusalBudget(-1),
		executor.WithGateTimeout(envDuration(envBudget, DefaultBudget)/2),
	)
	if err != nil {
		return outcome{}, executor.ToolResult{}, fmt.Errorf("executor: %w", err)
	}
	agent, err := ex.Agent(agentName, executor.AgentPresets(executor.PresetAll))
	if err != nil {
		return outcome{}, executor.ToolResult{}, fmt.Errorf("executor agent: %w", err)
	}
	var opts []executor.RunOption
	if ev.TurnID != "" {
		opts = append(opts, executor.WithTask(ev.TurnID))
	}
	run := agent.Run(ev.SessionID, opts...)
	res := run.Execute(ctx, executor.ToolCall{ID: callID, Name: ev.ToolName, Input: ev.ToolInput, WorkingDir: absOrEmpty(ev.Cwd)})
	run.End()
	testFault("answer")
	switch {
	case res.Gate.Action == gate.ActionAllow && !res.IsError:
		return outcome{verdict: verdictAllow, reason: res.Gate.Reason}, res, nil
	case errors.Is(res.Err, executor.ErrApprovalPending) && native && strings.HasPrefix(res.Gate.ApprovalID, agentAskPrefix(a)):
		return outcome{verdict: verdictAsk, reason: askReason(res.Gate)}, res, nil
	case errors.Is(res.Err, executor.ErrApprovalPending) && box != nil:
		reason := res.Gate.Reason
		if i := strings.Index(reason, "; waiting for human approval"); i >= 0 {
			reason = reason[:i]
		}
		return outcome{verdict: verdictDeny, reason: pendingReason(ev.ToolName, res.Gate.ApprovalID, reason, box.path)}, res, nil
	}
	return outcome{verdict: verdictDeny, reason: res.Content}, res, nil
}

// pipeline is where execute's spans go: the tracer provider and the
// write-ahead log an allowed call is committed to before the hook allows it
// (otelbridge.Provider with the spool for both).
type pipeline struct {
	tp  trace.TracerProvider
	wal executor.WriteAheadLog
}

// askReason is what the agent's user is shown for an ask.
func askReason(r gate.Record) string {
	reason := r.Reason
	if i := strings.Index(reason, "; waiting for human approval"); i >= 0 {
		reason = reason[:i]
	}
	return fmt.Sprintf("toolgate (policy %s) asks: %s", r.Source, reason)
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// firstLines is the first n lines of b.
func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// eventNames are the hook event's names hookEvent reads.
var eventNames = []string{"session_id", "hook_event_name", "tool_name", "tool_input", "tool_use_id", "cwd", "turn_id"}

// checkEventNames refuses a hook event whose top-level object has a name
// twice, or another spelling of a name the hook reads ("TOOL_NAME",
// "Tool_Name"): encoding/json would bind either to the field, the last one
// winning, while the agent (JavaScript, Rust) reads the exact name once —
// the gate must judge the call the agent runs. The tool input's own names
// are the executor's to check (and deny, with a traced decision).
func checkEventNames(b []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return errors.New("the hook event is not a JSON object")
	}
	seen := map[string]bool{}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return fmt.Errorf("the hook event is not a JSON object: %w", err)
		}
		name := tok.String()
		if seen[name] {
			return fmt.Errorf("the hook event has the name %q twice", name)
		}
		seen[name] = true
		for _, n := range eventNames {
			if name != n && strings.EqualFold(strings.ReplaceAll(name, "-", "_"), n) {
				return fmt.Errorf("the hook event has %q, another spelling of %q", name, n)
			}
		}
		if err := dec.SkipValue(); err != nil {
			return fmt.Errorf("the hook event is not a JSON object: %w", err)
		}
	}
	return nil
}

// selfPaths are what a model would change to stop being gated or audited
// by this hook: its own executable (as installed, and with links
// resolved), the spool directory and the approvals inbox (the policy's,
// else the default). The policy gate denies file-tool writes and deletes
// there (policy.GateAt's protect).
func selfPaths(pol *policy.Policy, target exportTarget) []string {
	var ps []string
	if exe, err := os.Executable(); err == nil {
		ps = append(ps, exe)
		if r, err := filepath.EvalSymlinks(exe); err == nil && r != exe {
			ps = append(ps, r)
		}
	}
	if target.spoolDir != "" {
		ps = append(ps, target.spoolDir)
	}
	box := pol.Approver.Inbox
	if box == "" {
		box, _ = inbox.DefaultPath()
	}
	if box != "" {
		ps = append(ps, box)
	}
	return ps
}
