package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolgate/toolgate/approve"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/sampling"
	"github.com/toolgate/toolgate/replay"
)

// demo replays the transcript, exports its spans, and (with verify)
// checks ClickHouse and Jaeger against the replay before printing the
// summary.
func demo(ctx context.Context, o options, out, errw io.Writer) error {
	setting, err := sampling.Parse(o.sampling)
	if err != nil {
		return err
	}
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
	ncalls := 0
	for _, r := range runs {
		ncalls += len(r.Calls)
	}
	fmt.Fprintf(errw, "demo: replaying %d tool calls from %d recorded agent runs (%s)\n", ncalls, len(runs), o.transcript)

	p, err := otelbridge.Setup(ctx, otelbridge.Config{
		Endpoint:       o.endpoint,
		ServiceName:    "toolgate-demo",
		ServiceVersion: "replay",
		Sampling:       sampling.Config{Setting: setting},
		Batch:          otelbridge.BatchConfig{QueueSize: 16384, BatchTimeout: 200 * time.Millisecond},
		Spool:          o.agent.spool,
	})
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	start := time.Now()
	done := 0
	rp, err := replay.New(
		replay.WithTracerProvider(p),
		replay.WithPolicy(policy, policyName),
		replay.WithProfile(o.profile),
		// Record each call's input (redacted, size-limited) so the audit
		// trail shows what was allowed or denied, not only why.
		replay.WithExecutorOptions(append(strictMode(o, p), executor.WithRecordContent(true))...),
		replay.OnCall(func(c replay.Call, _ executor.ToolResult) {
			if done++; done%250 == 0 {
				fmt.Fprintf(errw, "demo: %d/%d calls\n", done, ncalls)
			}
		}),
	)
	if err != nil {
		return err
	}
	sum, err := rp.Replay(ctx, runs)
	if err != nil {
		return err
	}
	flushCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = p.Shutdown(flushCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("telemetry: flushing spans to %s: %w", o.endpoint, err)
	}
	st := p.Stats()
	if lost := st.Lost(); lost > 0 {
		return fmt.Errorf("telemetry: %d spans were lost on the way to the collector at %s", lost, o.endpoint)
	}
	if st.Spool.Spooled > 0 {
		fmt.Fprintf(errw, "demo: spool: %d spans spooled, %d sent, %d recovered from an earlier run (interrupted calls: %d, torn records: %d)\n",
			st.Spool.Spooled, st.Spool.Sent, max(st.Spool.Sent-st.Spool.Spooled, 0), st.Spool.Interrupted, st.Spool.TornRecovered)
	}

	rep := report{Summary: sum, Sampling: setting.String(), Endpoint: o.endpoint, Policy: policyName, JaegerURL: strings.TrimRight(o.jaegerURL, "/")}
	if o.verify {
		// Every decision is exported in "all" and "decisions"; otherwise
		// only denials are certain to be, and only they are checked.
		allKept := setting.AllowRatio == 1
		if err := verifyClickHouse(ctx, o, start, sum, allKept, &rep, errw); err != nil {
			return err
		}
		if err := verifyJaeger(ctx, o, sum, allKept, &rep, errw); err != nil {
			return err
		}
		if allKept {
			if err := verifyChains(ctx, o, start, sum, &rep, errw); err != nil {
				return err
			}
		}
	}
	rep.print(out)
	return nil
}

// verifyClickHouse waits until gate_decisions holds one decision per
// replayed call (the collector batches and retries) and checks the counts
// by action, risk level and tool against the replay's — the numbers
// `auditq stats` reports.
//
// With allKept false (deny-only or a ratio of allowed calls) only the
// denials are checked: the allowed calls stored are a sample.
func verifyClickHouse(ctx context.Context, o options, since time.Time, s *replay.Summary, allKept bool, rep *report, errw io.Writer) error {
	store, err := audit.Open(ctx, o.dsn)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer store.Close()
	// The calls that reached the gate: the replay's Gated (a call refused
	// before the gate is a decision too, of another stage, counted in
	// NotGated).
	f := audit.Filter{Since: since.Add(-time.Second), Stage: string(gate.StageGate)}
	if !allKept {
		f.Action = "deny"
	}
	expect := uint64(s.Gated)
	if !allKept {
		expect = uint64(s.Denied)
	}
	deadline := time.Now().Add(o.wait)
	var total audit.Stats
	for i := 0; ; i++ {
		total, err = store.Stats(ctx, audit.StatsQuery{Filter: f})
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		if total.Total >= expect || time.Now().After(deadline) {
			break
		}
		if i%5 == 0 {
			fmt.Fprintf(errw, "demo: waiting for ClickHouse: %d of %d decisions stored\n", total.Total, expect)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	if total.Total != expect {
		return fmt.Errorf("verify: ClickHouse holds %d decisions (filter %+v) since the replay started, the replay made %d", total.Total, f, expect)
	}
	// Denials by rule (the deciding gate's, gate.rule): the summary's "top deny reasons" are
	// what `auditq stats --action deny --by rule` reports.
	fd := f
	fd.Action = "deny"
	byRuleStored, err := store.Stats(ctx, audit.StatsQuery{Filter: fd, By: []audit.Dimension{audit.ByRule}})
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	stored := map[string]uint64{}
	for _, r := range byRuleStored.Rows {
		stored[r.Keys[0]] = r.Count
	}
	for _, rc := range byRule(s) {
		if stored[rc.Rule] != uint64(rc.Count) {
			return fmt.Errorf("verify: ClickHouse has %d denials by rule %q, the replay %d", stored[rc.Rule], rc.Rule, rc.Count)
		}
		delete(stored, rc.Rule)
	}
	if len(stored) > 0 {
		return fmt.Errorf("verify: ClickHouse has denials by rules the replay never made: %v", stored)
	}
	rep.StoredDecisions, rep.Database, rep.OnlyDenials = total.Total, store.Database(), !allKept
	if !allKept {
		return nil
	}
	byAction, err := store.Stats(ctx, audit.StatsQuery{Filter: f, By: []audit.Dimension{audit.ByAction}})
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	byRisk, err := store.Stats(ctx, audit.StatsQuery{Filter: f, By: []audit.Dimension{audit.ByRisk}})
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	byTool, err := store.Stats(ctx, audit.StatsQuery{Filter: f, By: []audit.Dimension{audit.ByTool}})
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	got := map[string]uint64{}
	for _, r := range byAction.Rows {
		got["action="+r.Keys[0]] = r.Count
	}
	for _, r := range byRisk.Rows {
		got["risk="+r.Keys[0]] = r.Count
	}
	for _, r := range byTool.Rows {
		got["tool="+r.Keys[0]] = r.Count
		got["tool-denied="+r.Keys[0]] = r.Denied
	}
	want := map[string]uint64{"action=allow": uint64(s.Allowed), "action=deny": uint64(s.Denied)}
	for lvl, n := range s.ByRisk {
		want["risk="+string(lvl)] = uint64(n)
	}
	for tool, c := range s.ByTool {
		want["tool="+tool] = uint64(c.Calls)
		want["tool-denied="+tool] = uint64(c.Denied)
	}
	for k, w := range want {
		if w == 0 && got[k] == 0 {
			continue
		}
		if got[k] != w {
			return fmt.Errorf("verify: ClickHouse says %s is %d, the replay says %d", k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && g != 0 {
			return fmt.Errorf("verify: ClickHouse has %s = %d, which the replay never produced", k, g)
		}
	}
	return nil
}

// verifyChains checks the verifiable trail the way `auditq verify` does
// (audit.Store.Chains, audit.Verify): each replayed run is one hash chain,
// and every chain with a decision since the replay started must be
// complete — every position stored up to the length its run span recorded
// at the run's end, each row hashing to its stored hash and linking to the
// one before. It waits (up to --wait) for the run spans, which may reach
// the store after the decisions, and fails naming the first chain that
// stays open or has problems. Only when every decision is exported
// (sampling all or decisions): a sample leaves positions missing.
func verifyChains(ctx context.Context, o options, since time.Time, s *replay.Summary, rep *report, errw io.Writer) error {
	store, err := audit.Open(ctx, o.dsn)
	if err != nil {
		return fmt.Errorf("verify chains: %w", err)
	}
	defer store.Close()
	q := audit.ChainQuery{Since: since.Add(-time.Second)}
	deadline := time.Now().Add(o.wait)
	for i := 0; ; i++ {
		began := time.Now()
		chains, err := store.Chains(ctx, q)
		if err != nil {
			return fmt.Errorf("verify chains: %w", err)
		}
		reps := audit.Verify(chains)
		took := time.Since(began)
		complete, decisions := 0, uint64(0)
		var first *audit.ChainReport
		for j := range reps {
			decisions += reps[j].Rows
			if reps[j].Status == audit.StatusComplete {
				complete++
			} else if first == nil {
				first = &reps[j]
			}
		}
		if first == nil && len(reps) == len(s.Runs) {
			rep.Chains, rep.ChainDecisions, rep.VerifyTime = len(reps), decisions, took
			return nil
		}
		if time.Now().After(deadline) {
			switch {
			case first != nil:
				return fmt.Errorf("verify chains: %d of %d chains complete; run %s: %s %+v", complete, len(reps), first.RunID, first, first.Problems)
			default:
				return fmt.Errorf("verify chains: %d chains with a decision since the replay started, the replay made %d runs", len(reps), len(s.Runs))
			}
		}
		if i%5 == 0 {
			fmt.Fprintf(errw, "demo: waiting for the run spans (chain ends): %d of %d chains complete\n", complete, len(s.Runs))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// verifyJaeger fetches the trace of the run with the most denials from
// Jaeger's HTTP query API and checks it holds the run's invoke_agent span
// and one execute_tool span per call.
func verifyJaeger(ctx context.Context, o options, s *replay.Summary, allKept bool, rep *report, errw io.Writer) error {
	run := s.MostDenied()
	if run == nil {
		return nil
	}
	api := strings.TrimRight(o.jaegerURL, "/") + "/api/traces/" + url.PathEscape(run.TraceID)
	want := run.Calls + 1 // the invoke_agent span and every call
	if !allKept {
		want = run.Denied + 1 // at least the denials and their agent span
	}
	deadline := time.Now().Add(o.wait)
	var got int
	for i := 0; ; i++ {
		n, err := jaegerSpanCount(ctx, api)
		if err == nil {
			got = n
			if n >= want {
				break
			}
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("verify: Jaeger: %w", err)
			}
			return fmt.Errorf("verify: Jaeger holds %d spans of trace %s, want %d", got, run.TraceID, want)
		}
		if i%5 == 0 {
			fmt.Fprintf(errw, "demo: waiting for Jaeger (tail sampling holds traces for its decision_wait): %d of %d spans of trace %s\n", got, want, run.TraceID)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	if allKept && got != want {
		return fmt.Errorf("verify: Jaeger holds %d spans of trace %s, want %d", got, run.TraceID, want)
	}
	rep.JaegerSpans = got
	return nil
}

// jaegerSpanCount returns the number of spans Jaeger's /api/traces/{id}
// returns for one trace.
func jaegerSpanCount(ctx context.Context, api string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return 0, nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("GET %s: %s: %s", api, resp.Status, strings.TrimSpace(string(b)))
	}
	var body struct {
		Data []struct {
			Spans []json.RawMessage `json:"spans"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("GET %s: %w", api, err)
	}
	n := 0
	for _, t := range body.Data {
		n += len(t.Spans)
	}
	return n, nil
}

// strictMode is executor.WithWriteAhead(p) with --strict, else nothing.
func strictMode(o options, p *otelbridge.Provider) []executor.Option {
	if o.agent.strict {
		return []executor.Option{executor.WithWriteAhead(p)}
	}
	return nil
}
