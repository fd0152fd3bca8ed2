package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
	"github.com/toolgate/toolgate/otelbridge/spool"
	"github.com/toolgate/toolgate/replay"
)

// agentOptions are the flags of the load mode (--calls or --duration): the
// demo as an agent process for load and fault tests. It replays the
// transcript's calls, repeated as needed, at a steady rate, exports them
// (through the spool when --spool is set), records the calls whose tool
// ran, and prints one JSON line of counts (agentStats) when it ends. It
// does not verify the store: the test that started it does.
type agentOptions struct {
	calls    int           // stop after this many calls (0: --duration decides)
	duration time.Duration // stop after this long (0: --calls decides)
	rate     float64       // calls per second (0: as fast as possible)
	ran      string        // append the ID of every call whose tool starts, fsynced
	toolTime time.Duration // how long each tool runs
	tag      string        // makes this process's call IDs unique
	service  string        // service.name
	strict   bool          // write-ahead audit (executor.WithWriteAhead)
	linger   time.Duration // after the calls, wait up to this long for the spool to drain
	flush    time.Duration // bound of the final flush (Shutdown)
	spool    spool.Config
}

// agentStats is the line the load mode prints on stdout when it ends.
type agentStats struct {
	Calls int `json:"calls"`
	// Ran is the calls whose tool ran (the IDs in --ran, which also holds
	// a call whose tool started when the process was killed).
	Ran int `json:"ran"`
	// Denied is the calls denied (by a gate, the executor or for the
	// audit), AuditUnavailable those denied because their decision could
	// not be recorded (strict mode).
	Denied           int  `json:"denied"`
	AuditUnavailable int  `json:"auditUnavailable"`
	Drained          bool `json:"drained"`
	// Spool is the spool's counters at the end (zero without --spool).
	Spool spool.Stats `json:"spool"`
	// Lost is the spans otelbridge counted as lost.
	Lost int64 `json:"lost"`
	// ShutdownError is the final flush's error, if any.
	ShutdownError string `json:"shutdownError,omitempty"`
}

// relabel returns pass k of the transcript's runs with run IDs made unique
// for this process (tag) and pass: "<run ID>@<tag>.<k>" (the agent name,
// the ID's prefix before ":", is kept).
func relabel(runs []replay.Run, tag string, k int) []replay.Run {
	out := make([]replay.Run, len(runs))
	for i, r := range runs {
		r.ID = r.ID + "@" + tag + "." + strconv.Itoa(k)
		calls := make([]replay.Call, len(r.Calls))
		for j, c := range r.Calls {
			c.Run = r.ID
			calls[j] = c
		}
		r.Calls = calls
		out[i] = r
	}
	return out
}

// cut returns the first n calls of runs.
func cut(runs []replay.Run, n int) []replay.Run {
	var out []replay.Run
	for _, r := range runs {
		if n <= 0 {
			break
		}
		if len(r.Calls) > n {
			r.Calls = r.Calls[:n]
		}
		n -= len(r.Calls)
		out = append(out, r)
	}
	return out
}

// toolRan reports whether a call's tool ran: not refused by the executor,
// the gates or the audit.
func toolRan(res executor.ToolResult) bool {
	if !res.IsError {
		return true
	}
	switch res.ErrorType {
	case executor.ErrorTypeToolError, executor.ErrorTypeToolPanic, executor.ErrorTypeInvalidOutput:
		return true
	}
	return false
}

// agent runs the load mode.
func agent(ctx context.Context, o options, out, errw io.Writer) error {
	a := o.agent
	runs, err := replay.ReadTranscriptFile(o.transcript)
	if err != nil {
		return err
	}
	policy, policyName := approve.DefaultPolicy(), "default"
	if o.policy != "" {
		if policy, err = approve.LoadPolicy(o.policy); err != nil {
			return err
		}
		policyName = o.policy
	}
	if a.tag == "" {
		a.tag = strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	var ran *os.File
	if a.ran != "" {
		if ran, err = os.OpenFile(a.ran, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err != nil {
			return fmt.Errorf("--ran: %w", err)
		}
		defer ran.Close()
	}
	setting, err := sampling.Parse(o.sampling)
	if err != nil {
		return err
	}
	p, err := otelbridge.Setup(ctx, otelbridge.Config{
		Endpoint:    o.endpoint,
		ServiceName: a.service,
		Sampling:    sampling.Config{Setting: setting},
		Batch:       otelbridge.BatchConfig{QueueSize: 16384, BatchTimeout: 100 * time.Millisecond},
		Spool:       a.spool,
	})
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	execOpts := append(strictMode(o, p), executor.WithRecordContent(true))
	var st agentStats
	start := time.Now()
	var (
		ranMu  sync.Mutex
		ranErr error // writing --ran failed: the run is not a valid test
	)
	rp, err := replay.New(
		replay.WithTracerProvider(p),
		replay.WithPolicy(policy, policyName),
		replay.WithProfile(o.profile),
		replay.WithExecutorOptions(execOpts...),
		// Each tool, when it starts, appends its call's ID to --ran
		// (fsynced), then runs for --tool-time: a kill can land while a
		// tool runs.
		replay.WithToolWrapper(func(t executor.Tool) executor.Tool {
			run := t.Execute
			t.Execute = func(ctx context.Context, in json.RawMessage) (executor.Result, error) {
				if ran != nil {
					c, _ := executor.CallFrom(ctx)
					_, err := ran.WriteString(c.ToolCallID + "\n")
					if err == nil {
						err = ran.Sync()
					}
					if err != nil {
						ranMu.Lock()
						ranErr = errors.Join(ranErr, err)
						ranMu.Unlock()
						return executor.Result{}, fmt.Errorf("--ran: %w", err)
					}
				}
				if a.toolTime > 0 {
					time.Sleep(a.toolTime)
				}
				return run(ctx, in)
			}
			return t
		}),
		replay.OnCall(func(c replay.Call, res executor.ToolResult) {
			st.Calls++
			switch {
			case toolRan(res):
				st.Ran++
			case res.Gate.Action == gate.ActionDeny:
				st.Denied++
				if res.ErrorType == executor.ErrorTypeAuditUnavailable {
					st.AuditUnavailable++
				}
			}
			if a.rate > 0 {
				next := start.Add(time.Duration(float64(st.Calls) / a.rate * float64(time.Second)))
				if d := time.Until(next); d > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(d):
					}
				}
			}
		}),
	)
	if err != nil {
		return err
	}
	rctx := ctx
	if a.duration > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, a.duration)
		defer cancel()
	}
	// Pass after pass over the transcript, each with its own run IDs,
	// until --calls calls were made or --duration passed (--calls 0 and
	// no --duration: no call; the spool is recovered and drained).
	for k := 0; rctx.Err() == nil && (a.duration > 0 || st.Calls < a.calls); k++ {
		work := relabel(runs, a.tag, k)
		if a.calls > 0 {
			work = cut(work, a.calls-st.Calls)
		}
		if _, err := rp.Replay(rctx, work); err != nil && rctx.Err() == nil {
			return err
		}
	}
	if ranErr != nil {
		return fmt.Errorf("--ran: %w", ranErr)
	}
	// Let the spool drain (the collector may be down): up to --linger.
	st.Drained = waitDrained(ctx, p, a.linger)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.flush)
	if err := p.Shutdown(fctx); err != nil {
		st.ShutdownError = err.Error()
	}
	cancel()
	ps := p.Stats()
	st.Spool, st.Lost = ps.Spool, ps.Lost()
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s\n", b)
	fmt.Fprintf(errw, "agent: %d calls in %s (%d ran, %d denied, %d for the audit); spool %+v\n",
		st.Calls, time.Since(start).Round(time.Millisecond), st.Ran, st.Denied, st.AuditUnavailable, st.Spool)
	return nil
}

// waitDrained waits until the spool holds nothing unsent, up to d (0: no
// wait); it reports whether it drained. Without a spool it returns true.
func waitDrained(ctx context.Context, p *otelbridge.Provider, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		s := p.Stats().Spool
		if s.Unsent == 0 && s.Pending == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// splitRate reads --rate: "N" or "N/s" calls per second.
func splitRate(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "/s"), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("--rate %q: want calls per second, such as 100/s", s)
	}
	return v, nil
}
